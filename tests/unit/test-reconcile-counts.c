/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's reconcile counts (reconcile-counts.h): counting, the file
 * written and read back, and every malformed file refused.
 */
#include <errno.h>

#include "reconcile-counts.h"
#include "tests.h"
#include "util.h"

/* The daemon's counts file: format, parse back, refuse what is not one. */
static void test_counts(struct test_state *t) {
	struct cgf_reconcile_counts c = {}, back;
	_cleanup_free_ char *text = NULL;
	static const char *const bad[] = {
		"",
		"cgfilterd-reconciles 2\n",
		"cgfilterd-reconciles 1\nlast\t1\nlast_success\t1\n", /* counts missing */
		"cgfilterd-reconciles 1\ncount\tfull\tsuccess\t-1\n",
		"cgfilterd-reconciles 1\ncount\tfull\tsuccess\t18446744073709551616\n",
	};

	cgf_reconcile_counts_add(&c, CGF_RECONCILE_FULL, CGF_RECONCILE_SUCCESS, 5);
	cgf_reconcile_counts_add(&c, CGF_RECONCILE_EVENT, CGF_RECONCILE_ERROR, 9);
	cgf_reconcile_counts_add(&c, CGF_RECONCILE_EVENT, CGF_RECONCILE_ERROR, 12);
	CHECK(t, c.last_usec == 12 && c.last_success_usec == 5, "times");
	REQUIRE(cgf_reconcile_counts_format(&c, &text) == 0);
	CHECK_STREQ(t, text,
		    "cgfilterd-reconciles 1\n"
		    "count\tfull\tsuccess\t1\ncount\tfull\tincomplete\t0\ncount\tfull\terror\t0\n"
		    "count\tevent\tsuccess\t0\ncount\tevent\tincomplete\t0\ncount\tevent\terror\t2\n"
		    "last\t12\nlast_success\t5\n",
		    "the counts file");
	CHECK(t, cgf_reconcile_counts_parse(text, &back) == 0 && memcmp(&back, &c, sizeof(c)) == 0, "read back");
	text[strlen(text) - 1] = 0;
	CHECK(t, cgf_reconcile_counts_parse(text, &back) == -EBADMSG, "a cut file");
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		CHECK(t, cgf_reconcile_counts_parse(bad[i], &back) == -EBADMSG, "bad counts file %zu", i);
}

int main(void) {
	struct test_state t = {};

	test_counts(&t);
	return test_finish(&t, "test-reconcile-counts");
}
