/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The validator, in the order a reader meets the problems:
 *
 *  1. filters alone: defined twice, CIDR / protocol / port combinations,
 *     BPF program names that collide;
 *  2. each attachment alone: unknown filters, a filter listed twice, more
 *     than one program where the mode holds one, tenants, kernel features;
 *  3. attachments in pairs, per direction, wherever their cgroup patterns
 *     may meet: modes that differ, a filter attached twice, a second
 *     program under none / override, anything below a `none`, more than 64
 *     programs;
 *  4. ordering per cgroup and direction: anchors that are not there,
 *     preorder against non-preorder, cycles.
 *
 * "May meet" is decided from the patterns alone (cgroup-pattern.h), so
 * that the answer holds for every cgroup tree, including the ones that
 * appear after the check.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>

#include "cgroup-pattern.h"
#include "policy-validate.h"
#include "util.h"

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

/* An attached filter whose definition, type and direction are known. */
struct entry {
	size_t attachment; /* index in p->attachments */
	size_t index;      /* in its filters: list */
	const struct cgf_filter_ref *ref;
	const struct cgf_filter *filter;
	bool reported_twice;
};

/* What an attachment puts on each direction: indexes into entries. */
struct side {
	size_t *entries;
	size_t n;
	bool reported_mode, reported_single, reported_below, reported_limit;
};

struct validator {
	const struct cgf_policy *p;
	const struct cgf_features *features;
	struct cgf_diags *diags;
	const struct cgf_filter **names; /* the first definition of each name, sorted */
	size_t n_names;
	struct entry *entries;
	size_t n_entries;
	struct side (*sides)[_CGF_DIRECTION_MAX]; /* per attachment */
	struct cgf_pattern **patterns;            /* per attachment, NULL without a cgroup */
};

static void error_at(struct validator *v, struct cgf_pos pos, const char *format, ...) _printf_(3, 4);
static void error_at(struct validator *v, struct cgf_pos pos, const char *format, ...) {
	va_list ap;

	va_start(ap, format);
	cgf_diags_addv(v->diags, CGF_ERROR, pos, format, ap);
	va_end(ap);
}

#define note(v, pos, ...) cgf_diags_note((v)->diags, pos, __VA_ARGS__)

static bool filter_is_known(const struct cgf_filter *f) {
	return f && cgf_pos_is_set(f->type_pos) && cgf_pos_is_set(f->direction_pos);
}

static const char *dir_str(enum cgf_direction d) {
	return cgf_direction_to_string(d);
}

/* ---- 1. filters ---------------------------------------------------------- */

static int compare_filters(const void *a, const void *b) {
	const struct cgf_filter *x = *(const struct cgf_filter *const *) a, *y = *(const struct cgf_filter *const *) b;
	int r = strcmp(x->name, y->name);

	if (r != 0)
		return r;
	return x < y ? -1 : x > y; /* the array order: first defined first */
}

static int compare_filter_key(const void *key, const void *elem) {
	return strcmp(key, (*(const struct cgf_filter *const *) elem)->name);
}

static const struct cgf_filter *lookup(const struct validator *v, const char *name) {
	const struct cgf_filter *const *f;

	if (!name)
		return NULL;
	f = bsearch(name, v->names, v->n_names, sizeof(*v->names), compare_filter_key);
	return f ? *f : NULL;
}

struct name_index {
	const char *name;
	size_t index;
};

static int compare_name_index(const void *a, const void *b) {
	const struct name_index *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r != 0)
		return r;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* For each of n names (NULL: none), the index of the first earlier equal
 * one, or SIZE_MAX: one sort instead of comparing every pair, for the
 * lists that may be long (an attachment's filters, tenants). */
static int index_repeats(const char *const *names, size_t n, size_t **ret) {
	_cleanup_free_ struct name_index *v = NULL;
	_cleanup_free_ size_t *first = NULL;
	size_t k = 0;

	v = calloc(n + 1, sizeof(*v));
	first = calloc(n + 1, sizeof(*first));
	if (!v || !first)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		first[i] = SIZE_MAX;
		if (names[i])
			v[k++] = (struct name_index) { names[i], i };
	}
	qsort_safe(v, k, sizeof(*v), compare_name_index);
	for (size_t i = 1, run = 0; i < k; i++) {
		if (!streq(v[run].name, v[i].name)) {
			run = i;
			continue;
		}
		first[v[i].index] = v[run].index;
	}
	*ret = TAKE_PTR(first);
	return 0;
}

/* index_repeats() over a field of an array of structs. */
#define INDEX_REPEATS(array, n, field, ret)                                        \
	({                                                                         \
		_cleanup_free_ const char **_names = calloc((n) + 1, sizeof(char *)); \
		int _r = -ENOMEM;                                                  \
		if (_names) {                                                      \
			for (size_t _i = 0; _i < (n); _i++)                        \
				_names[_i] = (array)[_i].field;                    \
			_r = index_repeats(_names, (n), (ret));                   \
		}                                                                  \
		_r;                                                                \
	})

/* Builds the name table; reports names defined twice, in one file or two. */
static int index_filters(struct validator *v) {
	const struct cgf_filter **all;
	size_t n = 0;

	all = calloc(v->p->n_filters + 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < v->p->n_filters; i++)
		if (v->p->filters[i].name)
			all[n++] = &v->p->filters[i];
	qsort_safe(all, n, sizeof(*all), compare_filters);

	/* Keep the first of each run of equal names; the array stays sorted. */
	v->names = all;
	v->n_names = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cgf_filter *first = v->n_names > 0 ? all[v->n_names - 1] : NULL;

		if (first && streq(first->name, all[i]->name)) {
			error_at(v, all[i]->pos, "filter '%s' is already defined", all[i]->name);
			note(v, first->pos, "first defined here");
			continue;
		}
		all[v->n_names++] = all[i];
	}
	return 0;
}

/* Does the network lie within ::ffff:0:0/96, the IPv4-mapped addresses? */
static bool is_v4_mapped(const struct cgf_rule *r) {
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return r->family == AF_INET6 && r->prefixlen >= 96 && memcmp(r->addr, prefix, sizeof(prefix)) == 0;
}

