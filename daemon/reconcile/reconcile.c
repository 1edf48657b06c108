/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>

#include "expand.h"
#include "maps-sync.h"
#include "reach.h"
#include "reconcile.h"
#include "util.h"

void cgf_reconcile_done(struct cgf_reconcile *r) {
	cgf_cgroup_tree_done(&r->tree);
	r->desired = cgf_desired_free(r->desired);
	r->actual = cgf_actual_free(r->actual);
	r->plan = cgf_plan_free(r->plan);
	r->leftover = cgf_plan_free(r->leftover);
	free(r->ran);
	cgf_list_failures_done(&r->failures);
	free(r->error);
	*r = (struct cgf_reconcile) {};
}

struct sync_args {
	struct cgf_kernel *k;
	const struct cgf_policy *p;
	const struct cgf_objects *objects;
	struct cgf_reconcile *rc;
	const struct cgf_maps_scope *maps_scope;
	int error; /* of marking a list failed: out of memory */
};

/* A rules filter whose maps could not be written: every list that runs
 * its program fails (it would run with maps short of the policy's), and
 * so none of them gets an action; the other lists go on. */
static void maps_failed(void *userdata, const char *filter, int error, const char *message) {
	struct sync_args *a = userdata;

	for (size_t i = 0; i < a->rc->desired->n_lists; i++) {
		const struct cgf_desired_list *l = &a->rc->desired->lists[i];
		bool carries = streq_ptr(l->tenant_carrier, filter);
		int r;

		for (size_t j = 0; j < l->n_entries && !carries; j++)
			carries = streq(l->entries[j].filter, filter);
		if (!carries)
			continue;
		r = cgf_list_failures_add(&a->rc->failures, l->cgroup, l->direction, error, message);
		if (r < 0)
			a->error = r;
	}
}

/* The maps of what cgf_kernel_load() loaded, before anything attaches
 * it: a rules filter's program never runs with maps short of the policy. */
static int sync_maps(struct sync_args *a, char **ret_message) {
	int r;

	r = cgf_maps_sync(a->k, a->p, a->objects, a->rc->desired, &a->rc->tree, a->maps_scope, maps_failed, a,
			  ret_message);
	return r < 0 ? r : a->error;
}

/* Build first, attach after: load every program of the plan, fill the
 * maps, then run the actions, each list on its own. */
static int apply_plan(struct sync_args *args, char **ret_message) {
	_cleanup_(cgf_kernel_apply_freep) struct cgf_kernel_apply *ap = NULL;
	struct cgf_reconcile *rc = args->rc;
	size_t done = 0;
	int r;

	r = cgf_kernel_load(args->k, args->objects, rc->plan, rc->actual, &ap, ret_message);
	if (r < 0)
		return r;
	/* Also without actions: a changed rule is map data only. */
	r = sync_maps(args, ret_message);
	if (r < 0)
		return r;
	r = cgf_kernel_attach(ap, rc->actual, &rc->failures, rc->ran, &done, ret_message);
	rc->applied += done;
	return r;
}

static int read_and_plan(struct cgf_kernel *k, struct cgf_reconcile *rc) {
	int r;

	rc->actual = cgf_actual_free(rc->actual);
	rc->plan = cgf_plan_free(rc->plan);
	r = cgf_kernel_read(k, &rc->tree, &rc->actual);
	if (r < 0)
		return errno_message(&rc->error, r, "reading the kernel's cgroup-BPF lists");
	r = cgf_plan(rc->desired, rc->actual, cgf_kernel_features(k), &rc->plan);
	if (r < 0)
		return errno_message(&rc->error, r, "planning");
	return 0;
}

/* The gate (reconcile.h): the policy's nones against what other
 * controllers attach below them, the kernel as just read. */
static int hold_to_gate(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_reconcile_gate *gate,
			struct cgf_reconcile *rc) {
	struct cgf_coexist c;
	int r;

	r = cgf_coexist_check(p, gate->units, rc->actual, &c);
	if (r >= 0 && c.n_refused > 0) {
		cgf_coexist_report(&c, p, cgf_kernel_features(k), gate->diags);
		free(rc->error);
		r = cgf_coexist_summary(&c, p, &rc->error);
		if (r >= 0) {
			rc->refused = true;
			r = -EPERM;
		}
	}
	cgf_coexist_done(&c);
	return r;
}

struct run_args {
	const struct cgf_reach *reach;
	const struct cgf_reconcile_scope *scope;
	const struct cgf_reconcile_gate *gate;
	bool apply;
};

static int run(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_objects *objects,
	       const struct run_args *args, struct cgf_reconcile *ret);

