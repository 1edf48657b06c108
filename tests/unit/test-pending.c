/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's report of what it has not done (pending.h): the runtime
 * file round-trips, tenants' cgroup names cannot break a record, the
 * file stays bounded however many lists failed, a damaged file is
 * refused, and the table and the JSON show the one record.
 */
#include <errno.h>
#include <stdio.h>

#include "pending.h"
#include "status.h"
#include "tests.h"

static char *render_table(const struct cgf_pending *p) {
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	REQUIRE(f);
	REQUIRE(cgf_pending_render_table(p, f) == 0);
	REQUIRE(fclose(f) == 0);
	return text;
}

static char *render_json(const struct cgf_pending *p) {
	_cleanup_(cgf_json_freep) struct cgf_json *j = NULL;
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	REQUIRE(f);
	REQUIRE(cgf_json_new(f, 0, &j) == 0);
	cgf_pending_render_json(p, j);
	REQUIRE(cgf_json_finish(j) == 0);
	REQUIRE(fclose(f) == 0);
	return text;
}

static void test_round_trip(struct test_state *t) {
	struct cgf_list_failures f = {};
	struct cgf_cgroup_tree tree = { .n_skipped = 1001 };
	_cleanup_free_ char *text = NULL, *table = NULL, *json = NULL;
	_cleanup_(cgf_pending_freep) struct cgf_pending *p = NULL;

	REQUIRE(cgf_list_failures_add(&f, "pods/a\tb\nfake", CGF_EGRESS, -EBUSY,
				      "attach filter 'count' (prog 9) to pods/a\tb\nfake egress: Device or resource busy") == 0);
	REQUIRE(cgf_list_failures_add(&f, "host", CGF_INGRESS, -E2BIG, "filter 'r': too many") == 0);
	f.items[0].attempts = 3;
	for (size_t i = 0; i < CGF_CGROUP_TREE_SKIPPED_KEPT; i++) {
		tree.skipped[i].path = (char *) (i == 0 ? "u/deep\x1b[2J" : "u/long");
		tree.skipped[i].error = i == 0 ? -ELOOP : -ENAMETOOLONG;
	}
	REQUIRE(cgf_pending_format(&f, &tree, &text) == 0);
	CHECK(t, strncmp(text,
			 "cgfilterd-pending 1\nlists\t2\n"
			 "list\tegress\t3\t16\tpods/a\\x09b\\x0afake\tattach filter 'count' (prog 9) to pods/a\\x09b\\x0afake egress: Device or resource busy\n"
			 "list\tingress\t1\t7\thost\tfilter 'r': too many\n"
			 "unreachable\t1001\ncgroup\t40\tu/deep\\x1b[2J\ncgroup\t36\tu/long\n", 252) == 0,
	      "the file: %s", text);
	REQUIRE(cgf_pending_parse(text, &p) == 0);
	CHECK(t, p->n_lists_total == 2 && p->n_lists == 2, "two lists");
	CHECK_STREQ(t, p->lists[0].cgroup, "pods/a\\x09b\\x0afake", "escaped name back");
	CHECK(t, p->lists[0].direction == CGF_EGRESS && p->lists[0].attempts == 3 && p->lists[0].error == -EBUSY,
	      "direction, attempts, error");
	CHECK(t, p->lists[1].error == -E2BIG, "the second's error");
	CHECK(t, p->n_unreachable_total == 1001 && p->n_unreachable == CGF_CGROUP_TREE_SKIPPED_KEPT,
	      "1001 unreachable, 8 kept");
	CHECK(t, p->unreachable[0].error == -ELOOP, "too deep");

	table = render_table(p);
	CHECK(t, strncmp(table,
			 "\npending lists: 2 (retried with backoff)\n"
			 "  CGROUP               DIRECTION  STATE     ATTEMPTS  ERROR\n"
			 "  pods/a\\x09b\\x0afake  egress     retrying  3         attach filter", 168) == 0,
	      "the table: %s", table);
	CHECK(t, strstr(table, "\nunreachable cgroups: 1001 (the first 8); programs attached above them apply there\n"
			       "  u/deep\\x1b[2J: too deep\n  u/long: path too long\n") != NULL,
	      "the unreachable cgroups: %s", table);
	json = render_json(p);
	CHECK(t, strncmp(json,
			 "{\"pending_lists\":{\"count\":2,\"lists\":[{\"cgroup\":\"pods/a\\\\x09b\\\\x0afake\",\"direction\":\"egress\","
			 "\"state\":\"retrying\",\"attempts\":3,\"errno\":16,\"error\":\"attach filter", 157) == 0,
	      "the JSON: %s", json);
	CHECK(t, strstr(json, "\"unreachable_cgroups\":{\"count\":1001,\"cgroups\":[{\"path\":\"u/deep\\\\x1b[2J\",\"errno\":40,\"error\":\"too deep\"}") != NULL,
	      "the JSON's unreachable cgroups: %s", json);
	cgf_list_failures_done(&f);
}

