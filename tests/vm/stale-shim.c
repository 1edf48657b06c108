// SPDX-License-Identifier: GPL-2.0-only
/*
 * LD_PRELOAD shim for backend.test: plays "another controller" that
 * changes a list between the daemon's read and its write.  On the first
 * BPF_PROG_ATTACH that carries an expected_revision, it first attaches
 * the program pinned at $CGF_STALE_PIN to the same cgroup and type
 * (ALLOW_MULTI, no revision check), then lets the daemon's attach go on:
 * the kernel must answer -ESTALE, and the daemon must read again, plan
 * again and keep the other controller's program.
 *
 * It wraps syscall(), through which our lib/cgbpf-sys.c calls bpf(2).
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#include "cgbpf-uapi.h"

typedef long (*syscall_fn)(long number, ...);

static int fired;

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

long syscall(long number, ...)
{
	syscall_fn sys = real_syscall();
	long a[6];
	va_list ap;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);

	if (number == __NR_bpf && a[0] == BPF_PROG_ATTACH && !fired &&
	    (size_t)a[2] >= sizeof(struct cgbpf_attach_attr)) {
		const struct cgbpf_attach_attr *attr = (const void *)a[1];

		if (attr->expected_revision != 0) {
			fired = 1;
			other_controller(sys, attr);
		}
	}
	return sys(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
