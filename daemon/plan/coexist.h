/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * Coexistence with other controllers below a `mode: none` attachment.
 *
 * The kernel refuses any attach below a cgroup whose list holds a program
 * attached without flags (EPERM).  systemd attaches a unit's IP firewall
 * (IPAddressDeny= ..., unit-firewalls.h) each time it starts the unit,
 * and when the kernel refuses it, systemd logs it and starts the unit
 * anyway, without its firewall: a none above such units un-sandboxes each
 * at its next start, silently.  A foreign program attached before our
 * none stays, and replaces ours for its subtree (the kernel runs only
 * the lowest list with programs below a none), while its owner can no
 * longer change it.
 *
 * cgf_coexist_check() finds, for each none attachment of a policy, the
 * units (from systemd: at or below a cgroup it matches, with a setting
 * for one of its none directions) and the foreign programs (from the
 * kernel: attached now strictly below such a cgroup, in such a
 * direction) it would lock out.  The cgroups are matched against the
 * attachment's pattern, not against the cgroups that exist, so a unit
 * that is not running (its cgroup from its slice) counts too.  An
 * attachment that would lock out anything is refused, unless it says
 * `foreign-below: lock-out`; cgf_coexist_report() writes one error per
 * refused attachment, at its `mode: none`, naming what it locks out and
 * what to write instead.
 *
 * cgf_coexist_missing() is the same question while running: the units at
 * or below a none list of ours whose cgroup exists and holds no foreign
 * program in a direction they ask for, that is, whose firewall the
 * kernel refused.  Below a none an attach cannot succeed later, so the
 * answer does not depend on when after the cgroup's creation it is asked.
 *
 * Pure functions: the policy, the units and the kernel's lists are given.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "kernel-features.h"
#include "macro.h"
#include "missing-firewalls.h"
#include "policy.h"
#include "state.h"
#include "unit-firewalls.h"

/* At most this many units and programs are named per attachment; the
 * rest are counted. */
#define CGF_COEXIST_NAMED_MAX 8

struct cgf_lockout_unit {
	char *unit;
	char *cgroup;
	bool active;
	unsigned settings;   /* effective (cgf_unit_firewalls_effective()) */
	unsigned inherited;  /* of them, those a slice above gives */
	unsigned directions; /* the none's directions it asks for */
};

struct cgf_lockout_prog {
	char *cgroup;
	enum cgf_direction direction;
	uint32_t prog_id;
	char *prog_name;
};

/* One none attachment that would lock something out. */
struct cgf_lockout {
	size_t attachment;   /* index into the policy's attachments */
	unsigned directions; /* the directions it puts a none on */
	bool allowed;        /* foreign-below: lock-out */
	struct cgf_lockout_unit *units;
	size_t n_units;
	struct cgf_lockout_prog *progs; /* on cgroups of no unit listed above */
	size_t n_progs;
};

struct cgf_coexist {
	struct cgf_lockout *lockouts; /* in the policy's order */
	size_t n_lockouts;
	size_t n_refused;             /* of them without foreign-below: lock-out */
};

void cgf_coexist_done(struct cgf_coexist *c);

/* Has the policy a none attachment (refusable: one without
 * `foreign-below: lock-out`, which a lockout would make refused)? */
bool cgf_coexist_has_none(const struct cgf_policy *p, bool refusable);

/*
 * May a none attachment of the policy lie above (or at) a unit of PID
 * 1's?  A unit's cgroup is slices from the root down, then the unit
 * ("system.slice/system-getty.slice/getty@tty1.service"), so a none on
 * "pods/host" (no slice) can have none below it, whatever a tenant
 * names its directories there.  Decided from the patterns alone, as
 * conservative as cgroup-pattern.h ("**" may be anything).  Without such
 * a none there is nothing to ask systemd (refusable: as for
 * cgf_coexist_has_none()).
 */
bool cgf_coexist_may_hold_units(const struct cgf_policy *p, bool refusable);

/*
 * units: NULL when systemd could not be asked; actual: NULL when the
 * kernel was not read (`cgfilterctl check`).  The policy must be valid.
 * 0 or -ENOMEM; *ret is filled either way (free it with cgf_coexist_done()).
 */
int cgf_coexist_check(const struct cgf_policy *p, const struct cgf_unit_firewalls *units,
		      const struct cgf_actual *actual, struct cgf_coexist *ret);

/*
 * An error per refused attachment, at its `mode: none`: what it locks
 * out, with a note per unit and program (the first
 * CGF_COEXIST_NAMED_MAX) and a note with what to write instead
 * (`preorder: true` only where features has it).
 */
void cgf_coexist_report(const struct cgf_coexist *c, const struct cgf_policy *p, const struct cgf_features *features,
			struct cgf_diags *diags);

/*
 * The same in one bounded line, for a refused reload's verdict
 * (/run/cgfilterd/reload): the first two attachments, the first three
 * units or programs of each, the fix.  NULL-free: 0 or -ENOMEM.
 */
int cgf_coexist_summary(const struct cgf_coexist *c, const struct cgf_policy *p, char **ret);

/*
 * Where new units below a none appear while running: a slice (or the
 * root) that a none attachment of p matches, or one below it through
 * slices only (system.slice/system-getty.slice).  That is systemd's own
 * tree, which nobody else extends: a delegated subtree hangs below a
 * service or a scope, never directly below a slice, and a none on a
 * service, a scope or a container's directory has no unit of PID 1
 * directly below it.  The daemon watches these directories, few and
 * long-lived, not the whole subtree of a none.
 */
bool cgf_coexist_watches(const struct cgf_policy *p, const char *path);

/*
 * The cgroups among paths that may be a unit's own, and new: at or below
 * one of created, directly in a directory cgf_coexist_watches() says, and
 * named like a unit with a cgroup (unit-firewalls.h).  For the systemd
 * query of an event's new cgroups; at most max of them (*ret_more: how
 * many more there were, for the next full reconcile).
 */
int cgf_coexist_new_unit_cgroups(const struct cgf_policy *p, char *const *paths, size_t n_paths,
				 const char *const *created, size_t n_created, size_t max, char ***ret, size_t *ret_n,
				 size_t *ret_more);

/*
 * The units at or below a none list of desired (in a direction they ask
 * for) whose cgroup is among paths (any order) and whose list of that
 * direction in actual holds no foreign program: their firewall is
 * missing.  Such a unit's other directions without a foreign program
 * count too: systemd stops installing a unit's programs at the first
 * refusal.  Appends them to *ret.
 */
int cgf_coexist_missing(const struct cgf_desired *desired, const struct cgf_actual *actual,
			const struct cgf_unit_firewalls *units, char *const *paths, size_t n_paths,
			struct cgf_missing_firewalls *ret);
