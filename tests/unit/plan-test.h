/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * What the planner tests share: a small text form of actual and desired
 * states, and the invariants every plan must keep, checked by running it
 * through the simulator one action at a time.
 *
 * Actual, one list per line:
 *     CGROUP DIRECTION MODE REVISION: ENTRY...
 *   MODE is none, override, multi or "-" (an empty list); an ENTRY is
 *     ID:FILTER@IDENTITY[/p]   ours (prog name cgf_FILTER; "@?" for an unknown identity)
 *     ID~LINK:FILTER@IDENTITY  ours, attached through link LINK
 *     ID:NAME[/p]              foreign
 *   "/p": attached with BPF_F_PREORDER.
 * Desired, one list per line:
 *     CGROUP DIRECTION MODE: FILTER@IDENTITY[/p]...
 */

#include <errno.h>

#include "plan.h"
#include "state.h"
#include "tests.h"

static inline struct cgf_actual *parse_actual(const char *text) {
	struct cgf_actual *a = cgf_actual_new();
	_cleanup_free_ char *copy = strdup(text);
	char *save_line = NULL;

	REQUIRE(a && copy);
	for (char *line = strtok_r(copy, "\n", &save_line); line; line = strtok_r(NULL, "\n", &save_line)) {
		char *save = NULL, *cgroup, *dir, *mode, *rev, *tok;
		struct cgf_actual_list *l;
		uint32_t flags;
		int d;

		cgroup = strtok_r(line, " ", &save);
		dir = strtok_r(NULL, " ", &save);
		mode = strtok_r(NULL, " ", &save);
		rev = strtok_r(NULL, ": ", &save);
		REQUIRE(cgroup && dir && mode && rev);
		d = cgf_direction_from_string(dir);
		REQUIRE(d >= 0);
		flags = streq(mode, "-") ? 0 : cgf_mode_to_flags(cgf_mode_from_string(mode));
		REQUIRE(streq(mode, "-") || cgf_mode_from_string(mode) >= 0);
		REQUIRE(cgf_actual_add_list(a, cgroup, d, flags, strtoull(rev, NULL, 10), &l) == 0);
		while ((tok = strtok_r(NULL, " ", &save))) {
			char *colon = strchr(tok, ':'), *at, *slash, *tilde;
			struct cgf_actual_entry e = {};
			char name[64];

			REQUIRE(colon);
			*colon = 0;
			tilde = strchr(tok, '~');
			if (tilde) {
				*tilde = 0;
				e.link_id = (uint32_t) strtoul(tilde + 1, NULL, 10);
			}
			e.prog_id = (uint32_t) strtoul(tok, NULL, 10);
			tok = colon + 1;
			slash = strstr(tok, "/p");
			if (slash) {
				*slash = 0;
				e.preorder = true;
			}
			at = strchr(tok, '@');
			if (at) {
				*at = 0;
				e.ours = true;
				e.filter = tok;
				e.identity = streq(at + 1, "?") ? NULL : at + 1;
				snprintf(name, sizeof(name), "cgf_%s", tok);
				e.prog_name = name;
			} else
				e.prog_name = tok;
			REQUIRE(cgf_actual_list_insert(l, l->n_entries, &e) == 0);
		}
	}
	cgf_actual_sort(a);
	return a;
}

static inline struct cgf_desired *parse_desired(const char *text) {
	struct cgf_desired *d = cgf_desired_new();
	_cleanup_free_ char *copy = strdup(text);
	char *save_line = NULL;

	REQUIRE(d && copy);
	for (char *line = strtok_r(copy, "\n", &save_line); line; line = strtok_r(NULL, "\n", &save_line)) {
		char *save = NULL, *cgroup, *dir, *mode, *tok;
		struct cgf_desired_list *l;
		int di, m;

		cgroup = strtok_r(line, " ", &save);
		dir = strtok_r(NULL, " ", &save);
		mode = strtok_r(NULL, ": ", &save);
		REQUIRE(cgroup && dir && mode);
		di = cgf_direction_from_string(dir);
		m = cgf_mode_from_string(mode);
		REQUIRE(di >= 0 && m >= 0);
		REQUIRE(cgf_desired_add_list(d, cgroup, di, m, &l) == 0);
		while ((tok = strtok_r(NULL, " ", &save))) {
			char *at = strchr(tok, '@'), *slash = strstr(tok, "/p");

			REQUIRE(at);
			if (slash)
				*slash = 0;
			*at = 0;
			REQUIRE(cgf_desired_list_add_entry(l, tok, at + 1, slash != NULL, (struct cgf_pos) {}) == 0);
		}
	}
	cgf_desired_sort(d);
	return d;
}

static inline char *format_plan(const struct cgf_plan *p) {
	char *s = NULL;

	REQUIRE(cgf_plan_format(p, &s) == 0);
	return s;
}

