/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * A snapshot of the cgroup2 hierarchy: every cgroup's path relative to
 * the mount ("." for the root), parents before children.  expand()
 * matches the policy against it and the kernel edge reads the
 * attachments of each.  A cgroup removed while we walk is simply not in
 * the snapshot: cgroups come and go, and the next event brings a new one.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cgf_cgroup_tree {
	char **paths;
	uint64_t *ids; /* each path's cgroup id (its inode on cgroup2) */
	size_t n_paths;
};

/* Is the id one of the tree's cgroups? */
bool cgf_cgroup_tree_has_id(const struct cgf_cgroup_tree *t, uint64_t id);

/* Walks the hierarchy below root_fd (an O_DIRECTORY fd of the cgroup2
 * mount, or of a subtree when "prefix" names it).  Returns 0 or -errno. */
int cgf_cgroup_tree_read(int root_fd, struct cgf_cgroup_tree *ret);
void cgf_cgroup_tree_done(struct cgf_cgroup_tree *t);
