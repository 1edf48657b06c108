/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The planner (see plan.h, and docs/design.md for the rules).
 *
 * cgf_plan() merges the two states into one lp per (cgroup, direction)
 * that either names (merge()), then makes two passes over them:
 *
 *  1. analyse(), parents before children: each list gets a local plan, a
 *     sequence of actions on that list alone (plan_list), or is blocked
 *     because the kernel would refuse it: a foreign program in the way at
 *     the cgroup, a `none` above it (hierarchy_blocker), the 64-program
 *     limit.  A blocked list gets no actions at all, not even its
 *     detaches: removing our old program without attaching the new one
 *     would leave it without a filter.
 *
 *  2. emit(): each list's actions stay together (so revisions count up
 *     by one per action and a mode-change gap is as short as the kernel
 *     allows).  Lists that attach go parents first; lists that only
 *     detach go children first, at the end, except a `none` of ours that
 *     stands in the way of an attach below it (removed just before), and
 *     lists below a cgroup that gets `none` (cleared just before it).
 *
 * Within a multi list the local plan is: in-place REPLACEs, then inserts
 * at their final positions, then the detaches of what left the policy or
 * was superseded; where the 64-program limit leaves no room for an
 * attach, a detach moves up to just before it (order_early()).
 * Programs keep their order within a preorder class (the kernel runs each
 * class in a pass of its own, so only that order means anything): the
 * programs that stay are the heaviest common subsequence of the list and
 * the policy (with BEFORE/AFTER), or its longest common prefix (without:
 * inserts can only append).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sys/types.h>

#include "escape.h"
#include "plan.h"
#include "util.h"

/* An entry of a list as the local planner sees it. */
struct slot {
	const struct cgf_actual_entry *e;
	ssize_t want;     /* index into the desired entries it stays as, -1: leaves */
	bool detached;    /* its detach is planned already (early, for the limit) */
};

enum lp_kind {
	LP_NOOP,
	LP_CHANGE,  /* attaches (and maybe detaches) */
	LP_REMOVAL, /* detaches only */
	LP_BLOCKED,
};

/* One (cgroup, direction). */
struct lp {
	const char *cgroup;
	enum cgf_direction direction;
	unsigned depth;
	const struct cgf_desired_list *want; /* NULL: the policy puts nothing here */
	const struct cgf_actual_list *have;  /* NULL: no programs, revision unknown */
	enum lp_kind kind;
	uint32_t blocker;                    /* LP_BLOCKED by this program of its own list, or 0 */
	struct cgf_action *acts;             /* local: anchor_action indexes acts */
	size_t n_acts;
	size_t *flush;                       /* removal lists to run first (indexes into lps) */
	size_t n_flush;
	bool emitted;
};

struct planner {
	const struct cgf_features *features;
	struct lp *lps;       /* sorted by cgroup, direction: bsearch */
	size_t n_lps;
	size_t *order;        /* lps indexes, parents first */
	struct cgf_plan *plan;
};

static const char *const reason_table[_CGF_REASON_MAX] = {
	[CGF_REASON_NEW] = "new",
	[CGF_REASON_CHANGED] = "changed",
	[CGF_REASON_MOVED] = "moved",
	[CGF_REASON_MODE] = "mode change",
	[CGF_REASON_REMOVED] = "removed",
	[CGF_REASON_SUPERSEDED] = "superseded",
};

static const char *const report_kind_table[_CGF_REPORT_KIND_MAX] = {
	[CGF_REPORT_FOREIGN] = "foreign",
	[CGF_REPORT_FOREIGN_BELOW_NONE] = "foreign-below-none",
	[CGF_REPORT_OURS_BELOW_NONE] = "ours-below-none",
	[CGF_REPORT_BLOCKED] = "blocked",
	[CGF_REPORT_MODE_GAP] = "mode-gap",
	[CGF_REPORT_LIMIT_GAP] = "limit-gap",
	[CGF_REPORT_LIMIT] = "limit",
	[CGF_REPORT_REORDER] = "reorder",
	[CGF_REPORT_UNSUPPORTED] = "unsupported",
};

const char *cgf_action_reason_to_string(enum cgf_action_reason r) {
	return (unsigned) r < _CGF_REASON_MAX ? reason_table[r] : NULL;
}

const char *cgf_report_kind_to_string(enum cgf_report_kind k) {
	return (unsigned) k < _CGF_REPORT_KIND_MAX ? report_kind_table[k] : NULL;
}

static void action_clear(struct cgf_action *a) {
	free(a->cgroup);
	free(a->filter);
	free(a->identity);
	free(a->prog_name);
}

static void actions_free(struct cgf_action *acts, size_t n) {
	for (size_t i = 0; i < n; i++)
		action_clear(&acts[i]);
	free(acts);
}

struct cgf_plan *cgf_plan_free(struct cgf_plan *p) {
	if (!p)
		return NULL;
	actions_free(p->actions, p->n_actions);
	for (size_t i = 0; i < p->n_reports; i++) {
		free(p->reports[i].cgroup);
		free(p->reports[i].message);
	}
	free(p->reports);
	free(p);
	return NULL;
}

/* ---- reports ------------------------------------------------------------- */

static int report(struct planner *pl, enum cgf_report_kind kind, const char *cgroup, enum cgf_direction d,
		  uint32_t prog_id, size_t calls, struct cgf_pos pos, const char *format, ...) _printf_(8, 9);
