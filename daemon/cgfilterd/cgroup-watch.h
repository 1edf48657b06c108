/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The watch edge: inotify on the cgroup directories where a new cgroup
 * could matter to the policy, so that a mkdir anywhere the policy's
 * paths and globs may reach wakes the daemon at once.  It says which
 * cgroups appeared (by path) and which watched ones went away (by cgroup
 * id, the name being free for a new cgroup at once), or that events were
 * lost: then the caller reconciles all within reach again (reach.h),
 * the one source of truth, so a missed or coalesced event can delay a
 * change but never hide one.  Looking up an event's directory costs a
 * binary search, not a scan of every watch: a host with 10,000 watched
 * cgroups pays for an event what a host with none pays.
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
 * number of watches added or -ENOMEM and, when ret_added is given, the
 * paths of those directories (malloc()ed, to free with cgf_strv_free()):
 * a cgroup created in one before its watch existed raised no event, so
 * the caller looks into them again.
 */
int cgf_watch_update(struct cgf_watch *w, const struct cgf_cgroup_tree *tree,
		     bool (*wanted)(const char *path, void *userdata), void *userdata,
		     struct cgf_watch_failures *ret_failures, char ***ret_added, size_t *ret_n_added);

/*
 * Watches the directories of a partial tree (cgf_cgroup_tree_read_scope())
 * that wanted() says so, like cgf_watch_update() but forgetting nothing:
 * the watches outside the tree stay.  Returns the number of watches added
 * and, when ret_added is given, their paths (malloc()ed, to free with
 * cgf_strv_free()): what was created in them before their watch existed
 * raised no event, so the caller reads them again.
 */
int cgf_watch_add_scope(struct cgf_watch *w, const struct cgf_cgroup_tree *tree,
			bool (*wanted)(const char *path, void *userdata), void *userdata,
			struct cgf_watch_failures *ret_failures, char ***ret_added, size_t *ret_n_added);

/* Past this many cgroups created or removed in one drain, it reports an
 * overflow: one full reconcile is cheaper than that many
 * partial reads, and memory stays bounded whatever a tenant does. */
#define CGF_WATCH_CHANGES_MAX 4096

struct cgf_watch_changes {
	char **created;    /* cgroups created in (or moved into) a watched directory */
	size_t n_created;
	uint64_t *removed; /* cgroup ids of watched directories that went away */
	size_t n_removed;
	bool overflow;     /* events were lost (IN_Q_OVERFLOW) or too many: read everything */
};

void cgf_watch_changes_done(struct cgf_watch_changes *c);
static inline bool cgf_watch_changes_empty(const struct cgf_watch_changes *c) {
	return c->n_created == 0 && c->n_removed == 0 && !c->overflow;
}

/* Drains the pending events into *ret (which the caller frees with
 * cgf_watch_changes_done(), also on error) and forgets the watches the
 * kernel ended or whose directory was removed (their ids are in
 * ret->removed).  Returns 0 or -errno. */
int cgf_watch_drain(struct cgf_watch *w, struct cgf_watch_changes *ret);

void cgf_strv_free(char **v, size_t n);

/* Number of directories watched now. */
unsigned cgf_watch_count(const struct cgf_watch *w);
