// SPDX-License-Identifier: GPL-2.0-only
/*
 * LD_PRELOAD shim for kernel-edge.test, watch.test and isolation.test, around syscall() (through which our
 * lib/cgbpf-sys.c and libbpf call bpf(2)):
 *
 * - with $CGF_STALE_PIN it plays "another controller" that changes a
 *   list between the daemon's read and its write: on the first
 *   BPF_PROG_ATTACH that carries an expected_revision, it first attaches
 *   the program pinned there to the same cgroup and type (ALLOW_MULTI,
 *   no revision check), then lets the daemon's attach go on: the kernel
 *   must answer -ESTALE, and the daemon must read again, plan again and
 *   keep the other controller's program;
 * - with $CGF_BPF_FAIL_ATTACH=N the N-th attach of a program
 *   (BPF_PROG_ATTACH or BPF_LINK_CREATE; the feature probe's attaches of
 *   fd -1 do not count) fails with EBUSY without reaching the kernel, once:
 *   the daemon must try again later by itself;
 * - with $CGF_BPF_CALLS it appends one line per bpf(2) call of any
 *   command (reads and queries too), so that a test can count what one
 *   event costs;
 * - with $CGF_BPF_FAIL_NTH=N the N-th *mutating* call of the daemon's
 *   own doing fails once, with $CGF_BPF_FAIL_ERRNO (a number; default
 *   EBUSY), without reaching the kernel; "N+" fails the N-th and every
 *   later one (a list that keeps failing).  Counted: BPF_PROG_ATTACH of a
 *   program (not the probe's fd -1), BPF_PROG_DETACH, BPF_LINK_DETACH,
 *   and BPF_MAP_UPDATE_ELEM / BPF_MAP_DELETE_ELEM on a map whose name
 *   has no '.' (libbpf's own .rodata/.data/.bss set-up during a load is
 *   not the daemon's map data and is not counted);
 * - with $CGF_BPF_NTH_LOG each counted call appends "<n> <command>" to
 *   that file, whether or not it succeeded: a fault-free run says how
 *   many N there are to try;
 * - with $CGF_BPF_RMDIR_NTH=N:PATH the cgroup directory PATH (empty) is
 *   removed right before the N-th counted call: a cgroup that vanishes
 *   between the daemon's snapshot and its attach;
 * - with $CGF_BPF_LOG it appends the name of every successful bpf(2)
 *   command that changes kernel state (loads, pins, attaches, detaches,
 *   map writes) to that file, one a line: a reconcile with nothing to do
 *   must add none.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "cgbpf-uapi.h"

typedef long (*syscall_fn)(long number, ...);

static int fired;
static long attaches;
static long counted; /* mutating calls seen by CGF_BPF_FAIL_NTH, CGF_BPF_NTH_LOG, CGF_BPF_RMDIR_NTH */

/* The commands that change something; reads and queries are not listed. */
static const char *mutating(long cmd)
{
	switch (cmd) {
	case BPF_MAP_CREATE: return "MAP_CREATE";
	case BPF_MAP_UPDATE_ELEM: return "MAP_UPDATE_ELEM";
	case BPF_MAP_DELETE_ELEM: return "MAP_DELETE_ELEM";
	case BPF_PROG_LOAD: return "PROG_LOAD";
	case BPF_OBJ_PIN: return "OBJ_PIN";
	case BPF_PROG_ATTACH: return "PROG_ATTACH";
	case BPF_PROG_DETACH: return "PROG_DETACH";
	case BPF_LINK_CREATE: return "LINK_CREATE";
	case BPF_LINK_UPDATE: return "LINK_UPDATE";
	case BPF_LINK_DETACH: return "LINK_DETACH";
	case BPF_MAP_FREEZE: return "MAP_FREEZE";
	case BPF_BTF_LOAD: return "BTF_LOAD";
	default: return NULL;
	}
}

static void log_call(long cmd)
{
	const char *log = getenv("CGF_BPF_LOG"), *name = mutating(cmd);
	FILE *f;

	if (!log || !name)
		return;
	f = fopen(log, "ae");
	if (!f)
		return;
	fprintf(f, "%s\n", name);
	fclose(f);
}

static void count_call(long cmd)
{
	const char *path = getenv("CGF_BPF_CALLS");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "ae");
	if (!f)
		return;
	fprintf(f, "%ld\n", cmd);
	fclose(f);
}