static void test_nothing(struct test_state *t) {
	struct cgf_list_failures f = {};
	_cleanup_free_ char *text = NULL, *table = NULL;
	_cleanup_(cgf_pending_freep) struct cgf_pending *p = NULL;

	REQUIRE(cgf_pending_format(&f, NULL, &text) == 0);
	CHECK_STREQ(t, text, "cgfilterd-pending 1\nlists\t0\nunreachable\t0\n", "nothing pending");
	REQUIRE(cgf_pending_parse(text, &p) == 0);
	table = render_table(p);
	CHECK_STREQ(t, table, "", "nothing to show: no table");
}

static void test_bounded(struct test_state *t) {
	struct cgf_list_failures f = {};
	struct cgf_cgroup_tree tree = { .n_skipped = 5 };
	_cleanup_free_ char *text = NULL;
	_cleanup_(cgf_pending_freep) struct cgf_pending *p = NULL;
	char name[4200];

	/* Long names full of bytes that escape to four: still bounded. */
	memset(name, '\n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (int i = 0; i < 1000; i++) {
		name[0] = (char) ('a' + i % 26);
		name[1] = (char) ('a' + i / 26 % 26);
		name[2] = (char) ('a' + i / 676);
		REQUIRE(cgf_list_failures_add(&f, name, CGF_EGRESS, -EPERM, name) == 0);
	}
	for (size_t i = 0; i < 5; i++)
		tree.skipped[i] = (struct cgf_cgroup_skipped) { .path = name, .error = -EACCES };
	REQUIRE(cgf_pending_format(&f, &tree, &text) == 0);
	CHECK(t, strlen(text) <= CGF_PENDING_FILE_MAX, "%zu bytes <= %d", strlen(text), (int) CGF_PENDING_FILE_MAX);
	REQUIRE(cgf_pending_parse(text, &p) == 0);
	CHECK(t, p->n_lists_total == 1000 && p->n_lists == CGF_PENDING_LISTS_KEPT, "1000 lists, %d kept",
	      CGF_PENDING_LISTS_KEPT);
	CHECK(t, strlen(p->lists[0].cgroup) == 3 + 4 * (CGF_PENDING_TEXT_MAX - 3) + 3, "a name cut: %zu",
	      strlen(p->lists[0].cgroup));
	cgf_list_failures_done(&f);
}

static void test_refused(struct test_state *t) {
	static const char *const bad[] = {
		"",
		"cgfilterd-pending 2\nlists\t0\nunreachable\t0\n",
		"cgfilterd-pending 1\nlists\t0\n",                           /* truncated */
		"cgfilterd-pending 1\nlists\t0\nunreachable\t0",             /* no last newline */
		"cgfilterd-pending 1\nlists\t0\nlist\tegress\t1\t16\ta\tm\nunreachable\t0\n", /* more than counted */
		"cgfilterd-pending 1\nlists\t1\nlist\tsideways\t1\t16\ta\tm\nunreachable\t0\n",
		"cgfilterd-pending 1\nlists\t1\nlist\tegress\t1\t-16\ta\tm\nunreachable\t0\n",
		"cgfilterd-pending 1\nlists\t1\nlist\tegress\t1\t16\ta\tm\textra\nunreachable\t0\n",
		"cgfilterd-pending 1\nlists\t1\nlist\tegress\t1\t16\ta\nunreachable\t0\n",
		"cgfilterd-pending 1\nlists\t0\nunreachable\t1\ncgroup\tx\tp\n",
		"cgfilterd-pending 1\nlists\t0\nunreachable\t0\nlists\t0\n",
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		struct cgf_pending *p = NULL;
		int r = cgf_pending_parse(bad[i], &p);

		CHECK(t, r == -EBADMSG && !p, "bad file #%zu refused (%d)", i, r);
		cgf_pending_free(p);
	}
}

/* In the status record: "daemon" is null without a report. */
static void test_in_status(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = cgf_status_new();
	_cleanup_(cgf_json_freep) struct cgf_json *j = NULL;
	_cleanup_free_ char *text = NULL;
	size_t size = 0;
	FILE *f;

	REQUIRE(s);
	REQUIRE(cgf_pending_parse("cgfilterd-pending 1\nlists\t0\nunreachable\t3\n", &s->daemon) == 0);
	f = open_memstream(&text, &size);
	REQUIRE(f);
	REQUIRE(cgf_json_new(f, 0, &j) == 0);
	REQUIRE(cgf_status_render_json(s, j) == 0);
	REQUIRE(cgf_json_finish(j) == 0);
	REQUIRE(fclose(f) == 0);
	CHECK(t, strstr(text, ",\"daemon\":{\"pending_lists\":{\"count\":0,\"lists\":[]},"
			      "\"unreachable_cgroups\":{\"count\":3,\"cgroups\":[]}},") != NULL,
	      "the status JSON: %s", text);
}

int main(void) {
	struct test_state t = {};

	test_round_trip(&t);
	test_nothing(&t);
	test_bounded(&t);
	test_refused(&t);
	test_in_status(&t);
	return test_finish(&t, "test-pending");
}
