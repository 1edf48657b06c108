/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The plan simulator (see plan.h): what the kernel would do with each
 * action, on plain data.  Written from docs/cgroup-bpf-uapi.md and
 * 6.1's kernel/bpf/cgroup.c, in the kernel's order of checks, but
 * stricter than the kernel where a plan would be sloppy: positional flags
 * on a single-slot attach, a needless or missing new_instance, a detach or
 * replace of a foreign program are refused too.  The tests run every plan
 * through it; nothing else needs it.
 */
#include <errno.h>

#include "plan.h"
#include "util.h"

struct cgf_sim {
	struct cgf_features features;
	struct cgf_actual *state;
	uint32_t *prog_of_action; /* per applied action: the program it attached (0: detach) */
	size_t n_applied;
	uint32_t next_id;
};

int cgf_sim_new(const struct cgf_actual *actual, const struct cgf_features *features, struct cgf_sim **ret) {
	_cleanup_(cgf_sim_freep) struct cgf_sim *s = NULL;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->features = *features;
	r = cgf_actual_copy(actual, &s->state);
	if (r < 0)
		return r;
	cgf_actual_sort(s->state);
	s->next_id = 100;
	for (size_t i = 0; i < s->state->n_lists; i++)
		for (size_t j = 0; j < s->state->lists[i].n_entries; j++)
			if (s->state->lists[i].entries[j].prog_id >= s->next_id)
				s->next_id = s->state->lists[i].entries[j].prog_id + 1;
	*ret = TAKE_PTR(s);
	return 0;
}

struct cgf_sim *cgf_sim_free(struct cgf_sim *s) {
	if (!s)
		return NULL;
	cgf_actual_free(s->state);
	free(s->prog_of_action);
	free(s);
	return NULL;
}

const struct cgf_actual *cgf_sim_state(const struct cgf_sim *s) {
	return s->state;
}

static int fail(const char **ret_why, const char *why, int error) {
	if (ret_why)
		*ret_why = why;
	return error;
}

static ssize_t find_direct(const struct cgf_actual_list *l, uint32_t prog_id) {
	for (size_t i = 0; l && i < l->n_entries; i++)
		if (l->entries[i].prog_id == prog_id && l->entries[i].link_id == 0)
			return (ssize_t) i;
	return -1;
}

static bool holds(const struct cgf_actual_list *l, const char *filter, const char *identity) {
	for (size_t i = 0; l && i < l->n_entries; i++)
		if (l->entries[i].ours && streq_ptr(l->entries[i].filter, filter) &&
		    streq_ptr(l->entries[i].identity, identity))
			return true;
	return false;
}

/* 6.1 hierarchy_allows_attach(): the nearest ancestor with programs decides. */
static bool hierarchy_allows(const struct cgf_sim *s, const char *cgroup, enum cgf_direction d) {
	size_t size = strlen(cgroup) + 2;
	char path[size];

	strcpy(path, cgroup);
	while (cgf_cgroup_parent(path, path, size)) {
		const struct cgf_actual_list *p = cgf_actual_find(s->state, path, d);

		if (!p || p->n_entries == 0)
			continue;
		if (p->flags & CGF_ATTACH_MULTI)
			return true;
		return p->flags & CGF_ATTACH_OVERRIDE;
	}
	return true;
}

/* The program an attach uses: the lowest id of ours with that filter and
 * identity on any list (one program may sit on many lists), or a new id
 * when a new instance is asked for or there is none yet. */
static uint32_t pick_prog(struct cgf_sim *s, const struct cgf_action *a) {
	uint32_t best = 0;

	if (!a->new_instance)
		for (size_t i = 0; i < s->state->n_lists; i++)
			for (size_t j = 0; j < s->state->lists[i].n_entries; j++) {
				const struct cgf_actual_entry *e = &s->state->lists[i].entries[j];

				if (e->ours && e->link_id == 0 && streq_ptr(e->filter, a->filter) &&
				    streq_ptr(e->identity, a->identity) && (best == 0 || e->prog_id < best))
					best = e->prog_id;
			}
	return best ? best : s->next_id++;
}

