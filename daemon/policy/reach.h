/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The reach: the cgroup patterns below which programs of ours may be
 * attached.  A full reconcile walks only there (cgf_cgroup_tree_read_within()
 * with cgf_reach_enters()): into a directory where a pattern may match it
 * or something below it, and through the whole subtree of a match (the
 * lists below an attachment decide what it does: foreign programs below a
 * `none`, a tenant host's children).  What a tenant builds elsewhere on
 * the host costs the daemon nothing, however wide or deep.
 *
 * The policy in force alone is not enough: a program of ours attached by
 * an earlier policy, outside the new one's patterns, must still be found
 * and detached.  So the daemon keeps a record, CGF_RUNTIME_DIR/reach: the
 * patterns of every policy applied since the last full reconcile that
 * converged.  It is written before a full reconcile changes anything (the
 * union it is about to walk) and, once one converged, cut back to the
 * policy's own patterns.  A missing or invalid record means a walk of the
 * whole host, after which the record starts again; /run is a tmpfs, so
 * after a boot there is neither a record nor a program of ours.
 *
 * The file, one pattern a line, each a valid `cgroup:` pattern (which
 * holds no control character):
 *
 *   cgfilterd-reach 1
 *   cgf/host
 *   machine.slice/ *.scope
 */

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

#define CGF_REACH_FILE "reach"
#define CGF_REACH_PATTERNS_MAX 4096
#define CGF_REACH_FILE_MAX (1024 * 1024)

struct cgf_reach {
	char **patterns; /* each once */
	size_t n;
};

void cgf_reach_done(struct cgf_reach *r);

/* Adds a pattern unless it is there already.  -E2BIG beyond
 * CGF_REACH_PATTERNS_MAX, -ENOMEM. */
int cgf_reach_add(struct cgf_reach *r, const char *pattern);
/* Every attachment's pattern of the policy. */
int cgf_reach_add_policy(struct cgf_reach *r, const struct cgf_policy *p);
/* Every pattern of another reach. */
int cgf_reach_add_reach(struct cgf_reach *r, const struct cgf_reach *other);

/* A cgf_cgroup_enter_func: does the walk need the directory at path?
 * userdata is the struct cgf_reach. */
bool cgf_reach_enters(const char *path, void *userdata);

/* The file's text; -E2BIG when it would exceed CGF_REACH_FILE_MAX. */
int cgf_reach_format(const struct cgf_reach *r, char **ret);
/* -EBADMSG when the text is not such a file (a missing magic line, a
 * line that is not a valid pattern, an unterminated line, too many). */
int cgf_reach_parse(const char *text, struct cgf_reach *ret);
