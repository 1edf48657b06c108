/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * What the running daemon has not done: the lists its last reconcile of
 * the policy in force failed (retried with backoff), and the cgroups its
 * walk skipped (programs attached above them still apply there).  The
 * daemon writes it to CGF_RUNTIME_DIR/pending (runtime.h: replaced whole)
 * and `cgfilterctl status` shows it, as a table and in its JSON.
 *
 * The file, one record a line, fields separated by a tab:
 *
 *   cgfilterd-pending 1
 *   lists <total>
 *   list <direction> <attempts> <errno> <cgroup> <message>
 *   ...
 *   unreachable <total>
 *   cgroup <errno> <path>
 *   ...
 *
 * Tenants name cgroups, so every text field is escaped (escape.h: a tab
 * or a newline in a name is written as \x09, \x0a and cannot break a
 * record) and cut to CGF_PENDING_TEXT_MAX bytes before escaping; at most
 * CGF_PENDING_LISTS_KEPT lists and CGF_CGROUP_TREE_SKIPPED_KEPT cgroups
 * are written, the totals count them all.  The file stays under
 * CGF_PENDING_FILE_MAX bytes; the reader refuses a bigger one.  The
 * strings read back are the escaped forms: for showing, not for opening.
 */

#include <stddef.h>
#include <stdio.h>

#include "cgroup-tree.h"
#include "json.h"
#include "list-failures.h"
#include "macro.h"

#define CGF_PENDING_FILE "pending"
#define CGF_PENDING_LISTS_KEPT 32
#define CGF_PENDING_TEXT_MAX 512
/* Each kept record: two texts, each at most 4 bytes shown per byte. */
#define CGF_PENDING_FILE_MAX \
	((CGF_PENDING_LISTS_KEPT + CGF_CGROUP_TREE_SKIPPED_KEPT + 4) * (2 * 4 * (CGF_PENDING_TEXT_MAX + 3) + 64))

struct cgf_pending_list {
	char *cgroup;
	enum cgf_direction direction;
	unsigned attempts;
	int error;      /* -errno */
	char *message;
};

struct cgf_pending_cgroup {
	char *path;
	int error;      /* -ELOOP: too deep, -ENAMETOOLONG: path too long, else openat()'s */
};

struct cgf_pending {
	size_t n_lists_total;
	struct cgf_pending_list *lists;
	size_t n_lists;
	size_t n_unreachable_total;
	struct cgf_pending_cgroup *unreachable;
	size_t n_unreachable;
};

struct cgf_pending *cgf_pending_free(struct cgf_pending *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_pending *, cgf_pending_free);

/* The file's text for these failures and this walk (tree may be NULL:
 * no walk known).  Returns 0 or -ENOMEM. */
int cgf_pending_format(const struct cgf_list_failures *failures, const struct cgf_cgroup_tree *tree, char **ret);

/* -EBADMSG when the text is not such a file. */
int cgf_pending_parse(const char *text, struct cgf_pending **ret);

/*
 * The table, after the lists of `cgfilterctl status`; nothing at all when
 * nothing is pending:
 *
 *   pending lists: 2 (retried with backoff)
 *     CGROUP  DIRECTION  STATE     ATTEMPTS  ERROR
 *     a/b     egress     retrying  3         attach filter 'f' (prog 9) to a/b egress: Device or resource busy
 *
 *   unreachable cgroups: 1001 (the first 8; programs attached above them apply)
 *     deep/.../x: too deep
 */
int cgf_pending_render_table(const struct cgf_pending *p, FILE *f);

/*
 * { "pending_lists": { "count": N, "lists": [ { "cgroup", "direction",
 *       "state": "retrying", "attempts", "errno", "error" } ] },
 *   "unreachable_cgroups": { "count": N, "cgroups": [ { "path", "errno", "error" } ] } }
 * "errno" is the positive number; "error" the message (lists) or strerror.
 */
void cgf_pending_render_json(const struct cgf_pending *p, struct cgf_json *j);