static int attach(struct cgf_sim *s, const struct cgf_action *a, uint32_t *ret_prog, const char **ret_why) {
	const uint32_t flags = a->flags, mode = flags & CGF_ATTACH_MODE_MASK;
	uint32_t allowed = CGF_ATTACH_MODE_MASK | CGF_ATTACH_REPLACE;
	struct cgf_actual_list *l = cgf_actual_find_mutable(s->state, a->cgroup, a->direction);
	const bool multi = flags & CGF_ATTACH_MULTI, positional = flags & (CGF_ATTACH_BEFORE | CGF_ATTACH_AFTER);
	size_t n = l ? l->n_entries : 0, pos = n;
	char name[CGF_PROG_NAME_MAX + 1];
	bool swap = false, replace = false;
	struct cgf_actual_entry e;
	int r;

	if (s->features.preorder)
		allowed |= CGF_ATTACH_PREORDER;
	if (s->features.ordering)
		allowed |= CGF_ATTACH_BEFORE | CGF_ATTACH_AFTER | CGF_ATTACH_ID;
	if (flags & ~allowed)
		return fail(ret_why, "an attach flag the kernel lacks", -EINVAL);
	if (a->expected_revision && !s->features.revision)
		return fail(ret_why, "expected_revision on a kernel without revisions", -EINVAL);
	if (!a->filter || !a->identity)
		return fail(ret_why, "an attach without a program", -EINVAL);
	if (mode == CGF_ATTACH_MODE_MASK)
		return fail(ret_why, "ALLOW_OVERRIDE with ALLOW_MULTI", -EINVAL);
	if ((flags & CGF_ATTACH_REPLACE) && !multi)
		return fail(ret_why, "REPLACE without ALLOW_MULTI", -EINVAL);
	if ((flags & CGF_ATTACH_REPLACE) && positional)
		return fail(ret_why, "REPLACE with BEFORE/AFTER", -EINVAL);
	if (a->expected_revision && a->expected_revision != (l ? l->revision : 0))
		return fail(ret_why, "expected_revision differs from the list's revision", -ESTALE);
	if (!hierarchy_allows(s, a->cgroup, a->direction))
		return fail(ret_why, "an ancestor's mode none refuses programs below it", -EPERM);
	if (n > 0 && l->flags != mode)
		return fail(ret_why, "the list has another mode", -EPERM);
	if (n >= CGF_MAX_PROGS)
		return fail(ret_why, "the list holds 64 programs", -E2BIG);

	if (!multi) {
		/* The kernel ignores positions here; a plan must not send them. */
		if (flags & (CGF_ATTACH_BEFORE | CGF_ATTACH_AFTER | CGF_ATTACH_ID) || a->anchor_action != CGF_NO_ACTION)
			return fail(ret_why, "positional flags on a single-slot attach", -EINVAL);
		if (n > 0) {
			if (!l->entries[0].ours)
				return fail(ret_why, "swaps out a foreign program", -EACCES);
			if (a->prog_id != l->entries[0].prog_id)
				return fail(ret_why, "the program it says it swaps out is not the one attached", -ENOENT);
			swap = true;
			pos = 0;
		} else if (a->prog_id)
			return fail(ret_why, "swaps out a program on an empty list", -ENOENT);
	} else {
		/* Same program twice: the plan must ask for a new instance exactly
		 * when the list holds one of the filter and identity. */
		if (holds(l, a->filter, a->identity) != a->new_instance)
			return fail(ret_why, a->new_instance ? "new_instance without need" : "the same program twice (new_instance missing)",
				    -EINVAL);
		if (flags & CGF_ATTACH_REPLACE) {
			ssize_t t = find_direct(l, a->prog_id);

			if (t < 0)
				return fail(ret_why, "the REPLACE target is not attached directly", -ENOENT);
			if (!l->entries[t].ours)
				return fail(ret_why, "replaces a foreign program", -EACCES);
			replace = true;
			pos = (size_t) t;
		} else if (a->prog_id)
			return fail(ret_why, "an insert that names a program to replace", -EINVAL);
		else if (flags & CGF_ATTACH_ID) {
			uint32_t anchor = a->anchor_action != CGF_NO_ACTION
						  ? (a->anchor_action < s->n_applied ? s->prog_of_action[a->anchor_action] : 0)
						  : a->anchor_prog_id;
			ssize_t t;

			if (!positional || (flags & CGF_ATTACH_BEFORE && flags & CGF_ATTACH_AFTER))
				return fail(ret_why, "an anchor needs exactly one of BEFORE / AFTER", -EINVAL);
			t = anchor ? find_direct(l, anchor) : -1;
			if (t < 0)
				return fail(ret_why, "the anchor is not on this list", -ENOENT);
			if (l->entries[t].preorder != !!(flags & CGF_ATTACH_PREORDER))
				return fail(ret_why, "the anchor's PREORDER bit differs", -EINVAL);
			pos = flags & CGF_ATTACH_BEFORE ? (size_t) t : (size_t) t + 1;
		} else if (a->anchor_action != CGF_NO_ACTION || a->anchor_prog_id)
			return fail(ret_why, "an anchor without BPF_F_ID", -EINVAL);
		else if (positional) {
			if (flags & CGF_ATTACH_BEFORE && flags & CGF_ATTACH_AFTER && n > 0)
				return fail(ret_why, "BEFORE|AFTER on a non-empty list", -EINVAL);
			pos = flags & CGF_ATTACH_BEFORE ? 0 : n;
		}
	}

	if (cgf_filter_name_is_valid(a->filter))
		cgf_filter_prog_name(a->filter, name);
	else
		snprintf(name, sizeof(name), "%s", a->filter);
	e = (struct cgf_actual_entry) {
		.prog_id = pick_prog(s, a),
		.prog_name = name,
		.ours = true,
		.filter = a->filter,
		.identity = a->identity,
		.preorder = flags & CGF_ATTACH_PREORDER,
	};

	if (!l) {
		r = cgf_actual_add_list(s->state, a->cgroup, a->direction, 0, 0, NULL);
		if (r < 0)
			return r;
		cgf_actual_sort(s->state);
		l = cgf_actual_find_mutable(s->state, a->cgroup, a->direction);
	}
	if (swap || replace)
		cgf_actual_list_remove(l, pos);
	r = cgf_actual_list_insert(l, pos, &e);
	if (r < 0)
		return r;
	l->flags = mode;
	if (l->revision)
		l->revision++;
	*ret_prog = e.prog_id;
	return 0;
}