int cgf_reconcile_run(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_objects *objects,
		      const struct cgf_reach *reach, const struct cgf_reconcile_gate *gate, bool apply,
		      struct cgf_reconcile *ret) {
	return run(k, p, objects, &(struct run_args) { .reach = reach, .gate = gate, .apply = apply }, ret);
}

int cgf_reconcile_run_scope(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_objects *objects,
			    const struct cgf_reconcile_scope *scope, bool apply, struct cgf_reconcile *ret) {
	return run(k, p, objects, &(struct run_args) { .scope = scope, .apply = apply }, ret);
}

static int run(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_objects *objects,
	       const struct run_args *args, struct cgf_reconcile *ret) {
	const struct cgf_reach *reach = args->reach;
	const struct cgf_reconcile_scope *scope = args->scope;
	bool apply = args->apply;
	struct cgf_maps_scope maps_scope = {};
	struct cgf_reconcile *rc = ret;
	int r;

	*rc = (struct cgf_reconcile) {};
	if (scope) {
		maps_scope = (struct cgf_maps_scope) { .removed = scope->removed, .n_removed = scope->n_removed };
		r = cgf_cgroup_tree_read_scope(cgf_kernel_cgroup_root_fd(k), scope->created, scope->n_created,
					       cgf_cgroup_id_of_fd, &rc->tree);
	} else if (reach)
		r = cgf_cgroup_tree_read_within(cgf_kernel_cgroup_root_fd(k), cgf_cgroup_id_of_fd, cgf_reach_enters,
						(void *) reach, &rc->tree);
	else
		r = cgf_cgroup_tree_read(cgf_kernel_cgroup_root_fd(k), &rc->tree);
	if (r == -EMEDIUMTYPE || r == -EOPNOTSUPP)
		return errno_message(&rc->error, r,
				     "reading the cgroup tree: %s gives no cgroup ids (name_to_handle_at()); is it cgroup2?",
				     cgf_kernel_cgroup_root(k));
	if (r < 0)
		return errno_message(&rc->error, r, "reading the cgroup tree");
	r = cgf_expand(p, (const char *const *) rc->tree.paths, rc->tree.n_paths, cgf_objects_identity,
		       (void *) objects, &rc->desired);
	if (r < 0)
		return errno_message(&rc->error, r, "expanding the policy");
	r = read_and_plan(k, rc);
	if (r >= 0 && args->gate)
		r = hold_to_gate(k, p, args->gate, rc);
	if (r < 0 || !apply)
		return r;

	for (;;) {
		_cleanup_free_ char *message = NULL;

		struct sync_args args = {
			.k = k, .p = p, .objects = objects, .rc = rc, .maps_scope = scope ? &maps_scope : NULL,
		};

		free(rc->ran);
		rc->ran = calloc(rc->plan->n_actions + 1, sizeof(*rc->ran));
		if (!rc->ran)
			return -ENOMEM;
		r = apply_plan(&args, &message);
		if (r == -ESTALE && rc->stale < CGF_RECONCILE_STALE_RETRIES) {
			/* The stale lists are read and planned again; those that
			 * failed otherwise wait for the caller's retry. */
			rc->stale++;
			cgf_list_failures_forget_error(&rc->failures, -ESTALE);
			r = read_and_plan(k, rc);
			if (r < 0)
				return r;
			continue;
		}
		if (r == -ESTALE)
			r = 0; /* still changing under us: failed lists, retried later */
		if (r < 0) {
			free(rc->error);
			rc->error = TAKE_PTR(message);
			return r;
		}
		break;
	}

	/* What the kernel holds now: the programs nothing holds any more can
	 * go, and a plan made now must be empty, or our model of the kernel
	 * is wrong somewhere (said, not hidden). */
	{
		_cleanup_(cgf_plan_freep) struct cgf_plan *ran = TAKE_PTR(rc->plan);

		r = read_and_plan(k, rc);
		if (r < 0)
			return r;
		/* The failed lists differ, and are said as failed. */
		rc->converged = cgf_list_failures_cover_plan(&rc->failures, rc->plan);
		if (!rc->converged)
			rc->leftover = TAKE_PTR(rc->plan);
		cgf_plan_free(rc->plan);
		rc->plan = TAKE_PTR(ran);
	}
	if (scope)
		return 0; /* what nothing uses any more is a full reconcile's to say */
	r = cgf_kernel_gc(k, rc->actual, &rc->tree);
	if (r < 0)
		return errno_message(&rc->error, r, "removing unused programs from " CGF_PIN_ROOT);
	rc->gc_removed = r;
	return 0;
}
