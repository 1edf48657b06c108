/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * One reconcile: snapshot the cgroup tree → expand the policy → read the
 * kernel → plan → (apply).  The same path for start-up, reload and
 * `cgfilterctl plan`; the policy must already be loaded, validated and
 * its objects resolved (a policy with errors never gets this far, so it
 * never changes the kernel).
 *
 * -ESTALE from the kernel means another controller changed a list
 * between our read and our write: read again and plan again, a few
 * times, never overwriting what we did not see.  The lists that went
 * through already give no action in the new plan.
 *
 * Failures are per (cgroup, direction) list (kernel.h, list-failures.h):
 * an action that fails, or a rules filter whose maps cannot be written,
 * fails its lists and no other; their remaining actions are skipped,
 * every other list is applied.  A list still stale after the last retry
 * is a failed list too.  A cgroup that went meanwhile is done, not failed.
 */

#include <stdbool.h>

#include "coexist.h"
#include "filter-object.h"
#include "kernel.h"
#include "plan.h"
#include "policy.h"
#include "reach.h"

#define CGF_RECONCILE_STALE_RETRIES 5

/*
 * What a policy coming into force is held to (start-up, reload, `cgfilterctl
 * plan`): its none attachments against what other controllers attach below
 * them (coexist.h), the kernel as just read and systemd's units, before
 * anything is applied.  A reconcile without a gate (the policy in force's
 * own: events, retries, the safety net) is not held to it: that policy
 * passed when it came into force, and the kernel refuses any attach below
 * its nones since.
 */
struct cgf_reconcile_gate {
	const struct cgf_unit_firewalls *units; /* NULL: systemd could not be asked */
	struct cgf_diags *diags;                /* gets an error per refused attachment */
};

struct cgf_reconcile {
	struct cgf_cgroup_tree tree;  /* the snapshot */
	struct cgf_desired *desired;
	struct cgf_actual *actual;    /* the kernel as last read (after applying: the result) */
	struct cgf_plan *plan;        /* the plan made (and, with apply, run) */
	bool *ran;                    /* per action of plan: it took effect */
	size_t applied;               /* actions that took effect (over every -ESTALE retry) */
	struct cgf_list_failures failures; /* the lists left as they were, and why */
	unsigned stale;               /* -ESTALE answers seen, each followed by a new plan */
	int gc_removed;               /* instances unpinned afterwards */
	bool converged;               /* after applying, planning again gave nothing
				       * but actions of failed lists */
	struct cgf_plan *leftover;    /* ... else what it gave */
	char *error;                  /* what failed, naming the object */
	bool refused;                 /* the gate refused the policy (-EPERM): nothing was
				       * applied; error is the one-line verdict, the gate's
				       * diags have the details */
};

void cgf_reconcile_done(struct cgf_reconcile *r);

/*
 * A full reconcile: the snapshot is the cgroups within reach (reach.h),
 * or, with reach NULL, the whole host.  Every program of ours must lie
 * within the reach: what is outside is neither seen nor detached, and
 * the programs only it uses are unpinned as unused.
 *
 * Returns 0, or -errno with ret->error set where there is more to say.
 * ret is filled either way (free it with cgf_reconcile_done()).
 *
 * 0 with ret->failures.n > 0 is a partial success: every list but those
 * was applied, and those are as they were, or part way to the policy
 * (they are what to retry).  A -errno is fatal for the whole reconcile
 * (the tree or the kernel could not be read, a program did not load,
 * out of memory): nothing of the plan ran, or what ran is unknown.
 * With a gate that refuses the policy: -EPERM with ret->refused, before
 * anything is applied (with apply false as well: `cgfilterctl plan`).
 */
int cgf_reconcile_run(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_objects *objects,
		      const struct cgf_reach *reach, const struct cgf_reconcile_gate *gate, bool apply,
		      struct cgf_reconcile *ret);

/*
 * What one batch of cgroup events can affect: the cgroups that appeared
 * (their lists, and their bindings if a tenant host is their parent),
 * and the ids of watched cgroups that went away (their tenant entries).
 */
struct cgf_reconcile_scope {
	const char *const *created;
	size_t n_created;
	const uint64_t *removed;
	size_t n_removed;
};

/*
 * The same for one batch of events: the snapshot holds only the created
 * cgroups, their ancestors and what is below them
 * (cgf_cgroup_tree_read_scope()), so that the reads, the plan and the
 * map writes cost what the events touch, not what the host holds.  Lists
 * outside that snapshot are neither read nor changed, tenant entries
 * outside it stay, and nothing is unpinned (only a full reconcile knows
 * what nothing uses): those are the full reconcile's, at start-up,
 * reload, lost events and the periodic safety net.
 */
int cgf_reconcile_run_scope(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_objects *objects,
			    const struct cgf_reconcile_scope *scope, bool apply, struct cgf_reconcile *ret);
