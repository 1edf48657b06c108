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
	uint64_t *ids; /* each path's cgroup id (cgf_cgroup_id_of_fd()) */
	size_t n_paths;
};

/* Is the id one of the tree's cgroups? */
bool cgf_cgroup_tree_has_id(const struct cgf_cgroup_tree *t, uint64_t id);

/*
 * The cgroup id of an fd of a cgroup2 directory, as bpf_skb_cgroup_id()
 * and the kernel's link info report it: cgroupfs gives it out as the
 * 8-byte file handle of the directory (name_to_handle_at(), as systemd's
 * cg_fd_get_cgroupid() reads it); the inode number equals it only by an
 * implementation detail of kernfs.  -EMEDIUMTYPE: the fd is not on a
 * kernfs file system (no cgroup id to give); other -errno from
 * name_to_handle_at().
 */
int cgf_cgroup_id_of_fd(int fd, uint64_t *ret);

typedef int (*cgf_cgroup_id_func)(int fd, uint64_t *ret);

/* Walks the hierarchy below root_fd (an O_DIRECTORY fd of the cgroup2
 * mount), each cgroup's id from cgf_cgroup_id_of_fd().  Returns 0 or
 * -errno (-EMEDIUMTYPE: not cgroupfs). */
int cgf_cgroup_tree_read(int root_fd, struct cgf_cgroup_tree *ret);
/* The same with another source of ids: the unit tests walk plain
 * directories, which have no cgroup ids. */
int cgf_cgroup_tree_read_with(int root_fd, cgf_cgroup_id_func id_of, struct cgf_cgroup_tree *ret);
void cgf_cgroup_tree_done(struct cgf_cgroup_tree *t);
