// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgbpf-test: kernel tests of the cgroup-bpf attach API series.
 *
 *   cgbpf-test --kernel patched|baseline [--only cases|random]
 *              [--seed N] [--ops N] [--lsm]
 *
 * Runs in the guest as root (tests/vm/kernel-api.test); it loads and
 * attaches BPF programs and creates cgroups under
 * /sys/fs/cgroup/cgf-ktest-<pid>/, removed at the end.  Prints one
 * "ok - ..." / "not ok - ..." line per check, "# " notes, and a final
 * "N passed, M failed"; exits non-zero on any failure.
 *
 * --kernel says what the booted kernel is meant to be: "patched" expects
 * the spec (docs/cgroup-bpf-uapi.md), "baseline" expects
 * Debian's 6.1 as shipped (old flags work, every new one is -EINVAL).
 * --seed replays the randomized model test (default: time-based);
 * --ops sets its length (default 10000).  --lsm adds the BPF_LSM_CGROUP
 * cases, which need a kernel with BTF and the BPF LSM (the debug
 * kernel; tests/vm/kernel-api.test passes it there).
 *
 * The cases: the directed ones (cases.c), the fault sweeps (faults.c,
 * both kernels), the races (races.c, patched) and the BPF_LSM_CGROUP
 * cases (lsm.c), then the randomized model test (fuzz.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "report.h"

struct options {
	bool patched;
	bool cases;
	bool random;
	bool lsm;
	uint64_t seed;
	unsigned ops;
};

static int usage(void)
{
	fputs("usage: cgbpf-test --kernel patched|baseline [--only cases|random] [--seed N] [--ops N] [--lsm]\n",
	      stderr);
	return 2;
}

static int parse_options(int argc, char **argv, struct options *ret)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "only", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "lsm", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct options o = { .cases = true, .random = true, .ops = 10000 };
	bool have_kernel = false, have_seed = false;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (strcmp(optarg, "patched") != 0 && strcmp(optarg, "baseline") != 0)
				return -EINVAL;
			o.patched = strcmp(optarg, "patched") == 0;
			have_kernel = true;
			break;
		case 'o':
			o.cases = strcmp(optarg, "cases") == 0;
			o.random = strcmp(optarg, "random") == 0;
			if (!o.cases && !o.random)
				return -EINVAL;
			break;
		case 's':
			errno = 0;
			o.seed = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg)
				return -EINVAL;
			have_seed = true;
			break;
		case 'l':
			o.lsm = true;
			break;
		case 'n':
			errno = 0;
			o.ops = (unsigned)strtoul(optarg, &end, 0);
			if (errno || *end || end == optarg)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	if (!have_kernel || optind != argc)
		return -EINVAL;
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		o.seed = (uint64_t)ts.tv_sec * 1000003u + (uint64_t)ts.tv_nsec;
	}
	*ret = o;
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct fixture f;

	if (parse_options(argc, argv, &o) < 0)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	report_note("cgbpf-test: %s kernel expected%s", o.patched ? "patched" : "baseline",
		    o.random ? "" : ", directed cases only");
	if (o.random)
		report_note("random: seed %" PRIu64 ", %u ops (replay: --only random --seed %" PRIu64 ")",
			    o.seed, o.ops, o.seed);
	if (geteuid() != 0) {
		report_fail("set-up: must run as root in the guest (scripts/vm)");
		return report_finish();
	}
	if (fixture_init(&f, o.patched) == 0) {
		if (o.cases) {
			cases_run(&f);
			faults_run(&f);
			if (f.patched)
				races_run(&f);
			if (o.lsm)
				lsm_run(&f);
			else
				report_note("lsm-cgroup: not this kernel's: the BPF_LSM_CGROUP cases need BTF and the "
					    "BPF LSM, which the debug kernel has (scripts/vm --kernel debug)");
		}
		if (o.random)
			fuzz_run(&f, o.seed, o.ops);
	}
	fixture_fini(&f);
	if (o.random)
		report_note("random: seed %" PRIu64 ", %u ops", o.seed, o.ops);
	return report_finish();
}