static void check_rule(struct validator *v, const struct cgf_rule *r) {
	char net[CGF_CIDR_STRLEN];

	if (r->family == 0)
		return; /* did not parse */

	/* A dual-stack socket sends to ::ffff:a.b.c.d as IPv4: the filters
	 * judge it by the IPv4 rules, and an IPv6 rule for it never matches. */
	if (is_v4_mapped(r)) {
		uint8_t v4[16] = {};

		memcpy(v4, r->addr + 12, 4);
		cgf_cidr_format_network(AF_INET, v4, r->prefixlen - 96, net);
		error_at(v, r->cidr_pos,
			 "cidr '%s' is IPv4-mapped IPv6, which never matches: such traffic leaves as IPv4 "
			 "and is judged by the IPv4 rules; write '%s'",
			 r->cidr, net);
		return;
	}

	if (cgf_cidr_has_host_bits(r->family, r->addr, r->prefixlen)) {
		cgf_cidr_format_network(r->family, r->addr, r->prefixlen, net);
		error_at(v, r->cidr_pos, "cidr '%s' has host bits set; did you mean '%s'?", r->cidr, net);
	}

	if (r->protocol == CGF_PROTO_ICMP && r->family == AF_INET6)
		error_at(v, r->protocol_pos, "protocol icmp is for IPv4, but cidr '%s' is IPv6; use icmpv6", r->cidr);
	else if (r->protocol == CGF_PROTO_ICMPV6 && r->family == AF_INET)
		error_at(v, r->protocol_pos, "protocol icmpv6 is for IPv6, but cidr '%s' is IPv4; use icmp", r->cidr);

	if (cgf_pos_is_set(r->ports_pos) && r->protocol != CGF_PROTO_TCP && r->protocol != CGF_PROTO_UDP) {
		if (r->protocol == CGF_PROTO_ANY)
			error_at(v, r->ports_pos, "'ports' needs 'protocol: tcp' or 'protocol: udp' in the same rule");
		else
			error_at(v, r->ports_pos, "'ports' needs protocol tcp or udp, not %s",
				 cgf_protocol_to_string(r->protocol));
	}
}

static void check_filter(struct validator *v, const struct cgf_filter *f) {
	if (!cgf_pos_is_set(f->type_pos) || f->type != CGF_FILTER_RULES)
		return;
	for (size_t i = 0; i < f->n_allow; i++)
		check_rule(v, &f->allow[i]);
	for (size_t i = 0; i < f->n_deny; i++)
		check_rule(v, &f->deny[i]);
}

struct prog_name {
	char name[CGF_PROG_NAME_MAX + 1];
	const struct cgf_filter *filter;
};

static int compare_prog_names(const void *a, const void *b) {
	const struct prog_name *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r != 0)
		return r;
	return cgf_pos_compare(x->filter->pos, y->filter->pos);
}

/* Long names are shortened with a hash: two may end up the same. */
static int check_prog_names(struct validator *v) {
	_cleanup_free_ struct prog_name *names = NULL;
	size_t n = 0;

	names = calloc(v->n_names + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < v->n_names; i++)
		if (cgf_filter_name_is_valid(v->names[i]->name)) {
			cgf_filter_prog_name(v->names[i]->name, names[n].name);
			names[n++].filter = v->names[i];
		}
	qsort_safe(names, n, sizeof(*names), compare_prog_names);
	for (size_t i = 1; i < n; i++)
		if (streq(names[i - 1].name, names[i].name)) {
			error_at(v, names[i].filter->pos,
				 "filters '%s' and '%s' both get the BPF program name '%s'; rename one "
				 "(names of up to %zu characters are kept whole)",
				 names[i - 1].filter->name, names[i].filter->name, names[i].name,
				 (size_t) CGF_PROG_NAME_MAX - strlen(CGF_PROG_PREFIX));
			note(v, names[i - 1].filter->pos, "'%s' is defined here", names[i - 1].filter->name);
		}
	return 0;
}

/* ---- 2. each attachment -------------------------------------------------- */

static void report_unknown(struct validator *v, struct cgf_pos pos, const char *name) {
	const char *best = NULL;
	size_t best_d = SIZE_MAX, d;

	/* The search for a suggestion costs a pass over every name: not for
	 * a diagnostic that the list would only count. */
	for (size_t i = 0; cgf_diags_would_hold(v->diags, pos) && i < v->n_names; i++) {
		if (is_close_match(name, v->names[i]->name, &d) && d < best_d) {
			best_d = d;
			best = v->names[i]->name;
		}
	}
	if (best)
		error_at(v, pos, "unknown filter '%s'; did you mean '%s'?", name, best);
	else
		error_at(v, pos, "unknown filter '%s'", name);
}

/* Resolves a reference; reports an unknown name.  NULL if unusable. */
static const struct cgf_filter *resolve(struct validator *v, const char *name, struct cgf_pos pos) {
	const struct cgf_filter *f;

	if (!name)
		return NULL; /* did not parse */
	f = lookup(v, name);
	if (!f)
		report_unknown(v, pos, name);
	return f;
}

