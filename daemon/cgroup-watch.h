/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The watch edge: inotify on the cgroup directories where a new cgroup
 * could matter to the policy, so that a mkdir anywhere the policy's
 * paths and globs may reach wakes the daemon at once.  It only says
 * "something changed" (or "events were lost"): the reconcile that
 * follows reads the tree again, which is the one source of truth, so a
 * missed or coalesced event can delay a change but never hide one.
 *
 * No bpf() here, and no policy details: the caller says which
 * directories it wants watched.
 */

#include <stdbool.h>

#include "cgroup-tree.h"

struct cgf_watch;

int cgf_watch_new(int cgroup_root_fd, struct cgf_watch **ret);
struct cgf_watch *cgf_watch_free(struct cgf_watch *w);
/* The inotify fd, for the event loop (EPOLLIN). */
int cgf_watch_fd(const struct cgf_watch *w);

/* The directories cgf_watch_update() could not watch this time. */
struct cgf_watch_failures {
	unsigned n;
	int first_error;	/* -errno */
	const char *first_path; /* points into the tree passed in */
};

/*
 * Watches every directory of the tree for which wanted() says so, and
 * forgets watches of directories that are gone.  A directory re-created
 * under a watched name (another cgroup id at the same path) gets a new
 * watch: the old one ended with the old directory.  A directory that
 * cannot be watched (ENOSPC: max_user_watches) is counted in
 * *ret_failures (optional) and does not stop the others.  Returns the
 * number of watches added (the caller reads the tree again when that is
 * not 0: a cgroup created in a directory before its watch existed would
 * be seen by no event) or -ENOMEM.
 */
int cgf_watch_update(struct cgf_watch *w, const struct cgf_cgroup_tree *tree,
		     bool (*wanted)(const char *path, void *userdata), void *userdata,
		     struct cgf_watch_failures *ret_failures);

/* Drains the pending events and forgets the watches the kernel ended
 * (IN_IGNORED: their directory is gone).  *ret_changed: a cgroup was
 * created, removed or moved; *ret_overflow: the kernel dropped events.
 * Returns 0 or -errno. */
int cgf_watch_drain(struct cgf_watch *w, bool *ret_changed, bool *ret_overflow);

/* Number of directories watched now. */
unsigned cgf_watch_count(const struct cgf_watch *w);
