/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The plan simulator (see plan.h): what the kernel would do with each
 * action, on plain data.  It does not model the kernel itself: the
 * kernel's rules (the order of checks, the errors, where an insert goes,
 * what REPLACE and a single-slot attach swap, the mode and the revision
 * after each change) are those of the reference model in
 * lib/cgbpf-model.c, the one the kernel API tests judge the real kernel
 * by.  This file is an adapter: it shows the model the lists an action
 * touches, asks it, and copies the model's answer back into the
 * struct cgf_actual the planner reads.
 *
 * What it adds is the planner's own contract, stricter than the kernel,
 * which the model (a model of the kernel, also of sloppy callers) must
 * not have: which program an attach uses (one per filter and identity,
 * a new one when a new instance is asked for), anchors named by an
 * earlier action, and refusals of what a plan must never send even where
 * the kernel would take it: positional flags on a single-slot attach, a
 * needless or missing new_instance, a detach, swap or replace of a
 * foreign program or of another program than the one the action names,
 * a flag or field the kernel's features lack.  The tests run every plan
 * through it; nothing else needs it.
 */
#include <assert.h>
#include <errno.h>

#include "cgbpf-model.h"
#include "plan.h"
#include "util.h"

/* The model speaks the kernel's flag values; ours are the same numbers. */
_Static_assert(CGF_ATTACH_OVERRIDE == MODEL_MODE_OVERRIDE && CGF_ATTACH_MULTI == MODEL_MODE_MULTI,
	       "mode flags are the kernel's values");

struct cgf_sim {
	struct cgf_features features;
	struct cgf_actual *state;
	uint32_t *prog_of_action; /* per applied action: the program it attached (0: detach) */
	size_t n_applied;
	uint32_t next_id;
	struct model model; /* scratch: what one action sees, loaded anew for each */
};

/*
 * The model's view of one action's list: the list in the model (cgroup
 * `cg`, under the nearest ancestor with programs), and the ids behind the
 * model's program and link handles.  Program handles are this table's
 * indexes: the list's programs, its links' programs, the attached
 * program, the anchor and the REPLACE target; a link handle is the index
 * of the list's link ids.
 */
