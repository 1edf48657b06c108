/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgfilterctl: the operator's tool.  One function per command, found in a
 * table; each parses its own options.  Exit status: 0 success, 1 failure
 * (for check: the policy is invalid), 2 wrong usage.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <time.h>

#include "coexist.h"
#include "diag.h"
#include "escape.h"
#include "kernel-features.h"
#include "kernel-status.h"
#include "kernel.h"
#include "libbpf-log.h"
#include "log.h"
#include "macro.h"
#include "plan-json.h"
#include "policy-load.h"
#include "policy-read.h"
#include "policy-validate.h"
#include "policy.h"
#include "reconcile-counts.h"
#include "reconcile.h"
#include "runtime.h"
#include "status-prometheus.h"
#include "unit-query.h"

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
		"  plan [PATH...]   What a reconcile would do now: every bpf() call in order,\n"
		"                   and what it will not or cannot do.  Changes nothing.\n"
		"  status [CGROUP...]\n"
		"                   The kernel's cgroup-BPF lists: per cgroup and direction,\n"
		"                   the programs that run in order, whose they are, counters.\n"
		"  reload           Make the running cgfilterd reread its policy and wait for\n"
		"                   the outcome: fails when the policy was refused.\n"
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
		"Usage: %1$s check [--kernel=patched|stock] [--no-units] [-v] [PATH...]\n"
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
		"Without PATH the files must pass the daemon's file trust rule: regular\n"
		"files owned by root, not writable by group or others, in directories of the\n"
		"same kind up to /, no symbolic links (cgfilterd.policy(5), FILE TRUST).\n"
		"Files given as PATH need only be regular files (no FIFO, device or link) of\n"
		"at most 4 MiB, so that anyone can check a checkout; the daemon and 'plan'\n"
		"hold them to the whole rule.\n"
		"\n"
		"Options:\n"
		"     --kernel=patched  Check for a kernel with the cgroup-BPF attach series\n"
		"                       (Linux >= 6.17, or cgfilterd's kernel-patch/): preorder,\n"
		"                       before and after are available.  The default.\n"
		"     --kernel=stock    Check for a kernel without it (such as Debian 12's 6.1):\n"
		"                       preorder, before and after are errors.\n"
		"     --no-units        Do not ask systemd about its units (a policy for another\n"
		"                       host).  By default, for a policy with a 'mode: none', the\n"
		"                       running systemd is asked (as root) which units attach\n"
		"                       network programs below it: a none that would lock them\n"
		"                       out is an error, as the daemon refuses it.\n"
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

/*
 * Our own messages go through the log (log.h), as the daemon's do: each
 * is escaped there as a whole, so a cgroup name inside a kernel's error
 * or a refused reload's reason cannot break the line or drive the
 * terminal; and under systemd (ExecReload=) they reach the journal at
 * priority err.
 */
static int usage_error(const char *format, ...) _printf_(1, 2);
static int usage_error(const char *format, ...) {
	_cleanup_free_ char *message = NULL;
	va_list ap;
	int k;

	va_start(ap, format);
	k = vasprintf(&message, format, ap);
	va_end(ap);
	if (k < 0)
		message = NULL;
	log_error("%s: %s", program_name(), message ?: "wrong usage");
	return EXIT_USAGE;
}

static int fail(const char *what, int r) {
	log_error("%s: %s: %s", program_name(), what, strerror(-r));
	return EXIT_FAILURE;
}

/*
 * systemd's units, for a policy with a none where a unit can be
 * (cgf_coexist_may_hold_units()): PID 1 is asked
 * over its private bus, as the daemon asks it.  *ret_known false: not
 * asked (no none, --no-units) or it could not be (no systemd here, not
 * root), said on standard error where it matters: a refusable none that
 * goes unchecked (no systemd to ask is said with -v only).
 */
static void read_units(const struct cgf_policy *p, bool verbose, struct cgf_unit_firewalls *units, bool *ret_known) {
	_cleanup_free_ char *error = NULL;
	size_t asked = 0;
	int r;

	*ret_known = false;
	if (!cgf_coexist_may_hold_units(p, false))
		return;
	r = cgf_systemd_read_units(units, &asked, &error);
	if (r >= 0) {
		*ret_known = true;
		if (verbose)
			printf("systemd: %zu loaded units asked about, %zu make it attach network programs\n", asked,
			       units->n);
		return;
	}
	if (!cgf_coexist_may_hold_units(p, true) || (r == -ENOENT && !verbose))
		return;
	log_warning("%s: warning: systemd's units not read (%s)%s; the none attachments are not checked against "
		    "the programs systemd attaches below them",
		    program_name(), error ?: strerror(-r), r == -EACCES ? ": run as root" : "");
}

