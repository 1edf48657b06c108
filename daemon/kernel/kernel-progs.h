/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * Our program instances under the pin root (kernel-progs.c): adopting the
 * pins found at start, loading and pinning new ones, collecting the ones
 * no list holds, and their maps.  The kernel edge (kernel.c) owns one
 * struct cgf_instances and is the only caller; this file knows nothing
 * of the kernel edge's handle, so the calls run one way.
 */

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>

#include "cgroup-tree.h"
#include "filter-object.h"
#include "pin-root.h"
#include "state.h"

/* One of our program instances, from its pin and its identity record. */
struct cgf_kernel_prog {
	uint32_t prog_id;
	int fd;
	char *filter;
	char *identity;
	enum cgf_direction direction; /* the attach type it was loaded for */
	bool preorder;
	unsigned instance;
	char *pin;
};

struct cgf_instances {
	const char *pin_root;           /* the kernel edge's: the path, for pins and messages */
	const struct cgf_pin_root *pin; /* the kernel edge's: its fd, and whether we hold its lock */
	/* Each allocated on its own: callers keep pointers while more are
	 * loaded. */
	struct cgf_kernel_prog **progs;
	size_t n_progs;
	char **warnings;                /* pins not adopted, the pin root's mode fixed */
	size_t n_warnings;
};

/* BPF_CGROUP_INET_INGRESS or _EGRESS: what a program is loaded for, and
 * the list it is attached to. */
static inline enum bpf_attach_type cgf_direction_attach_type(enum cgf_direction d) {
	return d == CGF_INGRESS ? BPF_CGROUP_INET_INGRESS : BPF_CGROUP_INET_EGRESS;
}

/* Adopts every instance pinned under the pin root. */
int cgf_instances_scan(struct cgf_instances *in);
/* Frees the instances and the warnings (the pin root is the caller's). */
void cgf_instances_done(struct cgf_instances *in);

/* Adds a line to what the caller is to log about the pins. */
void cgf_instances_warn(struct cgf_instances *in, const char *format, ...) _printf_(2, 3);

/* Our instance with that id, or NULL: a foreign program. */
const struct cgf_kernel_prog *cgf_instances_find(const struct cgf_instances *in, uint32_t prog_id);

/* The lowest-numbered instance of (filter, identity, direction, preorder)
 * whose id is not among ids[n] (the list it is to join), or NULL. */
const struct cgf_kernel_prog *cgf_instances_find_free(const struct cgf_instances *in, const char *filter,
						       const char *identity, enum cgf_direction direction,
						       bool preorder, const uint32_t *ids, size_t n);

/* Loads, names and pins one more instance of the object's program. */
int cgf_instances_load(struct cgf_instances *in, const struct cgf_filter_object *obj, bool preorder,
		       const struct cgf_kernel_prog **ret, char **ret_message);

/*
 * Unpins the instances that no list of "actual" (a read of the whole
 * tree) holds, removes their directories once no instance is left, and
 * drops the counters of cgroups no longer in the tree.  Returns the
 * number of instances removed, or -errno (-EROFS: the pin root is not
 * locked by us).
 */
int cgf_instances_gc(struct cgf_instances *in, const struct cgf_actual *actual, const struct cgf_cgroup_tree *tree);

/* The fd of a map of our object for (filter, identity), from its pin, or
 * -errno (-ENOENT: no such map). */
int cgf_instances_map_fd(struct cgf_instances *in, const char *filter, const char *identity, const char *map_name);