/* Same (filter, identity, preorder) of ours in a class, in order. */
static inline bool class_matches(const struct cgf_actual_list *l, const struct cgf_desired_list *w, bool pre,
				 bool features_preorder) {
	size_t i = 0, j = 0;

	for (;;) {
		while (l && i < l->n_entries && (!l->entries[i].ours || l->entries[i].preorder != pre))
			i++;
		while (w && j < w->n_entries && (w->entries[j].preorder && features_preorder) != pre)
			j++;
		if (!(l && i < l->n_entries) || !(w && j < w->n_entries))
			return !(l && i < l->n_entries) && !(w && j < w->n_entries);
		if (!streq_ptr(l->entries[i].filter, w->entries[j].filter) ||
		    !streq_ptr(l->entries[i].identity, w->entries[j].identity))
			return false;
		i++;
		j++;
	}
}

/* Does the kernel list do what the desired list says? */
static inline bool list_matches(const struct cgf_actual_list *l, const struct cgf_desired_list *w,
				const struct cgf_features *f) {
	size_t n = l ? l->n_entries : 0;

	if (w && w->n_entries > 0 && (n == 0 || l->flags != cgf_mode_to_flags(w->mode)))
		return false;
	return class_matches(l, w, false, f->preorder) && class_matches(l, w, true, f->preorder);
}

static inline bool lists_equal(const struct cgf_actual_list *a, const struct cgf_actual_list *b) {
	size_t na = a ? a->n_entries : 0, nb = b ? b->n_entries : 0;

	if (na != nb || (na > 0 && a->flags != b->flags))
		return false;
	for (size_t i = 0; i < na; i++)
		if (a->entries[i].prog_id != b->entries[i].prog_id || a->entries[i].preorder != b->entries[i].preorder)
			return false;
	return true;
}

static inline bool foreign_kept(const struct cgf_actual_list *before, const struct cgf_actual_list *after) {
	size_t j = 0;

	for (size_t i = 0; before && i < before->n_entries; i++) {
		if (before->entries[i].ours)
			continue;
		while (after && j < after->n_entries && after->entries[j].ours)
			j++;
		if (!after || j >= after->n_entries || after->entries[j].prog_id != before->entries[i].prog_id ||
		    after->entries[j].preorder != before->entries[i].preorder)
			return false;
		j++;
	}
	while (after && j < after->n_entries && after->entries[j].ours)
		j++;
	return !after || j == after->n_entries;
}

static inline bool has_report(const struct cgf_plan *p, enum cgf_report_kind kind, const char *cgroup,
			      enum cgf_direction d) {
	for (size_t i = 0; i < p->n_reports; i++)
		if (p->reports[i].kind == kind && streq(p->reports[i].cgroup, cgroup) && p->reports[i].direction == d)
			return true;
	return false;
}

static inline bool holds_filter(const struct cgf_actual_list *l, const char *filter) {
	for (size_t i = 0; l && i < l->n_entries; i++)
		if (l->entries[i].ours && streq_ptr(l->entries[i].filter, filter))
			return true;
	return false;
}

/* Every (cgroup, direction) either state names. */
struct key {
	const char *cgroup;
	enum cgf_direction direction;
};

static inline size_t collect_keys(const struct cgf_desired *d, const struct cgf_actual *a, struct key *keys, size_t max) {
	size_t n = 0;

	for (size_t i = 0; i < d->n_lists + a->n_lists; i++) {
		const char *c = i < d->n_lists ? d->lists[i].cgroup : a->lists[i - d->n_lists].cgroup;
		enum cgf_direction dir = i < d->n_lists ? d->lists[i].direction : a->lists[i - d->n_lists].direction;
		bool seen = false;

		for (size_t k = 0; k < n && !seen; k++)
			seen = streq(keys[k].cgroup, c) && keys[k].direction == dir;
		if (!seen) {
			REQUIRE(n < max);
			keys[n++] = (struct key) { c, dir };
		}
	}
	return n;
}

struct invariant_stats {
	size_t plans, actions, steps_checked, blocked_lists, gaps;
};

/*
 * The invariants of docs/design.md, for one plan:
 *  (a) no foreign program is detached or replaced (the simulator refuses it),
 *      and every action is one the kernel accepts at that point;
 *  (b) a filter that is on a list and stays in the policy is on it at every
 *      step, and a list with programs before and after is never empty,
 *      unless a gap is reported for that list;
 *  (c) the result is what the policy says, except for lists reported
 *      blocked, which stay as they were; foreign programs stay, in order;
 *  (d) planning again from the result gives no actions;
 *  (e) no list ever holds more than 64 programs;
 *  (f) expected_revision is the list's revision at that point (0 without
 *      revisions or when it is unknown).
 * Returns NULL or a description of the first violation (static or in buf).
 */
