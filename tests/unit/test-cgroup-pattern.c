/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup patterns: syntax, matching, and the two questions the validator
 * asks about patterns alone (may they meet, may one lie above the other),
 * from tables, then against brute force over a small alphabet.
 */
#include <fnmatch.h>

#include "cgroup-pattern.h"
#include "macro.h"
#include "tests.h"

static void test_check(struct test_state *t) {
	static const struct {
		const char *pattern;
		bool valid;
	} table[] = {
		{ ".", true },
		{ "system.slice", true },
		{ "system.slice/nginx.service", true },
		{ "system.slice/system-systemd\\x2dfsck.slice", true }, /* backslash is ordinary */
		{ "machine.slice/*", true },
		{ "machine.slice/web-?.scope", true },
		{ "machine.slice/[a-c]*", true },
		{ "machine.slice/[!a-c]*", true },
		{ "machine.slice/[]]", true },
		{ "machine.slice/[[:digit:]]", true },
		{ "**", true },
		{ "machine.slice/**", true },
		{ "**/payload", true },
		{ "a/**/b", true },
		{ "", false },
		{ "/system.slice", false },
		{ "system.slice/", false },
		{ "system.slice//x", false },
		{ "./system.slice", false },
		{ "system.slice/.", false },
		{ "system.slice/..", false },
		{ "../x", false },
		{ "a**", false },
		{ "***", false },
		{ "a/[abc", false },
		{ "a/[[:nope:]]", false },
		{ "a/[[.a.]]", false },
		{ "a/\tb", false },
	};
	char long_name[300];

	for (size_t i = 0; i < ELEMENTSOF(table); i++) {
		const char *why = cgf_cgroup_pattern_check(table[i].pattern);

		CHECK(t, !why == table[i].valid, "'%s': %s", table[i].pattern, why ?: "valid");
	}

	memset(long_name, 'x', 256);
	long_name[256] = 0;
	CHECK(t, cgf_cgroup_pattern_check(long_name) != NULL, "component of 256 characters");
	long_name[255] = 0;
	CHECK(t, cgf_cgroup_pattern_check(long_name) == NULL, "component of 255 characters");

	CHECK(t, !cgf_tenant_pattern_check("web-1.scope"), "tenant name");
	CHECK(t, !cgf_tenant_pattern_check("web-*"), "tenant glob");
	CHECK(t, cgf_tenant_pattern_check("a/b"), "tenant with '/'");
	CHECK(t, cgf_tenant_pattern_check("**"), "tenant '**'");
	CHECK(t, cgf_tenant_pattern_check(""), "empty tenant");
	CHECK(t, cgf_tenant_pattern_check("."), "tenant '.'");
}

static void test_match(struct test_state *t) {
	static const struct {
		const char *pattern, *path;
		bool match;
	} table[] = {
		{ ".", ".", true },
		{ ".", "", true },
		{ ".", "a", false },
		{ "a", "a", true },
		{ "a", "a/b", false },
		{ "a/*", "a/b", true },
		{ "a/*", "a", false },
		{ "a/*", "a/b/c", false },
		{ "*", "a", true },
		{ "a/**", "a", true },
		{ "a/**", "a/b/c", true },
		{ "a/**", "b", false },
		{ "**", ".", true },
		{ "**", "x/y/z", true },
		{ "**/payload", "payload", true },
		{ "**/payload", "m/web/payload", true },
		{ "**/payload", "m/web/payload/x", false },
		{ "a/**/b", "a/b", true },
		{ "a/**/b", "a/x/y/b", true },
		{ "a/**/b", "a/x/y/c", false },
		{ "m/web-?.scope", "m/web-1.scope", true },
		{ "m/web-?.scope", "m/web-10.scope", false },
		{ "m/[a-c]*", "m/banana", true },
		{ "m/[!a-c]*", "m/banana", false },
		{ "s/x\\x2dy", "s/x\\x2dy", true }, /* FNM_NOESCAPE */
	};
	static const struct {
		const char *pattern, *path;
		bool reach;
	} reach[] = {
		{ "a/*/c", ".", true },
		{ "a/*/c", "a", true },
		{ "a/*/c", "a/x", true },
		{ "a/*/c", "a/x/c", true },
		{ "a/*/c", "a/x/c/deep/er", true }, /* below a match: its subtree */
		{ "a/*/c", "b", false },
		{ "a/*/c", "a/x/d", false },
		{ "a/**/c", "a/x/y/z", true },
		{ "a/**/c", "b/x", false },
		{ ".", "any/where", true },
		{ "m/web-?", "m/web-10", false },
	};

	for (size_t i = 0; i < ELEMENTSOF(table); i++)
		CHECK(t, cgf_cgroup_pattern_match(table[i].pattern, table[i].path) == table[i].match,
		      "'%s' vs '%s'", table[i].pattern, table[i].path);
	for (size_t i = 0; i < ELEMENTSOF(reach); i++)
		CHECK(t, cgf_cgroup_pattern_may_reach(reach[i].pattern, reach[i].path) == reach[i].reach,
		      "reach '%s' from '%s'", reach[i].pattern, reach[i].path);
}

