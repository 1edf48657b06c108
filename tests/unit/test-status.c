/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The status record: the builders (sorted insertion, copies, -EEXIST),
 * and both renderings of hand-built records as exact text: the table
 * (alignment, ancestors' programs, foreign ones, counters, programs not
 * in the effective list, unknown flags, a cgroup name with a newline) and
 * the JSON of the same record.
 */
#include <errno.h>

#include "json.h"
#include "state.h"
#include "status.h"
#include "unit-firewalls.h"
#include "tests.h"

static char *render_table(const struct cgf_status *s) {
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);

	REQUIRE(f);
	REQUIRE(cgf_status_render_table(s, f) == 0);
	REQUIRE(fclose(f) == 0);
	return out;
}

static char *render_json(const struct cgf_status *s, unsigned flags) {
	_cleanup_(cgf_json_freep) struct cgf_json *j = NULL;
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);

	REQUIRE(f);
	REQUIRE(cgf_json_new(f, flags, &j) == 0);
	REQUIRE(cgf_status_render_json(s, j) == 0);
	REQUIRE(cgf_json_finish(j) == 0);
	REQUIRE(fclose(f) == 0);
	return out;
}

/* A host: a base filter on the root, a web slice with a foreign preorder
 * program and ours, a child with an old unnamed program of someone else,
 * and a cgroup with an odd name and flags we do not know. */
static struct cgf_status *host(void) {
	const struct cgf_features patched = CGF_FEATURES_PATCHED;
	struct cgf_status *s = cgf_status_new();
	struct cgf_status_list *l;
	char name[16];
	const struct cgf_status_prog base = {
		.prog_id = 10, .prog_name = (char *) "cgf_base", .ours = true, .filter = (char *) "base",
		.identity = (char *) "base:1", .attach_flags = CGF_ATTACH_MULTI, .has_counters = true,
		.counters = { .pass_packets = 100, .pass_bytes = 6400, .drop_packets = 2, .drop_bytes = 128 },
		.enforce = CGF_STATUS_ENFORCED,
	};
	const struct cgf_status_prog acme = {
		.prog_id = 42, .prog_name = (char *) "acme_fw", .attach_flags = CGF_ATTACH_MULTI | CGF_ATTACH_PREORDER,
		.preorder = true,
	};
	struct cgf_status_prog web = {
		.prog_id = 51, .link_id = 8, .prog_name = name, .ours = true, .filter = (char *) "web",
		.identity = (char *) "web:2", .attach_flags = CGF_ATTACH_MULTI, .has_counters = true,
		.counters = { .pass_packets = 1234567, .pass_bytes = 1536, .drop_packets = UINT64_MAX,
			      .drop_bytes = UINT64_MAX, .would_drop_packets = 7, .would_drop_bytes = 448 },
		.enforce = CGF_STATUS_AUDITED, /* enforce: false */
	};
	const struct cgf_status_prog old = { .prog_id = 99, .prog_name = (char *) "" };
	const struct cgf_status_prog odd = {
		.prog_id = 7, .prog_name = (char *) "cgf_deny", .ours = true,
		.attach_flags = CGF_ATTACH_OVERRIDE | (1U << 12), .preorder = true,
	};
	struct cgf_status_prog base_inherited = base;

	REQUIRE(s);
	REQUIRE(cgf_status_set_kernel(s, "6.1.0-cgf", &patched) == 0);

	/* Added out of order: the record sorts itself. */
	REQUIRE(cgf_status_add_list(s, "web.slice", CGF_EGRESS, CGF_ATTACH_MULTI, 7, &l) == 0);
	/* Copies: the builder must not keep the caller's buffer. */
	snprintf(name, sizeof(name), "cgf_web");
	REQUIRE(cgf_status_list_add_attached(l, &acme, NULL) == 0);
	REQUIRE(cgf_status_list_add_attached(l, &web, NULL) == 0);
	base_inherited.attached_at = (char *) ".";
	REQUIRE(cgf_status_list_add_effective(l, &acme, NULL) == 0);
	REQUIRE(cgf_status_list_add_effective(l, &base_inherited, NULL) == 0);
	REQUIRE(cgf_status_list_add_effective(l, &web, NULL) == 0);
	REQUIRE(cgf_status_list_add_note(l, "foreign program %u runs before ours: %s", 42u, "preorder") == 0);
	snprintf(name, sizeof(name), "clobbered");

	REQUIRE(cgf_status_add_list(s, ".", CGF_EGRESS, CGF_ATTACH_MULTI, 3, &l) == 0);
	REQUIRE(cgf_status_list_add_attached(l, &base, NULL) == 0);
	REQUIRE(cgf_status_list_add_effective(l, &base, NULL) == 0);