static inline const char *check_invariants(const struct cgf_actual *actual, const struct cgf_desired *desired,
					   const struct cgf_features *f, const struct cgf_plan *plan,
					   struct invariant_stats *stats, char *buf, size_t size) {
	_cleanup_(cgf_sim_freep) struct cgf_sim *sim = NULL;
	_cleanup_(cgf_plan_freep) struct cgf_plan *again = NULL;
	struct key keys[64];
	size_t n_keys = collect_keys(desired, actual, keys, ELEMENTSOF(keys));
	const struct cgf_actual *now;

	stats->plans++;
	stats->actions += plan->n_actions;
	REQUIRE(cgf_sim_new(actual, f, &sim) == 0);
	for (size_t i = 0; i < plan->n_actions; i++) {
		const struct cgf_action *a = &plan->actions[i];
		const struct cgf_actual_list *l = cgf_actual_find(cgf_sim_state(sim), a->cgroup, a->direction);
		uint64_t rev = l ? l->revision : 0;
		const char *why = NULL;
		int r;

		if (a->expected_revision != (f->revision ? rev : 0)) {
			snprintf(buf, size, "(f) action #%zu: expected_revision %llu, the list is at %llu", i,
				 (unsigned long long) a->expected_revision, (unsigned long long) rev);
			return buf;
		}
		r = cgf_sim_step(sim, plan, i, &why);
		if (r < 0) {
			snprintf(buf, size, "(a) action #%zu refused: %s (%s)", i, why ?: "?", strerror(-r));
			return buf;
		}
		stats->steps_checked++;
		now = cgf_sim_state(sim);
		for (size_t k = 0; k < n_keys; k++) {
			const struct cgf_actual_list *before = cgf_actual_find(actual, keys[k].cgroup, keys[k].direction);
			const struct cgf_actual_list *cur = cgf_actual_find(now, keys[k].cgroup, keys[k].direction);
			const struct cgf_desired_list *w = cgf_desired_find(desired, keys[k].cgroup, keys[k].direction);
			bool gap = has_report(plan, CGF_REPORT_MODE_GAP, keys[k].cgroup, keys[k].direction) ||
				   has_report(plan, CGF_REPORT_LIMIT_GAP, keys[k].cgroup, keys[k].direction);

			if (cur && cur->n_entries > CGF_MAX_PROGS)
				return "(e) more than 64 programs";
			if (gap)
				continue;
			if (before && before->n_entries > 0 && w && w->n_entries > 0 && (!cur || cur->n_entries == 0)) {
				snprintf(buf, size, "(b) %s %s is empty after action #%zu", keys[k].cgroup,
					 cgf_direction_to_string(keys[k].direction), i);
				return buf;
			}
			for (size_t j = 0; w && j < w->n_entries; j++)
				if (holds_filter(before, w->entries[j].filter) && !holds_filter(cur, w->entries[j].filter)) {
					snprintf(buf, size, "(b) '%s' missing from %s %s after action #%zu", w->entries[j].filter,
						 keys[k].cgroup, cgf_direction_to_string(keys[k].direction), i);
					return buf;
				}
		}
	}

	now = cgf_sim_state(sim);
	for (size_t k = 0; k < n_keys; k++) {
		const struct cgf_actual_list *before = cgf_actual_find(actual, keys[k].cgroup, keys[k].direction);
		const struct cgf_actual_list *cur = cgf_actual_find(now, keys[k].cgroup, keys[k].direction);
		const struct cgf_desired_list *w = cgf_desired_find(desired, keys[k].cgroup, keys[k].direction);

		if (has_report(plan, CGF_REPORT_MODE_GAP, keys[k].cgroup, keys[k].direction) ||
		    has_report(plan, CGF_REPORT_LIMIT_GAP, keys[k].cgroup, keys[k].direction))
			stats->gaps++;
		if (!foreign_kept(before, cur))
			return "(a) foreign programs changed";
		if (has_report(plan, CGF_REPORT_BLOCKED, keys[k].cgroup, keys[k].direction)) {
			stats->blocked_lists++;
			if (!lists_equal(before, cur))
				return "(c) a blocked list changed";
			continue;
		}
		if (!list_matches(cur, w, f)) {
			snprintf(buf, size, "(c) %s %s does not match the policy", keys[k].cgroup,
				 cgf_direction_to_string(keys[k].direction));
			return buf;
		}
	}

	REQUIRE(cgf_plan(desired, now, f, &again) == 0);
	if (again->n_actions > 0) {
		_cleanup_free_ char *s = format_plan(again);

		snprintf(buf, size, "(d) planning again gives actions:\n%s", s);
		return buf;
	}
	return NULL;
}

static inline const char *features_name(const struct cgf_features *f) {
	static const char *const names[8] = {
		"stock", "preorder", "ordering", "preorder+ordering",
		"revision", "preorder+revision", "ordering+revision", "patched",
	};

	return names[f->preorder | f->ordering << 1 | f->revision << 2];
}
