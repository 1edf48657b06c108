/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * What kernel.c and kernel-progs.c share; nobody else includes this.
 * The calls run one way: kernel.c (open, read, apply) calls kernel-progs.c
 * (our instances), never the reverse.
 */

#include <linux/bpf.h>

#include "kernel.h"
#include "kernel-progs.h"
#include "pin-root.h"

struct cgf_kernel {
	int cgroup_fd;
	char *cgroup_root;
	char *pin_root;
	struct cgf_pin_root pin; /* its fd, and whether we hold its lock */
	char **warnings;         /* pins not adopted, the pin root's mode fixed */
	size_t n_warnings;
	struct cgf_features features;
	/* Our instances, each allocated on its own: callers keep pointers
	 * while more are loaded. */
	struct cgf_kernel_prog **progs;
	size_t n_progs;
};

/* BPF_CGROUP_INET_INGRESS or _EGRESS. */
static inline enum bpf_attach_type cgf_direction_attach_type(enum cgf_direction d) {
	return d == CGF_INGRESS ? BPF_CGROUP_INET_INGRESS : BPF_CGROUP_INET_EGRESS;
}