static int add_entry(struct validator *v, size_t ai, size_t index, const struct cgf_filter *f) {
	const struct cgf_attachment *a = &v->p->attachments[ai];
	struct side *side = &v->sides[ai][f->direction];
	struct entry *e;
	size_t *slot;

	e = array_append((void **) &v->entries, v->n_entries, sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct entry) { .attachment = ai, .index = index, .ref = &a->filters[index], .filter = f };
	slot = array_append((void **) &side->entries, side->n, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = v->n_entries++;
	side->n++;
	return 0;
}

static const struct entry *side_entry(const struct validator *v, const struct side *s, size_t i) {
	return &v->entries[s->entries[i]];
}

/* A tenant glob and the length of its literal start: fnmatch() can only
 * match a name that begins with it. */
struct glob_entry {
	const char *pattern;
	size_t prefix;
	size_t index; /* in the tenants */
};

static int compare_glob_entries(const void *a, const void *b) {
	const struct glob_entry *x = a, *y = b;
	int r = memcmp(x->pattern, y->pattern, MIN(x->prefix, y->prefix));

	if (r != 0)
		return r;
	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The first glob before tenant "before" that matches name, or SIZE_MAX.
 * Only the globs whose literal start is a start of name are tried: for
 * each length, a binary search in the globs sorted by start. */
static size_t first_matching_glob(const struct glob_entry *globs, size_t n, const char *name, size_t before) {
	size_t best = before, len = strlen(name);

	for (size_t k = 0; k <= len && n > 0; k++) {
		struct glob_entry key = { .pattern = name, .prefix = k, .index = 0 };
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (compare_glob_entries(&globs[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && globs[lo].prefix == k && memcmp(globs[lo].pattern, name, k) == 0 &&
		       globs[lo].index < best;
		     lo++)
			if (fnmatch(globs[lo].pattern, name, FNM_PATHNAME | FNM_NOESCAPE) == 0) {
				best = globs[lo].index;
				break;
			}
	}
	return best < before ? best : SIZE_MAX;
}

static int check_tenants(struct validator *v, size_t ai) {
	const struct cgf_attachment *a = &v->p->attachments[ai];
	const struct cgf_filter *carrier[_CGF_DIRECTION_MAX] = {};
	_cleanup_free_ struct glob_entry *globs = NULL;
	_cleanup_free_ size_t *same = NULL;
	size_t n_globs = 0, star = SIZE_MAX;
	int r;

	if (a->n_tenants == 0)
		return 0;

	/* The first rules filter of a direction applies that direction's
	 * tenant filters. */
	for (size_t i = 0; i < a->n_filters; i++) {
		const struct cgf_filter *f = lookup(v, a->filters[i].filter);

		if (filter_is_known(f) && f->type == CGF_FILTER_RULES && !carrier[f->direction])
			carrier[f->direction] = f;
	}

	/* An earlier entry matches a later one when it is '*', the same
	 * name, or a glob that matches the name: indexed, not paired. */
	r = INDEX_REPEATS(a->tenants, a->n_tenants, pattern, &same);
	if (r < 0)
		return r;
	globs = calloc(a->n_tenants + 1, sizeof(*globs));
	if (!globs)
		return -ENOMEM;
	for (size_t t = 0; t < a->n_tenants; t++) {
		const char *pattern = a->tenants[t].pattern;

		if (streq(pattern, "*") && star == SIZE_MAX)
			star = t;
		if (cgf_pattern_is_glob(pattern))
			globs[n_globs++] = (struct glob_entry) { pattern, strcspn(pattern, "*?["), t };
	}
	qsort_safe(globs, n_globs, sizeof(*globs), compare_glob_entries);

	for (size_t t = 0; t < a->n_tenants; t++) {
		const struct cgf_tenant *tn = &a->tenants[t];
		_cleanup_free_ size_t *twice = NULL;
		size_t first = star < t ? star : SIZE_MAX;

		/* First match wins: an entry after one that matches all it
		 * could match never applies. */
		if (!cgf_pattern_is_glob(tn->pattern)) {
			size_t g = first_matching_glob(globs, n_globs, tn->pattern, MIN(t, first));

			first = MIN(first, MIN(same[t], g));
		}
		if (first != SIZE_MAX) {
			const struct cgf_tenant *earlier = &a->tenants[first];

			error_at(v, tn->pos,
				 "tenant '%s' never applies: '%s' comes first and matches it "
				 "(the first matching entry wins)",
				 tn->pattern, earlier->pattern);
			note(v, earlier->pos, "'%s' is here", earlier->pattern);
		}

		r = INDEX_REPEATS(tn->filters, tn->n_filters, filter, &twice);
		if (r < 0)
			return r;
		for (size_t i = 0; i < tn->n_filters; i++) {
			const struct cgf_filter_ref *ref = &tn->filters[i];
			const struct cgf_filter *f = resolve(v, ref->filter, ref->pos);

			if (f && twice[i] != SIZE_MAX) {
				error_at(v, ref->pos, "filter '%s' is listed twice for tenant '%s'", ref->filter,
					 tn->pattern);
				note(v, tn->filters[twice[i]].pos, "first listed here");
				f = NULL;
			}
			if (!filter_is_known(f))
				continue;
			if (f->type != CGF_FILTER_RULES)
				error_at(v, ref->pos,
					 "tenant filter '%s' is of type %s; a tenant's filters must be of type rules "
					 "(the attachment's rules filter applies them as data)",
					 f->name, cgf_filter_type_to_string(f->type));
			else if (!carrier[f->direction])
				error_at(v, ref->pos,
					 "tenant filter '%s' is %s, but this attachment has no %s rules filter "
					 "to apply it",
					 f->name, dir_str(f->direction), dir_str(f->direction));
		}
	}
	return 0;
}

static void check_features(struct validator *v, const struct cgf_attachment *a) {
	if (a->preorder && !v->features->preorder)
		error_at(v, a->preorder_pos,
			 "preorder: true needs the kernel-patch series "
			 "(BPF_F_PREORDER, Linux ≥ 6.15 or cgfilterd's kernel-patch/)");
	for (size_t i = 0; i < a->n_filters; i++) {
		const struct cgf_filter_ref *ref = &a->filters[i];

		if (ref->anchor != CGF_ANCHOR_NONE && !v->features->ordering)
			error_at(v, ref->anchor_pos,
				 "%s: needs the kernel-patch series "
				 "(%s, Linux ≥ 6.17 or cgfilterd's kernel-patch/)",
				 cgf_anchor_to_string(ref->anchor),
				 ref->anchor == CGF_ANCHOR_BEFORE ? "BPF_F_BEFORE" : "BPF_F_AFTER");
	}
}

/* foreign-below says what a none does to the programs others attach
 * below it; no other mode locks anything out there. */
static void check_foreign_below(struct validator *v, const struct cgf_attachment *a) {
	if (!cgf_pos_is_set(a->foreign_below_pos) || a->mode == CGF_MODE_NONE)
		return;
	error_at(v, a->foreign_below_pos,
		 "'foreign-below' is for mode none; with mode %s%s the kernel lets other controllers attach "
		 "below, so nothing is locked out",
		 cgf_mode_to_string(a->mode), cgf_pos_is_set(a->mode_pos) ? "" : " (the default)");
	if (cgf_pos_is_set(a->mode_pos))
		note(v, a->mode_pos, "mode %s is set here", cgf_mode_to_string(a->mode));
}

static int check_attachment(struct validator *v, size_t ai) {
	const struct cgf_attachment *a = &v->p->attachments[ai];
	_cleanup_free_ size_t *first = NULL;
	int r;

	r = INDEX_REPEATS(a->filters, a->n_filters, filter, &first);
	if (r < 0)
		return r;
	for (size_t i = 0; i < a->n_filters; i++) {
		const struct cgf_filter_ref *ref = &a->filters[i];
		const struct cgf_filter *f = resolve(v, ref->filter, ref->pos);
		bool twice = false;

		if (ref->anchor != CGF_ANCHOR_NONE && !lookup(v, ref->anchor_filter))
			report_unknown(v, ref->anchor_pos, ref->anchor_filter);

		if (f && first[i] != SIZE_MAX) {
			error_at(v, ref->pos, "filter '%s' is listed twice in this attachment", ref->filter);
			note(v, a->filters[first[i]].pos, "first listed here");
			twice = true;
		}
		if (twice || !filter_is_known(f))
			continue;

		/* Unusable without a cgroup; the entry stays out of the
		 * checks that compare cgroups. */
		if (!a->cgroup)
			continue;
		r = add_entry(v, ai, i, f);
		if (r < 0)
			return r;
	}

	if (a->mode != CGF_MODE_MULTI)
		for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++) {
			struct side *s = &v->sides[ai][d];

			if (s->n < 2)
				continue;
			error_at(v, side_entry(v, s, 1)->ref->pos,
				 "mode %s allows one program per cgroup and direction; '%s' would replace '%s' "
				 "on cgroup '%s' %s",
				 cgf_mode_to_string(a->mode), side_entry(v, s, 1)->filter->name,
				 side_entry(v, s, 0)->filter->name, a->cgroup, dir_str(d));
			note(v, side_entry(v, s, 0)->ref->pos, "'%s' is attached here",
			     side_entry(v, s, 0)->filter->name);
			s->reported_single = true;
		}

	r = check_tenants(v, ai);
	if (r < 0)
		return r;
	check_features(v, a);
	check_foreign_below(v, a);
	return 0;
}

/* ---- 3. attachments in pairs --------------------------------------------- */

static struct cgf_pos mode_pos(const struct cgf_attachment *a) {
	return cgf_pos_is_set(a->mode_pos) ? a->mode_pos : a->cgroup_pos;
}

static const char *mode_words(const struct cgf_attachment *a) {
	if (!cgf_pos_is_set(a->mode_pos))
		return "multi (the default)";
	return cgf_mode_to_string(a->mode);
}

/* "cgroup 'x'" when both name one cgroup, else "cgroups matching 'x' and 'y'" */
static const char *where(const struct cgf_attachment *a, const struct cgf_attachment *b, char *buf, size_t size) {
	if (streq(a->cgroup, b->cgroup))
		snprintf(buf, size, "%s '%s'", cgf_pattern_is_glob(a->cgroup) ? "cgroups matching" : "cgroup",
			 a->cgroup);
	else
		snprintf(buf, size, "cgroups matching both '%s' and '%s'", a->cgroup, b->cgroup);
	return buf;
}

/* a and b (a first) may name one cgroup: compare what they put on d. */
static void check_overlap(struct validator *v, size_t ai, size_t bi, unsigned d) {
	const struct cgf_attachment *a = &v->p->attachments[ai], *b = &v->p->attachments[bi];
	struct side *sa = &v->sides[ai][d], *sb = &v->sides[bi][d];
	char buf[1024];

	if (a->mode != b->mode && !sb->reported_mode) {
		sb->reported_mode = true;
		error_at(v, mode_pos(b), "conflicting modes on %s %s: %s here, %s in another attachment",
			 where(a, b, buf, sizeof(buf)), dir_str(d), mode_words(b), mode_words(a));
		note(v, mode_pos(a), "mode %s applies here", mode_words(a));
	}

	if (a->mode == b->mode && a->mode != CGF_MODE_MULTI && !sb->reported_single && !sa->reported_single) {
		sb->reported_single = true;
		error_at(v, side_entry(v, sb, 0)->ref->pos,
			 "mode %s allows one program per cgroup and direction, but %s would get both "
			 "'%s' (here) and '%s' (from another attachment) on %s",
			 cgf_mode_to_string(a->mode), where(a, b, buf, sizeof(buf)),
			 side_entry(v, sb, 0)->filter->name, side_entry(v, sa, 0)->filter->name, dir_str(d));
		note(v, side_entry(v, sa, 0)->ref->pos, "'%s' is attached here", side_entry(v, sa, 0)->filter->name);
	}

	for (size_t i = 0; i < sb->n; i++) {
		struct entry *e = &v->entries[sb->entries[i]];

		for (size_t j = 0; j < sa->n && !e->reported_twice; j++) {
			const struct entry *f = side_entry(v, sa, j);

			if (f->filter != e->filter)
				continue;
			e->reported_twice = true;
			error_at(v, e->ref->pos, "filter '%s' is attached twice to %s %s", e->filter->name,
				 where(a, b, buf, sizeof(buf)), dir_str(d));
			note(v, f->ref->pos, "also attached here");
		}
	}
}

/* none at a, something at b below it. */
static void check_below_none(struct validator *v, size_t ai, size_t bi, unsigned d) {
	const struct cgf_attachment *a = &v->p->attachments[ai], *b = &v->p->attachments[bi];
	struct side *sb = &v->sides[bi][d];
	bool sure = !cgf_pattern_is_glob(a->cgroup) && !cgf_pattern_is_glob(b->cgroup);

	if (sb->reported_below)
		return;
	sb->reported_below = true;
	error_at(v, b->cgroup_pos,
		 "cgroup '%s' %s below '%s', which has mode none on %s: "
		 "the kernel refuses any %s program there (EPERM)",
		 b->cgroup, sure ? "lies" : "may lie", a->cgroup, dir_str(d), dir_str(d));
	note(v, mode_pos(a), "mode none is set here; its 'tenants' give children rules of their own");
}

/* A literal cgroup path and its attachment; the root is ".". */
struct literal {
	const char *path;
	size_t attachment;
};

static int compare_literals(const void *a, const void *b) {
	const struct literal *x = a, *y = b;
	int r = strcmp(x->path, y->path);

	if (r != 0)
		return r;
	return x->attachment < y->attachment ? -1 : x->attachment > y->attachment;
}

static bool is_root_path(const char *p) {
	return streq(p, ".") || streq(p, "");
}

/* The attachments with one literal path (a group): the first of each mode
 * per direction, and the first that has not reported a second program
 * under none / override, kept current as the pairs are visited. */
struct group {
	size_t first_mode[_CGF_DIRECTION_MAX][_CGF_MODE_MAX];
	size_t first_single[_CGF_DIRECTION_MAX][_CGF_MODE_MAX];
};

/* A filter on a direction of a member of a group. */
struct member_filter {
	size_t group;
	unsigned direction;
	const struct cgf_filter *filter;
	size_t attachment;
};

static int compare_member_filters(const void *a, const void *b) {
	const struct member_filter *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->direction != y->direction)
		return x->direction < y->direction ? -1 : 1;
	if (x->filter != y->filter)
		return x->filter < y->filter ? -1 : 1;
	return x->attachment < y->attachment ? -1 : x->attachment > y->attachment;
}

/*
 * What the pair checks look up instead of trying every pair: the literal
 * paths sorted, each attachment's place among them (lpos) and its group
 * (the place of the group's first), the programs of a group's members
 * before each (a prefix sum per direction), and the globs in file order.
 */
struct pair_index {
	struct literal *lits;
	size_t n_lits;
	size_t *globs;
	size_t n_globs;
	size_t *lpos, *group_of; /* per attachment; SIZE_MAX for a glob */
	struct group *groups;   /* per place, used at each group's first */
	size_t (*sum)[_CGF_DIRECTION_MAX]; /* per place: programs of the group's members before it */
	struct member_filter *filters;
	size_t n_filters;
};

static void pair_index_done(struct pair_index *x) {
	free(x->lits);
	free(x->globs);
	free(x->lpos);
	free(x->group_of);
	free(x->groups);
	free(x->sum);
	free(x->filters);
}

static int pair_index_build(struct validator *v, struct pair_index *x) {
	const struct cgf_policy *p = v->p;
	size_t n = p->n_attachments;

	x->lits = calloc(n + 1, sizeof(*x->lits));
	x->globs = calloc(n + 1, sizeof(*x->globs));
	x->lpos = calloc(n + 1, sizeof(*x->lpos));
	x->group_of = calloc(n + 1, sizeof(*x->group_of));
	x->groups = calloc(n + 1, sizeof(*x->groups));
	x->sum = calloc(n + 1, sizeof(*x->sum));
	x->filters = calloc(v->n_entries + 1, sizeof(*x->filters));
	if (!x->lits || !x->globs || !x->lpos || !x->group_of || !x->groups || !x->sum || !x->filters)
		return -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		const char *c = p->attachments[i].cgroup;

		x->lpos[i] = x->group_of[i] = SIZE_MAX;
		if (!c)
			continue;
		if (cgf_pattern_is_glob(c))
			x->globs[x->n_globs++] = i;
		else
			x->lits[x->n_lits++] = (struct literal) { is_root_path(c) ? "." : c, i };
	}
	qsort_safe(x->lits, x->n_lits, sizeof(*x->lits), compare_literals);

	for (size_t i = 0, g = 0; i < x->n_lits; i++) {
		size_t ai = x->lits[i].attachment;
		struct group *grp;

		if (i == 0 || !streq(x->lits[i - 1].path, x->lits[i].path)) {
			g = i;
			for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++)
				for (unsigned m = 0; m < _CGF_MODE_MAX; m++)
					x->groups[g].first_mode[d][m] = x->groups[g].first_single[d][m] = SIZE_MAX;
		} else
			for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++)
				x->sum[i][d] = x->sum[i - 1][d] + v->sides[x->lits[i - 1].attachment][d].n;
		x->lpos[ai] = i;
		x->group_of[ai] = g;
		grp = &x->groups[g];
		for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++)
			if (v->sides[ai][d].n > 0 && grp->first_mode[d][p->attachments[ai].mode] == SIZE_MAX)
				grp->first_mode[d][p->attachments[ai].mode] = ai;
	}

	for (size_t i = 0; i < v->n_entries; i++) {
		const struct entry *e = &v->entries[i];

		if (x->group_of[e->attachment] != SIZE_MAX)
			x->filters[x->n_filters++] = (struct member_filter) {
				x->group_of[e->attachment], e->filter->direction, e->filter, e->attachment };
	}
	qsort_safe(x->filters, x->n_filters, sizeof(*x->filters), compare_member_filters);
	return 0;
}