	/* Nothing there: not in the table, in the JSON. */
	REQUIRE(cgf_status_add_list(s, ".", CGF_INGRESS, 0, 2, NULL) == 0);

	/* Only the own list is known (no effective query): shown with "-".
	 * "é" is two bytes, one column. */
	REQUIRE(cgf_status_add_list(s, "web.slice/c\xc3\xa9" "1", CGF_INGRESS, 0, 0, &l) == 0);
	REQUIRE(cgf_status_list_add_attached(l, &old, NULL) == 0);

	REQUIRE(cgf_status_add_list(s, "odd\nname", CGF_EGRESS, CGF_ATTACH_OVERRIDE, 1, &l) == 0);
	REQUIRE(cgf_status_list_add_attached(l, &odd, NULL) == 0);
	REQUIRE(cgf_status_list_add_effective(l, &odd, NULL) == 0);

	return s;
}

static void test_builders(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = host();
	static const char *const order[] = { ".", ".", "odd\nname", "web.slice", "web.slice/c\xc3\xa9" "1" };
	struct cgf_status_list *l;

	CHECK(t, s->n_lists == ELEMENTSOF(order), "%zu lists", s->n_lists);
	for (size_t i = 0; i < s->n_lists && i < ELEMENTSOF(order); i++)
		CHECK(t, streq(s->lists[i].cgroup, order[i]), "list %zu is '%s'", i, s->lists[i].cgroup);
	CHECK(t, s->lists[0].direction == CGF_INGRESS && s->lists[1].direction == CGF_EGRESS, "ingress first");

	CHECK(t, cgf_status_add_list(s, "web.slice", CGF_EGRESS, 0, 0, NULL) == -EEXIST, "a list twice");
	CHECK(t, s->n_lists == ELEMENTSOF(order), "nothing added");

	l = cgf_status_find(s, "web.slice", CGF_EGRESS);
	CHECK(t, l && l->n_attached == 2 && l->n_effective == 3 && l->n_notes == 1, "found web.slice egress");
	CHECK(t, l && streq(l->attached[1].prog_name, "cgf_web"), "the name was copied");
	CHECK(t, !cgf_status_find(s, "web.slice", CGF_INGRESS), "no web.slice ingress");
	CHECK(t, !cgf_status_find(s, "nothing", CGF_EGRESS), "no such cgroup");

	CHECK(t, cgf_status_free(NULL) == NULL, "free(NULL)");
}

static void test_table(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = host();
	_cleanup_free_ char *got = render_table(s);

	CHECK_STREQ(t, got,
		    "kernel 6.1.0-cgf: preorder yes, ordering yes, revision yes\n"
		    "\n"
		    "  #  ID  NAME      OWNER              ATTACHED AT    FLAGS                              PASS          DROP                        WOULD DROP\n"
		    ".              egress   mode multi  rev 3\n"
		    "  0  10  cgf_base  ours: base         .              multi                              100/6.2K      2/128B                      0/0B\n"
		    "\n"
		    "odd\\x0aname    egress   mode override  rev 1\n"
		    "  0   7  cgf_deny  ours: ?            odd\\x0aname    override|preorder|unknown(0x1000)  -             -                           -\n"
		    "\n"
		    "web.slice      egress   mode multi  rev 7\n"
		    "  0  42  acme_fw   foreign            web.slice      multi|preorder                     -             -                           -\n"
		    "  1  10  cgf_base  ours: base         .              multi                              100/6.2K      2/128B                      0/0B\n"
		    "  2  51  cgf_web   ours: web (audit)  web.slice      multi                              1234567/1.5K  18446744073709551615/15.9E  7/448B\n"
		    "  note: foreign program 42 runs before ours: preorder\n"
		    "\n"
		    "web.slice/c\xc3\xa9" "1  ingress  mode none  rev -\n"
		    "  -  99  -         foreign            web.slice/c\xc3\xa9" "1  none                               -             -                           -\n",
		    "the table");
}

