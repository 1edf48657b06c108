/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The planner over every small state: all actual lists of up to three
 * programs (ours with two identities, through a link, foreign, preorder
 * or not, in each mode) against all desired lists of up to three filters
 * (each mode, identities, preorder), for several kernels; then all pairs
 * of such states on a parent and a child cgroup.  Every plan must keep the
 * invariants of plan-test.h, and besides:
 *  - no actions exactly when the kernel already does what the policy says
 *    (or the list is blocked);
 *  - a list is blocked exactly when the kernel leaves no way: a foreign
 *    program in the single slot or in a list whose mode must change, a
 *    `none` above that stays;
 *  - a mode-change gap is reported exactly when the mode changes.
 */
#include "plan-test.h"

struct tmpl {
	const char *filter;   /* ours; NULL: foreign */
	const char *identity;
	bool preorder;
	bool link;
};

#define OURS(f, id) { f, id, false, false }
#define OURS_P(f, id) { f, id, true, false }
#define LINK(f, id) { f, id, false, true }
#define FOREIGN { NULL, NULL, false, false }
#define FOREIGN_P { NULL, NULL, true, false }

/* The entries actual lists are made of. */
static const struct tmpl stock_alphabet[] = {
	OURS("a", "1"), OURS("a", "2"), OURS("b", "1"), OURS("b", "2"), OURS("c", "1"), OURS("c", "2"),
	LINK("a", "1"), FOREIGN,
};
static const struct tmpl preorder_alphabet[] = {
	OURS("a", "1"), OURS("a", "2"), OURS("b", "1"), OURS("c", "1"),
	OURS_P("a", "1"), OURS_P("a", "2"), OURS_P("b", "1"), OURS_P("c", "1"),
	LINK("a", "1"), FOREIGN, FOREIGN_P,
};
static const struct tmpl tree_alphabet[] = {
	OURS("g", "1"), OURS("g", "2"), OURS("h", "1"), FOREIGN,
};

/* An actual list: mode flags and up to three entries. */
struct shape {
	uint32_t flags;
	unsigned n;
	unsigned t[3]; /* indexes into the alphabet */
};

/* A desired list: present, mode and up to three entries. */
struct want {
	bool present;
	enum cgf_mode mode;
	unsigned n;
	const char *filter[3], *identity[3];
	bool preorder[3];
};

static size_t make_shapes(const struct tmpl *alpha, size_t n_alpha, unsigned max_len, struct shape *out) {
	size_t n = 0;

	out[n++] = (struct shape) { 0, 0, {} };
	for (unsigned i = 0; i < n_alpha; i++) {
		if (alpha[i].link)
			continue; /* a cgroup link is always multi */
		out[n++] = (struct shape) { 0, 1, { i } };
		out[n++] = (struct shape) { CGF_ATTACH_OVERRIDE, 1, { i } };
	}
	for (unsigned len = 1; len <= max_len; len++) {
		unsigned total = 1;

		for (unsigned k = 0; k < len; k++)
			total *= (unsigned) n_alpha;
		for (unsigned c = 0; c < total; c++) {
			struct shape s = { CGF_ATTACH_MULTI, len, {} };

			for (unsigned k = 0, v = c; k < len; k++, v /= (unsigned) n_alpha)
				s.t[k] = v % (unsigned) n_alpha;
			out[n++] = s;
		}
	}
	return n;
}

/* filters: the filter names to draw from; ids[f]: how many identities
 * filter f has ("1", "2"); with_preorder: each entry with and without. */