/* The first member of group g with filter f on d, or SIZE_MAX. */
static size_t group_first_with(const struct pair_index *x, size_t g, unsigned d, const struct cgf_filter *f) {
	struct member_filter key = { g, d, f, 0 };
	size_t lo = 0, hi = x->n_filters;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (compare_member_filters(&x->filters[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < x->n_filters && x->filters[lo].group == g && x->filters[lo].direction == d &&
	    x->filters[lo].filter == f)
		return x->filters[lo].attachment;
	return SIZE_MAX;
}

/* After bi's pairs: its side flags are final, so it may become its
 * group's first candidate for a second program under its mode. */
static void group_visited(struct validator *v, struct pair_index *x, size_t bi) {
	size_t g = x->group_of[bi];
	enum cgf_mode m = v->p->attachments[bi].mode;

	if (g == SIZE_MAX)
		return;
	for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++)
		if (v->sides[bi][d].n > 0 && !v->sides[bi][d].reported_single &&
		    x->groups[g].first_single[d][m] == SIZE_MAX)
			x->groups[g].first_single[d][m] = bi;
}

/* The first literal with this path (len bytes of it), or n. */
static size_t literal_lower_bound(const struct literal *lits, size_t n, const char *path, size_t len) {
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strncmp(lits[mid].path, path, len);

		if (r < 0 || (r == 0 && strlen(lits[mid].path) < len))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The group of a literal path (len bytes), or SIZE_MAX. */
static size_t find_group(const struct pair_index *x, const char *path, size_t len) {
	size_t i = literal_lower_bound(x->lits, x->n_lits, path, len);

	if (i < x->n_lits && strlen(x->lits[i].path) == len && strncmp(x->lits[i].path, path, len) == 0)
		return i;
	return SIZE_MAX;
}

struct candidates {
	size_t *items;
	size_t n;
};

static int add_candidate(struct candidates *c, size_t ai, size_t bi) {
	size_t *slot;

	if (ai >= bi)
		return 0; /* SIZE_MAX (none), or not before bi */
	slot = array_append((void **) &c->items, c->n, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = ai;
	c->n++;
	return 0;
}

static int compare_size(const void *a, const void *b) {
	size_t x = *(const size_t *) a, y = *(const size_t *) b;

	return x < y ? -1 : x > y;
}

/*
 * The attachments before bi whose pair with bi may report something: every
 * one with a glob (the patterns decide), and of the literal ones
 *  - with the same path, per direction: the first of another mode, the
 *    first that may get a second program under bi's mode, and for each of
 *    bi's filters the first that has it (only the first of each reports;
 *    the programs of all count through the group's sums);
 *  - above it, per path and direction: the first with mode none;
 *  - below it when bi is none: all, unless an earlier none of the same
 *    path has already been paired with them on each of bi's directions.
 * Sorted, so that the pairs are visited in the order of the files as
 * before, which decides what is reported first.  Without globs the cost is
 * n log n over the policy instead of one comparison per pair.
 */
static int pair_candidates(struct validator *v, const struct pair_index *x, size_t bi, struct candidates *c) {
	const struct cgf_attachment *b = &v->p->attachments[bi];
	const char *path = is_root_path(b->cgroup) ? "." : b->cgroup;
	size_t g = x->group_of[bi];
	bool below = false;
	int r = 0;

	c->n = 0;
	if (g == SIZE_MAX) {
		for (size_t ai = 0; ai < bi; ai++)
			if (v->p->attachments[ai].cgroup) {
				r = add_candidate(c, ai, bi);
				if (r < 0)
					return r;
			}
		return 0; /* in order already */
	}

	for (size_t i = 0; i < x->n_globs; i++) {
		r = add_candidate(c, x->globs[i], bi);
		if (r < 0)
			return r;
	}

	for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++) {
		const struct group *grp = &x->groups[g];
		const struct side *sb = &v->sides[bi][d];

		if (sb->n == 0)
			continue;
		for (unsigned m = 0; m < _CGF_MODE_MAX && r >= 0; m++)
			if (m != b->mode)
				r = add_candidate(c, grp->first_mode[d][m], bi);
		if (r >= 0)
			r = add_candidate(c, grp->first_single[d][b->mode], bi);
		for (size_t i = 0; i < sb->n && r >= 0; i++)
			r = add_candidate(c, group_first_with(x, g, d, side_entry(v, sb, i)->filter), bi);

		/* The ancestors: the root, then "a", "a/b", ... of "a/b/c". */
		if (r >= 0 && !streq(path, ".")) {
			size_t a = find_group(x, ".", 1);

			r = add_candidate(c, a == SIZE_MAX ? SIZE_MAX : x->groups[a].first_mode[d][CGF_MODE_NONE], bi);
			for (const char *slash = path; r >= 0 && (slash = strchr(slash, '/')); slash++) {
				a = find_group(x, path, slash - path);
				r = add_candidate(c, a == SIZE_MAX ? SIZE_MAX : x->groups[a].first_mode[d][CGF_MODE_NONE],
						  bi);
			}
		}
		if (r < 0)
			return r;
	}

	if (b->mode == CGF_MODE_NONE) {
		bool done = true;

		/* An earlier none of this path on each of bi's directions was
		 * paired with everything below it already. */
		for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++)
			if (v->sides[bi][d].n > 0 && x->groups[g].first_mode[d][CGF_MODE_NONE] >= bi)
				done = false;
		below = !done;
	}
	if (below) {
		/* Below it: every literal path that starts with "path/". */
		_cleanup_free_ char *prefix = NULL;
		size_t from = 0, len = 0;

		if (!streq(path, ".")) {
			if (asprintf(&prefix, "%s/", path) < 0)
				return -ENOMEM;
			len = strlen(prefix);
			from = literal_lower_bound(x->lits, x->n_lits, prefix, len);
		}
		for (size_t i = from; i < x->n_lits && (!prefix || strncmp(x->lits[i].path, prefix, len) == 0); i++)
			if (!streq(x->lits[i].path, ".")) {
				r = add_candidate(c, x->lits[i].attachment, bi);
				if (r < 0)
					return r;
			}
	}

	qsort_safe(c->items, c->n, sizeof(*c->items), compare_size);
	return 0;
}

static void candidates_done(struct candidates *c) {
	free(c->items);
}

/* Compiled once: the pairs are many. */
static int compile_patterns(struct validator *v) {
	const struct cgf_policy *p = v->p;
	int r;

	for (size_t i = 0; i < p->n_attachments; i++)
		if (p->attachments[i].cgroup) {
			r = cgf_pattern_compile(p->attachments[i].cgroup, &v->patterns[i]);
			if (r < 0)
				return r;
		}
	return 0;
}

/* A none pattern may meet itself one level down: "a/" "**". */
static void check_none_meets_itself(struct validator *v, size_t bi) {
	const struct cgf_attachment *b = &v->p->attachments[bi];

	for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++)
		if (b->mode == CGF_MODE_NONE && v->sides[bi][d].n > 0 &&
		    cgf_pattern_may_be_ancestor(v->patterns[bi], v->patterns[bi])) {
			v->sides[bi][d].reported_below = true;
			error_at(v, b->cgroup_pos,
				 "'%s' with mode none may match a cgroup and one below it: the kernel "
				 "refuses the %s program of the lower one (EPERM)",
				 b->cgroup, dir_str(d));
			note(v, mode_pos(b), "mode none is set here");
		}
}

