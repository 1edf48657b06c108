/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * A snapshot of the cgroup2 hierarchy: every cgroup's path relative to
 * the mount ("." for the root), parents before children.  expand()
 * matches the policy against it and the kernel edge reads the
 * attachments of each.  A cgroup removed while we walk is simply not in
 * the snapshot: cgroups come and go, and the next event brings a new one.
 *
 * Anyone with a delegated cgroup can build the tree below it, so the walk
 * is bounded: it goes at most CGF_CGROUP_TREE_DEPTH_MAX levels deep (one
 * open directory per level), takes no path longer than
 * CGF_CGROUP_TREE_PATH_MAX (every later openat() and inotify watch of it
 * must succeed), and skips a directory it cannot open.  A skipped
 * directory and everything below it are not in the snapshot; the walk
 * goes on with its siblings and says how many it skipped.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CGF_CGROUP_TREE_DEPTH_MAX 64
/* Room for "/proc/self/fd/N/" before it: inotify takes a path. */
#define CGF_CGROUP_TREE_PATH_MAX (4096 - 64)
#define CGF_CGROUP_TREE_SKIPPED_KEPT 8

struct cgf_cgroup_skipped {
	char *path;
	int error; /* -ELOOP: too deep, -ENAMETOOLONG: path too long, else openat()'s */
};

struct cgf_cgroup_tree {
	char **paths;
	uint64_t *ids; /* each path's cgroup id (cgf_cgroup_id_of_fd()) */
	size_t n_paths;
	/* Directories the walk did not enter: how many, and the first few. */
	size_t n_skipped;
	struct cgf_cgroup_skipped skipped[CGF_CGROUP_TREE_SKIPPED_KEPT];
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
 * mount), each cgroup's id from cgf_cgroup_id_of_fd().  Returns 0, or
 * -errno when the root itself cannot be read or memory runs out (nothing
 * below the root makes the walk fail; -EMEDIUMTYPE: not cgroupfs). */
int cgf_cgroup_tree_read(int root_fd, struct cgf_cgroup_tree *ret);
/* The same with another source of ids: the unit tests walk plain
 * directories, which have no cgroup ids. */
int cgf_cgroup_tree_read_with(int root_fd, cgf_cgroup_id_func id_of, struct cgf_cgroup_tree *ret);
/* Should the walk enter the directory at path (relative to the root)? */
typedef bool (*cgf_cgroup_enter_func)(const char *path, void *userdata);
/* The walk entering only where enter() says (NULL: everywhere): a
 * directory it does not enter is not in the snapshot, nor anything below
 * it, and is not counted as skipped.  The cost of the walk follows what
 * enter() asks about, not the host: the reach of a policy (reach.h). */
int cgf_cgroup_tree_read_within(int root_fd, cgf_cgroup_id_func id_of, cgf_cgroup_enter_func enter, void *userdata,
				struct cgf_cgroup_tree *ret);
void cgf_cgroup_tree_done(struct cgf_cgroup_tree *t);

/*
 * A partial snapshot for one event: the given cgroups, every ancestor of
 * them (the planner needs the lists above a cgroup: a `none` or an
 * override up there decides what the kernel takes below), and everything
 * below them, with the limits of the full walk (depths and path lengths
 * count from the root).  Paths are sorted, the root "." first, each once.
 * A given cgroup that does not exist (any more) is not an error: it is
 * just not there.  Its cost follows the cgroups asked about, not the
 * host: no directory beside them is read.
 */
int cgf_cgroup_tree_read_scope(int root_fd, const char *const *paths, size_t n_paths, cgf_cgroup_id_func id_of,
			       struct cgf_cgroup_tree *ret);

/*
 * The child directories of dirs (cgroups of the tree t, in any order) that t
 * does not have: made after the walk read them.  For the directories
 * watched only after the walk, whose first children raised no event.
 * *ret (malloc()ed paths) may be empty.  A directory gone meanwhile has
 * none.
 */
int cgf_cgroup_tree_unseen_children(int root_fd, const struct cgf_cgroup_tree *t, char *const *dirs, size_t n_dirs,
				    char ***ret, size_t *ret_n);

/* Index of path in a tree sorted by cgf_cgroup_tree_read_scope(), or -1. */
ssize_t cgf_cgroup_tree_find_sorted(const struct cgf_cgroup_tree *t, const char *path);