static size_t make_wants(const char *const *filters, const unsigned *ids, unsigned n_filters, unsigned max_len,
			 bool with_preorder, struct want *out) {
	static const char *const id_names[] = { "1", "2" };
	unsigned n_pre = with_preorder ? 2 : 1;
	size_t n = 0;

	out[n++] = (struct want) { .present = false };
	for (unsigned m = CGF_MODE_NONE; m <= CGF_MODE_OVERRIDE; m++)
		for (unsigned f = 0; f < n_filters; f++)
			for (unsigned id = 0; id < ids[f]; id++)
				for (unsigned p = 0; p < n_pre; p++)
					out[n++] = (struct want) {
						.present = true, .mode = m, .n = 1,
						.filter = { filters[f] }, .identity = { id_names[id] }, .preorder = { p },
					};
	/* multi: ordered selections of distinct filters, every identity and
	 * preorder choice */
	for (unsigned len = 1; len <= max_len; len++) {
		unsigned sel[3];
		unsigned total = 1;

		for (unsigned k = 0; k < len; k++)
			total *= n_filters;
		for (unsigned c = 0; c < total; c++) {
			bool distinct = true;
			unsigned choices = 1;

			for (unsigned k = 0, v = c; k < len; k++, v /= n_filters)
				sel[k] = v % n_filters;
			for (unsigned k = 0; k < len; k++)
				for (unsigned j = 0; j < k; j++)
					distinct = distinct && sel[j] != sel[k];
			if (!distinct)
				continue;
			for (unsigned k = 0; k < len; k++)
				choices *= ids[sel[k]] * n_pre;
			for (unsigned x = 0; x < choices; x++) {
				struct want w = { .present = true, .mode = CGF_MODE_MULTI, .n = len };

				for (unsigned k = 0, v = x; k < len; k++) {
					w.filter[k] = filters[sel[k]];
					w.identity[k] = id_names[v % ids[sel[k]]];
					v /= ids[sel[k]];
					w.preorder[k] = v % n_pre;
					v /= n_pre;
				}
				out[n++] = w;
			}
		}
	}
	return n;
}

static void add_actual(struct cgf_actual *a, const char *cgroup, const struct tmpl *alpha, const struct shape *s,
		       uint64_t revision, uint32_t id_base) {
	struct cgf_actual_list *l;

	REQUIRE(cgf_actual_add_list(a, cgroup, CGF_EGRESS, s->n > 0 ? s->flags : 0, revision, &l) == 0);
	for (unsigned k = 0; k < s->n; k++) {
		const struct tmpl *t = &alpha[s->t[k]];
		char name[16];
		struct cgf_actual_entry e = {
			.prog_id = id_base + k,
			.link_id = t->link ? id_base + 50 + k : 0,
			.prog_name = name,
			.ours = t->filter != NULL,
			.filter = (char *) t->filter,
			.identity = (char *) t->identity,
			.preorder = t->preorder,
		};

		if (t->filter)
			snprintf(name, sizeof(name), "cgf_%s", t->filter);
		else
			snprintf(name, sizeof(name), "x%u", k);
		REQUIRE(cgf_actual_list_insert(l, l->n_entries, &e) == 0);
	}
}

static void add_desired(struct cgf_desired *d, const char *cgroup, const struct want *w) {
	struct cgf_desired_list *l;

	if (!w->present)
		return;
	REQUIRE(cgf_desired_add_list(d, cgroup, CGF_EGRESS, w->mode, &l) == 0);
	for (unsigned k = 0; k < w->n; k++)
		REQUIRE(cgf_desired_list_add_entry(l, w->filter[k], w->identity[k], w->preorder[k], (struct cgf_pos) {}) == 0);
}

static bool has_foreign(const struct tmpl *alpha, const struct shape *s) {
	for (unsigned k = 0; k < s->n; k++)
		if (!alpha[s->t[k]].filter)
			return true;
	return false;
}

/* The kernel leaves no way at this cgroup itself. */
static bool conflict_here(const struct tmpl *alpha, const struct shape *s, const struct want *w) {
	uint32_t want_flags;

	if (!w->present || s->n == 0 || !has_foreign(alpha, s))
		return false;
	want_flags = cgf_mode_to_flags(w->mode);
	if (s->flags != want_flags)
		return true;                   /* a mode change on a list that never empties */
	return w->mode != CGF_MODE_MULTI;      /* the foreign program holds the single slot */
}

static bool needs_mode_change(const struct shape *s, const struct want *w) {
	return w->present && s->n > 0 && s->flags != cgf_mode_to_flags(w->mode);
}

struct totals {
	size_t cases, failures;
	struct invariant_stats stats;
};