static int report(struct planner *pl, enum cgf_report_kind kind, const char *cgroup, enum cgf_direction d,
		  uint32_t prog_id, size_t calls, struct cgf_pos pos, const char *format, ...) {
	_cleanup_free_ char *c = NULL, *m = NULL;
	struct cgf_report *r;
	va_list ap;
	int k;

	va_start(ap, format);
	k = vasprintf(&m, format, ap);
	va_end(ap);
	if (k < 0) {
		m = NULL;
		return -ENOMEM;
	}
	c = strdup(cgroup);
	if (!c)
		return -ENOMEM;
	r = array_append((void **) &pl->plan->reports, pl->plan->n_reports, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = (struct cgf_report) {
		.kind = kind, .cgroup = TAKE_PTR(c), .direction = d, .message = TAKE_PTR(m),
		.prog_id = prog_id, .calls = calls, .pos = pos,
	};
	pl->plan->n_reports++;
	return 0;
}

static struct cgf_pos lp_pos(const struct lp *l) {
	return l->want ? l->want->pos : (struct cgf_pos) {};
}

/* "'name' (id 12)" of an actual entry. */
static const char *prog_words(const struct cgf_actual_entry *e, char *buf, size_t size) {
	snprintf(buf, size, "'%s' (id %" PRIu32 ")", e->prog_name ?: "?", e->prog_id);
	return buf;
}

/* ---- the local plan of one list ------------------------------------------ */

struct local {
	struct planner *pl;
	struct lp *l;
	const struct cgf_desired_entry *want; /* l->want->entries, or NULL */
	size_t n_want;
	bool *want_preorder;                  /* per desired entry, after the features */
	struct cgf_action *acts;
	size_t n_acts;
	/* (filter, identity) of our programs on the list right now, to tell
	 * when an attach needs a new instance */
	const char **have_filter, **have_identity;
	size_t n_have;
};

static bool entry_is(const struct cgf_actual_entry *e, const char *filter, const char *identity) {
	return e->ours && streq_ptr(e->filter, filter) && identity && streq_ptr(e->identity, identity);
}

static bool local_holds(const struct local *lo, const char *filter, const char *identity) {
	for (size_t i = 0; i < lo->n_have; i++)
		if (lo->have_filter[i] && streq_ptr(lo->have_filter[i], filter) && streq_ptr(lo->have_identity[i], identity))
			return true;
	return false;
}

static int local_track(struct local *lo, const char *filter, const char *identity) {
	const char **f, **id;

	f = array_append((void **) &lo->have_filter, lo->n_have, sizeof(*f));
	if (!f)
		return -ENOMEM;
	id = array_append((void **) &lo->have_identity, lo->n_have, sizeof(*id));
	if (!id)
		return -ENOMEM;
	*f = filter;
	*id = identity;
	lo->n_have++;
	return 0;
}

static void local_untrack(struct local *lo, const char *filter, const char *identity) {
	for (size_t i = 0; i < lo->n_have; i++)
		if (streq_ptr(lo->have_filter[i], filter) && streq_ptr(lo->have_identity[i], identity)) {
			lo->have_filter[i] = lo->have_identity[i] = NULL;
			return;
		}
}

static struct cgf_action *local_new(struct local *lo, enum cgf_action_kind kind, enum cgf_action_reason reason) {
	struct cgf_action *a;

	a = array_append((void **) &lo->acts, lo->n_acts, sizeof(*a));
	if (!a)
		return NULL;
	*a = (struct cgf_action) {
		.kind = kind, .reason = reason, .direction = lo->l->direction, .anchor_action = CGF_NO_ACTION,
	};
	lo->n_acts++;
	a->cgroup = strdup(lo->l->cgroup);
	return a->cgroup ? a : NULL;
}

static int local_detach(struct local *lo, const struct cgf_actual_entry *e, enum cgf_action_reason reason) {
	struct cgf_action *a = local_new(lo, CGF_ACTION_DETACH, reason);

	if (!a)
		return -ENOMEM;
	a->prog_id = e->prog_id;
	a->link_id = e->link_id;
	if (e->prog_name && !(a->prog_name = strdup(e->prog_name)))
		return -ENOMEM;
	if (e->ours)
		local_untrack(lo, e->filter, e->identity);
	return 0;
}

/* An attach of desired entry w; "old" is the program it replaces or swaps
 * out (NULL for an insert).  Returns the action's local index. */
static int local_attach(struct local *lo, size_t w, uint32_t flags, const struct cgf_actual_entry *old,
			enum cgf_action_reason reason, size_t *ret_index) {
	const struct cgf_desired_entry *d = &lo->want[w];
	struct cgf_action *a;
	int r;

	a = local_new(lo, CGF_ACTION_ATTACH, reason);
	if (!a)
		return -ENOMEM;
	a->filter = strdup(d->filter);
	a->identity = strdup(d->identity);
	if (!a->filter || !a->identity)
		return -ENOMEM;
	if (lo->want_preorder[w])
		flags |= CGF_ATTACH_PREORDER;
	a->flags = flags;
	if (old) {
		a->prog_id = old->prog_id;
		if (old->prog_name && !(a->prog_name = strdup(old->prog_name)))
			return -ENOMEM;
		if (old->ours)
			local_untrack(lo, old->filter, old->identity);
	}
	a->new_instance = local_holds(lo, d->filter, d->identity);
	r = local_track(lo, d->filter, d->identity);
	if (r < 0)
		return r;
	if (ret_index)
		*ret_index = lo->n_acts - 1;
	return 0;
}

static size_t n_foreign(const struct cgf_actual_list *h) {
	size_t n = 0;

	for (size_t i = 0; h && i < h->n_entries; i++)
		n += !h->entries[i].ours;
	return n;
}

static const struct cgf_actual_entry *first_foreign(const struct cgf_actual_list *h) {
	for (size_t i = 0; h && i < h->n_entries; i++)
		if (!h->entries[i].ours)
			return &h->entries[i];
	return NULL;
}

static int block(struct local *lo, uint32_t prog_id, const char *format, ...) _printf_(3, 4);
static int block(struct local *lo, uint32_t prog_id, const char *format, ...) {
	_cleanup_free_ char *m = NULL;
	va_list ap;
	int k;

	lo->l->kind = LP_BLOCKED;
	lo->l->blocker = prog_id;
	va_start(ap, format);
	k = vasprintf(&m, format, ap);
	va_end(ap);
	if (k < 0) {
		m = NULL;
		return -ENOMEM;
	}
	return report(lo->pl, CGF_REPORT_BLOCKED, lo->l->cgroup, lo->l->direction, prog_id, 0, lp_pos(lo->l),
		      "%s; nothing planned here", m);
}

/* Only detaches: every program of ours goes. */
static int plan_removal(struct local *lo) {
	const struct cgf_actual_list *h = lo->l->have;
	int r;

	for (size_t i = 0; h && i < h->n_entries; i++)
		if (h->entries[i].ours) {
			r = local_detach(lo, &h->entries[i], CGF_REASON_REMOVED);
			if (r < 0)
				return r;
		}
	return 0;
}

/*
 * A mode change: the kernel changes the mode of an empty list only, so
 * every program of ours goes, then the new ones come.  Those that stay in
 * the policy are detached last and attached first, so that each is
 * missing as briefly as the kernel allows.
 */
static int plan_mode_change(struct local *lo) {
	const struct cgf_actual_list *h = lo->l->have;
	uint32_t flags = cgf_mode_to_flags(lo->l->want->mode);
	size_t n_detach = 0;
	int r;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < h->n_entries; i++) {
			const struct cgf_actual_entry *e = &h->entries[i];
			bool stays = false;

			for (size_t w = 0; w < lo->n_want && !stays; w++)
				stays = streq_ptr(e->filter, lo->want[w].filter);
			if (stays != (pass == 1))
				continue;
			r = local_detach(lo, e, CGF_REASON_MODE);
			if (r < 0)
				return r;
			n_detach++;
		}
	for (size_t w = 0; w < lo->n_want; w++) {
		r = local_attach(lo, w, flags, NULL, CGF_REASON_MODE, NULL);
		if (r < 0)
			return r;
	}
	return report(lo->pl, CGF_REPORT_MODE_GAP, lo->l->cgroup, lo->l->direction, 0, n_detach, lp_pos(lo->l),
		      "mode %s -> %s: the kernel changes the mode of an empty list only: %zu detach call%s "
		      "before the first attach (programs are loaded beforehand)",
		      cgf_mode_flags_to_string(h->flags), cgf_mode_to_string(lo->l->want->mode), n_detach,
		      n_detach == 1 ? "" : "s");
}