/* One pair, ai before bi, in each direction that both use.  before[d]
 * gets ai's programs when its cgroups may overlap bi's, unless the two
 * share a path: the group's sums have counted those already. */
static void check_pair(struct validator *v, const struct pair_index *x, size_t ai, size_t bi,
		       size_t before[_CGF_DIRECTION_MAX]) {
	const struct cgf_attachment *a = &v->p->attachments[ai], *b = &v->p->attachments[bi];
	bool used = false, overlap, same;

	for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++)
		used = used || (v->sides[ai][d].n > 0 && v->sides[bi][d].n > 0);
	if (!used)
		return;

	same = x->group_of[bi] != SIZE_MAX && x->group_of[ai] == x->group_of[bi];
	overlap = same || cgf_pattern_may_overlap(v->patterns[ai], v->patterns[bi]);
	for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++) {
		if (v->sides[ai][d].n == 0 || v->sides[bi][d].n == 0)
			continue;
		if (overlap) {
			if (!same)
				before[d] += v->sides[ai][d].n;
			check_overlap(v, ai, bi, d);
		}
		if (a->mode == CGF_MODE_NONE && !v->sides[bi][d].reported_below &&
		    cgf_pattern_may_be_ancestor(v->patterns[ai], v->patterns[bi]))
			check_below_none(v, ai, bi, d);
		if (b->mode == CGF_MODE_NONE && !v->sides[ai][d].reported_below &&
		    cgf_pattern_may_be_ancestor(v->patterns[bi], v->patterns[ai]))
			check_below_none(v, bi, ai, d);
	}
}