static const char *explain(const struct cgf_actual *actual, const struct cgf_desired *desired, const struct cgf_plan *plan) {
	static char buf[8192];
	_cleanup_free_ char *p = format_plan(plan);
	size_t len = 0;

	len += (size_t) snprintf(buf + len, sizeof(buf) - len, "actual:\n");
	for (size_t i = 0; i < actual->n_lists; i++) {
		const struct cgf_actual_list *l = &actual->lists[i];

		len += (size_t) snprintf(buf + len, sizeof(buf) - len, "  %s %s rev %llu:", l->cgroup,
					 cgf_mode_flags_to_string(l->flags), (unsigned long long) l->revision);
		for (size_t j = 0; j < l->n_entries; j++)
			len += (size_t) snprintf(buf + len, sizeof(buf) - len, " %u%s:%s@%s%s", l->entries[j].prog_id,
						 l->entries[j].link_id ? "~" : "", l->entries[j].ours ? l->entries[j].filter : l->entries[j].prog_name,
						 l->entries[j].identity ?: "-", l->entries[j].preorder ? "/p" : "");
		len += (size_t) snprintf(buf + len, sizeof(buf) - len, "\n");
	}
	len += (size_t) snprintf(buf + len, sizeof(buf) - len, "desired:\n");
	for (size_t i = 0; i < desired->n_lists; i++) {
		const struct cgf_desired_list *l = &desired->lists[i];

		len += (size_t) snprintf(buf + len, sizeof(buf) - len, "  %s %s:", l->cgroup, cgf_mode_to_string(l->mode));
		for (size_t j = 0; j < l->n_entries; j++)
			len += (size_t) snprintf(buf + len, sizeof(buf) - len, " %s@%s%s", l->entries[j].filter,
						 l->entries[j].identity, l->entries[j].preorder ? "/p" : "");
		len += (size_t) snprintf(buf + len, sizeof(buf) - len, "\n");
	}
	snprintf(buf + len, sizeof(buf) - len, "plan:\n%s", p);
	return buf;
}

static void fail(struct test_state *t, struct totals *tot, const struct cgf_features *f, const char *what,
		 const struct cgf_actual *actual, const struct cgf_desired *desired, const struct cgf_plan *plan) {
	/* Every failure counts; the first few are shown in full. */
	tot->failures++;
	t->checks++;
	t->failures++;
	if (tot->failures <= 10)
		fprintf(stderr, "[%s] %s\n%s\n", features_name(f), what, explain(actual, desired, plan));
}

/* ---- one cgroup ---------------------------------------------------------- */

static void one_cgroup(struct test_state *t, const struct cgf_features *f, struct totals *tot) {
	const bool pre = f->preorder;
	const struct tmpl *alpha = pre ? preorder_alphabet : stock_alphabet;
	size_t n_alpha = pre ? ELEMENTSOF(preorder_alphabet) : ELEMENTSOF(stock_alphabet);
	static const char *const filters[] = { "a", "b", "c" };
	const unsigned ids_stock[] = { 2, 2, 2 }, ids_pre[] = { 2, 1, 1 };
	_cleanup_free_ struct shape *shapes = calloc(4096, sizeof(*shapes));
	_cleanup_free_ struct want *wants = calloc(4096, sizeof(*wants));
	size_t n_shapes, n_wants;

	REQUIRE(shapes && wants);
	n_shapes = make_shapes(alpha, n_alpha, 3, shapes);
	n_wants = make_wants(filters, pre ? ids_pre : ids_stock, 3, 3, pre, wants);
	REQUIRE(n_shapes < 4096 && n_wants < 4096);

	for (size_t si = 0; si < n_shapes; si++) {
		_cleanup_(cgf_actual_freep) struct cgf_actual *actual = cgf_actual_new();

		REQUIRE(actual);
		add_actual(actual, "a", alpha, &shapes[si], f->revision ? 7 : 0, 11);
		for (size_t wi = 0; wi < n_wants; wi++) {
			_cleanup_(cgf_desired_freep) struct cgf_desired *desired = cgf_desired_new();
			_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL;
			const struct cgf_actual_list *l;
			const struct cgf_desired_list *w;
			const char *violation;
			bool blocked, matches;
			char buf[4096];

			REQUIRE(desired);
			add_desired(desired, "a", &wants[wi]);
			REQUIRE(cgf_plan(desired, actual, f, &plan) == 0);
			tot->cases++;

			violation = check_invariants(actual, desired, f, plan, &tot->stats, buf, sizeof(buf));
			if (violation) {
				fail(t, tot, f, violation, actual, desired, plan);
				continue;
			}
			l = cgf_actual_find(actual, "a", CGF_EGRESS);
			w = cgf_desired_find(desired, "a", CGF_EGRESS);
			blocked = has_report(plan, CGF_REPORT_BLOCKED, "a", CGF_EGRESS);
			matches = list_matches(l, w, f);
			if (blocked != conflict_here(alpha, &shapes[si], &wants[wi]))
				fail(t, tot, f, blocked ? "blocked without a reason" : "not blocked", actual, desired, plan);
			else if ((plan->n_actions == 0) != (blocked || matches))
				fail(t, tot, f, plan->n_actions ? "actions where the kernel matches already" : "no actions", actual,
				     desired, plan);
			else if (has_report(plan, CGF_REPORT_MODE_GAP, "a", CGF_EGRESS) !=
				 (!blocked && needs_mode_change(&shapes[si], &wants[wi])))
				fail(t, tot, f, "a mode-change gap reported wrongly", actual, desired, plan);
			else if (has_report(plan, CGF_REPORT_LIMIT_GAP, "a", CGF_EGRESS) ||
				 has_report(plan, CGF_REPORT_LIMIT, "a", CGF_EGRESS))
				fail(t, tot, f, "a limit report far from the limit", actual, desired, plan);
			else
				t->checks++;
		}
	}
}