static syscall_fn real_syscall(void)
{
	return (syscall_fn)dlsym(RTLD_NEXT, "syscall");
}

static void other_controller(syscall_fn sys, const struct cgbpf_attach_attr *theirs)
{
	const char *pin = getenv("CGF_STALE_PIN");
	struct cgbpf_attach_attr attr;
	union bpf_attr get;
	long fd;

	if (!pin)
		return;
	memset(&get, 0, sizeof(get));
	get.pathname = (uint64_t)(uintptr_t)pin;
	fd = sys(__NR_bpf, BPF_OBJ_GET, &get, sizeof(get));
	if (fd < 0)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = theirs->target_fd;
	attr.attach_bpf_fd = (uint32_t)fd;
	attr.attach_type = theirs->attach_type;
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	sys(__NR_bpf, BPF_PROG_ATTACH, &attr, sizeof(attr));
}

/* An attach of a program: not the feature probe's attach of fd -1. */
static int is_attach(long cmd, const void *attr)
{
	if (cmd == BPF_PROG_ATTACH)
		return ((const struct cgbpf_attach_attr *)attr)->attach_bpf_fd != (uint32_t)-1;
	if (cmd == BPF_LINK_CREATE)
		return ((const union bpf_attr *)attr)->link_create.prog_fd != (uint32_t)-1;
	return 0;
}

/* libbpf names the maps it makes for global data "<obj>.rodata" and the
 * like; the daemon's maps have plain names ("config", "rules_v4"). */
static int is_own_map(syscall_fn sys, uint32_t map_fd)
{
	struct bpf_map_info info;
	union bpf_attr attr;

	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = map_fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uint64_t)(uintptr_t)&info;
	if (sys(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) < 0)
		return 1;
	return strchr(info.name, '.') == NULL;
}

static int is_counted(syscall_fn sys, long cmd, const void *attr)
{
	switch (cmd) {
	case BPF_PROG_ATTACH:
		return is_attach(cmd, attr);
	case BPF_PROG_DETACH:
	case BPF_LINK_DETACH:
		return 1;
	case BPF_MAP_UPDATE_ELEM:
	case BPF_MAP_DELETE_ELEM:
		return is_own_map(sys, ((const union bpf_attr *)attr)->map_fd);
	default:
		return 0;
	}
}

static void nth_log(long n, long cmd)
{
	const char *log = getenv("CGF_BPF_NTH_LOG");
	FILE *f;

	if (!log)
		return;
	f = fopen(log, "ae");
	if (!f)
		return;
	fprintf(f, "%ld %s\n", n, mutating(cmd));
	fclose(f);
}

/* CGF_BPF_RMDIR_NTH=N:PATH */
static void rmdir_before(long n)
{
	const char *spec = getenv("CGF_BPF_RMDIR_NTH");
	char *end;

	if (!spec || strtol(spec, &end, 10) != n || *end != ':')
		return;
	rmdir(end + 1);
}

long syscall(long number, ...)
{
	syscall_fn sys = real_syscall();
	long a[6], ret;
	va_list ap;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == __NR_bpf)
		count_call(a[0]);

	if (number == __NR_bpf && a[0] == BPF_PROG_ATTACH && !fired &&
	    (size_t)a[2] >= sizeof(struct cgbpf_attach_attr)) {
		const struct cgbpf_attach_attr *attr = (const void *)a[1];

		if (attr->expected_revision != 0) {
			fired = 1;
			other_controller(sys, attr);
		}
	}
	if (number == __NR_bpf && is_attach(a[0], (const void *)a[1]) &&
	    getenv("CGF_BPF_FAIL_ATTACH") && ++attaches == atol(getenv("CGF_BPF_FAIL_ATTACH"))) {
		errno = EBUSY;
		return -1;
	}
	if (number == __NR_bpf && is_counted(sys, a[0], (const void *)a[1])) {
		const char *nth = getenv("CGF_BPF_FAIL_NTH");

		counted++;
		nth_log(counted, a[0]);
		rmdir_before(counted);
		if (nth && (counted == atol(nth) || (strchr(nth, '+') && counted > atol(nth)))) {
			const char *e = getenv("CGF_BPF_FAIL_ERRNO");

			errno = e ? atoi(e) : EBUSY;
			return -1;
		}
	}
	ret = sys(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	/* Only what took effect: the daemon's feature probe attaches with
	 * no program, which always fails. */
	if (number == __NR_bpf && ret >= 0)
		log_call(a[0]);
	return ret;
}