/* The none attachments against systemd's units below them (no kernel:
 * check does not read it); errors into diags. */
static int check_units(const struct cgf_policy *p, const struct cgf_features *features, bool verbose,
		       struct cgf_diags *diags) {
	struct cgf_unit_firewalls units = {};
	struct cgf_coexist c;
	bool known;
	int r;

	read_units(p, verbose, &units, &known);
	if (!known)
		return 0;
	r = cgf_coexist_check(p, &units, NULL, &c);
	if (r >= 0)
		cgf_coexist_report(&c, p, features, diags);
	cgf_coexist_done(&c);
	cgf_unit_firewalls_done(&units);
	return r < 0 ? r : cgf_diags_status(diags);
}

static int verb_check(int argc, char *argv[]) {
	enum { ARG_KERNEL = 0x100, ARG_NO_UNITS };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "kernel", required_argument, NULL, ARG_KERNEL },
		{ "no-units", no_argument, NULL, ARG_NO_UNITS },
		{ "verbose", no_argument, NULL, 'v' },
		{},
	};
	_cleanup_(cgf_policy_freep) struct cgf_policy *policy = NULL;
	struct cgf_features features = CGF_FEATURES_PATCHED;
	struct cgf_diags diags = CGF_DIAGS_INIT;
	const char *kernel = "patched";
	bool verbose = false, units = true;
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
		case ARG_NO_UNITS:
			units = false;
			break;
		default:
			/* getopt_long() has said what is wrong. */
			return usage_error("see '%s check --help'", program_name());
		}

	policy = cgf_policy_new();
	if (!policy)
		return fail("check", -ENOMEM);

	/* The installed policy as the daemon reads it, owner and mode
	 * included; paths given (a checkout, a staging directory) by the
	 * type rules only, so that anyone can check them (cgfilterctl(1)). */
	if (optind >= argc)
		r = cgf_policy_load(policy, CGF_POLICY_MAIN, CGF_POLICY_DROPIN_DIR, CGF_TRUST_OWNER, &diags);
	else
		for (r = 0; optind < argc && r >= 0; optind++)
			r = cgf_policy_load_path(policy, argv[optind], CGF_TRUST_TYPE, &diags);
	if (r >= 0)
		r = cgf_policy_validate(policy, &features, &diags);
	/* Only a valid policy's nones mean something to compare. */
	if (r >= 0 && units && diags.n_errors == 0)
		r = check_units(policy, &features, verbose, &diags);
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
		for (size_t i = 0; i < policy->n_sources; i++) {
			_cleanup_free_ char *name = cgf_escape(policy->sources[i]->name);

			if (!name) {
				ret = fail("check", -ENOMEM);
				goto finish;
			}
			printf("read %s\n", name);
		}
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

static void help_plan(FILE *f) {
	fprintf(f,
		"Usage: %1$s plan [--json] [PATH...]\n"
		"\n"
		"Read the policy as the daemon does (PATH as for 'check'; without PATH the\n"
		"installed one), read the kernel's cgroup-BPF lists and print what a\n"
		"reconcile would do now: each bpf() call in the order the daemon makes\n"
		"them, and a report of what it leaves alone (foreign programs) or cannot\n"
		"do (a list the kernel would refuse, a mode change that needs a gap).\n"
		"Nothing is changed.  Needs the privileges of bpf(2) (root).\n"
		"\n"
		"A policy the daemon would refuse is refused here too: besides errors, a\n"
		"'mode: none' above the programs other controllers attach below it (units\n"
		"that ask systemd for IPAddressDeny= and the like, foreign programs attached\n"
		"now), unless the attachment says 'foreign-below: lock-out'.\n"
		"\n"
		"Options:\n"
		"     --json       The plan as JSON (stable keys; see cgfilterctl(1)).\n"
		"  -h --help       Show this help.\n"
		"\n"
		"Exit status: 0 the plan was made (also when it is empty), 1 the policy is\n"
		"invalid or would be refused, or the kernel could not be read, 2 wrong usage.\n",
		program_name());
}