/* ---- a parent and a child ------------------------------------------------ */

static bool single_none(const struct shape *s) {
	return s->n == 1 && s->flags == 0;
}

static void parent_child(struct test_state *t, const struct cgf_features *f, struct totals *tot) {
	static const char *const filters[] = { "g", "h" };
	const unsigned ids[] = { 2, 1 };
	_cleanup_free_ struct shape *shapes = calloc(256, sizeof(*shapes));
	_cleanup_free_ struct want *all = calloc(256, sizeof(*all));
	struct want wants[64];
	size_t n_shapes, n_all, n_wants = 0;

	REQUIRE(shapes && all);
	n_shapes = make_shapes(tree_alphabet, ELEMENTSOF(tree_alphabet), 2, shapes);
	n_all = make_wants(filters, ids, 2, 2, false, all);
	REQUIRE(n_shapes < 256 && n_all < 256);
	/* Keep the desired lists small: every single-slot one, multi ones of up to two. */
	for (size_t i = 0; i < n_all && n_wants < ELEMENTSOF(wants); i++)
		wants[n_wants++] = all[i];

	for (size_t ps = 0; ps < n_shapes; ps++)
		for (size_t cs = 0; cs < n_shapes; cs++) {
			_cleanup_(cgf_actual_freep) struct cgf_actual *actual = cgf_actual_new();

			REQUIRE(actual);
			add_actual(actual, "p", tree_alphabet, &shapes[ps], f->revision ? 3 : 0, 11);
			add_actual(actual, "p/c", tree_alphabet, &shapes[cs], f->revision ? 5 : 0, 21);
			cgf_actual_sort(actual);
			for (size_t pw = 0; pw < n_wants; pw++)
				for (size_t cw = 0; cw < n_wants; cw++) {
					_cleanup_(cgf_desired_freep) struct cgf_desired *desired = cgf_desired_new();
					_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL;
					bool p_blocked, c_blocked, p_conflict, c_conflict, p_none_final, c_expect;
					const struct cgf_actual_list *cl;
					const struct cgf_desired_list *cwl;
					const char *violation;
					char buf[4096];

					REQUIRE(desired);
					add_desired(desired, "p", &wants[pw]);
					add_desired(desired, "p/c", &wants[cw]);
					cgf_desired_sort(desired);
					REQUIRE(cgf_plan(desired, actual, f, &plan) == 0);
					tot->cases++;

					violation = check_invariants(actual, desired, f, plan, &tot->stats, buf, sizeof(buf));
					if (violation) {
						fail(t, tot, f, violation, actual, desired, plan);
						continue;
					}

					/* The oracle: blocked exactly when there is no way. */
					p_conflict = conflict_here(tree_alphabet, &shapes[ps], &wants[pw]);
					c_conflict = conflict_here(tree_alphabet, &shapes[cs], &wants[cw]);
					p_blocked = has_report(plan, CGF_REPORT_BLOCKED, "p", CGF_EGRESS);
					c_blocked = has_report(plan, CGF_REPORT_BLOCKED, "p/c", CGF_EGRESS);
					if (!wants[pw].present)
						p_none_final = single_none(&shapes[ps]) && has_foreign(tree_alphabet, &shapes[ps]);
					else if (p_conflict)
						p_none_final = single_none(&shapes[ps]);
					else
						p_none_final = wants[pw].mode == CGF_MODE_NONE;
					cl = cgf_actual_find(actual, "p/c", CGF_EGRESS);
					cwl = cgf_desired_find(desired, "p/c", CGF_EGRESS);
					/* Below a none only detaches are possible: blocked when the
					 * child needs an attach. */
					c_expect = c_conflict;
					if (!c_expect && p_none_final && wants[cw].present && !list_matches(cl, cwl, f)) {
						bool detach_only = false;

						/* Detaches alone reach it when the policy's list is a
						 * subsequence of ours in the same mode. */
						if (cl && cl->n_entries > 0 && cl->flags == cgf_mode_to_flags(wants[cw].mode)) {
							size_t j = 0;

							for (size_t i = 0; i < cl->n_entries && j < wants[cw].n; i++)
								if (cl->entries[i].ours && streq(cl->entries[i].filter, wants[cw].filter[j]) &&
								    streq(cl->entries[i].identity, wants[cw].identity[j]))
									j++;
							detach_only = j == wants[cw].n;
						}
						c_expect = !detach_only;
					}
					if (p_blocked != p_conflict)
						fail(t, tot, f, p_blocked ? "parent blocked without a reason" : "parent not blocked",
						     actual, desired, plan);
					else if (c_blocked != c_expect)
						fail(t, tot, f, c_blocked ? "child blocked without a reason" : "child not blocked",
						     actual, desired, plan);
					else
						t->checks++;
				}
		}
}

