/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The planner: (desired, actual, features) → the ordered kernel calls that
 * turn actual into desired, and a report of what it will not or cannot do.
 * A pure function: no syscalls, no clock, no globals; it does not know
 * whether actual came from a kernel or from a test table.  docs/design.md
 * gives the rules; plan.c says how each is kept.
 *
 * Actions are BPF_PROG_ATTACH / BPF_PROG_DETACH shaped.  The kernel edge
 * loads every program a plan attaches before the first action (so a gap
 * never waits for a load) and then runs the actions in order, each with
 * its expected_revision; -ESTALE means someone else changed the list:
 * re-read it and re-plan.
 *
 * The simulator (cgf_sim_*, cgf_plan_apply_to_state()) applies a plan to
 * a copy of an actual state the way the kernel would, refusing what the
 * kernel would refuse: the tests use it to check every plan step by step.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel-features.h"
#include "state.h"

#define CGF_NO_ACTION SIZE_MAX

enum cgf_action_kind {
	CGF_ACTION_ATTACH, /* BPF_PROG_ATTACH: insert, REPLACE, or the single slot of none / override */
	CGF_ACTION_DETACH, /* BPF_PROG_DETACH (BPF_LINK_DETACH when link_id is set) */
};

/* Why an action is there, for the plan's reader. */
enum cgf_action_reason {
	CGF_REASON_NEW,         /* attach: the filter is not on the list yet */
	CGF_REASON_CHANGED,     /* attach: a new program for the filter, in place of the old one */
	CGF_REASON_MOVED,       /* attach: a new instance at the right position (order, preorder) */
	CGF_REASON_MODE,        /* attach / detach: part of a mode change */
	CGF_REASON_REMOVED,     /* detach: the filter left this list */
	CGF_REASON_SUPERSEDED,  /* detach: the old instance of a changed or moved filter */
	_CGF_REASON_MAX,
};

struct cgf_action {
	enum cgf_action_kind kind;
	enum cgf_action_reason reason;
	char *cgroup;
	enum cgf_direction direction;

	/* attach */
	char *filter;             /* the filter whose program to attach */
	char *identity;           /* ... with this identity */
	bool new_instance;        /* this list holds a program of that filter and identity
				   * at this point: attach another instance (load one) */
	uint32_t flags;           /* CGF_ATTACH_*: mode flag | PREORDER | BEFORE/AFTER | ID | REPLACE */
	uint32_t anchor_prog_id;  /* with BEFORE/AFTER: the anchor program (BPF_F_ID) ... */
	size_t anchor_action;     /* ... or the program attached by that earlier action; else CGF_NO_ACTION */

	/* attach: the program replaced (with REPLACE: replace_bpf_fd; in mode
	 * none / override: the one the kernel swaps out, not passed); detach:
	 * the program detached.  0 for a plain insert. */
	uint32_t prog_id;
	uint32_t link_id;         /* detach through this link (BPF_LINK_DETACH) */
	char *prog_name;          /* of prog_id, for messages */

	uint64_t expected_revision; /* 0: no check (the kernel lacks revisions, or it is unknown) */
};

enum cgf_report_kind {
	CGF_REPORT_FOREIGN,             /* a foreign program on a list we manage: left alone */
	CGF_REPORT_FOREIGN_BELOW_NONE,  /* ... below our none: it overrides ours there */
	CGF_REPORT_OURS_BELOW_NONE,     /* ours below our none (the policy says otherwise now) */
	CGF_REPORT_BLOCKED,             /* nothing planned for this list: the kernel would refuse */
	CGF_REPORT_MODE_GAP,            /* a mode change: detach all, then attach */
	CGF_REPORT_LIMIT_GAP,           /* at 64 programs: detached before the replacement is attached */
	CGF_REPORT_LIMIT,               /* at 64 programs: removals moved before the inserts */
	CGF_REPORT_REORDER,             /* no BEFORE/AFTER: attached again at the end to fix the order */
	CGF_REPORT_UNSUPPORTED,         /* the policy asks for a feature the kernel lacks */
	_CGF_REPORT_KIND_MAX,
};

