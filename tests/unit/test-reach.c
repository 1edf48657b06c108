/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The reach (reach.h): patterns once each, the record round-trips, a
 * damaged or foreign record is refused (the daemon then walks the whole
 * host), and the walk's question is answered per pattern.
 */
#include <errno.h>
#include <stdio.h>

#include "reach.h"
#include "tests.h"

static void test_add_and_enters(struct test_state *t) {
	struct cgf_reach r = {}, other = {};

	REQUIRE(cgf_reach_add(&r, "a/*/c") == 0);
	REQUIRE(cgf_reach_add(&r, "a/*/c") == 0);
	REQUIRE(cgf_reach_add(&other, "m/**/x") == 0);
	REQUIRE(cgf_reach_add(&other, "a/*/c") == 0);
	REQUIRE(cgf_reach_add_reach(&r, &other) == 0);
	CHECK(t, r.n == 2 && streq(r.patterns[0], "a/*/c") && streq(r.patterns[1], "m/**/x"),
	      "each pattern once, in the order added: %zu", r.n);
	CHECK(t, cgf_reach_enters(".", &r) && cgf_reach_enters("a", &r) && cgf_reach_enters("a/b/c/d", &r) &&
		  cgf_reach_enters("m/1/2/3", &r),
	      "enters the way to a match, a match's subtree and what '**' spans");
	CHECK(t, !cgf_reach_enters("b", &r) && !cgf_reach_enters("a/b/d", &r), "enters nothing else");
	cgf_reach_done(&other);
	CHECK(t, !cgf_reach_enters(".", &other), "an empty reach enters nothing (not even the root's children)");
	for (int i = 0; i < CGF_REACH_PATTERNS_MAX + 1; i++) {
		char p[32];
		int k;

		snprintf(p, sizeof(p), "p%d", i);
		k = cgf_reach_add(&other, p);
		if (i < CGF_REACH_PATTERNS_MAX)
			REQUIRE(k == 0);
		else
			CHECK(t, k == -E2BIG, "pattern %d: -E2BIG, got %d", i, k);
	}
	cgf_reach_done(&other);
	cgf_reach_done(&r);
}

static void test_record(struct test_state *t) {
	struct cgf_reach r = {}, back = {};
	_cleanup_free_ char *text = NULL;
	static const char *const bad[] = {
		"",
		"cgfilterd-reach 2\na\n",
		"cgfilterd-reach 1\na",             /* cut */
		"cgfilterd-reach 1\n/abs\n",
		"cgfilterd-reach 1\na/../b\n",
		"cgfilterd-reach 1\n\n",            /* an empty pattern */
		"cgfilterd-reach 1\na\x1b[2J\n",
		"cgfilterd-pending 1\nlists\t0\n",
	};

	REQUIRE(cgf_reach_add(&r, ".") == 0);
	REQUIRE(cgf_reach_add(&r, "machine.slice/*.scope") == 0);
	REQUIRE(cgf_reach_format(&r, &text) == 0);
	CHECK(t, streq(text, "cgfilterd-reach 1\n.\nmachine.slice/*.scope\n"), "the file: %s", text);
	CHECK(t, cgf_reach_parse(text, &back) == 0 && back.n == 2 && streq(back.patterns[0], ".") &&
		  streq(back.patterns[1], "machine.slice/*.scope"),
	      "round trip");
	cgf_reach_done(&back);
	CHECK(t, cgf_reach_parse("cgfilterd-reach 1\n", &back) == 0 && back.n == 0, "an empty reach is a record");
	cgf_reach_done(&back);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		int k = cgf_reach_parse(bad[i], &back);

		CHECK(t, k == -EBADMSG && back.n == 0, "bad record %zu refused: %d", i, k);
	}
	cgf_reach_done(&r);
}

int main(void) {
	struct test_state t = {};

	test_add_and_enters(&t);
	test_record(&t);
	return test_finish(&t, "reach");
}