static void test_json(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = host();
	_cleanup_free_ char *got = render_json(s, 0);

	CHECK_STREQ(t, got,
		    "{\"kernel\":{\"release\":\"6.1.0-cgf\",\"preorder\":true,\"ordering\":true,\"revision\":true},"
		    "\"lists\":["
		    "{\"cgroup\":\".\",\"direction\":\"ingress\",\"mode\":\"none\",\"revision\":2,\"attached\":[],\"effective\":[],\"notes\":[]},"
		    "{\"cgroup\":\".\",\"direction\":\"egress\",\"mode\":\"multi\",\"revision\":3,\"attached\":["
		    "{\"id\":10,\"link_id\":null,\"name\":\"cgf_base\",\"owner\":\"ours\",\"filter\":\"base\",\"identity\":\"base:1\","
		    "\"attached_at\":\".\",\"attach_flags\":[\"multi\"],\"attach_flags_raw\":2,\"preorder\":false,\"enforce\":true,\"counters\":{\"pass_packets\":100,\"pass_bytes\":6400,\"drop_packets\":2,\"drop_bytes\":128,\"would_drop_packets\":0,\"would_drop_bytes\":0}}],\"effective\":["
		    "{\"id\":10,\"link_id\":null,\"name\":\"cgf_base\",\"owner\":\"ours\",\"filter\":\"base\",\"identity\":\"base:1\","
		    "\"attached_at\":\".\",\"attach_flags\":[\"multi\"],\"attach_flags_raw\":2,\"preorder\":false,\"enforce\":true,\"counters\":{\"pass_packets\":100,\"pass_bytes\":6400,\"drop_packets\":2,\"drop_bytes\":128,\"would_drop_packets\":0,\"would_drop_bytes\":0}}],\"notes\":[]},"
		    "{\"cgroup\":\"odd\\nname\",\"direction\":\"egress\",\"mode\":\"override\",\"revision\":1,\"attached\":["
		    "{\"id\":7,\"link_id\":null,\"name\":\"cgf_deny\",\"owner\":\"ours\",\"filter\":null,\"identity\":null,"
		    "\"attached_at\":\"odd\\nname\",\"attach_flags\":[\"override\",\"unknown(0x1000)\"],\"attach_flags_raw\":4097,\"preorder\":true,\"enforce\":null,\"counters\":null}],\"effective\":["
		    "{\"id\":7,\"link_id\":null,\"name\":\"cgf_deny\",\"owner\":\"ours\",\"filter\":null,\"identity\":null,"
		    "\"attached_at\":\"odd\\nname\",\"attach_flags\":[\"override\",\"unknown(0x1000)\"],\"attach_flags_raw\":4097,\"preorder\":true,\"enforce\":null,\"counters\":null}],\"notes\":[]},"
		    "{\"cgroup\":\"web.slice\",\"direction\":\"egress\",\"mode\":\"multi\",\"revision\":7,\"attached\":["
		    "{\"id\":42,\"link_id\":null,\"name\":\"acme_fw\",\"owner\":\"foreign\",\"filter\":null,\"identity\":null,"
		    "\"attached_at\":\"web.slice\",\"attach_flags\":[\"multi\",\"preorder\"],\"attach_flags_raw\":66,\"preorder\":true,\"enforce\":null,\"counters\":null},"
		    "{\"id\":51,\"link_id\":8,\"name\":\"cgf_web\",\"owner\":\"ours\",\"filter\":\"web\",\"identity\":\"web:2\","
		    "\"attached_at\":\"web.slice\",\"attach_flags\":[\"multi\"],\"attach_flags_raw\":2,\"preorder\":false,\"enforce\":false,\"counters\":{\"pass_packets\":1234567,\"pass_bytes\":1536,\"drop_packets\":18446744073709551615,\"drop_bytes\":18446744073709551615,\"would_drop_packets\":7,\"would_drop_bytes\":448}}],\"effective\":["
		    "{\"id\":42,\"link_id\":null,\"name\":\"acme_fw\",\"owner\":\"foreign\",\"filter\":null,\"identity\":null,"
		    "\"attached_at\":\"web.slice\",\"attach_flags\":[\"multi\",\"preorder\"],\"attach_flags_raw\":66,\"preorder\":true,\"enforce\":null,\"counters\":null},"
		    "{\"id\":10,\"link_id\":null,\"name\":\"cgf_base\",\"owner\":\"ours\",\"filter\":\"base\",\"identity\":\"base:1\","
		    "\"attached_at\":\".\",\"attach_flags\":[\"multi\"],\"attach_flags_raw\":2,\"preorder\":false,\"enforce\":true,\"counters\":{\"pass_packets\":100,\"pass_bytes\":6400,\"drop_packets\":2,\"drop_bytes\":128,\"would_drop_packets\":0,\"would_drop_bytes\":0}},"
		    "{\"id\":51,\"link_id\":8,\"name\":\"cgf_web\",\"owner\":\"ours\",\"filter\":\"web\",\"identity\":\"web:2\","
		    "\"attached_at\":\"web.slice\",\"attach_flags\":[\"multi\"],\"attach_flags_raw\":2,\"preorder\":false,\"enforce\":false,\"counters\":{\"pass_packets\":1234567,\"pass_bytes\":1536,\"drop_packets\":18446744073709551615,\"drop_bytes\":18446744073709551615,\"would_drop_packets\":7,\"would_drop_bytes\":448}}],\"notes\":[\"foreign program 42 runs before ours: preorder\"]},"
		    "{\"cgroup\":\"web.slice/c\xc3\xa9" "1\",\"direction\":\"ingress\",\"mode\":\"none\",\"revision\":null,\"attached\":["
		    "{\"id\":99,\"link_id\":null,\"name\":\"\",\"owner\":\"foreign\",\"filter\":null,\"identity\":null,"
		    "\"attached_at\":\"web.slice/c\xc3\xa9" "1\",\"attach_flags\":[],\"attach_flags_raw\":0,\"preorder\":false,\"enforce\":null,\"counters\":null}],\"effective\":[],\"notes\":[]}],\"daemon\":null,\"missing_firewalls\":null}\n",
		    "the JSON");
}

