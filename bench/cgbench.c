// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgbench: the kernel side of bench/run's kernel-against-kernel parts, in
 * the guest.  It works with the smallest cgroup_skb program there is
 * ("r0 = 1; exit"), so that what it measures is the kernel's own cost of
 * running (part 1) or attaching (part 2) programs, not a filter's.
 *
 *   cgbench progs BASE NPROGS LEVELS [--preorder] -- CMD [ARG...]
 *       Create the chain BASE/l1/.../lLEVELS, attach NPROGS programs on
 *       egress with BPF_F_ALLOW_MULTI (and BPF_F_PREORDER), spread from the
 *       top of the chain down (8 over 3 levels: 3, 3, 2), run CMD with
 *       every "{}" in its arguments replaced by the deepest cgroup, then
 *       detach and remove the chain.  Exit status: CMD's.
 *
 *   cgbench attach-cost BASE DESCENDANTS REPS MODE...
 *       Create DESCENDANTS cgroups below BASE (groups of 100: one group
 *       cgroup and 99 children), then REPS times, for each MODE in turn
 *       (none, override, multi, multi-preorder), attach one program to
 *       BASE on egress with that mode and detach it again.  Each attach
 *       and detach makes the kernel recompute the effective array of
 *       every descendant.  Prints per mode
 *       "mode M attach_us MEDIAN detach_us MEDIAN attach_min_us MIN
 *       detach_min_us MIN reps N descendants D".  Under TCG, a vCPU the
 *       host preempts makes a call look dearer than it was: the minimum
 *       is the kernel's own cost, the median shows the noise.
 *
 * Exit status 2: usage or set-up error, 1: a bpf() call failed (on the
 * baseline kernel, BPF_F_PREORDER does: bench/run does not ask for it
 * there).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgbpf-sys.h"

#define MAX_PROGS 64
#define MAX_LEVELS 8
#define GROUP_SIZE 100

static int load_pass_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_SKB;
	attr.expected_attach_type = BPF_CGROUP_INET_EGRESS;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (uintptr_t)"GPL";
	strncpy(attr.prog_name, "cgbench_pass", sizeof(attr.prog_name) - 1);
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0)
		fprintf(stderr, "cgbench: BPF_PROG_LOAD: %s\n", strerror(errno));
	return fd;
}

static int usage(void)
{
	fprintf(stderr, "usage: cgbench progs BASE NPROGS LEVELS [--preorder] -- CMD [ARG...]\n"
			"       cgbench attach-cost BASE DESCENDANTS REPS none|override|multi|multi-preorder...\n");
	return 2;
}

static int open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "cgbench: %s: %s\n", path, strerror(errno));
	return fd;
}

static int make_cgroup(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "cgbench: mkdir %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median_u64(uint64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(n - 1) / 2];
}

static unsigned int parse_count(const char *s, unsigned int max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v > max) {
		fprintf(stderr, "cgbench: '%s' is not a count up to %u\n", s, max);
		exit(2);
	}
	return (unsigned int)v;
}

/* Run argv with "{}" replaced by leaf; returns its exit status. */
static int run_in(char **argv, const char *leaf)
{
	pid_t pid;
	int status;

	for (char **a = argv; *a; a++)
		if (strcmp(*a, "{}") == 0)
			*a = (char *)leaf;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "cgbench: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int cmd_progs(int argc, char **argv)
{
	char chain[MAX_LEVELS][4096];
	int cg[MAX_LEVELS], prog[MAX_PROGS], at[MAX_PROGS];
	unsigned int nprogs, levels, made = 0, attached = 0;
	bool preorder = false;
	int i = 5, r = 1;

	if (argc < 7)
		return usage();
	nprogs = parse_count(argv[3], MAX_PROGS);
	levels = parse_count(argv[4], MAX_LEVELS);
	if (levels == 0)
		return usage();
	if (strcmp(argv[i], "--preorder") == 0) {
		preorder = true;
		i++;
	}
	if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc)
		return usage();

	for (unsigned int l = 0; l < levels; l++) {
		snprintf(chain[l], sizeof(chain[l]), "%s/l%u", l ? chain[l - 1] : argv[2], l + 1);
		if (make_cgroup(chain[l]) < 0) {
			r = 2;
			goto out;
		}
		cg[l] = open_dir(chain[l]);
		made++;
		if (cg[l] < 0) {
			r = 2;
			goto out;
		}
	}
	for (unsigned int p = 0; p < nprogs; p++) {
		struct cgbpf_attach_opts opts = {
			.sz = sizeof(opts),
			.flags = BPF_F_ALLOW_MULTI | (preorder ? BPF_F_PREORDER : 0),
		};
		int err;

		/* The top of the chain first: 8 over 3 levels are 3, 3, 2. */
		at[p] = (int)(p * levels / nprogs);
		prog[p] = load_pass_prog();
		if (prog[p] < 0)
			goto out;
		err = cgbpf_prog_attach(cg[at[p]], prog[p], BPF_CGROUP_INET_EGRESS, &opts);
		if (err < 0) {
			fprintf(stderr, "cgbench: attach %u at %s: %s\n", p, chain[at[p]], strerror(-err));
			close(prog[p]);
			goto out;
		}
		attached++;
	}
	r = run_in(argv + i + 1, chain[levels - 1]);
out:
	for (unsigned int p = 0; p < attached; p++) {
		if (cgbpf_prog_detach(cg[at[p]], prog[p], BPF_CGROUP_INET_EGRESS, NULL) < 0)
			r = r ? r : 1;
		close(prog[p]);
	}
	while (made > 0) {
		made--;
		if (cg[made] >= 0)
			close(cg[made]);
		rmdir(chain[made]);
	}
	return r;
}