/* The kernel's limit, counted in the order of the files; for patterns
 * that only may meet, the count is an upper bound.  before[d]: the
 * programs on bi's cgroups from the attachments before it. */
static void check_prog_limit(struct validator *v, size_t bi, const size_t before[_CGF_DIRECTION_MAX]) {
	const struct cgf_attachment *b = &v->p->attachments[bi];

	for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++) {
		struct side *s = &v->sides[bi][d];
		size_t at;

		if (before[d] + s->n <= CGF_MAX_PROGS)
			continue;
		at = before[d] < CGF_MAX_PROGS ? CGF_MAX_PROGS - before[d] : 0;
		error_at(v, side_entry(v, s, at)->ref->pos,
			 "more than %d programs on cgroup '%s' %s: this is number %zu; "
			 "the kernel refuses it (E2BIG)",
			 CGF_MAX_PROGS, b->cgroup, dir_str(d), before[d] + at + 1);
	}
}

/* Each attachment bi against those before it that may meet it. */
static int check_pairs(struct validator *v) {
	_cleanup_(pair_index_done) struct pair_index x = {};
	_cleanup_(candidates_done) struct candidates cand = {};
	int r;

	r = compile_patterns(v);
	if (r < 0)
		return r;
	r = pair_index_build(v, &x);
	if (r < 0)
		return r;

	for (size_t bi = 0; bi < v->p->n_attachments; bi++) {
		size_t before[_CGF_DIRECTION_MAX] = {};

		if (!v->p->attachments[bi].cgroup)
			continue;
		check_none_meets_itself(v, bi);

		/* The programs of the earlier attachments with the same path,
		 * all of them, whether or not they are visited as a pair. */
		if (x.group_of[bi] != SIZE_MAX)
			for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++)
				if (v->sides[bi][d].n > 0)
					before[d] = x.sum[x.lpos[bi]][d];

		r = pair_candidates(v, &x, bi, &cand);
		if (r < 0)
			return r;
		for (size_t ci = 0; ci < cand.n; ci++)
			/* One may be the first of several kinds. */
			if (ci == 0 || cand.items[ci - 1] != cand.items[ci])
				check_pair(v, &x, cand.items[ci], bi, before);
		group_visited(v, &x, bi);

		check_prog_limit(v, bi, before);
	}
	return 0;
}