struct view {
	struct cgf_actual_list *list; /* NULL: no list yet */
	int cg;
	bool revision_known;
	uint32_t prog_ids[2 * CGF_MAX_PROGS + 3];
	int n_progs;
	uint32_t link_ids[MODEL_MAX_LINKS];
	int n_links;
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

/* Why the model refuses, by its error: the planner's tests print it. */
static int kernel_refuses(const char **ret_why, int error) {
	switch (error) {
	case -EINVAL:
		return fail(ret_why, "the kernel refuses the flags, the anchor or the same program twice (EINVAL)", error);
	case -ESTALE:
		return fail(ret_why, "expected_revision differs from the list's revision", error);
	case -EPERM:
		return fail(ret_why, "an ancestor's mode none, or the list's other mode, refuses it (EPERM)", error);
	case -E2BIG:
		return fail(ret_why, "the list holds 64 programs", error);
	case -ENOENT:
		return fail(ret_why, "the REPLACE target, the anchor or the program to detach is not on the list", error);
	default:
		return fail(ret_why, "the kernel refuses it", error);
	}
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

static int prog_handle(struct view *v, uint32_t prog_id) {
	for (int i = 0; i < v->n_progs; i++)
		if (v->prog_ids[i] == prog_id)
			return i;
	assert(v->n_progs < (int) ELEMENTSOF(v->prog_ids));
	v->prog_ids[v->n_progs] = prog_id;
	return v->n_progs++;
}

/* The nearest ancestor of `cgroup` with programs in direction d, or NULL. */
static const struct cgf_actual_list *nearest_ancestor(const struct cgf_sim *s, const char *cgroup,
						      enum cgf_direction d) {
	size_t size = strlen(cgroup) + 2;
	char path[size];

	strcpy(path, cgroup);
	while (cgf_cgroup_parent(path, path, size)) {
		const struct cgf_actual_list *p = cgf_actual_find(s->state, path, d);

		if (p && p->n_entries > 0)
			return p;
	}
	return NULL;
}

/*
 * Loads the model with what an action on (cgroup, d) sees.  Only the
 * nearest ancestor with programs is loaded, by its mode and count: 6.1's
 * hierarchy_allows_attach() (and the model's) stops there, and no action
 * here names its programs.
 */
static int view_load(struct cgf_sim *s, const char *cgroup, enum cgf_direction d, struct view *v) {
	const struct cgf_actual_list *p = nearest_ancestor(s, cgroup, d);
	bool patched = s->features.preorder || s->features.ordering || s->features.revision;
	struct model *m = &s->model;
	struct model_cgroup *c;
	int parent = -1;

	*v = (struct view) { .list = cgf_actual_find_mutable(s->state, cgroup, d) };
	if ((p && p->n_entries > MODEL_MAX_LIST) || (v->list && v->list->n_entries > MODEL_MAX_LIST))
		return -E2BIG; /* no kernel list holds more */
	model_init(m, patched ? MODEL_KERNEL_PATCHED : MODEL_KERNEL_BASELINE);
	if (p) {
		parent = model_add_cgroup(m, -1);
		c = &m->cg[parent];
		c->mode = (enum model_mode) (p->flags & CGF_ATTACH_MODE_MASK);
		c->n = (int) p->n_entries;
		for (int i = 0; i < c->n; i++)
			c->list[i] = (struct model_entry) { .prog = -1, .link = -1, .preorder = p->entries[i].preorder };
	}
	v->cg = model_add_cgroup(m, parent);
	c = &m->cg[v->cg];
	/* 0: the revision is unknown (a kernel without revisions, or a list
	 * not read); it stays 0, as the planner expects. */
	c->revision = v->list ? v->list->revision : 0;
	v->revision_known = c->revision != 0;
	if (!v->list)
		return 0;
	c->mode = (enum model_mode) (v->list->flags & CGF_ATTACH_MODE_MASK);
	c->n = (int) v->list->n_entries;
	for (int i = 0; i < c->n; i++) {
		const struct cgf_actual_entry *e = &v->list->entries[i];

		c->list[i] = (struct model_entry) { .prog = prog_handle(v, e->prog_id), .link = -1, .preorder = e->preorder };
		if (e->link_id) {
			int h = v->n_links++;

			v->link_ids[h] = e->link_id;
			m->link[h] = (struct model_link) {
				.used = true,
				.prog = c->list[i].prog,
				.cgroup = v->cg,
				.preorder = e->preorder,
			};
			c->list[i].prog = -1;
			c->list[i].link = h;
		}
	}
	return 0;
}

static bool same_entry(const struct view *v, const struct model_entry *me, const struct cgf_actual_entry *e) {
	if (me->link >= 0)
		return e->link_id == v->link_ids[me->link];
	return e->link_id == 0 && e->prog_id == v->prog_ids[me->prog];
}

/*
 * Copies the model's list back: it differs from ours by one entry removed
 * (found at the first index where they differ), or by `added` inserted or
 * put in place of another (found by its program: the model never puts the
 * same program twice on a list as direct entries).  Then the whole list
 * is checked against the model's.
 */
static int view_store(struct cgf_sim *s, struct view *v, const char *cgroup, enum cgf_direction d,
		      uint32_t added_handle, const struct cgf_actual_entry *added) {
	const struct model_cgroup *c = &s->model.cg[v->cg];
	size_t n_old = v->list ? v->list->n_entries : 0, at = 0;
	uint32_t flags = model_query_flags(&s->model, v->cg);
	int r;

	if (!v->list) {
		r = cgf_actual_add_list(s->state, cgroup, d, 0, 0, NULL);
		if (r < 0)
			return r;
		cgf_actual_sort(s->state);
		v->list = cgf_actual_find_mutable(s->state, cgroup, d);
	}
	if (!added) {
		while (at < n_old && at < (size_t) c->n && same_entry(v, &c->list[at], &v->list->entries[at]))
			at++;
		if ((size_t) c->n + 1 != n_old || at >= n_old)
			return -EIO;
		cgf_actual_list_remove(v->list, at);
	} else {
		while (at < (size_t) c->n && !(c->list[at].link < 0 && c->list[at].prog == (int) added_handle))
			at++;
		if (at >= (size_t) c->n || ((size_t) c->n != n_old && (size_t) c->n != n_old + 1))
			return -EIO;
		if ((size_t) c->n == n_old)
			cgf_actual_list_remove(v->list, at);
		r = cgf_actual_list_insert(v->list, at, added);
		if (r < 0)
			return r;
	}
	for (int i = 0; i < c->n; i++)
		if (!same_entry(v, &c->list[i], &v->list->entries[i]) ||
		    v->list->entries[i].preorder != c->list[i].preorder)
			return -EIO; /* not one entry changed: the adapter is wrong */
	if ((v->list->flags & CGF_ATTACH_MODE_MASK) != flags)
		v->list->flags = flags;
	v->list->revision = v->revision_known ? c->revision : 0;
	return 0;
}

/* The program an attach uses: the lowest id of ours with that filter and
 * identity on any list (one program may sit on many lists), or a new id
 * (s->next_id, taken only once the attach succeeds) when a new instance is
 * asked for or there is none yet. */
static uint32_t pick_prog(const struct cgf_sim *s, const struct cgf_action *a) {
	uint32_t best = 0;

	if (!a->new_instance)
		for (size_t i = 0; i < s->state->n_lists; i++)
			for (size_t j = 0; j < s->state->lists[i].n_entries; j++) {
				const struct cgf_actual_entry *e = &s->state->lists[i].entries[j];

				if (e->ours && e->link_id == 0 && streq_ptr(e->filter, a->filter) &&
				    streq_ptr(e->identity, a->identity) && (best == 0 || e->prog_id < best))
					best = e->prog_id;
			}
	return best ? best : s->next_id;
}

/* The planner's refusals that need no list: what a plan must never send. */
static int attach_contract(const struct cgf_sim *s, const struct cgf_action *a, const char **ret_why) {
	const uint32_t flags = a->flags;
	uint32_t allowed = CGF_ATTACH_MODE_MASK | CGF_ATTACH_REPLACE;

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
	if (!(flags & CGF_ATTACH_MULTI)) {
		/* The kernel ignores positions here; a plan must not send them. */
		if (flags & (CGF_ATTACH_BEFORE | CGF_ATTACH_AFTER | CGF_ATTACH_ID) || a->anchor_action != CGF_NO_ACTION)
			return fail(ret_why, "positional flags on a single-slot attach", -EINVAL);
	} else if (!(flags & CGF_ATTACH_REPLACE)) {
		if (a->prog_id)
			return fail(ret_why, "an insert that names a program to replace", -EINVAL);
		/* Without BPF_F_ID the kernel would read the anchor as an fd. */
		if (!(flags & CGF_ATTACH_ID) && (a->anchor_action != CGF_NO_ACTION || a->anchor_prog_id))
			return fail(ret_why, "an anchor without BPF_F_ID", -EINVAL);
	}
	return 0;
}

/* The planner's refusals once the kernel said yes: whose program it swaps,
 * replaces or adds a second time. */
static int attach_contract_on_list(const struct cgf_action *a, const struct cgf_actual_list *l,
				   const char **ret_why) {
	size_t n = l ? l->n_entries : 0;

	if (!(a->flags & CGF_ATTACH_MULTI)) {
		if (n > 0 && !l->entries[0].ours)
			return fail(ret_why, "swaps out a foreign program", -EACCES);
		if (n > 0 && a->prog_id != l->entries[0].prog_id)
			return fail(ret_why, "the program it says it swaps out is not the one attached", -ENOENT);
		if (n == 0 && a->prog_id)
			return fail(ret_why, "swaps out a program on an empty list", -ENOENT);
		return 0;
	}
	/* Same program twice: the plan must ask for a new instance exactly
	 * when the list holds one of the filter and identity. */
	if (holds(l, a->filter, a->identity) != a->new_instance)
		return fail(ret_why, a->new_instance ? "new_instance without need" : "the same program twice (new_instance missing)",
			    -EINVAL);
	if (a->flags & CGF_ATTACH_REPLACE) {
		ssize_t t = find_direct(l, a->prog_id);

		if (t >= 0 && !l->entries[t].ours)
			return fail(ret_why, "replaces a foreign program", -EACCES);
	}
	return 0;
}

static int attach(struct cgf_sim *s, const struct cgf_action *a, uint32_t *ret_prog, const char **ret_why) {
	char name[CGF_PROG_NAME_MAX + 1];
	struct model_prediction p;
	struct model_attach ma;
	struct cgf_actual_entry e;
	uint32_t prog;
	struct view v;
	int r;

	r = attach_contract(s, a, ret_why);
	if (r < 0)
		return r;
	r = view_load(s, a->cgroup, a->direction, &v);
	if (r < 0)
		return fail(ret_why, "a list of more than 64 programs", r);
	prog = pick_prog(s, a);
	ma = (struct model_attach) {
		.cgroup = v.cg,
		.prog = prog_handle(&v, prog),
		.flags = a->flags,
		.replace_prog = a->flags & CGF_ATTACH_REPLACE ? prog_handle(&v, a->prog_id) : -1,
		.expected_revision = a->expected_revision,
	};
	if (a->flags & CGF_ATTACH_ID) {
		uint32_t anchor = a->anchor_action != CGF_NO_ACTION
					  ? (a->anchor_action < s->n_applied ? s->prog_of_action[a->anchor_action] : 0)
					  : a->anchor_prog_id;

		/* BPF_F_ID: the anchor is an id; 0 is nobody's. */
		if (anchor)
			ma.anchor = (struct model_anchor) { .kind = MODEL_ANCHOR_PROG, .handle = prog_handle(&v, anchor) };
	}
	p = model_predict_attach(&s->model, &ma);
	if (p.err < 0)
		return kernel_refuses(ret_why, p.err);
	r = attach_contract_on_list(a, v.list, ret_why);
	if (r < 0)
		return r;

	if (cgf_filter_name_is_valid(a->filter))
		cgf_filter_prog_name(a->filter, name);
	else
		snprintf(name, sizeof(name), "%s", a->filter);
	e = (struct cgf_actual_entry) {
		.prog_id = prog,
		.prog_name = name,
		.ours = true,
		.filter = a->filter,
		.identity = a->identity,
		.preorder = a->flags & CGF_ATTACH_PREORDER,
	};
	model_apply_attach(&s->model, &ma, -1);
	r = view_store(s, &v, a->cgroup, a->direction, (uint32_t) ma.prog, &e);
	if (r < 0)
		return fail(ret_why, "the model's list and the simulator's differ (a bug in plan-sim.c)", r);
	if (prog == s->next_id)
		s->next_id++;
	*ret_prog = prog;
	return 0;
}

static int find_link_handle(const struct view *v, uint32_t link_id) {
	for (int i = 0; i < v->n_links; i++)
		if (v->link_ids[i] == link_id)
			return i;
	return -1;
}

static int detach(struct cgf_sim *s, const struct cgf_action *a, const char **ret_why) {
	struct cgf_actual_list *l;
	ssize_t t = -1;
	struct view v;
	int r;

	if (a->expected_revision && !s->features.revision)
		return fail(ret_why, "expected_revision on a kernel without revisions", -EINVAL);
	r = view_load(s, a->cgroup, a->direction, &v);
	if (r < 0)
		return fail(ret_why, "a list of more than 64 programs", r);
	l = v.list;
	/* The action names the entry it removes, by program and link; on a
	 * single-slot list the kernel would remove whatever is there. */
	for (size_t i = 0; l && i < l->n_entries && t < 0; i++)
		if (l->entries[i].prog_id == a->prog_id && l->entries[i].link_id == a->link_id)
			t = (ssize_t) i;
	if (a->link_id) {
		/* BPF_LINK_DETACH takes no revision; the plan still states the
		 * one it expects, and the simulator holds it to that. */
		if (a->expected_revision && a->expected_revision != (l ? l->revision : 0))
			return kernel_refuses(ret_why, -ESTALE);
		if (t < 0)
			return fail(ret_why, "the program to detach is not on the list", -ENOENT);
		if (!l->entries[t].ours)
			return fail(ret_why, "detaches a foreign program", -EACCES);
		(void) model_link_detach(&s->model, find_link_handle(&v, a->link_id));
	} else {
		struct model_detach md = {
			.cgroup = v.cg,
			.prog = prog_handle(&v, a->prog_id),
			.expected_revision = a->expected_revision,
		};
		struct model_prediction p = model_predict_detach(&s->model, &md);

		if (p.err < 0)
			return kernel_refuses(ret_why, p.err);
		if (t < 0)
			return fail(ret_why, "the program to detach is not on the list", -ENOENT);
		if (!l->entries[t].ours)
			return fail(ret_why, "detaches a foreign program", -EACCES);
		model_apply_detach(&s->model, &md);
	}
	r = view_store(s, &v, a->cgroup, a->direction, 0, NULL);
	if (r < 0)
		return fail(ret_why, "the model's list and the simulator's differ (a bug in plan-sim.c)", r);
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