/* ---- three levels --------------------------------------------------------- */

/*
 * A grandparent, a parent and a child with one program at most each: the
 * cases where what happens two levels up decides.  The oracle is weaker
 * here: a list may be blocked only with a reason at its cgroup or a
 * `none` above it (now or in the policy); the invariants do the rest.
 */
static void three_levels(struct test_state *t, const struct cgf_features *f, struct totals *tot) {
	static const char *const cgroups[3] = { "l", "l/m", "l/m/n" };
	static const char *const filters[] = { "g", "h" };
	const unsigned ids[] = { 2, 1 };
	_cleanup_free_ struct shape *shapes = calloc(64, sizeof(*shapes));
	_cleanup_free_ struct want *all = calloc(64, sizeof(*all));
	struct want wants[16];
	size_t n_shapes, n_all, n_wants = 0;

	REQUIRE(shapes && all);
	n_shapes = make_shapes(tree_alphabet, ELEMENTSOF(tree_alphabet), 1, shapes);
	n_all = make_wants(filters, ids, 2, 1, false, all);
	/* absent, none g@1, override g@1, multi g@1, g@2, h@1 */
	for (size_t i = 0; i < n_all && n_wants < ELEMENTSOF(wants); i++)
		if (!all[i].present || all[i].mode == CGF_MODE_MULTI ||
		    (streq(all[i].filter[0], "g") && streq(all[i].identity[0], "1")))
			wants[n_wants++] = all[i];

	for (size_t s0 = 0; s0 < n_shapes; s0++)
		for (size_t s1 = 0; s1 < n_shapes; s1++)
			for (size_t s2 = 0; s2 < n_shapes; s2++) {
				const struct shape *sh[3] = { &shapes[s0], &shapes[s1], &shapes[s2] };
				_cleanup_(cgf_actual_freep) struct cgf_actual *actual = cgf_actual_new();

				REQUIRE(actual);
				for (unsigned k = 0; k < 3; k++)
					add_actual(actual, cgroups[k], tree_alphabet, sh[k], f->revision ? 2 + k : 0, 11 + 10 * k);
				cgf_actual_sort(actual);
				for (size_t w = 0; w < n_wants * n_wants * n_wants; w++) {
					const struct want *wa[3] = { &wants[w % n_wants], &wants[w / n_wants % n_wants],
								     &wants[w / n_wants / n_wants] };
					_cleanup_(cgf_desired_freep) struct cgf_desired *desired = cgf_desired_new();
					_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL;
					const char *violation;
					char buf[4096];
					bool ok = true;

					REQUIRE(desired);
					for (unsigned k = 0; k < 3; k++)
						add_desired(desired, cgroups[k], wa[k]);
					cgf_desired_sort(desired);
					REQUIRE(cgf_plan(desired, actual, f, &plan) == 0);
					tot->cases++;

					violation = check_invariants(actual, desired, f, plan, &tot->stats, buf, sizeof(buf));
					if (violation) {
						fail(t, tot, f, violation, actual, desired, plan);
						continue;
					}
					for (unsigned k = 0; k < 3 && ok; k++) {
						bool reason = conflict_here(tree_alphabet, sh[k], wa[k]);

						for (unsigned j = 0; j < k; j++)
							reason = reason || single_none(sh[j]) ||
								 (wa[j]->present && wa[j]->mode == CGF_MODE_NONE);
						if (has_report(plan, CGF_REPORT_BLOCKED, cgroups[k], CGF_EGRESS) && !reason) {
							fail(t, tot, f, "blocked without a reason", actual, desired, plan);
							ok = false;
						}
					}
					if (ok)
						t->checks++;
				}
			}
}