static void test_relations(struct test_state *t) {
	static const struct {
		const char *a, *b;
		bool overlap, a_above_b;
	} table[] = {
		{ "a", "a", true, false },
		{ "a", "b", false, false },
		{ "a", "a/b", false, true },
		{ "a/b", "a", false, false },
		{ ".", "a", false, true },
		{ ".", ".", true, false },
		{ "a/*", "a/b", true, false },
		{ "a/*", "a/b/c", false, true },
		{ "a/web-*", "a/db-*", false, false },
		{ "a/web-*", "a/*-db", true, false },   /* web-db */
		{ "a/web-*", "a/*/payload", false, true },
		{ "a/web-*", "a/db-*/payload", false, false },
		{ "a/[a-c]x", "a/[d-f]x", false, false },
		{ "a/[a-c]x", "a/[c-f]x", true, false },
		{ "a/?", "a/xy", false, false },
		{ "a/??", "a/x*", true, false },
		{ "a/**", "a", true, false },            /* matches a, a/b, ...: none above a */
		{ "a/**", "b/c", false, false },
		{ "a/**", "a/**", true, true },          /* meets itself one level down */
		{ "a/*", "a/*", true, false },
		{ "**", "x", true, true },
		{ "x", "**", true, true },               /* the second matches x and x/y */
		{ "**/p", "a/p/q", false, true },
		{ "m/*/p", "m/**/p", true, true },       /* m/x/p lies above m/x/p/p */
		{ "m/*/p", "m/**/p/q", false, true },
	};

	for (size_t i = 0; i < ELEMENTSOF(table); i++) {
		CHECK(t, cgf_cgroup_patterns_may_overlap(table[i].a, table[i].b) == table[i].overlap,
		      "overlap '%s' '%s'", table[i].a, table[i].b);
		CHECK(t, cgf_cgroup_patterns_may_overlap(table[i].b, table[i].a) == table[i].overlap,
		      "overlap symmetric '%s' '%s'", table[i].b, table[i].a);
		CHECK(t, cgf_cgroup_pattern_may_be_ancestor(table[i].a, table[i].b) == table[i].a_above_b,
		      "'%s' above '%s'", table[i].a, table[i].b);
	}

	CHECK(t, cgf_component_globs_may_overlap("web-*", "*-db"), "component globs meet");
	CHECK(t, !cgf_component_globs_may_overlap("web-*", "db-*"), "component globs apart");
	CHECK(t, cgf_component_globs_may_overlap("*", ""), "'*' matches the empty string");
}

/*
 * Brute force: every pattern and path built from a small alphabet.  The
 * relations must agree exactly with what matching finds on the paths
 * enumerated (short patterns always have short witnesses).
 */
static const char *const comps[] = { "a", "b", "ab", "*", "a*", "?", "[ab]", "**" };
static const char *const names[] = { "a", "b", "ab", "ba", "aa" };

static void build_patterns(char out[][32], size_t *n) {
	*n = 0;
	strcpy(out[(*n)++], ".");
	for (size_t i = 0; i < ELEMENTSOF(comps); i++) {
		strcpy(out[(*n)++], comps[i]);
		for (size_t j = 0; j < ELEMENTSOF(comps); j++)
			snprintf(out[(*n)++], 32, "%s/%s", comps[i], comps[j]);
	}
}