/* none / override: one program, in the single slot. */
static int plan_single(struct local *lo) {
	const struct cgf_actual_list *h = lo->l->have;
	uint32_t flags = cgf_mode_to_flags(lo->l->want->mode);
	const struct cgf_actual_entry *f = first_foreign(h), *e;
	char buf[64];

	if (lo->n_want != 1)
		return block(lo, 0, "mode %s holds one program, the policy gives %zu",
			     cgf_mode_to_string(lo->l->want->mode), lo->n_want);
	if (!h || h->n_entries == 0)
		return local_attach(lo, 0, flags, NULL, CGF_REASON_NEW, NULL);
	if (f) {
		if (h->flags == flags && h->n_entries == 1)
			return block(lo, f->prog_id,
				     "foreign program %s holds the single slot (mode %s): attaching '%s' would "
				     "replace it, and cgfilterd never replaces a foreign program",
				     prog_words(f, buf, sizeof(buf)), cgf_mode_flags_to_string(h->flags),
				     lo->want[0].filter);
		return block(lo, f->prog_id,
			     "mode %s -> %s needs an empty list, and foreign program %s stays",
			     cgf_mode_flags_to_string(h->flags), cgf_mode_to_string(lo->l->want->mode),
			     prog_words(f, buf, sizeof(buf)));
	}
	if (h->flags != flags || h->n_entries != 1)
		return plan_mode_change(lo);

	e = &h->entries[0];
	if (entry_is(e, lo->want[0].filter, lo->want[0].identity) && e->preorder == lo->want_preorder[0])
		return 0;
	/* Attaching to the occupied slot swaps the program atomically. */
	return local_attach(lo, 0, flags, e, streq_ptr(e->filter, lo->want[0].filter) ? CGF_REASON_CHANGED : CGF_REASON_NEW,
			    NULL);
}

/* Where a desired entry is once placed: an unchanged program that stays,
 * or the action that attaches it (anchors name one or the other). */
struct where {
	const struct cgf_actual_entry *entry;
	size_t action;
};

/*
 * A multi list.  Every program of ours on it is a slot; a slot that stays
 * where it is (unchanged, or REPLACEd in place) is "kept" as one desired
 * entry; every other slot of ours is detached, and every desired entry
 * without a kept slot is inserted.
 */
struct multi {
	struct local *lo;
	size_t n;                 /* programs on the list */
	struct slot *slots;       /* per program */
	ssize_t *kept_by;         /* per desired entry: the kept slot, -1 */
	struct where *at;         /* per desired entry: where it is once placed */
	size_t *inserts;          /* desired entries to insert, in policy order */
	size_t n_inserts, n_replace;
	size_t *early;            /* slots that may go first for room (order_early) */
	size_t n_early, next_early;
	size_t *early_actions;    /* the local actions that detached them */
	size_t n_early_actions;
	size_t count;             /* programs on the list as the actions go */
	char *moved;              /* without BEFORE/AFTER: filters attached again for the order alone */
	size_t n_moved;
};

/* The arrays a multi list's plan owns, whichever step it ends in: all
 * of them are freed here, so that every step may simply return. */
static void multi_done(struct multi *m) {
	free(m->slots);
	free(m->kept_by);
	free(m->at);
	free(m->inserts);
	free(m->early);
	free(m->early_actions);
	free(m->moved);
}

static bool slot_unchanged(const struct multi *m, size_t i) {
	const struct local *lo = m->lo;
	ssize_t w = m->slots[i].want;

	return w >= 0 && entry_is(m->slots[i].e, lo->want[w].filter, lo->want[w].identity);
}

static bool filter_desired(const struct local *lo, const char *filter) {
	for (size_t w = 0; w < lo->n_want; w++)
		if (streq_ptr(filter, lo->want[w].filter))
			return true;
	return false;
}

/* Per desired entry, the program of ours that could stay as it: same
 * filter and class, one with the same identity first, else the first. */
static void pick_candidates(struct multi *m, ssize_t *cand_of) {
	const struct local *lo = m->lo;

	for (size_t w = 0; w < lo->n_want; w++) {
		ssize_t pick = -1;

		for (size_t i = 0; i < m->n; i++) {
			const struct cgf_actual_entry *e = m->slots[i].e;
			bool taken = false;

			for (size_t v = 0; v < w && !taken; v++)
				taken = cand_of[v] == (ssize_t) i;
			if (taken || !e->ours || !streq_ptr(e->filter, lo->want[w].filter) || e->preorder != lo->want_preorder[w])
				continue;
			if (pick < 0 || (entry_is(e, lo->want[w].filter, lo->want[w].identity) &&
					 !entry_is(m->slots[pick].e, lo->want[w].filter, lo->want[w].identity)))
				pick = (ssize_t) i;
		}
		cand_of[w] = pick;
	}
}

/*
 * Without BEFORE/AFTER (see keep_class()): the longest prefix of the
 * class's policy order that the list holds in order, since new programs
 * can only be appended.  cand: the class's candidates in list order.
 */
static void keep_prefix(struct multi *m, const size_t *cand, size_t n_cand, bool pre) {
	const struct local *lo = m->lo;
	size_t w = 0;

	while (w < lo->n_want && lo->want_preorder[w] != pre)
		w++;
	for (size_t k = 0; k < n_cand; k++) {
		struct slot *s = &m->slots[cand[k]];

		if (w >= lo->n_want || (size_t) s->want != w) {
			s->want = -1; /* out of order: it goes, a copy comes at the end */
			continue;
		}
		if (s->e->link_id && !slot_unchanged(m, cand[k])) {
			/* It and everything after it go to the end. */
			for (; k < n_cand; k++)
				m->slots[cand[k]].want = -1;
			break;
		}
		do
			w++;
		while (w < lo->n_want && lo->want_preorder[w] != pre);
	}
}

/*
 * With BEFORE/AFTER (see keep_class()): the heaviest subsequence that is
 * in the same order in the list and in the policy.  best and prev are
 * scratch space of n_cand entries, zeroed.
 */
static void keep_heaviest(struct multi *m, const size_t *cand, size_t n_cand, bool links_ok, size_t *best,
			  size_t *prev) {
	size_t top = SIZE_MAX;

	for (size_t k = 0; k < n_cand; k++) {
		const struct slot *s = &m->slots[cand[k]];
		size_t weight = slot_unchanged(m, cand[k]) ? 2 : 1;

		prev[k] = SIZE_MAX;
		if (s->e->link_id && (weight == 1 || !links_ok))
			continue; /* best[k] = 0: cannot stay */
		best[k] = weight;
		for (size_t j = 0; j < k; j++)
			if (best[j] > 0 && m->slots[cand[j]].want < s->want && best[j] + weight > best[k]) {
				best[k] = best[j] + weight;
				prev[k] = j;
			}
		if (top == SIZE_MAX || best[k] > best[top])
			top = k;
	}
	for (size_t k = 0; k < n_cand; k++)
		best[k] = best[k] > 0 ? 1 : 0; /* reused: 1 = not on the chosen chain yet */
	for (size_t k = top; k != SIZE_MAX; k = prev[k])
		best[k] = 2;
	for (size_t k = 0; k < n_cand; k++)
		if (best[k] != 2)
			m->slots[cand[k]].want = -1;
}

/*
 * Which candidates of one class stay (sets slots[].want).  With
 * BEFORE/AFTER: the heaviest subsequence that is in the same order in
 * the list and in the policy (an unchanged program weighs 2, a changed
 * one 1: the calls each saves).  Without: the longest prefix of the
 * policy's order that the list holds in order, since new programs can
 * only be appended.  A changed program attached through a link cannot be
 * REPLACEd, and with links_ok false no link stays (an insert may need an
 * anchor, and anchors must be direct attachments).
 */