static void help_status(FILE *f) {
	fprintf(f,
		"Usage: %1$s status [--format=table|json|prometheus] [--all] [CGROUP...]\n"
		"\n"
		"Show the kernel's cgroup-BPF lists for network filters: per cgroup and\n"
		"direction the mode and revision of its own list, then the programs that\n"
		"run for its packets in execution order, each with its owner (ours: the\n"
		"filter, '(audit)' when its enforce is false, or foreign), the cgroup it\n"
		"is attached at, its flags and, for ours, packet and byte counters of\n"
		"what it let pass, dropped, and would have dropped but let pass (audited\n"
		"rules).  Needs the privileges of bpf(2) (root).  Then, from the running\n"
		"cgfilterd (" CGF_RUNTIME_DIR "/" CGF_PENDING_FILE "): the lists its last reconcile\n"
		"failed, retried with backoff, with their last error, and the cgroups its\n"
		"walk could not enter; and (" CGF_RUNTIME_DIR "/" CGF_MISSING_FIREWALLS_FILE ") the\n"
		"units below a 'mode: none' of ours that run without the programs they\n"
		"asked systemd for (IPAddressDeny= ...): the kernel refused systemd's attach.\n"
		"\n"
		"CGROUP is a path relative to the cgroup2 mount ('.' is the root).\n"
		"Without CGROUP: the cgroups with programs of their own.\n"
		"\n"
		"Options:\n"
		"     --all        Also the cgroups that only inherit programs.\n"
		"     --format=FMT table (the default), json (stable keys) or prometheus\n"
		"                  (metrics in the text exposition format, for node_exporter's\n"
		"                  textfile collector; with the daemon's reconcile counts from\n"
		"                  " CGF_RUNTIME_DIR "/" CGF_RECONCILE_COUNTS_FILE "; implies --all); see\n"
		"                  cgfilterctl(1).\n"
		"     --json       The same as --format=json.\n"
		"  -h --help       Show this help.\n",
		program_name());
}

/* Errors of a policy, rendered, and the exit status they mean. */
static int policy_failed(struct cgf_diags *diags, int r) {
	if (r != -EINVAL)
		return fail("reading the policy", r);
	cgf_diags_sort(diags);
	(void) cgf_diags_render(diags, stderr, CGF_RENDER_SOURCE);
	log_error("%s: the policy has %zu error%s; nothing planned", program_name(), diags->n_errors,
		  diags->n_errors == 1 ? "" : "s");
	return EXIT_FAILURE;
}

static int print_plan_text(const struct cgf_plan *plan) {
	_cleanup_free_ char *text = NULL;
	size_t attaches = 0;
	int r;

	r = cgf_plan_format(plan, &text);
	if (r < 0)
		return fail("formatting the plan", r);
	fputs(text, stdout);
	for (size_t i = 0; i < plan->n_actions; i++)
		attaches += plan->actions[i].kind == CGF_ACTION_ATTACH;
	if (plan->n_actions == 0 && plan->n_reports == 0)
		printf("No changes: the kernel matches the policy.\n");
	else if (plan->n_actions == 0)
		printf("No changes; %zu report%s above.\n", plan->n_reports, plan->n_reports == 1 ? "" : "s");
	else
		printf("Plan: %zu attach, %zu detach, %zu report%s.\n", attaches, plan->n_actions - attaches,
		       plan->n_reports, plan->n_reports == 1 ? "" : "s");
	return fflush(stdout) == 0 ? EXIT_SUCCESS : fail("writing to standard output", -errno);
}

static int print_json(int (*render)(const void *what, struct cgf_json *j), const void *what) {
	_cleanup_(cgf_json_freep) struct cgf_json *j = NULL;
	int r;

	r = cgf_json_new(stdout, CGF_JSON_PRETTY, &j);
	if (r < 0)
		return fail("writing JSON", r);
	render(what, j);
	r = cgf_json_finish(j);
	return r < 0 ? fail("writing JSON", r) : EXIT_SUCCESS;
}

static int render_plan(const void *plan, struct cgf_json *j) {
	return cgf_plan_render_json(plan, j);
}

static int render_status(const void *status, struct cgf_json *j) {
	return cgf_status_render_json(status, j);
}

