/* SPDX-License-Identifier: GPL-2.0-only */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>

#include "cgroup-pattern.h"
#include "macro.h"
#include "util.h"

#define NAME_MAX_CGROUP 255

/* One element of a compiled component glob: a set of bytes (a literal,
 * '?' or a bracket expression) or a star. */
struct ctok {
	bool star;
	uint8_t set[32];
};

static void set_add(uint8_t set[32], unsigned c) {
	set[c >> 3] |= 1u << (c & 7);
}

static bool set_has(const uint8_t set[32], unsigned c) {
	return set[c >> 3] & (1u << (c & 7));
}

static bool sets_intersect(const uint8_t a[32], const uint8_t b[32]) {
	for (unsigned i = 0; i < 32; i++)
		if (a[i] & b[i])
			return true;
	return false;
}

static bool set_empty(const uint8_t set[32]) {
	for (unsigned i = 0; i < 32; i++)
		if (set[i])
			return false;
	return true;
}

static const struct {
	const char *name;
	int (*is)(int c);
} char_classes[] = {
	{ "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank }, { "cntrl", iscntrl },
	{ "digit", isdigit }, { "graph", isgraph }, { "lower", islower }, { "print", isprint },
	{ "punct", ispunct }, { "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
};

enum {
	BRACKET_UNTERMINATED = -1,
	BRACKET_BAD_CLASS = -2,
	BRACKET_COLLATING = -3,
};

/*
 * Parses the bracket expression that starts after the '[' at s[i], as
 * fnmatch(3) does in the C locale, into set (bytes 1..255 minus '/', since
 * FNM_PATHNAME never lets a bracket match a slash).  Sets *ret_end to the
 * index after the closing ']'.
 */
static int parse_bracket(const char *s, size_t len, size_t i, uint8_t set[32], size_t *ret_end) {
	uint8_t raw[32] = {};
	bool negate = false, first = true;

	if (i < len && (s[i] == '!' || s[i] == '^')) {
		negate = true;
		i++;
	}
	for (;;) {
		unsigned char c, hi;

		if (i >= len)
			return BRACKET_UNTERMINATED;
		c = s[i];
		if (c == ']' && !first)
			break;
		first = false;

		if (c == '[' && i + 1 < len && (s[i + 1] == '.' || s[i + 1] == '='))
			return BRACKET_COLLATING;
		if (c == '[' && i + 1 < len && s[i + 1] == ':') {
			const char *name = s + i + 2, *end;
			bool found = false;

			end = memchr(name, ':', len - (name - s));
			if (!end || (size_t) (end - s) + 1 >= len || end[1] != ']')
				return BRACKET_BAD_CLASS;
			for (size_t k = 0; k < ELEMENTSOF(char_classes); k++) {
				if (strlen(char_classes[k].name) != (size_t) (end - name) ||
				    strncmp(char_classes[k].name, name, end - name) != 0)
					continue;
				for (unsigned b = 1; b < 256; b++)
					if (char_classes[k].is((int) b))
						set_add(raw, b);
				found = true;
			}
			if (!found)
				return BRACKET_BAD_CLASS;
			i = end - s + 2;
			continue;
		}

		/* A range "c-hi", unless the '-' is the last character. */
		if (i + 2 < len && s[i + 1] == '-' && s[i + 2] != ']') {
			hi = s[i + 2];
			for (unsigned b = c; b <= hi; b++)
				set_add(raw, b);
			i += 3;
			continue;
		}
		set_add(raw, c);
		i++;
	}

	memset(set, 0, 32);
	for (unsigned b = 1; b < 256; b++)
		if (b != '/' && set_has(raw, b) != negate)
			set_add(set, b);
	*ret_end = i + 1;
	return 0;
}

/* Compiles one component glob; an unterminated '[' is a literal, as in
 * fnmatch(3) (cgf_cgroup_pattern_check() refuses it anyway).  Returns the
 * number of tokens, or -1 when out of memory. */
static ssize_t comp_compile(const char *s, size_t len, struct ctok **ret) {
	struct ctok *t;
	size_t n = 0;

	t = calloc(len ? len : 1, sizeof(*t));
	if (!t)
		return -1;

	for (size_t i = 0; i < len;) {
		struct ctok *k = &t[n++];
		size_t end;

		switch (s[i]) {
		case '*':
			k->star = true;
			while (i < len && s[i] == '*')
				i++;
			break;
		case '?':
			for (unsigned b = 1; b < 256; b++)
				if (b != '/')
					set_add(k->set, b);
			i++;
			break;
		case '[':
			if (parse_bracket(s, len, i + 1, k->set, &end) >= 0) {
				i = end;
				break;
			}
			_fallthrough_;
		default:
			set_add(k->set, (unsigned char) s[i]);
			i++;
		}
	}
	*ret = t;
	return n;
}

/* A table of booleans for a dynamic programme: on the stack when small
 * (the usual case: components and paths are short), else allocated.
 * NULL when out of memory. */
#define DP_STACK 1024
static bool *dp_table(bool stack[static DP_STACK], size_t rows, size_t cols, bool **ret_heap) {
	*ret_heap = NULL;
	if (cols != 0 && rows > SIZE_MAX / cols)
		return NULL;
	if (rows * cols <= DP_STACK) {
		memset(stack, 0, rows * cols);
		return stack;
	}
	*ret_heap = calloc(rows * cols, sizeof(bool));
	return *ret_heap;
}

/* May some string match both token lists?  A dynamic programme over the
 * pairs of positions, from the ends: ok(i, j) means that some string is
 * matched by a[i..] and by b[j..]. */
static bool ctoks_overlap(const struct ctok *a, size_t n, const struct ctok *b, size_t m) {
	_cleanup_free_ bool *heap = NULL;
	bool stack[DP_STACK], *ok;
	size_t w = m + 1;

	ok = dp_table(stack, n + 1, w, &heap);
	if (!ok)
		return true; /* out of memory: "may" */

	for (size_t i = n + 1; i-- > 0;)
		for (size_t j = m + 1; j-- > 0;) {
			bool v = false;

			if (i == n && j == m)
				v = true;
			if (!v && i < n && a[i].star)
				/* a's star matches nothing more, or absorbs
				 * whatever b[j] matches (a byte, or b's star
				 * ending first: covered by the symmetric case). */
				v = ok[(i + 1) * w + j] ||
				    (j < m && (b[j].star || !set_empty(b[j].set)) && ok[i * w + j + 1]);
			if (!v && j < m && b[j].star)
				v = ok[i * w + j + 1] ||
				    (i < n && (a[i].star || !set_empty(a[i].set)) && ok[(i + 1) * w + j]);
			if (!v && i < n && j < m && !a[i].star && !b[j].star)
				v = sets_intersect(a[i].set, b[j].set) && ok[(i + 1) * w + j + 1];
			ok[i * w + j] = v;
		}
	return ok[0];
}

bool cgf_component_globs_may_overlap(const char *a, const char *b) {
	_cleanup_free_ struct ctok *ta = NULL, *tb = NULL;
	ssize_t na, nb;

	na = comp_compile(a, strlen(a), &ta);
	nb = comp_compile(b, strlen(b), &tb);
	if (na < 0 || nb < 0)
		return true;
	return ctoks_overlap(ta, na, tb, nb);
}

bool cgf_pattern_is_glob(const char *pattern) {
	return strpbrk(pattern, "*?[");
}

static bool is_root(const char *p) {
	return streq(p, ".") || streq(p, "");
}

static const char *component_check(const char *c, size_t len, bool allow_dstar) {
	if (len == 0)
		return "empty path component (a doubled or trailing '/')";
	if (len == 1 && c[0] == '.')
		return "'.' is only allowed as the whole path, meaning the root cgroup";
	if (len == 2 && c[0] == '.' && c[1] == '.')
		return "'..' is not allowed";
	if (len == 2 && c[0] == '*' && c[1] == '*')
		return allow_dstar ? NULL : "a tenant is one path component, and '**' spans several";
	if (len > NAME_MAX_CGROUP)
		return "a path component is longer than 255 characters";
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = c[i];
		uint8_t set[32];
		size_t end;

		if (ch < 0x20 || ch == 0x7f)
			return "control characters are not allowed";
		if (ch == '*' && i + 1 < len && c[i + 1] == '*')
			return "'**' must be a whole path component";
		if (ch != '[')
			continue;
		switch (parse_bracket(c, len, i + 1, set, &end)) {
		case BRACKET_UNTERMINATED:
			return "unterminated '[' (a character class needs a closing ']')";
		case BRACKET_BAD_CLASS:
			return "unknown character class in '[...]'";
		case BRACKET_COLLATING:
			return "collating symbols '[.' and equivalence classes '[=' are not supported";
		}
		i = end - 1;
	}
	return NULL;
}

const char *cgf_cgroup_pattern_check(const char *pattern) {
	const char *p = pattern;

	if (streq(pattern, "."))
		return NULL;
	if (pattern[0] == 0)
		return "the path is empty; write '.' for the root cgroup";
	if (pattern[0] == '/')
		return "write the path relative to the cgroup2 mount, without a leading '/'";

	for (;;) {
		const char *slash = strchr(p, '/'), *why;
		size_t len = slash ? (size_t) (slash - p) : strlen(p);

		why = component_check(p, len, true);
		if (why)
			return why;
		if (!slash)
			return NULL;
		p = slash + 1;
	}
}

const char *cgf_tenant_pattern_check(const char *pattern) {
	if (strchr(pattern, '/'))
		return "a tenant is a direct child: one path component, without '/'";
	return component_check(pattern, strlen(pattern), false);
}

/* A pattern compiled to components: "**" or a component glob. */
struct ptok {
	bool dstar;
	bool literal; /* no glob characters: compared as a string */
	const char *raw; /* for fnmatch(): the component, NUL-terminated copy */
	struct ctok *toks;
	ssize_t n;
};

static void ptoks_free(struct ptok *t, size_t n) {
	for (size_t i = 0; t && i < n; i++) {
		free((char *) t[i].raw);
		free(t[i].toks);
	}
	free(t);
}

static int ptok_add(struct ptok **t, size_t *n, const char *c, size_t len) {
	struct ptok *k;

	k = array_append((void **) t, *n, sizeof(**t));
	if (!k)
		return -1;
	(*n)++;
	k->raw = strndup_nul(c, len);
	if (!k->raw)
		return -1;
	k->dstar = streq(k->raw, "**");
	k->literal = !k->dstar && !cgf_pattern_is_glob(k->raw);
	if (!k->dstar) {
		k->n = comp_compile(c, len, &k->toks);
		if (k->n < 0)
			return -1;
	}
	return 0;
}

/* Splits a pattern into compiled components and appends "extra" ones (to
 * express "some strict descendant of": "*" then "**").  Returns the count
 * or -1 when out of memory. */
static ssize_t ptoks_compile(const char *pattern, const char *const *extra, size_t n_extra,
			     struct ptok **ret) {
	struct ptok *t = NULL;
	size_t n = 0;

	if (!is_root(pattern))
		for (const char *p = pattern;;) {
			const char *slash = strchr(p, '/');
			size_t len = slash ? (size_t) (slash - p) : strlen(p);

			if (ptok_add(&t, &n, p, len) < 0)
				goto oom;
			if (!slash)
				break;
			p = slash + 1;
		}
	for (size_t i = 0; i < n_extra; i++)
		if (ptok_add(&t, &n, extra[i], strlen(extra[i])) < 0)
			goto oom;

	*ret = t;
	return n;
oom:
	ptoks_free(t, n);
	return -1;
}

/* The same programme one level up: components instead of bytes, "**"
 * instead of '*'.  A plain component always matches some name (we do not
 * look for globs that match nothing: "may" errs towards yes). */
static bool comps_overlap(const struct ptok *a, const struct ptok *b) {
	size_t la = strlen(a->raw), lb = strlen(b->raw);

	if (a->literal && b->literal)
		return streq(a->raw, b->raw);

	/* Plain characters at either end must agree: "t1-*" and "t2-*"
	 * part at once, without the programme. */
	for (size_t i = 0; i < la && i < lb && !strchr("*?[", a->raw[i]) && !strchr("*?[", b->raw[i]); i++)
		if (a->raw[i] != b->raw[i])
			return false;
	for (size_t i = 1; i <= la && i <= lb && !strchr("*?]", a->raw[la - i]) && !strchr("*?]", b->raw[lb - i]); i++)
		if (a->raw[la - i] != b->raw[lb - i])
			return false;

	return ctoks_overlap(a->toks, a->n, b->toks, b->n);
}

static bool ptoks_overlap(const struct ptok *a, size_t n, const struct ptok *b, size_t m) {
	_cleanup_free_ bool *heap = NULL;
	bool stack[DP_STACK], *ok;
	size_t w = m + 1;

	/* Fast answer for the common case, paths that part early: a
	 * position where both have a different plain name. */
	for (size_t i = 0; i < n && i < m && a[i].literal && b[i].literal; i++)
		if (!streq(a[i].raw, b[i].raw))
			return false;

	ok = dp_table(stack, n + 1, w, &heap);
	if (!ok)
		return true;

	for (size_t i = n + 1; i-- > 0;)
		for (size_t j = m + 1; j-- > 0;) {
			bool v = false;

			if (i == n && j == m)
				v = true;
			if (!v && i < n && a[i].dstar)
				v = ok[(i + 1) * w + j] || (j < m && ok[i * w + j + 1]);
			if (!v && j < m && b[j].dstar)
				v = ok[i * w + j + 1] || (i < n && ok[(i + 1) * w + j]);
			if (!v && i < n && j < m && !a[i].dstar && !b[j].dstar)
				v = comps_overlap(&a[i], &b[j]) && ok[(i + 1) * w + j + 1];
			ok[i * w + j] = v;
		}
	return ok[0];
}

struct cgf_pattern {
	struct ptok *toks;  /* the pattern */
	ssize_t n;
	struct ptok *below; /* the pattern, then "*" and "**": its strict descendants */
	ssize_t n_below;
};

struct cgf_pattern *cgf_pattern_free(struct cgf_pattern *p) {
	if (!p)
		return NULL;
	ptoks_free(p->toks, p->n > 0 ? p->n : 0);
	ptoks_free(p->below, p->n_below > 0 ? p->n_below : 0);
	free(p);
	return NULL;
}

int cgf_pattern_compile(const char *pattern, struct cgf_pattern **ret) {
	static const char *const below[] = { "*", "**" };
	struct cgf_pattern *p;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->n = ptoks_compile(pattern, NULL, 0, &p->toks);
	p->n_below = ptoks_compile(pattern, below, ELEMENTSOF(below), &p->below);
	if (p->n < 0 || p->n_below < 0) {
		cgf_pattern_free(p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

bool cgf_pattern_may_overlap(const struct cgf_pattern *a, const struct cgf_pattern *b) {
	return ptoks_overlap(a->toks, a->n, b->toks, b->n);
}

bool cgf_pattern_may_be_ancestor(const struct cgf_pattern *ancestor, const struct cgf_pattern *descendant) {
	return ptoks_overlap(ancestor->below, ancestor->n_below, descendant->toks, descendant->n);
}

static bool patterns_overlap(const char *a, const char *const *extra, size_t n_extra, const char *b) {
	struct ptok *ta = NULL, *tb = NULL;
	ssize_t na, nb;
	bool r = true;

	na = ptoks_compile(a, extra, n_extra, &ta);
	nb = ptoks_compile(b, NULL, 0, &tb);
	if (na >= 0 && nb >= 0)
		r = ptoks_overlap(ta, na, tb, nb);
	ptoks_free(ta, na > 0 ? na : 0);
	ptoks_free(tb, nb > 0 ? nb : 0);
	return r;
}

bool cgf_cgroup_patterns_may_overlap(const char *a, const char *b) {
	if (streq(a, b))
		return true;
	return patterns_overlap(a, NULL, 0, b);
}

bool cgf_cgroup_pattern_may_be_ancestor(const char *ancestor, const char *descendant) {
	static const char *const below[] = { "*", "**" };

	return patterns_overlap(ancestor, below, ELEMENTSOF(below), descendant);
}

/* The table of "pattern[i..] matches path[j..]", filled from the end.
 * reach: also true where the path ends first (a cgroup below it may
 * match the rest of the pattern) and where the pattern ends first (the
 * path lies below a match). */
static bool match_components(const char *pattern, const char *path, bool reach) {
	_cleanup_free_ bool *ok = NULL;
	struct ptok *t = NULL;
	_cleanup_free_ char **comps = NULL;
	_cleanup_free_ char *copy = NULL;
	size_t m = 0, w;
	ssize_t n;
	bool r = false;

	/* The path's components, split in a copy. */
	if (!is_root(path)) {
		copy = strdup(path);
		if (!copy)
			return false;
		for (char *p = copy, *slash;; p = slash + 1) {
			char **c = array_append((void **) &comps, m, sizeof(*comps));

			if (!c)
				return false;
			*c = p;
			m++;
			slash = strchr(p, '/');
			if (!slash)
				break;
			*slash = 0;
		}
	}

	n = ptoks_compile(pattern, NULL, 0, &t);
	if (n < 0)
		return false;
	w = m + 1;
	ok = calloc((n + 1) * w, sizeof(bool));
	if (ok) {
		for (size_t i = n + 1; i-- > 0;)
			for (size_t j = m + 1; j-- > 0;) {
				bool v = (i == (size_t) n && j == m) || (reach && (i == (size_t) n || j == m));

				if (!v && i < (size_t) n && t[i].dstar)
					v = ok[(i + 1) * w + j] || (j < m && ok[i * w + j + 1]);
				if (!v && i < (size_t) n && j < m && !t[i].dstar)
					v = fnmatch(t[i].raw, comps[j], FNM_PATHNAME | FNM_NOESCAPE) == 0 &&
					    ok[(i + 1) * w + j + 1];
				ok[i * w + j] = v;
			}
		r = ok[0];
	}
	ptoks_free(t, n);
	return r;
}

bool cgf_cgroup_pattern_match(const char *pattern, const char *path) {
	return match_components(pattern, path, false);
}

bool cgf_cgroup_pattern_may_reach(const char *pattern, const char *path) {
	return match_components(pattern, path, true);
}