/* ---- near the limit ---------------------------------------------------------- */

static uint32_t next_random(uint64_t *state) {
	*state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (uint32_t) (*state >> 33);
}

/*
 * Random lists of 56 to 64 programs (some foreign, some preorder, some
 * through links, some extra instances) against random policies of up to
 * 64 minus the foreign ones, with changed identities, new filters,
 * removals and reorderings: every plan keeps the invariants, in particular
 * never more than 64 and every gap reported.  A fixed seed: the same
 * states on every run.
 */
static void near_limit(struct test_state *t, const struct cgf_features *f, struct totals *tot, unsigned rounds) {
	uint64_t rng = 0x9e3779b97f4a7c15u ^ (uint64_t) (f->preorder | f->ordering << 1 | f->revision << 2);

	for (unsigned round = 0; round < rounds; round++) {
		_cleanup_(cgf_actual_freep) struct cgf_actual *actual = cgf_actual_new();
		_cleanup_(cgf_desired_freep) struct cgf_desired *desired = cgf_desired_new();
		_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL;
		struct cgf_actual_list *al;
		struct cgf_desired_list *dl;
		unsigned n = 56 + next_random(&rng) % 9, n_foreign = 0, order[80];
		bool used[80] = {};
		const char *violation;
		char buf[4096];

		REQUIRE(actual && desired);
		REQUIRE(cgf_actual_add_list(actual, "a", CGF_EGRESS, CGF_ATTACH_MULTI, f->revision ? 9 : 0, &al) == 0);
		for (unsigned i = 0; i < n; i++) {
			unsigned kind = next_random(&rng) % 16, fi = next_random(&rng) % 70;
			char filter[16], name[20], identity[4];
			struct cgf_actual_entry e = { .prog_id = 1000 + i, .prog_name = name };

			snprintf(filter, sizeof(filter), "f%u", fi);
			snprintf(identity, sizeof(identity), "%u", 1 + next_random(&rng) % 2);
			if (kind == 0) {
				snprintf(name, sizeof(name), "x%u", i);
				e.preorder = f->preorder && next_random(&rng) % 2;
				n_foreign++;
			} else {
				snprintf(name, sizeof(name), "cgf_%s", filter);
				e.ours = true;
				e.filter = filter;
				e.identity = identity;
				e.preorder = f->preorder && kind == 1;
				e.link_id = kind == 2 ? 5000 + i : 0;
			}
			REQUIRE(cgf_actual_list_insert(al, al->n_entries, &e) == 0);
		}

		/* The policy: a random order of distinct filters. */
		for (unsigned i = 0; i < 70; i++)
			order[i] = i;
		for (unsigned i = 69; i > 0; i--) {
			unsigned j = next_random(&rng) % (i + 1), x = order[i];

			order[i] = order[j];
			order[j] = x;
		}
		REQUIRE(cgf_desired_add_list(desired, "a", CGF_EGRESS, CGF_MODE_MULTI, &dl) == 0);
		for (unsigned i = 0, want = CGF_MAX_PROGS - n_foreign - next_random(&rng) % 4; i < 70 && dl->n_entries < want; i++) {
			char filter[16], identity[4];

			if (used[order[i]])
				continue;
			used[order[i]] = true;
			snprintf(filter, sizeof(filter), "f%u", order[i]);
			snprintf(identity, sizeof(identity), "%u", 1 + (next_random(&rng) % 8 == 0));
			REQUIRE(cgf_desired_list_add_entry(dl, filter, identity, f->preorder && order[i] % 7 == 0,
							   (struct cgf_pos) {}) == 0);
		}
		/* Half the rounds: the policy in the list's own order, so that
		 * mostly identities change (REPLACE at a full list). */
		if (round % 2 == 0) {
			_cleanup_(cgf_desired_freep) struct cgf_desired *d2 = cgf_desired_new();
			struct cgf_desired_list *l2;

			REQUIRE(d2);
			REQUIRE(cgf_desired_add_list(d2, "a", CGF_EGRESS, CGF_MODE_MULTI, &l2) == 0);
			for (size_t i = 0; i < al->n_entries && l2->n_entries < CGF_MAX_PROGS - n_foreign; i++) {
				const struct cgf_actual_entry *e = &al->entries[i];
				bool dup = false;

				if (!e->ours)
					continue;
				for (size_t j = 0; j < l2->n_entries && !dup; j++)
					dup = streq(l2->entries[j].filter, e->filter);
				if (dup)
					continue;
				REQUIRE(cgf_desired_list_add_entry(l2, e->filter,
								   next_random(&rng) % 6 == 0 ? "9" : e->identity,
								   e->preorder, (struct cgf_pos) {}) == 0);
			}
			cgf_desired_free(desired);
			desired = TAKE_PTR(d2);
		}

		REQUIRE(cgf_plan(desired, actual, f, &plan) == 0);
		tot->cases++;
		violation = check_invariants(actual, desired, f, plan, &tot->stats, buf, sizeof(buf));
		if (violation)
			fail(t, tot, f, violation, actual, desired, plan);
		else
			t->checks++;
	}
}