/* Read-only: no lock, so that plan and status work next to the daemon;
 * what the pins say that is not ours goes to standard error. */
static int open_kernel(struct cgf_kernel **ret) {
	_cleanup_free_ char *message = NULL;
	const char *const *warnings;
	size_t n;
	int r;

	r = cgf_kernel_open(NULL, NULL, CGF_KERNEL_READ, ret, &message);
	if (r < 0) {
		fprintf(stderr, "%s: opening the kernel's cgroup-BPF interface: %s\n", program_name(),
			message ?: strerror(-r));
		return r;
	}
	n = cgf_kernel_warnings(*ret, &warnings);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s: warning: %s\n", program_name(), warnings[i]);
	return 0;
}

static int verb_plan(int argc, char *argv[]) {
	enum { ARG_JSON = 0x100 };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, ARG_JSON },
		{},
	};
	_cleanup_(cgf_kernel_freep) struct cgf_kernel *k = NULL;
	_cleanup_(cgf_policy_freep) struct cgf_policy *policy = NULL;
	struct cgf_diags diags = CGF_DIAGS_INIT, refusal = CGF_DIAGS_INIT;
	struct cgf_unit_firewalls units = {};
	struct cgf_reconcile_gate gate;
	struct cgf_objects objects = {};
	struct cgf_reconcile rc = {};
	bool json = false, known;
	int c, r, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			help_plan(stdout);
			return EXIT_SUCCESS;
		case ARG_JSON:
			json = true;
			break;
		default:
			return usage_error("see '%s plan --help'", program_name());
		}

	r = open_kernel(&k);
	if (r < 0)
		return EXIT_FAILURE;
	r = cgf_policy_read(argv + optind, (size_t) (argc - optind), cgf_kernel_features(k), &policy, &objects,
			    &diags);
	if (r < 0) {
		ret = policy_failed(&diags, r);
		goto finish;
	}
	/* Warnings too: the operator sees what the daemon would log. */
	cgf_diags_sort(&diags);
	(void) cgf_diags_render(&diags, stderr, CGF_RENDER_SOURCE);
	/* Held to the gate the daemon holds a new policy to. */
	read_units(policy, false, &units, &known);
	gate = (struct cgf_reconcile_gate) { .units = known ? &units : NULL, .diags = &refusal };
	r = cgf_reconcile_run(k, policy, &objects, NULL, &gate, false, &rc);
	if (rc.refused) {
		cgf_diags_sort(&refusal);
		(void) cgf_diags_render(&refusal, stderr, CGF_RENDER_SOURCE);
		log_error("%s: the daemon would refuse this policy (%zu error%s); nothing planned", program_name(),
			  refusal.n_errors, refusal.n_errors == 1 ? "" : "s");
		ret = EXIT_FAILURE;
		goto finish;
	}
	if (r < 0) {
		ret = fail(rc.error ?: "planning", r);
		goto finish;
	}
	ret = json ? print_json(render_plan, rc.plan) : print_plan_text(rc.plan);
finish:
	cgf_reconcile_done(&rc);
	cgf_unit_firewalls_done(&units);
	cgf_objects_done(&objects);
	cgf_diags_done(&refusal);
	cgf_diags_done(&diags);
	return ret;
}

/* What the running daemon has not done (pending.h); none without a
 * daemon: *ret stays NULL. */