static void build_paths(char out[][32], size_t *n) {
	*n = 0;
	strcpy(out[(*n)++], ".");
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		strcpy(out[(*n)++], names[i]);
		for (size_t j = 0; j < ELEMENTSOF(names); j++) {
			snprintf(out[(*n)++], 32, "%s/%s", names[i], names[j]);
			for (size_t k = 0; k < ELEMENTSOF(names); k++)
				snprintf(out[(*n)++], 32, "%s/%s/%s", names[i], names[j], names[k]);
		}
	}
}

static bool is_strict_prefix(const char *p, const char *q) {
	size_t n = strlen(p);

	if (streq(p, "."))
		return !streq(q, ".");
	return strncmp(p, q, n) == 0 && q[n] == '/';
}

static void test_brute_force(struct test_state *t) {
	static char patterns[128][32], paths[256][32];
	static bool m[128][256];
	size_t np, nq;
	unsigned disagree = 0;

	build_patterns(patterns, &np);
	build_paths(paths, &nq);
	REQUIRE(np <= 128 && nq <= 256);

	for (size_t i = 0; i < np; i++) {
		REQUIRE(!cgf_cgroup_pattern_check(patterns[i]));
		for (size_t j = 0; j < nq; j++)
			m[i][j] = cgf_cgroup_pattern_match(patterns[i], paths[j]);
	}

	for (size_t i = 0; i < np; i++)
		for (size_t k = 0; k < np; k++) {
			bool overlap = false, above = false;

			for (size_t j = 0; j < nq; j++) {
				if (!m[i][j])
					continue;
				for (size_t l = 0; l < nq; l++) {
					if (!m[k][l])
						continue;
					overlap = overlap || j == l;
					above = above || is_strict_prefix(paths[j], paths[l]);
				}
			}
			if (cgf_cgroup_patterns_may_overlap(patterns[i], patterns[k]) != overlap ||
			    cgf_cgroup_pattern_may_be_ancestor(patterns[i], patterns[k]) != above) {
				if (disagree++ < 10)
					fprintf(stderr, "'%s' '%s': overlap %d/%d above %d/%d\n", patterns[i],
						patterns[k], cgf_cgroup_patterns_may_overlap(patterns[i], patterns[k]),
						overlap, cgf_cgroup_pattern_may_be_ancestor(patterns[i], patterns[k]),
						above);
			}
		}
	CHECK(t, disagree == 0, "%u pattern pairs disagree with brute force", disagree);

	/* Reach: a cgroup at or below the path matches, or one above it
	 * does.  Exact for paths of one component (a witness below one
	 * needs at most three); for deeper ones it must never say no where
	 * a witness exists (the walk would miss a cgroup it needs). */
	disagree = 0;
	for (size_t i = 0; i < np; i++)
		for (size_t j = 0; j < nq; j++) {
			bool bf = false, got = cgf_cgroup_pattern_may_reach(patterns[i], paths[j]);
			bool shallow = !strchr(paths[j], '/');

			for (size_t l = 0; l < nq && !bf; l++)
				bf = m[i][l] && (l == j || is_strict_prefix(paths[j], paths[l]) ||
						 is_strict_prefix(paths[l], paths[j]));
			if (shallow ? got != bf : bf && !got) {
				if (disagree++ < 10)
					fprintf(stderr, "reach '%s' '%s': %d, brute force %d\n", patterns[i], paths[j],
						got, bf);
			}
		}
	CHECK(t, disagree == 0, "%u pattern/path pairs: reach disagrees with brute force", disagree);

	/* Matching agrees with fnmatch(3) on single components. */
	for (size_t i = 0; i < ELEMENTSOF(comps); i++)
		for (size_t j = 0; j < ELEMENTSOF(names); j++)
			if (!streq(comps[i], "**"))
				CHECK(t, cgf_cgroup_pattern_match(comps[i], names[j]) ==
						 (fnmatch(comps[i], names[j], FNM_PATHNAME | FNM_NOESCAPE) == 0),
				      "'%s' '%s'", comps[i], names[j]);
}

int main(void) {
	struct test_state t = {};

	test_check(&t);
	test_match(&t);
	test_relations(&t);
	test_brute_force(&t);
	return test_finish(&t, "cgroup patterns");
}