static int detach(struct cgf_sim *s, const struct cgf_action *a, const char **ret_why) {
	struct cgf_actual_list *l = cgf_actual_find_mutable(s->state, a->cgroup, a->direction);
	ssize_t t = -1;

	if (a->expected_revision && !s->features.revision)
		return fail(ret_why, "expected_revision on a kernel without revisions", -EINVAL);
	if (a->expected_revision && a->expected_revision != (l ? l->revision : 0))
		return fail(ret_why, "expected_revision differs from the list's revision", -ESTALE);
	for (size_t i = 0; l && i < l->n_entries && t < 0; i++)
		if (l->entries[i].prog_id == a->prog_id && l->entries[i].link_id == a->link_id)
			t = (ssize_t) i;
	if (t < 0)
		return fail(ret_why, "the program to detach is not on the list", -ENOENT);
	if (!l->entries[t].ours)
		return fail(ret_why, "detaches a foreign program", -EACCES);
	cgf_actual_list_remove(l, (size_t) t);
	if (l->n_entries == 0)
		l->flags = 0; /* 6.1: the flags are reset with the last program */
	if (l->revision)
		l->revision++;
	return 0;
}

int cgf_sim_step(struct cgf_sim *s, const struct cgf_plan *plan, size_t i, const char **ret_why) {
	const struct cgf_action *a;
	uint32_t prog = 0, *slot;
	int r;

	if (ret_why)
		*ret_why = NULL;
	if (i != s->n_applied || i >= plan->n_actions)
		return fail(ret_why, "actions out of order", -EINVAL);
	a = &plan->actions[i];
	if (a->kind == CGF_ACTION_ATTACH)
		r = attach(s, a, &prog, ret_why);
	else
		r = detach(s, a, ret_why);
	if (r < 0)
		return r;
	slot = array_append((void **) &s->prog_of_action, s->n_applied, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = prog;
	s->n_applied++;
	return 0;
}

int cgf_plan_apply_to_state(const struct cgf_actual *actual, const struct cgf_plan *plan,
			    const struct cgf_features *features, struct cgf_actual **ret,
			    size_t *ret_failed, const char **ret_why) {
	_cleanup_(cgf_sim_freep) struct cgf_sim *s = NULL;
	int r;

	r = cgf_sim_new(actual, features, &s);
	if (r < 0)
		return r;
	for (size_t i = 0; i < plan->n_actions; i++) {
		r = cgf_sim_step(s, plan, i, ret_why);
		if (r < 0) {
			if (ret_failed)
				*ret_failed = i;
			return r;
		}
	}
	*ret = TAKE_PTR(s->state);
	return 0;
}