int main(void) {
	static const struct cgf_features features[] = {
		{ .preorder = false, .ordering = false, .revision = false },
		{ .preorder = false, .ordering = true, .revision = false },
		{ .preorder = false, .ordering = false, .revision = true },
		{ .preorder = false, .ordering = true, .revision = true },
		{ .preorder = true, .ordering = false, .revision = false },
		{ .preorder = true, .ordering = true, .revision = true },
	};
	struct test_state t = {};
	struct totals one = {}, two = {}, three = {}, limit = {};

	for (size_t i = 0; i < ELEMENTSOF(features); i++)
		one_cgroup(&t, &features[i], &one);
	for (size_t i = 0; i < ELEMENTSOF(features); i += 3)
		parent_child(&t, &features[i], &two);
	three_levels(&t, &features[5], &three);
	for (size_t i = 0; i < ELEMENTSOF(features); i++)
		near_limit(&t, &features[i], &limit, 500);

	printf("test-plan-exhaustive: one cgroup: %zu states (actual × desired × kernel), %zu actions, "
	       "%zu steps simulated, %zu blocked, %zu with a gap; %zu failed\n",
	       one.cases, one.stats.actions, one.stats.steps_checked, one.stats.blocked_lists, one.stats.gaps,
	       one.failures);
	printf("test-plan-exhaustive: parent and child: %zu states, %zu actions, %zu steps simulated, "
	       "%zu blocked lists, %zu with a gap; %zu failed\n",
	       two.cases, two.stats.actions, two.stats.steps_checked, two.stats.blocked_lists, two.stats.gaps,
	       two.failures);
	printf("test-plan-exhaustive: three levels: %zu states, %zu actions, %zu steps simulated, "
	       "%zu blocked lists, %zu with a gap; %zu failed\n",
	       three.cases, three.stats.actions, three.stats.steps_checked, three.stats.blocked_lists,
	       three.stats.gaps, three.failures);
	printf("test-plan-exhaustive: near the limit (random, fixed seed): %zu states, %zu actions, "
	       "%zu with a gap; %zu failed\n",
	       limit.cases, limit.stats.actions, limit.stats.gaps, limit.failures);
	return test_finish(&t, "test-plan-exhaustive");
}