static int mode_flags(const char *mode, uint32_t *ret)
{
	if (strcmp(mode, "none") == 0)
		*ret = 0;
	else if (strcmp(mode, "override") == 0)
		*ret = BPF_F_ALLOW_OVERRIDE;
	else if (strcmp(mode, "multi") == 0)
		*ret = BPF_F_ALLOW_MULTI;
	else if (strcmp(mode, "multi-preorder") == 0)
		*ret = BPF_F_ALLOW_MULTI | BPF_F_PREORDER;
	else
		return -1;
	return 0;
}

/* DESCENDANTS cgroups below base: groups of GROUP_SIZE (a group and its children). */
static unsigned int group_size(unsigned int descendants, unsigned int g)
{
	unsigned int left = descendants - g * GROUP_SIZE;

	return left > GROUP_SIZE ? GROUP_SIZE : left;
}

static int make_tree(const char *base, unsigned int descendants)
{
	char path[4096];

	for (unsigned int g = 0; g * GROUP_SIZE < descendants; g++) {
		snprintf(path, sizeof(path), "%s/g%u", base, g);
		if (make_cgroup(path) < 0)
			return -1;
		for (unsigned int c = 1; c < group_size(descendants, g); c++) {
			snprintf(path, sizeof(path), "%s/g%u/c%u", base, g, c);
			if (make_cgroup(path) < 0)
				return -1;
		}
	}
	return 0;
}

static void remove_tree(const char *base, unsigned int descendants)
{
	char path[4096];

	for (unsigned int g = 0; g * GROUP_SIZE < descendants; g++) {
		for (unsigned int c = 1; c < group_size(descendants, g); c++) {
			snprintf(path, sizeof(path), "%s/g%u/c%u", base, g, c);
			rmdir(path);
		}
		snprintf(path, sizeof(path), "%s/g%u", base, g);
		rmdir(path);
	}
	rmdir(base);
}

static int cmd_attach_cost(int argc, char **argv)
{
	unsigned int descendants, reps, nmodes = (unsigned int)argc - 5;
	uint32_t flags[8];
	uint64_t *ns;
	int base = -1, prog = -1, r = 0;

	if (argc < 6 || nmodes > 8)
		return usage();
	descendants = parse_count(argv[3], 1000000);
	reps = parse_count(argv[4], 100000);
	for (unsigned int m = 0; m < nmodes; m++)
		if (mode_flags(argv[5 + m], &flags[m]) < 0)
			return usage();
	if (reps == 0)
		return usage();
	/* Per mode, reps attach times, then reps detach times. */
	ns = calloc((size_t)nmodes * 2 * reps, sizeof(*ns));
	if (!ns)
		return 2;
	if (make_cgroup(argv[2]) < 0 || make_tree(argv[2], descendants) < 0) {
		r = 2;
		goto out;
	}
	base = open_dir(argv[2]);
	prog = load_pass_prog();
	if (base < 0 || prog < 0) {
		r = 2;
		goto out;
	}
	/* The modes take turns within each repetition: drift hits all alike. */
	for (unsigned int i = 0; i < reps; i++) {
		for (unsigned int m = 0; m < nmodes; m++) {
			struct cgbpf_attach_opts opts = { .sz = sizeof(opts), .flags = flags[m] };
			uint64_t *attach_ns = ns + (size_t)m * 2 * reps, *detach_ns = attach_ns + reps;
			uint64_t t0, t1, t2;
			int err;

			t0 = now_ns();
			err = cgbpf_prog_attach(base, prog, BPF_CGROUP_INET_EGRESS, &opts);
			t1 = now_ns();
			if (err < 0) {
				fprintf(stderr, "cgbench: attach %s at %s: %s\n", argv[5 + m], argv[2], strerror(-err));
				r = 1;
				goto out;
			}
			err = cgbpf_prog_detach(base, prog, BPF_CGROUP_INET_EGRESS, NULL);
			t2 = now_ns();
			if (err < 0) {
				fprintf(stderr, "cgbench: detach at %s: %s\n", argv[2], strerror(-err));
				r = 1;
				goto out;
			}
			attach_ns[i] = t1 - t0;
			detach_ns[i] = t2 - t1;
		}
	}
	for (unsigned int m = 0; m < nmodes; m++) {
		uint64_t *attach_ns = ns + (size_t)m * 2 * reps, *detach_ns = attach_ns + reps;

		/* median_u64() sorts: the minimum is the first one after it. */
		printf("mode %s attach_us %.1f detach_us %.1f attach_min_us %.1f detach_min_us %.1f reps %u descendants %u\n",
		       argv[5 + m], median_u64(attach_ns, reps) / 1000.0, median_u64(detach_ns, reps) / 1000.0,
		       attach_ns[0] / 1000.0, detach_ns[0] / 1000.0, reps, descendants);
	}
out:
	free(ns);
	if (prog >= 0)
		close(prog);
	if (base >= 0)
		close(base);
	remove_tree(argv[2], descendants);
	return r;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "progs") == 0)
		return cmd_progs(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "attach-cost") == 0)
		return cmd_attach_cost(argc, argv);
	return usage();
}