static void test_empty(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = cgf_status_new();
	_cleanup_free_ char *table = NULL, *json = NULL;

	REQUIRE(s);
	REQUIRE(cgf_status_add_list(s, "a", CGF_EGRESS, 0, 0, NULL) == 0);
	table = render_table(s);
	CHECK_STREQ(t, table, "kernel: features unknown\n\nno programs attached\n", "an empty table");
	json = render_json(s, 0);
	CHECK_STREQ(t, json,
		    "{\"kernel\":{\"release\":null,\"preorder\":null,\"ordering\":null,\"revision\":null},"
		    "\"lists\":[{\"cgroup\":\"a\",\"direction\":\"egress\",\"mode\":\"none\",\"revision\":null,"
		    "\"attached\":[],\"effective\":[],\"notes\":[]}],\"daemon\":null,\"missing_firewalls\":null}\n",
		    "an empty JSON");

	/* Known features, unknown release; then both replaced. */
	REQUIRE(cgf_status_set_kernel(s, NULL, &CGF_FEATURES_STOCK) == 0);
	free(table);
	table = render_table(s);
	CHECK_STREQ(t, table, "kernel: preorder no, ordering no, revision no\n\nno programs attached\n",
		    "stock kernel, no release");
	REQUIRE(cgf_status_set_kernel(s, "6.17.0", &CGF_FEATURES_PATCHED) == 0);
	free(table);
	table = render_table(s);
	CHECK_STREQ(t, table, "kernel 6.17.0: preorder yes, ordering yes, revision yes\n\nno programs attached\n",
		    "patched kernel");
}

/* The units the daemon found without their programs, after the lists. */
static void test_missing_firewalls(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = cgf_status_new();
	_cleanup_free_ char *table = NULL, *json = NULL;

	REQUIRE(s);
	s->missing_firewalls = calloc(1, sizeof(*s->missing_firewalls));
	REQUIRE(s->missing_firewalls);
	REQUIRE(cgf_missing_firewalls_add(s->missing_firewalls, "web\x1b.service", "system.slice/web\x1b.service",
					  CGF_DIRECTIONS_BOTH, "IPAddressDeny=") == 0);
	table = render_table(s);
	CHECK_STREQ(t, table,
		    "kernel: features unknown\n\nno programs attached\n"
		    "\nunits without their firewall: 1 (systemd's attach refused below a none of ours)\n"
		    "  UNIT             CGROUP                        MISSING             SETTINGS\n"
		    "  web\\x1b.service  system.slice/web\\x1b.service  ingress and egress  IPAddressDeny=\n",
		    "the table ends with them, escaped");
	json = render_json(s, 0);
	CHECK_STREQ(t, json,
		    "{\"kernel\":{\"release\":null,\"preorder\":null,\"ordering\":null,\"revision\":null},"
		    "\"lists\":[],\"daemon\":null,\"missing_firewalls\":{\"count\":1,\"units\":[{\"unit\":"
		    "\"web\\u001b.service\",\"cgroup\":\"system.slice/web\\u001b.service\",\"directions\":"
		    "[\"ingress\",\"egress\"],\"settings\":\"IPAddressDeny=\"}]}}\n",
		    "the JSON has them");
}

int main(void) {
	struct test_state t = {};

	test_builders(&t);
	test_table(&t);
	test_json(&t);
	test_empty(&t);
	test_missing_firewalls(&t);
	return test_finish(&t, "test-status");
}
