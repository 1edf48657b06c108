/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * Our program instances: adopting the pins found at start, loading and
 * pinning new ones, collecting the ones no list holds, and their maps.
 */

#include "filter-object.h"
#include "kernel.h"
#include "state.h"

/*
 * Unpins the instances that no list of "actual" (a read of the whole
 * tree) holds, removes their directories once no instance is left, and
 * drops the counters of cgroups no longer in the tree.  Returns the
 * number of instances removed, or -errno.
 */
int cgf_kernel_gc(struct cgf_kernel *k, const struct cgf_actual *actual, const struct cgf_cgroup_tree *tree);

/* The fd of a map of our object for (filter, identity), from its pin, or
 * -errno (-ENOENT: no such map). */
int cgf_kernel_map_fd(struct cgf_kernel *k, const char *filter, const char *identity, const char *map_name);

/* ---- for kernel.c only ---- */

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
