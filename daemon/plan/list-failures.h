/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The lists a reconcile could not bring to the policy, each with why.
 *
 * The unit of work of a reconcile is the (cgroup, direction) list: when
 * one of its actions fails, the rest of that list is skipped and the
 * other lists go on, so that one vanished cgroup, one foreign program
 * in the way or one map over its limit costs that list and no other.
 * This is the record of those lists: the kernel edge adds to it (an
 * action that failed), so does the map sync (a rules filter whose maps
 * could not be written fails every list that carries it), and the
 * daemon logs it, retries while it is not empty and shows it
 * (runtime file, `cgfilterctl status`, the reload verdict).
 *
 * Plain data, no I/O: the tests build it by hand.
 */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"
#include "plan.h"
#include "policy.h"

struct cgf_list_failure {
	char *cgroup;
	enum cgf_direction direction;
	int error;        /* -errno */
	char *message;    /* what failed, naming cgroup, direction, filter or program */
	unsigned attempts; /* reconciles in a row that failed this list (the daemon counts) */
};

struct cgf_list_failures {
	struct cgf_list_failure *items; /* in the order they failed */
	size_t n;
};

void cgf_list_failures_done(struct cgf_list_failures *f);

/* The failure of (cgroup, direction), or NULL. */
const struct cgf_list_failure *cgf_list_failures_find(const struct cgf_list_failures *f, const char *cgroup,
						      enum cgf_direction direction);

/*
 * Marks the list failed, with a copy of message (NULL: strerror's text).
 * A list keeps its first failure: what came after it was skipped, not
 * tried.  Returns 0, or -ENOMEM.
 */
int cgf_list_failures_add(struct cgf_list_failures *f, const char *cgroup, enum cgf_direction direction, int error,
			  const char *message);

/* Forgets the failures with that error (the reconcile retries -ESTALE
 * lists itself, after reading them again). */
void cgf_list_failures_forget_error(struct cgf_list_failures *f, int error);

/* Does every action of the plan belong to a failed list?  Then a plan
 * made after applying shows nothing that was not already said. */
bool cgf_list_failures_cover_plan(const struct cgf_list_failures *f, const struct cgf_plan *plan);

/* attempts of each failure: one more than the same list had in
 * "previous" (the last reconcile's failures), else 1. */
void cgf_list_failures_count_attempts(struct cgf_list_failures *f, const struct cgf_list_failures *previous);

/*
 * The reload verdict's text for failed lists, one line and bounded:
 *
 *   "the kernel refused 5 lists: a egress: Device or resource busy;
 *    b ingress: Operation not permitted; ...; and 2 more"
 *
 * At most CGF_LIST_FAILURES_SHOWN lists are named, each cgroup cut to
 * CGF_LIST_FAILURES_CGROUP_MAX bytes (at a character boundary, with
 * "..."), so the text stays under CGF_LIST_FAILURES_VERDICT_MAX bytes
 * whatever the tenants named their cgroups.  Not escaped: the writer
 * of the verdict escapes (runtime.h).  NULL when out of memory.
 */
#define CGF_LIST_FAILURES_SHOWN 3
#define CGF_LIST_FAILURES_CGROUP_MAX 128
#define CGF_LIST_FAILURES_VERDICT_MAX 1024
char *cgf_list_failures_verdict(const struct cgf_list_failures *f);

/* s cut to at most max bytes at a UTF-8 character boundary, "..."
 * appended when cut (then at most max + 3 bytes); NULL when out of
 * memory. */
char *cgf_truncate_utf8(const char *s, size_t max);
