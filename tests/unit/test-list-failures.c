/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The failed lists of a reconcile: a list keeps its first failure, the
 * -ESTALE ones can be forgotten, attempts are counted against the last
 * reconcile, and the reload verdict stays one bounded line however many
 * lists failed and however long their cgroups' names are.
 */
#include <errno.h>

#include "list-failures.h"
#include "tests.h"

static void test_add_find(struct test_state *t) {
	struct cgf_list_failures f = {}, previous = {};

	REQUIRE(cgf_list_failures_add(&f, "a", CGF_EGRESS, -EBUSY, "attach filter 'x' to a egress: busy") == 0);
	REQUIRE(cgf_list_failures_add(&f, "a", CGF_EGRESS, -EPERM, "later") == 0);
	REQUIRE(cgf_list_failures_add(&f, "a", CGF_INGRESS, -ESTALE, NULL) == 0);
	REQUIRE(cgf_list_failures_add(&f, "b", CGF_EGRESS, -ENOSPC, NULL) == 0);
	CHECK(t, f.n == 3, "three lists, got %zu", f.n);
	CHECK(t, cgf_list_failures_find(&f, "a", CGF_EGRESS)->error == -EBUSY, "the first failure stays");
	CHECK_STREQ(t, cgf_list_failures_find(&f, "b", CGF_EGRESS)->message, strerror(ENOSPC),
		    "no message: strerror's");
	CHECK(t, !cgf_list_failures_find(&f, "b", CGF_INGRESS), "b ingress did not fail");

	/* Attempts: one more than the same list had before. */
	REQUIRE(cgf_list_failures_add(&previous, "b", CGF_EGRESS, -ENOSPC, NULL) == 0);
	previous.items[0].attempts = 4;
	cgf_list_failures_count_attempts(&f, &previous);
	CHECK(t, cgf_list_failures_find(&f, "b", CGF_EGRESS)->attempts == 5, "b egress: 5th attempt");
	CHECK(t, cgf_list_failures_find(&f, "a", CGF_EGRESS)->attempts == 1, "a egress: first");

	cgf_list_failures_forget_error(&f, -ESTALE);
	CHECK(t, f.n == 2 && !cgf_list_failures_find(&f, "a", CGF_INGRESS), "-ESTALE forgotten");
	CHECK(t, cgf_list_failures_find(&f, "b", CGF_EGRESS) != NULL, "the others kept");
	cgf_list_failures_done(&f);
	cgf_list_failures_done(&previous);
}

static void test_cover_plan(struct test_state *t) {
	struct cgf_list_failures f = {};
	struct cgf_action actions[2] = {
		{ .kind = CGF_ACTION_ATTACH, .cgroup = "a", .direction = CGF_EGRESS },
		{ .kind = CGF_ACTION_DETACH, .cgroup = "b", .direction = CGF_EGRESS },
	};
	struct cgf_plan plan = { .actions = actions, .n_actions = 2 };

	CHECK(t, cgf_list_failures_cover_plan(&f, &(struct cgf_plan) {}), "an empty plan is covered");
	REQUIRE(cgf_list_failures_add(&f, "a", CGF_EGRESS, -EBUSY, NULL) == 0);
	CHECK(t, !cgf_list_failures_cover_plan(&f, &plan), "b egress did not fail: not covered");
	REQUIRE(cgf_list_failures_add(&f, "b", CGF_EGRESS, -EBUSY, NULL) == 0);
	CHECK(t, cgf_list_failures_cover_plan(&f, &plan), "both failed: covered");
	cgf_list_failures_done(&f);
}

static void test_verdict(struct test_state *t) {
	struct cgf_list_failures f = {};
	_cleanup_free_ char *one = NULL, *many = NULL, *cut = NULL;
	char name[64], huge[5000];

	REQUIRE(cgf_list_failures_add(&f, "pods/a", CGF_EGRESS, -EBUSY, "x") == 0);
	one = cgf_list_failures_verdict(&f);
	CHECK_STREQ(t, one, "the kernel refused 1 list: pods/a egress: Device or resource busy", "one list");

	/* A name as long as a path may be, with a multi-byte character at
	 * the cut and a newline in it: cut whole, and still one line once
	 * the verdict's writer escapes it. */
	memset(huge, 'x', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	memcpy(huge + 127, "\xc3\xa9", 2);
	huge[10] = '\n';
	REQUIRE(cgf_list_failures_add(&f, huge, CGF_INGRESS, -EPERM, "y") == 0);
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "t/%d", i);
		REQUIRE(cgf_list_failures_add(&f, name, CGF_EGRESS, -ENOSPC, NULL) == 0);
	}
	many = cgf_list_failures_verdict(&f);
	REQUIRE(many);
	CHECK(t, strlen(many) < CGF_LIST_FAILURES_VERDICT_MAX, "bounded: %zu bytes", strlen(many));
	CHECK(t, strncmp(many, "the kernel refused 202 lists: pods/a egress: Device or resource busy; xxxxxxxxxx\n", 81) == 0,
	      "the count, then the first: %.100s", many);
	CHECK(t, strstr(many, "xxx...") && !strstr(many, "\xc3"), "the long name cut before its é: %s", many);
	CHECK(t, strstr(many, " ingress: Operation not permitted; t/0 egress: No space left on device; and 199 more") != NULL,
	      "three named, the rest counted: %s", many);

	cut = cgf_truncate_utf8("ab\xc3\xa9", 3);
	CHECK_STREQ(t, cut, "ab...", "a character is never cut in two");
	cgf_list_failures_done(&f);
}

int main(void) {
	struct test_state t = {};

	test_add_find(&t);
	test_cover_plan(&t);
	test_verdict(&t);
	return test_finish(&t, "test-list-failures");
}
