/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/* What kernel.c and kernel-progs.c share; nobody else includes this. */

#include "kernel.h"
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

/* Adopts every instance pinned under the pin root. */
int cgf_kernel_progs_scan(struct cgf_kernel *k);
void cgf_kernel_progs_done(struct cgf_kernel *k);

/* The lowest-numbered instance of (filter, identity, direction, preorder)
 * whose id is not among ids[n] (the list it is to join), or NULL. */
const struct cgf_kernel_prog *cgf_kernel_free_instance(const struct cgf_kernel *k, const char *filter,
							const char *identity, enum cgf_direction direction,
							bool preorder, const uint32_t *ids, size_t n);

/* Loads, names and pins one more instance of the object's program. */
int cgf_kernel_load_instance(struct cgf_kernel *k, const struct cgf_filter_object *obj, bool preorder,
			     const struct cgf_kernel_prog **ret, char **ret_message);
