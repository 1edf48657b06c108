/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgfilterctl: the operator's tool.  One function per command, found in a
 * table; each parses its own options.  Exit status: 0 success, 1 failure
 * (for check: the policy is invalid), 2 wrong usage.
 */
#include <errno.h>
#include <getopt.h>

#include "diag.h"
#include "kernel-features.h"
#include "macro.h"
#include "policy-load.h"
#include "policy-validate.h"
#include "policy.h"

#define EXIT_USAGE 2

static const char *program_name(void) {
	return "cgfilterctl";
}

static void help(FILE *f) {
	fprintf(f,
		"Usage: %1$s [OPTIONS] COMMAND [ARGS...]\n"
		"\n"
		"Inspect the network-filter policy that cgfilterd reconciles against the\n"
		"kernel's cgroup-BPF attachments.\n"
		"\n"
		"Commands:\n"
		"  check [PATH...]  Parse and validate a policy offline, as the daemon would\n"
		"                   before applying it: every error with file:line:column.\n"
		"                   Needs no root and no kernel.\n"
		"\n"
		"Options:\n"
		"  -h --help        Show this help; '%1$s COMMAND --help' shows a command's\n"
		"     --version     Show the version\n"
		"\n"
		"The policy format is described in cgfilterd.policy(5).\n",
		program_name());
}

static void help_check(FILE *f) {
	fprintf(f,
		"Usage: %1$s check [--kernel=patched|stock] [-v] [PATH...]\n"
		"\n"
		"Read a cgfilterd policy the way the daemon does and report every error,\n"
		"each with file:line:column, the line and a caret, before anything touches\n"
		"the kernel.  Needs no root and no kernel: run it on a build machine, in CI,\n"
		"or before 'systemctl reload cgfilterd'.\n"
		"\n"
		"PATH is a policy file, '-' for standard input, or a configuration directory\n"
		"(DIR/policy.yaml, then DIR/policy.d/*.yaml in lexical order).  Several PATHs\n"
		"are merged into one policy in the order given, as the daemon merges\n"
		"policy.yaml and its drop-ins.  Without PATH:\n"
		"  " CGF_POLICY_MAIN ", then " CGF_POLICY_DROPIN_DIR "/*.yaml\n"
		"\n"
		"Options:\n"
		"     --kernel=patched  Check for a kernel with the cgroup-BPF attach series\n"
		"                       (Linux >= 6.17, or cgfilterd's kernel-patch/): preorder,\n"
		"                       before and after are available.  The default.\n"
		"     --kernel=stock    Check for a kernel without it (such as Debian 12's 6.1):\n"
		"                       preorder, before and after are errors.\n"
		"  -v --verbose         Also list the files read and sum up the policy.\n"
		"  -h --help            Show this help.\n"
		"\n"
		"Exit status: 0 the policy is valid, 1 it is not (or could not be read),\n"
		"2 wrong usage.\n"
		"\n"
		"Examples:\n"
		"  %1$s check                          the installed policy\n"
		"  %1$s check --kernel=stock           the same, for an unpatched kernel\n"
		"  %1$s check /etc/cgfilterd new.yaml  the installed policy plus a new drop-in\n"
		"  generate-policy | %1$s check -      a generated policy, from a pipe\n"
		"\n"
		"The policy format is described in cgfilterd.policy(5).\n",
		program_name());
}

static int usage_error(const char *format, ...) _printf_(1, 2);
static int usage_error(const char *format, ...) {
	va_list ap;

	fprintf(stderr, "%s: ", program_name());
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

static int fail(const char *what, int r) {
	fprintf(stderr, "%s: %s: %s\n", program_name(), what, strerror(-r));
	return EXIT_FAILURE;
}

static int verb_check(int argc, char *argv[]) {
	enum { ARG_KERNEL = 0x100 };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "kernel", required_argument, NULL, ARG_KERNEL },
		{ "verbose", no_argument, NULL, 'v' },
		{},
	};
	_cleanup_(cgf_policy_freep) struct cgf_policy *policy = NULL;
	struct cgf_features features = CGF_FEATURES_PATCHED;
	struct cgf_diags diags = CGF_DIAGS_INIT;
	const char *kernel = "patched";
	bool verbose = false;
	int c, r, ret = EXIT_FAILURE;

	optind = 0;
	while ((c = getopt_long(argc, argv, "hv", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			help_check(stdout);
			return EXIT_SUCCESS;
		case 'v':
			verbose = true;
			break;
		case ARG_KERNEL:
			if (streq(optarg, "patched"))
				features = CGF_FEATURES_PATCHED;
			else if (streq(optarg, "stock"))
				features = CGF_FEATURES_STOCK;
			else
				return usage_error("--kernel: expected 'patched' or 'stock', not '%s'", optarg);
			kernel = optarg;
			break;
		default:
			/* getopt_long() has said what is wrong. */
			return usage_error("see '%s check --help'", program_name());
		}

	policy = cgf_policy_new();
	if (!policy)
		return fail("check", -ENOMEM);

	if (optind >= argc)
		r = cgf_policy_load(policy, CGF_POLICY_MAIN, CGF_POLICY_DROPIN_DIR, &diags);
	else
		for (r = 0; optind < argc && r >= 0; optind++)
			r = cgf_policy_load_path(policy, argv[optind], &diags);
	if (r >= 0)
		r = cgf_policy_validate(policy, &features, &diags);
	if (r < 0) {
		ret = fail("check", r);
		goto finish;
	}

	cgf_diags_sort(&diags);
	r = cgf_diags_render(&diags, stderr, CGF_RENDER_SOURCE);
	if (r < 0) {
		ret = fail("writing to standard error", r);
		goto finish;
	}

	if (verbose) {
		for (size_t i = 0; i < policy->n_sources; i++)
			printf("read %s\n", policy->sources[i]->name);
		printf("%s: %zu files, %zu filters, %zu attachments, %zu errors (kernel: %s)\n",
		       diags.n_errors ? "invalid" : "valid", policy->n_sources, policy->n_filters,
		       policy->n_attachments, diags.n_errors, kernel);
		if (fflush(stdout) != 0) {
			ret = fail("writing to standard output", -errno);
			goto finish;
		}
	}
	ret = diags.n_errors > 0 ? EXIT_FAILURE : EXIT_SUCCESS;

finish:
	cgf_diags_done(&diags);
	return ret;
}

static const struct {
	const char *name;
	int (*run)(int argc, char *argv[]);
} verbs[] = {
	{ "check", verb_check },
};

int main(int argc, char *argv[]) {
	enum { ARG_VERSION = 0x100 };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{},
	};
	int c;

	/* "+": stop at the command, whose options are its own. */
	while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			help(stdout);
			return EXIT_SUCCESS;
		case ARG_VERSION:
			printf("%s %s\n", program_name(), CGF_VERSION);
			return EXIT_SUCCESS;
		default:
			return usage_error("see '%s --help'", program_name());
		}

	if (optind >= argc) {
		help(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
		if (streq(argv[optind], verbs[i].name))
			return verbs[i].run(argc - optind, argv + optind);

	return usage_error("unknown command '%s'; see '%s --help'", argv[optind], program_name());
}