static int read_daemon_report(struct cgf_pending **ret) {
	_cleanup_free_ char *text = NULL;
	int r;

	r = cgf_runtime_read_file(CGF_PENDING_FILE, CGF_PENDING_FILE_MAX, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return cgf_pending_parse(text, ret);
}

/* The units the running daemon found without their programs
 * (missing-firewalls.h); none without a daemon: *ret stays NULL. */
static int read_missing_firewalls(struct cgf_missing_firewalls **ret) {
	_cleanup_free_ char *text = NULL;
	int r;

	r = cgf_runtime_read_file(CGF_MISSING_FIREWALLS_FILE, CGF_MISSING_FIREWALLS_FILE_MAX, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return cgf_missing_firewalls_parse(text, ret);
}

/* The running daemon's reconcile counts and reload line, for the
 * metrics; none without a daemon. */
static int read_daemon_counts(struct cgf_status *s) {
	_cleanup_free_ char *text = NULL;
	int r;

	r = cgf_runtime_read_file(CGF_RECONCILE_COUNTS_FILE, CGF_RECONCILE_COUNTS_FILE_MAX, &text);
	if (r >= 0)
		r = cgf_reconcile_counts_parse(text, &s->reconciles);
	if (r >= 0)
		s->has_reconciles = true;
	else if (r != -ENOENT)
		return fail("reading " CGF_RUNTIME_DIR "/" CGF_RECONCILE_COUNTS_FILE, r);
	r = cgf_runtime_read_reload(&s->reloads, &s->reload_ok, NULL);
	if (r >= 0)
		s->has_reload = true;
	else if (r != -ENOENT)
		return fail("reading " CGF_RUNTIME_DIR "/reload", r);
	return 0;
}

enum status_format {
	FORMAT_TABLE,
	FORMAT_JSON,
	FORMAT_PROMETHEUS,
};

static int parse_format(const char *s, enum status_format *ret) {
	static const char *const names[] = {
		[FORMAT_TABLE] = "table",
		[FORMAT_JSON] = "json",
		[FORMAT_PROMETHEUS] = "prometheus",
	};

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (streq(s, names[i])) {
			*ret = (enum status_format) i;
			return 0;
		}
	return -EINVAL;
}

static int verb_status(int argc, char *argv[]) {
	enum { ARG_JSON = 0x100, ARG_ALL, ARG_FORMAT };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "format", required_argument, NULL, ARG_FORMAT },
		{ "all", no_argument, NULL, ARG_ALL },
		{},
	};
	_cleanup_(cgf_kernel_freep) struct cgf_kernel *k = NULL;
	_cleanup_(cgf_actual_freep) struct cgf_actual *actual = NULL;
	_cleanup_(cgf_status_freep) struct cgf_status *status = NULL;
	struct cgf_cgroup_tree tree = {};
	enum status_format format = FORMAT_TABLE;
	bool all = false;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			help_status(stdout);
			return EXIT_SUCCESS;
		case ARG_JSON:
			format = FORMAT_JSON;
			break;
		case ARG_FORMAT:
			if (parse_format(optarg, &format) < 0)
				return usage_error("--format: '%s' is not table, json or prometheus", optarg);
			break;
		case ARG_ALL:
			all = true;
			break;
		default:
			return usage_error("see '%s status --help'", program_name());
		}

	/* Counters are kept per socket cgroup, mostly below the cgroup a
	 * filter is attached to: metrics without those would miss most. */
	if (format == FORMAT_PROMETHEUS)
		all = true;
	r = open_kernel(&k);
	if (r < 0)
		return EXIT_FAILURE;
	for (int i = optind; i < argc; i++) {
		uint64_t id;

		if (cgf_kernel_cgroup_id(k, argv[i], &id) < 0)
			return usage_error("no cgroup '%s' below %s", argv[i], cgf_kernel_cgroup_root(k));
	}
	r = cgf_cgroup_tree_read(cgf_kernel_cgroup_root_fd(k), &tree);
	if (r >= 0)
		r = cgf_kernel_read(k, &tree, &actual);
	cgf_cgroup_tree_done(&tree);
	if (r < 0)
		return fail("reading the kernel's cgroup-BPF lists", r);
	r = cgf_kernel_status(k, actual, argv + optind, (size_t) (argc - optind), all, &status);
	if (r < 0)
		return fail("reading the effective programs", r);
	r = read_daemon_report(&status->daemon);
	if (r < 0)
		return fail("reading " CGF_RUNTIME_DIR "/" CGF_PENDING_FILE, r);
	r = read_missing_firewalls(&status->missing_firewalls);
	if (r < 0)
		return fail("reading " CGF_RUNTIME_DIR "/" CGF_MISSING_FIREWALLS_FILE, r);
	if (format == FORMAT_JSON)
		return print_json(render_status, status);
	if (format == FORMAT_PROMETHEUS) {
		r = read_daemon_counts(status);
		if (r != 0)
			return r;
		r = cgf_status_render_prometheus(status, stdout);
	} else
		r = cgf_status_render_table(status, stdout);
	if (r >= 0 && fflush(stdout) != 0)
		r = -errno;
	return r < 0 ? fail("writing to standard output", r) : EXIT_SUCCESS;
}