struct cgf_report {
	enum cgf_report_kind kind;
	char *cgroup;
	enum cgf_direction direction;
	char *message;      /* a sentence without the cgroup and direction */
	uint32_t prog_id;   /* the program concerned (foreign, blocking), 0 if none */
	size_t calls;       /* MODE_GAP: detach calls before the first attach;
			     * LIMIT_GAP: calls from the detach to the attach of its successor */
	struct cgf_pos pos; /* the policy line concerned, when there is one */
};

struct cgf_plan {
	struct cgf_action *actions;
	size_t n_actions;
	struct cgf_report *reports;
	size_t n_reports;
};

struct cgf_plan *cgf_plan_free(struct cgf_plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_plan *, cgf_plan_free);

/*
 * The plan.  desired and actual must be sorted (cgf_desired_sort(),
 * cgf_actual_sort()); actual should hold a list (empty if need be) for
 * every cgroup and direction of desired, so that its revision is known.
 * Returns 0 (with *ret, possibly without actions) or -ENOMEM; a desired
 * state the kernel cannot reach is reported, not an error.
 */
int cgf_plan(const struct cgf_desired *desired, const struct cgf_actual *actual,
	     const struct cgf_features *features, struct cgf_plan **ret);

const char *cgf_action_reason_to_string(enum cgf_action_reason r);
const char *cgf_report_kind_to_string(enum cgf_report_kind k);

/*
 * One line per action, as `cgfilterctl plan` and the tests show them:
 *   #0 attach a egress web@ID multi|after|id after prog 12 rev 5 (new)
 *   #1 attach a egress web@ID multi|replace replaces prog 11 rev 6 (changed)
 *   #2 detach a egress prog 11 'cgf_web' rev 7 (superseded)
 * and one line per report:
 *   blocked: a egress: <message>
 * Each line is escaped (escape.h): whatever a cgroup or program is named,
 * it stays one line without control characters.
 */
int cgf_action_format(const struct cgf_action *a, size_t index, char **ret);
int cgf_report_format(const struct cgf_report *r, char **ret);
/* All actions, then all reports, each line ending in '\n'. */
int cgf_plan_format(const struct cgf_plan *p, char **ret);

/*
 * The simulator: a copy of actual, changed by one action at a time as the
 * kernel described in docs/cgroup-bpf-uapi.md would (with the given
 * features), new programs getting fresh ids.  The kernel's rules are
 * those of the reference model in lib/cgbpf-model.h, the one the kernel
 * API tests hold the real kernel to; plan-sim.c adapts actions to it and
 * adds the planner's contract.  An action the
 * kernel would refuse returns its -errno (-EINVAL, -EPERM, -E2BIG,
 * -ENOENT, -ESTALE) and changes nothing; an action that would detach or
 * replace a foreign program returns -EACCES (the kernel would do it; we
 * never may).  *ret_why says which check failed.
 */
struct cgf_sim;
int cgf_sim_new(const struct cgf_actual *actual, const struct cgf_features *features, struct cgf_sim **ret);
struct cgf_sim *cgf_sim_free(struct cgf_sim *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_sim *, cgf_sim_free);
/* Applies plan->actions[i]; actions must be applied in order, from 0. */
int cgf_sim_step(struct cgf_sim *s, const struct cgf_plan *plan, size_t i, const char **ret_why);
/* The state so far (sorted). */
const struct cgf_actual *cgf_sim_state(const struct cgf_sim *s);

/* Applies every action; on failure *ret_failed is the action's index. */
int cgf_plan_apply_to_state(const struct cgf_actual *actual, const struct cgf_plan *plan,
			    const struct cgf_features *features, struct cgf_actual **ret,
			    size_t *ret_failed, const char **ret_why);