/* ---- 4. ordering --------------------------------------------------------- */

struct edge {
	size_t from, to;        /* group-local node numbers: from runs before to */
	const struct entry *by; /* the entry whose position makes the edge */
	bool explicit;          /* before: / after:, else the order of a list */
};

static int compare_edges(const void *a, const void *b) {
	const struct edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static struct cgf_pos edge_pos(const struct edge *e) {
	return e->explicit ? e->by->ref->anchor_pos : e->by->ref->pos;
}

static void note_edge(struct validator *v, const struct edge *e, const struct entry *const *nodes) {
	const char *x = nodes[e->from]->filter->name, *y = nodes[e->to]->filter->name;

	if (!e->explicit)
		note(v, edge_pos(e), "'%s' runs before '%s': listed in this order", x, y);
	else
		note(v, edge_pos(e), "'%s' runs before '%s' because of this '%s'", x, y,
		     cgf_anchor_to_string(e->by->ref->anchor));
}

/* A cycle closed by edges[back]: path holds the edges that led from its
 * start to the source of back. */
static int report_cycle(struct validator *v, const struct entry *const *nodes, const struct edge *edges,
			const size_t *path, size_t n_path, size_t back, unsigned d) {
	_cleanup_free_ char *chain = NULL;
	size_t start = n_path, size = 0, primary = back;
	FILE *f;

	/* The cycle begins where the path left the node that back returns to. */
	if (edges[back].to != edges[back].from) {
		while (start > 0 && edges[path[start - 1]].from != edges[back].to)
			start--;
		if (start > 0)
			start--;
	}

	for (size_t i = start; i < n_path; i++)
		if (edges[path[i]].explicit &&
		    (!edges[primary].explicit || cgf_pos_compare(edge_pos(&edges[path[i]]), edge_pos(&edges[primary])) > 0))
			primary = path[i];

	f = open_memstream(&chain, &size);
	if (!f)
		return -ENOMEM;
	fprintf(f, "%s", nodes[edges[back].to]->filter->name);
	for (size_t i = start; i <= n_path; i++) {
		const struct edge *e = i < n_path ? &edges[path[i]] : &edges[back];

		fprintf(f, " -> %s", nodes[e->to]->filter->name);
	}
	if (fclose(f) != 0)
		return -ENOMEM;

	error_at(v, edge_pos(&edges[primary]), "ordering cycle on cgroup '%s' %s: %s (each runs before the next)",
		 v->p->attachments[nodes[0]->attachment].cgroup, dir_str(d), chain);
	for (size_t i = start; i <= n_path; i++) {
		size_t e = i < n_path ? path[i] : back;

		if (e != primary)
			note_edge(v, &edges[e], nodes);
	}
	return 0;
}

/* Depth-first search for cycles; each back edge is one cycle to report. */
static int find_cycles(struct validator *v, const struct entry *const *nodes, size_t n, struct edge *edges,
		       size_t n_edges, unsigned d) {
	_cleanup_free_ size_t *first = NULL, *path = NULL, *next = NULL;
	_cleanup_free_ unsigned char *color = NULL; /* 0 white, 1 on the path, 2 done */
	int r;

	qsort_safe(edges, n_edges, sizeof(*edges), compare_edges);
	first = calloc(n + 1, sizeof(*first));
	next = calloc(n + 1, sizeof(*next));
	path = calloc(n + 1, sizeof(*path));
	color = calloc(n + 1, 1);
	if (!first || !next || !path || !color)
		return -ENOMEM;
	for (size_t i = 0, e = 0; i <= n; i++) {
		while (e < n_edges && edges[e].from < i)
			e++;
		first[i] = e;
	}

	for (size_t root = 0; root < n; root++) {
		size_t n_path = 0, node = root;

		if (color[root])
			continue;
		color[root] = 1;
		next[root] = first[root];
		for (;;) {
			if (next[node] < first[node + 1]) {
				size_t e = next[node]++, to = edges[e].to;

				if (color[to] == 1) {
					r = report_cycle(v, nodes, edges, path, n_path, e, d);
					if (r < 0)
						return r;
				} else if (color[to] == 0) {
					path[n_path++] = e;
					color[to] = 1;
					next[to] = first[to];
					node = to;
				}
				continue;
			}
			color[node] = 2;
			if (n_path == 0)
				break;
			node = edges[path[--n_path]].from;
		}
	}
	return 0;
}

static int compare_entries(const void *a, const void *b, void *userdata) {
	const struct validator *v = userdata;
	const struct entry *x = *(const struct entry *const *) a, *y = *(const struct entry *const *) b;
	int r = strcmp(v->p->attachments[x->attachment].cgroup, v->p->attachments[y->attachment].cgroup);

	if (r != 0)
		return r;
	if (x->filter->direction != y->filter->direction)
		return x->filter->direction < y->filter->direction ? -1 : 1;
	if (x->attachment != y->attachment)
		return x->attachment < y->attachment ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The smallest index with that name in a sorted name index, or n. */
static size_t first_named(const struct name_index *v, size_t n, const char *name) {
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && streq(v[lo].name, name) ? v[lo].index : n;
}

/* One cgroup (as written) and direction: nodes are its entries in the
 * order of the files. */
static int check_group(struct validator *v, const struct entry *const *nodes, size_t n) {
	_cleanup_free_ struct name_index *by_name = NULL;
	_cleanup_free_ struct edge *edges = NULL;
	unsigned d = nodes[0]->filter->direction;
	size_t n_edges = 0;
	const char *cgroup = v->p->attachments[nodes[0]->attachment].cgroup;

	for (size_t i = 0; i < n; i++) {
		const struct entry *e = nodes[i];
		const struct cgf_attachment *a = &v->p->attachments[e->attachment];
		size_t anchor = n;
		struct edge *edge;

		/* Within one list, each entry runs after the one before it
		 * (of the same direction), anchored or not. */
		if (i > 0 && nodes[i - 1]->attachment == e->attachment) {
			edge = array_append((void **) &edges, n_edges, sizeof(*edge));
			if (!edge)
				return -ENOMEM;
			*edge = (struct edge) { .from = i - 1, .to = i, .by = e };
			n_edges++;
		}
		if (e->ref->anchor == CGF_ANCHOR_NONE)
			continue;

		if (!lookup(v, e->ref->anchor_filter))
			continue; /* reported as unknown */
		if (streq(e->ref->anchor_filter, e->filter->name)) {
			error_at(v, e->ref->anchor_pos, "'%s' cannot be ordered relative to itself", e->filter->name);
			continue;
		}
		if (!by_name) {
			/* The first node of each name, by binary search: a
			 * scan per anchor would be quadratic in the group. */
			by_name = calloc(n + 1, sizeof(*by_name));
			if (!by_name)
				return -ENOMEM;
			for (size_t j = 0; j < n; j++)
				by_name[j] = (struct name_index) { nodes[j]->filter->name, j };
			qsort_safe(by_name, n, sizeof(*by_name), compare_name_index);
		}
		anchor = first_named(by_name, n, e->ref->anchor_filter);
		if (anchor == n) {
			error_at(v, e->ref->anchor_pos,
				 "%s: '%s' is not attached to cgroup '%s' %s; an anchor must be attached to the same "
				 "cgroup (written the same way) and direction",
				 cgf_anchor_to_string(e->ref->anchor), e->ref->anchor_filter, cgroup, dir_str(d));
			continue;
		}
		if (v->p->attachments[nodes[anchor]->attachment].preorder != a->preorder) {
			bool pre = a->preorder;

			error_at(v, e->ref->anchor_pos,
				 "'%s' is %spreorder and '%s' is %spreorder: the kernel runs preorder programs "
				 "in a pass of their own and cannot order them against the others",
				 e->filter->name, pre ? "" : "not ", e->ref->anchor_filter, pre ? "not " : "");
			note(v, nodes[anchor]->ref->pos, "'%s' is attached here", e->ref->anchor_filter);
			continue;
		}

		edge = array_append((void **) &edges, n_edges, sizeof(*edge));
		if (!edge)
			return -ENOMEM;
		if (e->ref->anchor == CGF_ANCHOR_BEFORE)
			*edge = (struct edge) { .from = i, .to = anchor, .by = e, .explicit = true };
		else
			*edge = (struct edge) { .from = anchor, .to = i, .by = e, .explicit = true };
		n_edges++;
	}

	return find_cycles(v, nodes, n, edges, n_edges, d);
}

static int check_ordering(struct validator *v) {
	_cleanup_free_ const struct entry **sorted = NULL;
	int r;

	sorted = calloc(v->n_entries + 1, sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < v->n_entries; i++)
		sorted[i] = &v->entries[i];
	qsort_r_safe(sorted, v->n_entries, sizeof(*sorted), compare_entries, v);

	for (size_t i = 0, j; i < v->n_entries; i = j) {
		const struct entry *e = sorted[i];

		for (j = i + 1; j < v->n_entries; j++)
			if (!streq(v->p->attachments[sorted[j]->attachment].cgroup, v->p->attachments[e->attachment].cgroup) ||
			    sorted[j]->filter->direction != e->filter->direction)
				break;
		r = check_group(v, sorted + i, j - i);
		if (r < 0)
			return r;
	}
	return 0;
}

int cgf_policy_validate(const struct cgf_policy *p, const struct cgf_features *features, struct cgf_diags *diags) {
	struct validator v = {
		.p = p,
		.features = features,
		.diags = diags,
	};
	int r;

	v.sides = calloc(p->n_attachments + 1, sizeof(*v.sides));
	v.patterns = calloc(p->n_attachments + 1, sizeof(*v.patterns));
	if (!v.sides || !v.patterns) {
		r = -ENOMEM;
		goto finish;
	}

	r = index_filters(&v);
	if (r < 0)
		goto finish;
	for (size_t i = 0; i < v.n_names; i++)
		check_filter(&v, v.names[i]);
	r = check_prog_names(&v);
	if (r < 0)
		goto finish;

	for (size_t i = 0; i < p->n_attachments; i++) {
		r = check_attachment(&v, i);
		if (r < 0)
			goto finish;
	}
	r = check_pairs(&v);
	if (r < 0)
		goto finish;
	r = check_ordering(&v);
	if (r < 0)
		goto finish;
	r = cgf_diags_status(diags);

finish:
	for (size_t i = 0; i < p->n_attachments; i++) {
		for (unsigned d = 0; v.sides && d < _CGF_DIRECTION_MAX; d++)
			free(v.sides[i][d].entries);
		if (v.patterns)
			cgf_pattern_free(v.patterns[i]);
	}
	free(v.sides);
	free(v.patterns);
	free(v.entries);
	free(v.names);
	return r;
}
