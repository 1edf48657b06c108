/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The daemon's side of coexistence (plan/coexist.h): systemd's units
 * below the none attachments of the policy in force.
 *
 *   - When a policy is read (start-up, reload), PID 1 is asked about
 *     every unit it has loaded (systemd/unit-query.h), but only if the
 *     policy has a none where a unit can be (cgf_coexist_may_hold_units()):
 *     the table feeds the gate that refuses a none above a unit's
 *     firewall, and the checks below.
 *   - After each reconcile of the policy in force, the units below its
 *     nones that run without the programs they asked systemd for
 *     (cgf_coexist_missing()): the kernel refused systemd's attach.
 *     Each is logged once, when it is found (at most UBN_LOG_MAX a
 *     reconcile, the rest counted); the set goes to
 *     CGF_RUNTIME_DIR/missing-firewalls for `cgfilterctl status` when it
 *     changes.
 *   - Costs follow the change: a full reconcile checks the table against
 *     its walk (no question to PID 1; units that ran and are gone are
 *     forgotten); an event's reconcile asks PID 1 only about the event's
 *     new cgroups that may be units' (cgf_coexist_new_unit_cgroups(): in
 *     systemd's slices below a none, at most UBN_ASK_MAX per event), one
 *     pipelined query.  Below a none an attach can never succeed later,
 *     so asking right after the cgroup appeared gives the final answer:
 *     PID 1 answers only after it has run the unit's start up to its
 *     attach anyway.
 */

#include <stdbool.h>

#include "missing-firewalls.h"
#include "policy.h"
#include "reconcile.h"
#include "unit-firewalls.h"

#define UBN_LOG_MAX 8
#define UBN_ASK_MAX 64

struct ubn {
	struct cgf_missing_firewalls missing; /* the units running without their programs now */
	char *written;                        /* what CGF_RUNTIME_DIR/missing-firewalls says */
	bool write;                           /* a daemon (not --once): keep the file */
	bool ask_failed;                      /* an event's query failed (said once until one works) */
};

void ubn_done(struct ubn *w);

/*
 * The units of a policy just read: PID 1's table when the policy has a
 * none, else an empty one.  *ret_known false: PID 1 could not be asked
 * (said in the journal once per call, with what that means).
 */
void ubn_read_units(const struct cgf_policy *p, struct cgf_unit_firewalls *ret, bool *ret_known);

/*
 * After a reconcile of the policy p in force that did not fail as a whole
 * (scope NULL: a full one).  units is the policy's table: an event adds
 * the units it asked about, a full reconcile forgets those that are gone.
 * root_fd: the cgroup2 mount, to see which cgroups of the set are gone.
 */
void ubn_after_reconcile(struct ubn *w, const struct cgf_policy *p, struct cgf_unit_firewalls *units,
			 const struct cgf_reconcile *rc, const struct cgf_reconcile_scope *scope, int root_fd);

/* A policy without a none came into force: nothing is missing below ours. */
void ubn_clear(struct ubn *w);