static int keep_class(struct multi *m, const ssize_t *cand_of, bool pre, bool ordering, bool links_ok) {
	const struct local *lo = m->lo;
	_cleanup_free_ size_t *cand = NULL, *best = NULL, *prev = NULL;
	size_t n_cand = 0;

	/* All three up front, whichever rule runs: a rule never fails
	 * halfway, after it changed slots[].want. */
	cand = calloc(m->n + 1, sizeof(*cand));
	best = calloc(m->n + 1, sizeof(*best));
	prev = calloc(m->n + 1, sizeof(*prev));
	if (!cand || !best || !prev)
		return -ENOMEM;
	/* The candidates in list order; .want is the desired entry they could be. */
	for (size_t i = 0; i < m->n; i++)
		for (size_t w = 0; w < lo->n_want; w++)
			if (cand_of[w] == (ssize_t) i && lo->want_preorder[w] == pre) {
				m->slots[i].want = (ssize_t) w;
				cand[n_cand++] = i;
			}

	if (ordering)
		keep_heaviest(m, cand, n_cand, links_ok, best, prev);
	else
		keep_prefix(m, cand, n_cand, pre);
	return 0;
}

/* The first desired entry after w in its class that has a kept slot. */
static ssize_t kept_successor(const struct multi *m, size_t w, const ssize_t *kept_by) {
	const struct local *lo = m->lo;

	for (size_t v = w + 1; v < lo->n_want; v++)
		if (lo->want_preorder[v] == lo->want_preorder[w] && kept_by[v] >= 0)
			return (ssize_t) v;
	return -1;
}