static void help_reload(FILE *f) {
	fprintf(f,
		"Usage: %1$s reload [--pid PID] [--timeout SEC]\n"
		"\n"
		"Send SIGHUP to the running cgfilterd (PID, else the pid in " CGF_RUNTIME_DIR "/pid)\n"
		"and wait until it reports the outcome in " CGF_RUNTIME_DIR "/reload.  The signal\n"
		"goes only to a process whose executable is cgfilterd (checked through a pidfd,\n"
		"so a recycled pid gets nothing): a stale pid is an error.  The daemon\n"
		"takes a new policy only when it is valid and the kernel accepted all of it;\n"
		"otherwise the policy in force stays, the journal says why, and this command\n"
		"fails.  cgfilterd.service runs it as ExecReload, so 'systemctl reload\n"
		"cgfilterd' fails for a refused policy.\n"
		"\n"
		"Options:\n"
		"     --pid PID      The daemon's pid ($MAINPID in the unit).\n"
		"     --timeout SEC  Give up after SEC seconds (default 60).\n"
		"  -h --help         Show this help.\n"
		"\n"
		"Exit status: 0 the new policy is in force, 1 it was refused or no answer came.\n",
		program_name());
}

static int verb_reload(int argc, char *argv[]) {
	enum { ARG_PID = 0x100, ARG_TIMEOUT };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "pid", required_argument, NULL, ARG_PID },
		{ "timeout", required_argument, NULL, ARG_TIMEOUT },
		{},
	};
	_cleanup_free_ char *why = NULL, *message = NULL;
	unsigned before = 0, after;
	long timeout_ms = 60000;
	bool ok, from_file = false;
	pid_t pid = 0;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		char *end;
		long v;

		switch (c) {
		case 'h':
			help_reload(stdout);
			return EXIT_SUCCESS;
		case ARG_PID:
		case ARG_TIMEOUT:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end || v <= 0 || v > INT32_MAX)
				return usage_error("%s: expected a positive number, not '%s'",
						   c == ARG_PID ? "--pid" : "--timeout", optarg);
			if (c == ARG_PID)
				pid = (pid_t) v;
			else
				timeout_ms = v * 1000;
			break;
		default:
			return usage_error("see '%s reload --help'", program_name());
		}
	}
	if (optind < argc)
		return usage_error("reload takes no arguments; see '%s reload --help'", program_name());
	if (pid == 0) {
		r = cgf_runtime_read_pid(&pid);
		if (r < 0)
			return fail("finding the daemon (" CGF_RUNTIME_DIR "/pid)", r);
		from_file = true;
	}

	r = cgf_runtime_read_reload(&before, &ok, NULL);
	if (r < 0 && r != -ENOENT)
		return fail("reading " CGF_RUNTIME_DIR "/reload", r);
	/* Only cgfilterd gets the SIGHUP: a stale pid may name anyone now. */
	r = cgf_runtime_signal(pid, "cgfilterd", SIGHUP, &message);
	if (r < 0) {
		fprintf(stderr, "%s: not signalling: %s%s%s\n", program_name(), message ?: strerror(-r),
			from_file ? " (from " CGF_RUNTIME_DIR "/pid" : "",
			from_file ? (r == -ESTALE || r == -ESRCH ? "; is cgfilterd running?)" : ")") : "");
		return EXIT_FAILURE;
	}
	for (long waited = 0;; waited += 20) {
		const struct timespec tick = { .tv_nsec = 20 * 1000 * 1000 };

		r = cgf_runtime_read_reload(&after, &ok, &why);
		if (r >= 0 && after != before)
			break;
		free(why);
		why = NULL;
		if (waited >= timeout_ms) {
			log_error("%s: no answer from cgfilterd (pid %d) within %ld s", program_name(), (int) pid,
				  timeout_ms / 1000);
			return EXIT_FAILURE;
		}
		nanosleep(&tick, NULL);
	}
	if (!ok) {
		log_error("%s: the new policy was refused: %s; the policy in force stays", program_name(),
			  why ?: "see the journal");
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

static const struct {
	const char *name;
	int (*run)(int argc, char *argv[]);
} verbs[] = {
	{ "check", verb_check },
	{ "plan", verb_plan },
	{ "status", verb_status },
	{ "reload", verb_reload },
};

int main(int argc, char *argv[]) {
	enum { ARG_VERSION = 0x100 };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{},
	};
	int c;

	cgf_log_setup_libbpf();
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