static int choose_kept(struct multi *m) {
	const struct local *lo = m->lo;
	const bool ordering = lo->pl->features->ordering;
	_cleanup_free_ ssize_t *cand_of = NULL, *kept_by = NULL;
	int r;

	cand_of = calloc(lo->n_want + 1, sizeof(*cand_of));
	kept_by = calloc(lo->n_want + 1, sizeof(*kept_by));
	if (!cand_of || !kept_by)
		return -ENOMEM;
	pick_candidates(m, cand_of);

	for (int c = 0; c < 2; c++) {
		bool pre = c == 1, link_anchor = false;

		r = keep_class(m, cand_of, pre, ordering, true);
		if (r < 0)
			return r;
		if (!ordering)
			continue;
		/* An insert goes BEFORE the next program of its class that stays;
		 * if that one is attached through a link, no link stays. */
		for (size_t w = 0; w < lo->n_want; w++)
			kept_by[w] = cand_of[w] >= 0 && m->slots[cand_of[w]].want == (ssize_t) w ? cand_of[w] : -1;
		for (size_t w = 0; w < lo->n_want && !link_anchor; w++) {
			ssize_t succ;

			if (lo->want_preorder[w] != pre || kept_by[w] >= 0)
				continue;
			succ = kept_successor(m, w, kept_by);
			link_anchor = succ >= 0 && m->slots[kept_by[succ]].e->link_id;
		}
		if (link_anchor) {
			r = keep_class(m, cand_of, pre, ordering, false);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static void count_kept(struct multi *m) {
	const struct local *lo = m->lo;

	m->n_inserts = m->n_replace = 0;
	for (size_t w = 0; w < lo->n_want; w++) {
		m->kept_by[w] = -1;
		m->at[w] = (struct where) { .action = CGF_NO_ACTION };
	}
	for (size_t i = 0; i < m->n; i++)
		if (m->slots[i].want >= 0) {
			m->kept_by[m->slots[i].want] = (ssize_t) i;
			m->at[m->slots[i].want].entry = m->slots[i].e;
			m->n_replace += !slot_unchanged(m, i);
		}
	for (size_t w = 0; w < lo->n_want; w++)
		if (m->kept_by[w] < 0)
			m->inserts[m->n_inserts++] = w;
}

/*
 * The kernel counts before every attach, REPLACE included: the list may
 * hold at most 63 then.  A full list of exactly the policy's programs with
 * a changed one has no room for a REPLACE: the first changed one is
 * detached first and attached again (without BEFORE/AFTER, at the end,
 * so what follows it in its class moves too).
 */
static void make_room(struct multi *m) {
	const struct local *lo = m->lo;
	const bool ordering = lo->pl->features->ordering;

	if (m->n_replace == 0 || m->n_inserts > 0 || m->n < CGF_MAX_PROGS)
		return;
	for (size_t w = 0; w < lo->n_want; w++) {
		ssize_t i = m->kept_by[w];

		if (i < 0 || slot_unchanged(m, (size_t) i))
			continue;
		for (size_t j = 0; j < m->n; j++) {
			ssize_t v = m->slots[j].want;

			if (v == (ssize_t) w ||
			    (!ordering && v > (ssize_t) w && lo->want_preorder[v] == lo->want_preorder[w]))
				m->slots[j].want = -1;
		}
		break;
	}
	count_kept(m);
}

/* After make_room(): an insert it made may need a link as its anchor;
 * then, as in choose_kept(), no link of that class stays. */
static void drop_link_anchors(struct multi *m) {
	const struct local *lo = m->lo;
	bool changed = false;

	if (!lo->pl->features->ordering)
		return;
	for (size_t w = 0; w < lo->n_want; w++) {
		ssize_t succ;

		if (m->kept_by[w] >= 0)
			continue;
		succ = kept_successor(m, w, m->kept_by);
		if (succ < 0 || !m->slots[m->kept_by[succ]].e->link_id)
			continue;
		for (size_t i = 0; i < m->n; i++)
			if (m->slots[i].want >= 0 && m->slots[i].e->link_id &&
			    lo->want_preorder[m->slots[i].want] == lo->want_preorder[w])
				m->slots[i].want = -1;
		changed = true;
	}
	if (changed)
		count_kept(m);
}

/* Is slot i's filter on the list without a break when it goes (another
 * slot of the same filter stays)? */
static bool slot_leaves_no_gap(const struct multi *m, size_t i) {
	const struct local *lo = m->lo;

	for (size_t w = 0; w < lo->n_want; w++)
		if (streq_ptr(m->slots[i].e->filter, lo->want[w].filter))
			return m->kept_by[w] >= 0;
	return true; /* it leaves the policy */
}

static int detach_slot(struct multi *m, size_t i) {
	const struct cgf_actual_entry *e = m->slots[i].e;

	m->slots[i].detached = true;
	return local_detach(m->lo, e, filter_desired(m->lo, e->filter) ? CGF_REASON_SUPERSEDED : CGF_REASON_REMOVED);
}

/*
 * The programs that may go before the attaches when the limit needs room,
 * in the order they go: first what leaves without a gap (it left the
 * policy, or another instance of its filter stays), then superseded
 * programs in the order their successors are attached.  Each goes just
 * before the attach that needs its room, so it is missing as briefly as
 * possible.
 */
static void order_early(struct multi *m) {
	const struct local *lo = m->lo;

	m->n_early = 0;
	for (size_t i = 0; i < m->n; i++)
		if (m->slots[i].e->ours && m->slots[i].want < 0 && slot_leaves_no_gap(m, i))
			m->early[m->n_early++] = i;
	for (size_t k = 0; k < m->n_inserts; k++)
		for (size_t i = 0; i < m->n; i++) {
			bool listed = false;

			for (size_t j = 0; j < m->n_early && !listed; j++)
				listed = m->early[j] == i;
			if (!listed && m->slots[i].e->ours && m->slots[i].want < 0 &&
			    streq_ptr(m->slots[i].e->filter, lo->want[m->inserts[k]].filter))
				m->early[m->n_early++] = i;
		}
}

/* Before an attach: the kernel refuses any attach to a list of 64. */
static int room_for_attach(struct multi *m) {
	int r;

	while (m->count >= CGF_MAX_PROGS) {
		size_t *slot;

		if (m->next_early >= m->n_early)
			return -EINVAL; /* cannot happen: the limit was checked */
		slot = &m->early_actions[m->n_early_actions++];
		*slot = m->lo->n_acts;
		r = detach_slot(m, m->early[m->next_early++]);
		if (r < 0)
			return r;
		m->count--;
	}
	return 0;
}

static void set_anchor(struct cgf_action *a, uint32_t position, const struct where *w) {
	a->flags |= position | CGF_ATTACH_ID;
	if (w->entry)
		a->anchor_prog_id = w->entry->prog_id;
	else
		a->anchor_action = w->action;
}

static int append_name(char **names, size_t *n, const char *name) {
	_cleanup_free_ char *s = NULL;

	if (asprintf(&s, "%s%s'%s'", *names ?: "", *n > 0 ? ", " : "", name) < 0)
		return -ENOMEM;
	free(*names);
	*names = TAKE_PTR(s);
	(*n)++;
	return 0;
}

/* Says what the limit costs: for each early detach, a gap or not. */
static int report_early(struct multi *m) {
	struct local *lo = m->lo;
	char buf[64];
	int r;

	for (size_t x = 0; x < m->n_early_actions; x++) {
		size_t k = m->early_actions[x];
		const struct cgf_action *d = &lo->acts[k];
		size_t attach_at = SIZE_MAX;
		const char *filter = NULL;

		for (size_t i = 0; i < m->n; i++)
			if (m->slots[i].e->prog_id == d->prog_id && m->slots[i].e->link_id == d->link_id)
				filter = m->slots[i].e->filter;
		if (d->reason == CGF_REASON_SUPERSEDED)
			for (size_t j = k + 1; j < lo->n_acts && attach_at == SIZE_MAX; j++)
				if (lo->acts[j].kind == CGF_ACTION_ATTACH && streq_ptr(lo->acts[j].filter, filter))
					attach_at = j;
		if (attach_at == SIZE_MAX || lo->acts[attach_at].prog_id != 0) {
			struct cgf_actual_entry e = { .prog_id = d->prog_id, .prog_name = d->prog_name };

			r = report(lo->pl, CGF_REPORT_LIMIT, lo->l->cgroup, lo->l->direction, d->prog_id, 0, lp_pos(lo->l),
				   "at the kernel's limit of %d programs: %s is detached early to make room",
				   CGF_MAX_PROGS, prog_words(&e, buf, sizeof(buf)));
		} else
			r = report(lo->pl, CGF_REPORT_LIMIT_GAP, lo->l->cgroup, lo->l->direction, d->prog_id,
				   attach_at - k, lp_pos(lo->l),
				   "at the kernel's limit of %d programs: '%s' is detached %zu call%s before its "
				   "successor is attached",
				   CGF_MAX_PROGS, filter, attach_at - k, attach_at - k == 1 ? "" : "s");
		if (r < 0)
			return r;
	}
	return 0;
}

/* One slot per program on the list; ours are tracked (local_holds()). */
static int multi_init(struct multi *m) {
	struct local *lo = m->lo;
	const struct cgf_actual_list *h = lo->l->have;
	int r;

	m->slots = calloc(m->n + 1, sizeof(*m->slots));
	m->kept_by = calloc(lo->n_want + 1, sizeof(*m->kept_by));
	m->at = calloc(lo->n_want + 1, sizeof(*m->at));
	m->inserts = calloc(lo->n_want + 1, sizeof(*m->inserts));
	m->early = calloc(m->n + 1, sizeof(*m->early));
	m->early_actions = calloc(m->n + 1, sizeof(*m->early_actions));
	if (!m->slots || !m->kept_by || !m->at || !m->inserts || !m->early || !m->early_actions)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		m->slots[i] = (struct slot) { .e = &h->entries[i], .want = -1 };
		if (h->entries[i].ours) {
			r = local_track(lo, h->entries[i].filter, h->entries[i].identity);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* What stays, what is inserted, and what may go early for room. */
static int multi_choose(struct multi *m) {
	int r;

	r = choose_kept(m);
	if (r < 0)
		return r;
	count_kept(m);
	make_room(m);
	drop_link_anchors(m);

	order_early(m);
	m->count = m->n;
	return 0;
}

/* REPLACE in place: the kernel swaps the program, no moment without it. */
static int multi_replace(struct multi *m) {
	int r;

	for (size_t i = 0; i < m->n; i++) {
		size_t index;

		if (m->slots[i].want < 0 || slot_unchanged(m, i))
			continue;
		r = room_for_attach(m);
		if (r < 0)
			return r;
		r = local_attach(m->lo, (size_t) m->slots[i].want, CGF_ATTACH_MULTI | CGF_ATTACH_REPLACE, m->slots[i].e,
				 CGF_REASON_CHANGED, &index);
		if (r < 0)
			return r;
		m->at[m->slots[i].want] = (struct where) { .action = index }; /* a later insert may go before it */
	}
	return 0;
}

/* One insert of desired entry w, at its final position: before the next
 * program of its class that stays (unchanged, or REPLACEd by now), else
 * appended, after all of them. */
static int multi_insert_one(struct multi *m, size_t w) {
	struct local *lo = m->lo;
	const bool ordering = lo->pl->features->ordering;
	bool pre = lo->want_preorder[w], was_there = false, only_order = false;
	size_t index;
	ssize_t succ;
	int r;

	/* It was there: moved.  In its class and unchanged: moved for the order alone. */
	for (size_t i = 0; i < m->n; i++)
		if (m->slots[i].e->ours && streq_ptr(m->slots[i].e->filter, lo->want[w].filter)) {
			was_there = true;
			only_order = only_order || (m->slots[i].e->preorder == pre &&
						    entry_is(m->slots[i].e, lo->want[w].filter, lo->want[w].identity));
		}
	r = room_for_attach(m);
	if (r < 0)
		return r;
	r = local_attach(lo, w, CGF_ATTACH_MULTI, NULL, was_there ? CGF_REASON_MOVED : CGF_REASON_NEW, &index);
	if (r < 0)
		return r;
	m->count++;
	succ = kept_successor(m, w, m->kept_by);
	if (ordering && succ >= 0)
		set_anchor(&lo->acts[index], CGF_ATTACH_BEFORE, &m->at[succ]);
	else if (!ordering && only_order)
		return append_name(&m->moved, &m->n_moved, lo->want[w].filter);
	return 0;
}

/* Inserts in policy order: an appended one then lands after the inserts
 * before it, as the policy orders them. */
static int multi_insert(struct multi *m) {
	int r;

	for (size_t k = 0; k < m->n_inserts; k++) {
		r = multi_insert_one(m, m->inserts[k]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Whatever of ours did not stay goes last. */
static int multi_detach_rest(struct multi *m) {
	int r;

	for (size_t i = 0; i < m->n; i++) {
		if (!m->slots[i].e->ours || m->slots[i].want >= 0 || m->slots[i].detached)
			continue;
		r = detach_slot(m, i);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Without BEFORE/AFTER: says which filters were attached again for the order. */
static int report_reorder(struct multi *m) {
	const struct local *lo = m->lo;

	if (m->n_moved == 0)
		return 0;
	return report(lo->pl, CGF_REPORT_REORDER, lo->l->cgroup, lo->l->direction, 0, 0, lp_pos(lo->l),
		      "the kernel lacks BPF_F_BEFORE/BPF_F_AFTER: %s %s attached again at the end to restore "
		      "the order, and %s old instance%s detached",
		      m->moved, m->n_moved == 1 ? "is" : "are", m->n_moved == 1 ? "its" : "their",
		      m->n_moved == 1 ? "" : "s");
}

/* A multi list: choose what stays, then REPLACE, insert, detach, in that
 * order (see the top of this file), and say what the limit and a missing
 * BEFORE/AFTER cost. */
static int plan_multi(struct local *lo) {
	const struct cgf_actual_list *h = lo->l->have;
	size_t n_foreign_ = n_foreign(h);
	_cleanup_(multi_done) struct multi m = { .lo = lo, .n = h ? h->n_entries : 0 };
	int r;

	if (n_foreign_ + lo->n_want > CGF_MAX_PROGS)
		return block(lo, 0, "%zu foreign and %zu policy programs exceed the kernel's limit of %d (E2BIG)",
			     n_foreign_, lo->n_want, CGF_MAX_PROGS);

	r = multi_init(&m);
	if (r < 0)
		return r;
	r = multi_choose(&m);
	if (r < 0)
		return r;
	r = multi_replace(&m);
	if (r < 0)
		return r;
	r = multi_insert(&m);
	if (r < 0)
		return r;
	r = multi_detach_rest(&m);
	if (r < 0)
		return r;
	r = report_early(&m);
	if (r < 0)
		return r;
	return report_reorder(&m);
}

/* What a local plan holds while it is made; the actions that are not
 * handed to the list (lp_take_actions()) go with it. */
static void local_done(struct local *lo) {
	actions_free(lo->acts, lo->n_acts);
	free(lo->want_preorder);
	free(lo->have_filter);
	free(lo->have_identity);
}

/* The policy's entries for the list, each with the preorder flag the
 * kernel can give it; a preorder it cannot give is reported. */
static int local_want(struct local *lo) {
	struct planner *pl = lo->pl;
	struct lp *l = lo->l;
	bool dropped = false;

	lo->want = l->want->entries;
	lo->n_want = l->want->n_entries;
	lo->want_preorder = calloc(lo->n_want + 1, sizeof(bool));
	if (!lo->want_preorder)
		return -ENOMEM;
	for (size_t w = 0; w < lo->n_want; w++) {
		lo->want_preorder[w] = lo->want[w].preorder && pl->features->preorder;
		dropped = dropped || (lo->want[w].preorder && !pl->features->preorder);
	}
	if (!dropped)
		return 0;
	return report(pl, CGF_REPORT_UNSUPPORTED, l->cgroup, l->direction, 0, 0, lp_pos(l),
		      "preorder: the kernel lacks BPF_F_PREORDER; attached without it");
}

/* The local plan of the list's case: removal, single slot, a change to
 * mode multi, or multi. */
static int plan_local(struct local *lo) {
	const struct lp *l = lo->l;
	const struct cgf_actual_list *h = l->have;
	const struct cgf_actual_entry *f;
	char buf[64];

	if (!l->want)
		return plan_removal(lo);
	if (l->want->mode != CGF_MODE_MULTI)
		return plan_single(lo);
	if (!h || h->n_entries == 0 || h->flags == CGF_ATTACH_MULTI)
		return plan_multi(lo);
	f = first_foreign(h);
	if (f)
		return block(lo, f->prog_id, "mode %s -> multi needs an empty list, and foreign program %s stays",
			     cgf_mode_flags_to_string(h->flags), prog_words(f, buf, sizeof(buf)));
	return plan_mode_change(lo);
}

/* A list that is not blocked takes the local actions, and its kind from them. */
static void lp_take_actions(struct lp *l, struct local *lo) {
	bool attaches = false;

	if (l->kind == LP_BLOCKED)
		return;
	for (size_t i = 0; i < lo->n_acts; i++)
		attaches = attaches || lo->acts[i].kind == CGF_ACTION_ATTACH;
	l->kind = lo->n_acts == 0 ? LP_NOOP : attaches ? LP_CHANGE : LP_REMOVAL;
	l->acts = TAKE_PTR(lo->acts);
	l->n_acts = lo->n_acts;
	lo->n_acts = 0;
}

static int plan_list(struct planner *pl, struct lp *l) {
	_cleanup_(local_done) struct local lo = { .pl = pl, .l = l };
	int r;

	if (l->want) {
		r = local_want(&lo);
		if (r < 0)
			return r;
	}
	r = plan_local(&lo);
	if (r < 0)
		return r;
	lp_take_actions(l, &lo);
	return 0;
}

/* ---- the hierarchy ------------------------------------------------------- */

static int compare_lps(const void *a, const void *b) {
	const struct lp *x = a, *y = b;

	return cgf_list_key_compare(x->cgroup, x->direction, y->cgroup, y->direction);
}

static struct lp *find_lp(const struct planner *pl, const char *cgroup, enum cgf_direction d) {
	struct lp key = { .cgroup = cgroup, .direction = d };

	if (pl->n_lps == 0)
		return NULL;
	return bsearch(&key, pl->lps, pl->n_lps, sizeof(*pl->lps), compare_lps);
}

/*
 * The kernel lets a program be attached below a cgroup only if the
 * nearest ancestor with programs has mode multi or override (6.1
 * hierarchy_allows_attach()).  hierarchy_blocker() walks up from the
 * parent, taking each ancestor as it will be when l is emitted:
 *  - a list that attaches (LP_CHANGE) is done by then: as the policy says;
 *  - a list that only detaches runs at the end, so it is as it is now,
 *    except when it runs earlier: below an ancestor that gets `none`
 *    (cleared first), or when it is a `none` of ours in l's way (then l
 *    schedules it first, in l->flush);
 *  - any other list is as it is now.
 * Returns the list whose `none` blocks l, or NULL.
 */
static bool gets_none(const struct lp *a) {
	return a && a->kind == LP_CHANGE && a->want->mode == CGF_MODE_NONE;
}

/* What remains of a list that only detaches: its foreign programs. */
static size_t n_remaining(const struct lp *a) {
	return a->kind == LP_REMOVAL ? n_foreign(a->have) : a->have ? a->have->n_entries : 0;
}

static int hierarchy_blocker(struct planner *pl, struct lp *l, struct lp **ret) {
	_cleanup_free_ struct lp **path = NULL;
	_cleanup_free_ bool *none_above = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t size = strlen(l->cgroup) + 2, n = 0;

	*ret = NULL;
	buf = malloc(size);
	path = calloc(cgf_cgroup_depth(l->cgroup) + 1, sizeof(*path));
	none_above = calloc(cgf_cgroup_depth(l->cgroup) + 2, sizeof(*none_above));
	if (!buf || !path || !none_above)
		return -ENOMEM;
	strcpy(buf, l->cgroup);
	while (cgf_cgroup_parent(buf, buf, size))
		path[n++] = find_lp(pl, buf, l->direction);
	for (size_t i = n; i > 0; i--)
		none_above[i - 1] = none_above[i] || (i < n && gets_none(path[i]));

	for (size_t i = 0; i < n; i++) {
		struct lp *a = path[i];
		const struct cgf_actual_entry *e;

		if (!a)
			continue;
		if (a->kind == LP_CHANGE) {
			if (a->want->mode == CGF_MODE_NONE)
				*ret = a;
			return 0; /* none blocks; multi and override allow */
		}
		if (a->kind == LP_REMOVAL && none_above[i]) {
			/* Cleared before the none above it is set. */
			if (n_remaining(a) == 0)
				continue;
			return 0; /* foreign programs remain, in mode multi */
		}
		if (!a->have || a->have->n_entries == 0)
			continue;
		if (a->have->flags != 0)
			return 0; /* multi or override */
		e = &a->have->entries[0];
		if (a->kind == LP_REMOVAL && e->ours) {
			/* A none of ours that leaves the policy: it goes first. */
			size_t *slot = array_append((void **) &l->flush, l->n_flush, sizeof(*slot));

			if (!slot)
				return -ENOMEM;
			*slot = (size_t) (a - pl->lps);
			l->n_flush++;
			continue;
		}
		*ret = a;
		return 0;
	}
	return 0;
}

static int check_hierarchy(struct planner *pl, struct lp *l) {
	const struct cgf_actual_entry *e;
	struct lp *a;
	char buf[64];
	int r;

	r = hierarchy_blocker(pl, l, &a);
	if (r < 0 || !a)
		return r;

	l->kind = LP_BLOCKED;
	actions_free(l->acts, l->n_acts);
	l->acts = NULL;
	l->n_acts = 0;
	l->n_flush = 0;
	e = a->kind == LP_CHANGE ? NULL : &a->have->entries[0];
	if (!e)
		return report(pl, CGF_REPORT_BLOCKED, l->cgroup, l->direction, 0, 0, lp_pos(l),
			      "cannot attach: '%s' gets mode none (filter '%s'), and the kernel refuses any %s "
			      "program below it (EPERM); the policy is invalid (see cgfilterctl check); nothing "
			      "planned here",
			      a->cgroup, a->want->entries[0].filter, cgf_direction_to_string(l->direction));
	return report(pl, CGF_REPORT_BLOCKED, l->cgroup, l->direction, e->prog_id, 0, lp_pos(l),
		      "cannot attach: %s program %s on '%s' has mode none, and the kernel refuses any %s "
		      "program below it (EPERM); nothing planned here",
		      e->ours ? "our" : "foreign", prog_words(e, buf, sizeof(buf)), a->cgroup,
		      cgf_direction_to_string(l->direction));
}

/* Foreign programs on lists we manage: left alone, and said so. */
static int report_foreign(struct planner *pl) {
	char buf[64];
	int r;

	for (size_t k = 0; k < pl->n_lps; k++) {
		const struct lp *l = &pl->lps[pl->order[k]];
		bool ours = false;

		if (!l->have)
			continue;
		for (size_t i = 0; i < l->have->n_entries; i++)
			ours = ours || l->have->entries[i].ours;
		if (!l->want && !ours)
			continue;
		for (size_t i = 0; i < l->have->n_entries; i++) {
			const struct cgf_actual_entry *e = &l->have->entries[i];

			/* A blocked list's own report names the program in its way. */
			if (e->ours || (l->blocker && e->prog_id == l->blocker))
				continue;
			r = report(pl, CGF_REPORT_FOREIGN, l->cgroup, l->direction, e->prog_id, 0, lp_pos(l),
				   "foreign program %s: left alone", prog_words(e, buf, sizeof(buf)));
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* Is p a none of ours, as it will be once the plan ran? */
static bool ours_none_after(const struct lp *p) {
	if (p->kind == LP_CHANGE)
		return p->want->mode == CGF_MODE_NONE;
	if (p->kind == LP_REMOVAL)
		return false; /* it goes */
	return p->have && p->have->n_entries == 1 && p->have->flags == 0 && p->have->entries[0].ours;
}

/* The programs of list c, which lies below p, a none of ours: a foreign
 * one still overrides ours; one of ours that is not changed stays. */
static int report_below_none(struct planner *pl, const struct lp *p, const struct lp *c) {
	char buf[64];
	int r;

	for (size_t i = 0; i < c->have->n_entries; i++) {
		const struct cgf_actual_entry *e = &c->have->entries[i];

		if (!e->ours)
			r = report(pl, CGF_REPORT_FOREIGN_BELOW_NONE, c->cgroup, c->direction, e->prog_id, 0, lp_pos(p),
				   "foreign program %s lies below '%s', where ours has mode none: attached "
				   "before ours, it still overrides ours here and below; it cannot be changed "
				   "anymore, but can be cleared (detach it)",
				   prog_words(e, buf, sizeof(buf)), p->cgroup);
		else if (c->kind == LP_NOOP || c->kind == LP_BLOCKED)
			r = report(pl, CGF_REPORT_OURS_BELOW_NONE, c->cgroup, c->direction, e->prog_id, 0, lp_pos(c),
				   "our program %s lies below '%s', where ours has mode none: the kernel keeps "
				   "it (it overrides '%s' here and below) but refuses any change (EPERM); "
				   "left as it is",
				   prog_words(e, buf, sizeof(buf)), p->cgroup, p->cgroup);
		else
			continue;
		if (r < 0)
			return r;
	}
	return 0;
}

/* Foreign programs on lists we manage, and programs below a none of ours. */
static int report_neighbours(struct planner *pl) {
	int r;

	r = report_foreign(pl);
	if (r < 0)
		return r;
	for (size_t k = 0; k < pl->n_lps; k++) {
		const struct lp *p = &pl->lps[pl->order[k]];

		if (!ours_none_after(p))
			continue;
		for (size_t j = 0; j < pl->n_lps; j++) {
			const struct lp *c = &pl->lps[pl->order[j]];

			if (c->direction != p->direction || !c->have || !cgf_cgroup_is_below(c->cgroup, p->cgroup))
				continue;
			r = report_below_none(pl, p, c);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* ---- the steps of cgf_plan() ------------------------------------------ */

/* What the planner holds besides the plan: freed however cgf_plan() ends. */
static void planner_done(struct planner *pl) {
	for (size_t k = 0; k < pl->n_lps; k++) {
		actions_free(pl->lps[k].acts, pl->lps[k].n_acts);
		free(pl->lps[k].flush);
	}
	free(pl->lps);
	free(pl->order);
}

static int add_lp(struct planner *pl, const char *cgroup, enum cgf_direction d, const struct cgf_desired_list *want,
		  const struct cgf_actual_list *have) {
	struct lp *l = array_append((void **) &pl->lps, pl->n_lps, sizeof(*l));

	if (!l)
		return -ENOMEM;
	*l = (struct lp) {
		.cgroup = cgroup, .direction = d, .depth = cgf_cgroup_depth(cgroup), .want = want, .have = have,
	};
	pl->n_lps++;
	return 0;
}

/* Merges the two sorted list arrays into one lp per (cgroup, direction). */
static int merge(struct planner *pl, const struct cgf_desired *desired, const struct cgf_actual *actual) {
	size_t i = 0, j = 0;
	int r;

	while (i < (desired ? desired->n_lists : 0) || j < (actual ? actual->n_lists : 0)) {
		const struct cgf_desired_list *w = desired && i < desired->n_lists ? &desired->lists[i] : NULL;
		const struct cgf_actual_list *h = actual && j < actual->n_lists ? &actual->lists[j] : NULL;
		int c = !w ? 1 : !h ? -1 : cgf_list_key_compare(w->cgroup, w->direction, h->cgroup, h->direction);

		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
		r = add_lp(pl, c <= 0 ? w->cgroup : h->cgroup, c <= 0 ? w->direction : h->direction,
			   c <= 0 ? w : NULL, c >= 0 ? h : NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

static int compare_order(const void *a, const void *b, void *userdata) {
	const struct planner *pl = userdata;
	const struct lp *x = &pl->lps[*(const size_t *) a], *y = &pl->lps[*(const size_t *) b];

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return compare_lps(x, y);
}

/* pl->order: the lists, parents first. */
static int order_parents_first(struct planner *pl) {
	pl->order = calloc(pl->n_lps + 1, sizeof(*pl->order));
	if (!pl->order)
		return -ENOMEM;
	for (size_t k = 0; k < pl->n_lps; k++)
		pl->order[k] = k;
	qsort_r_safe(pl->order, pl->n_lps, sizeof(*pl->order), compare_order, pl);
	return 0;
}

/* 1. Analysis, parents first: a list's hierarchy check needs its
 * ancestors' local plans. */
static int analyse(struct planner *pl) {
	int r;

	for (size_t k = 0; k < pl->n_lps; k++) {
		struct lp *l = &pl->lps[pl->order[k]];

		r = plan_list(pl, l);
		if (r < 0)
			return r;
		if (l->kind == LP_CHANGE) {
			r = check_hierarchy(pl, l);
			if (r < 0)
				return r;
		}
	}
	return report_neighbours(pl);
}

/* A list's actions, together and each with its revision; once. */
static int emit_list(struct planner *pl, struct lp *l) {
	struct cgf_plan *p = pl->plan;
	size_t base = p->n_actions;
	uint64_t rev = l->have ? l->have->revision : 0;

	if (l->emitted)
		return 0;
	l->emitted = true;
	for (size_t i = 0; i < l->n_acts; i++) {
		struct cgf_action *a = array_append((void **) &p->actions, p->n_actions, sizeof(*a));

		if (!a)
			return -ENOMEM;
		*a = l->acts[i];
		l->acts[i] = (struct cgf_action) {};
		if (a->anchor_action != CGF_NO_ACTION)
			a->anchor_action += base;
		a->expected_revision = pl->features->revision && rev > 0 ? rev + i : 0;
		p->n_actions++;
	}
	return 0;
}

/* A list that attaches, after the removals that must run before it. */
static int emit_change(struct planner *pl, struct lp *l) {
	int r;

	/* A none of ours above that leaves the policy goes first ... */
	for (size_t f = l->n_flush; f > 0; f--) {
		r = emit_list(pl, &pl->lps[l->flush[f - 1]]);
		if (r < 0)
			return r;
	}
	/* ... and below a new none, what leaves goes first, children first. */
	if (l->want->mode == CGF_MODE_NONE)
		for (size_t m = pl->n_lps; m > 0; m--) {
			struct lp *c = &pl->lps[pl->order[m - 1]];

			if (c->kind == LP_REMOVAL && c->direction == l->direction &&
			    cgf_cgroup_is_below(c->cgroup, l->cgroup)) {
				r = emit_list(pl, c);
				if (r < 0)
					return r;
			}
		}
	return emit_list(pl, l);
}

/* 2. Emission: lists that attach parents first, then what only detaches,
 * children first. */
static int emit(struct planner *pl) {
	int r;

	for (size_t k = 0; k < pl->n_lps; k++) {
		struct lp *l = &pl->lps[pl->order[k]];

		if (l->kind != LP_CHANGE)
			continue;
		r = emit_change(pl, l);
		if (r < 0)
			return r;
	}
	for (size_t k = pl->n_lps; k > 0; k--) {
		struct lp *l = &pl->lps[pl->order[k - 1]];

		if (l->kind == LP_REMOVAL) {
			r = emit_list(pl, l);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int cgf_plan(const struct cgf_desired *desired, const struct cgf_actual *actual,
	     const struct cgf_features *features, struct cgf_plan **ret) {
	_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL;
	_cleanup_(planner_done) struct planner pl = { .features = features };
	int r;

	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	pl.plan = plan;

	r = merge(&pl, desired, actual);
	if (r < 0)
		return r;
	r = order_parents_first(&pl);
	if (r < 0)
		return r;
	r = analyse(&pl);
	if (r < 0)
		return r;
	r = emit(&pl);
	if (r < 0)
		return r;

	*ret = TAKE_PTR(plan);
	return 0;
}

/* ---- formatting ---------------------------------------------------------- */

/* Every line of a plan is made by one of the two functions below, and
 * escaped as a whole there (escape.h): cgroup names, program names from
 * the kernel and report messages quoting them cannot break the line, in
 * `cgfilterctl plan` or in the journal. */
static int escape_line(const char *line, char **ret) {
	char *e = cgf_escape(line);

	if (!e)
		return -ENOMEM;
	*ret = e;
	return 0;
}

int cgf_action_format(const struct cgf_action *a, size_t index, char **ret) {
	_cleanup_free_ char *flags = NULL, *s = NULL;
	size_t size = 0;
	FILE *f;
	int r;

	f = open_memstream(&s, &size);
	if (!f)
		return -ENOMEM;
	fprintf(f, "#%zu %s %s %s", index, a->kind == CGF_ACTION_ATTACH ? "attach" : "detach", a->cgroup,
		cgf_direction_to_string(a->direction));
	if (a->kind == CGF_ACTION_ATTACH) {
		r = cgf_attach_flags_to_string(a->flags, &flags);
		if (r < 0) {
			fclose(f);
			return r;
		}
		fprintf(f, " %s@%s %s", a->filter, a->identity, flags);
		if (a->flags & (CGF_ATTACH_BEFORE | CGF_ATTACH_AFTER)) {
			fprintf(f, " %s ", a->flags & CGF_ATTACH_BEFORE ? "before" : "after");
			if (a->anchor_action != CGF_NO_ACTION)
				fprintf(f, "#%zu", a->anchor_action);
			else
				fprintf(f, "prog %" PRIu32, a->anchor_prog_id);
		}
		if (a->prog_id)
			fprintf(f, " %s prog %" PRIu32, a->flags & CGF_ATTACH_REPLACE ? "replaces" : "swaps out", a->prog_id);
		if (a->new_instance)
			fprintf(f, " new-instance");
	} else {
		fprintf(f, " prog %" PRIu32 " '%s'", a->prog_id, a->prog_name ?: "?");
		if (a->link_id)
			fprintf(f, " link %" PRIu32, a->link_id);
	}
	if (a->expected_revision)
		fprintf(f, " rev %" PRIu64, a->expected_revision);
	fprintf(f, " (%s)", cgf_action_reason_to_string(a->reason));
	if (fclose(f) != 0)
		return -ENOMEM;
	return escape_line(s, ret);
}

int cgf_report_format(const struct cgf_report *r, char **ret) {
	_cleanup_free_ char *s = NULL;

	if (asprintf(&s, "%s: %s %s: %s", cgf_report_kind_to_string(r->kind), r->cgroup,
		     cgf_direction_to_string(r->direction), r->message) < 0) {
		s = NULL; /* undefined after a failure */
		return -ENOMEM;
	}
	return escape_line(s, ret);
}

int cgf_plan_format(const struct cgf_plan *p, char **ret) {
	_cleanup_free_ char *s = NULL;
	size_t size = 0;
	FILE *f;
	int r = 0;

	f = open_memstream(&s, &size);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < p->n_actions; i++) {
		_cleanup_free_ char *line = NULL;

		r = cgf_action_format(&p->actions[i], i, &line);
		if (r >= 0)
			fprintf(f, "%s\n", line);
	}
	for (size_t i = 0; r >= 0 && i < p->n_reports; i++) {
		_cleanup_free_ char *line = NULL;

		r = cgf_report_format(&p->reports[i], &line);
		if (r >= 0)
			fprintf(f, "%s\n", line);
	}
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}
