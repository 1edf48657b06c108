/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unit-firewalls.h: systemd's names for the cgroups of slices and units
 * (as cg_slice_to_path() and cg_escape() make them), the settings and
 * the lists they attach to, and the table's put and filter; then the
 * daemon's record of units without their firewall (missing-firewalls.h):
 * its file read back, hostile names escaped, refused when malformed, and
 * its table and JSON.
 */
#include <errno.h>

#include "json.h"
#include "missing-firewalls.h"
#include "tests.h"
#include "unit-firewalls.h"
#include "util.h"

static void check_slice(struct test_state *t, const char *slice, const char *want) {
	_cleanup_free_ char *got = NULL;
	int r = cgf_slice_cgroup(slice, &got);

	if (!want)
		CHECK(t, r == -EINVAL, "slice '%s' refused (%d, %s)", slice, r, got ?: "");
	else
		CHECK(t, r == 0 && streq(got, want), "slice '%s' is '%s', not '%s'", slice, want, got ?: "(error)");
}

static void check_unit(struct test_state *t, const char *slice, const char *unit, const char *want) {
	_cleanup_free_ char *got = NULL;
	int r = cgf_unit_cgroup(slice, unit, &got);

	if (!want)
		CHECK(t, r == -EINVAL, "%s in %s refused (%d)", unit, slice, r);
	else
		CHECK(t, r == 0 && streq(got, want), "%s in %s is '%s', not '%s'", unit, slice, want, got ?: "(error)");
}

static void test_names(struct test_state *t) {
	check_slice(t, "-.slice", ".");
	check_slice(t, "system.slice", "system.slice");
	check_slice(t, "a-b-c.slice", "a.slice/a-b.slice/a-b-c.slice");
	check_slice(t, "system-systemd\\x2dfsck.slice", "system.slice/system-systemd\\x2dfsck.slice");
	/* cg_escape(): a name that could be a controller's file. */
	check_slice(t, "cpu.slice", "_cpu.slice");
	check_slice(t, "cpu-x.slice", "_cpu.slice/cpu-x.slice");
	check_slice(t, "web.service", NULL);
	check_slice(t, "-a.slice", NULL);
	check_slice(t, "a-.slice", NULL);
	check_slice(t, "a--b.slice", NULL);
	check_slice(t, ".slice", NULL);
	check_slice(t, "a/b.slice", NULL);

	check_unit(t, "system.slice", "web.service", "system.slice/web.service");
	check_unit(t, "-.slice", "init.scope", "init.scope");
	check_unit(t, "system-getty.slice", "getty@tty1.service", "system.slice/system-getty.slice/getty@tty1.service");
	check_unit(t, "system.slice", "_x.service", "system.slice/__x.service");
	check_unit(t, "system.slice", "cgroup.procs", "system.slice/_cgroup.procs");
	check_unit(t, "system.slice", "tasks", "system.slice/_tasks");
	check_unit(t, "system.slice", "memory.service", "system.slice/_memory.service");
	check_unit(t, "system.slice", "memoryx.service", "system.slice/memoryx.service");
	check_unit(t, "system.slice", "a/b.service", NULL);
	check_unit(t, "nope", "a.service", NULL);
}

static void check_cg(struct test_state *t, const char *cg, const char *want) {
	_cleanup_free_ char *got = NULL;
	int r = cgf_control_group_path(cg, &got);

	if (!want)
		CHECK(t, r == -EINVAL, "ControlGroup '%s' refused", cg);
	else
		CHECK(t, r == 0 && streq(got, want), "ControlGroup '%s' is '%s', not '%s'", cg, want, got ?: "(error)");
}

static void test_control_group(struct test_state *t) {
	check_cg(t, "/", ".");
	check_cg(t, "/system.slice/web.service", "system.slice/web.service");
	check_cg(t, "/system.slice/", "system.slice");
	check_cg(t, "system.slice", NULL);
	check_cg(t, "", NULL);
}

static void check_settings(struct test_state *t, unsigned settings, unsigned directions, const char *want) {
	_cleanup_free_ char *got = NULL;

	REQUIRE(cgf_unit_settings_format(settings, directions, &got) == 0);
	CHECK(t, streq(got, want), "settings 0x%x on %s: '%s', not '%s'", settings,
	      cgf_directions_to_string(directions), want, got);
}

static void test_settings(struct test_state *t) {
	const unsigned in = CGF_DIRECTION_BIT(CGF_INGRESS), out = CGF_DIRECTION_BIT(CGF_EGRESS);

	CHECK(t, cgf_unit_settings_directions(CGF_SETTING_IP_ADDRESS_DENY) == CGF_DIRECTIONS_BOTH, "deny: both");
	CHECK(t, cgf_unit_settings_directions(CGF_SETTING_IP_ACCOUNTING) == CGF_DIRECTIONS_BOTH, "accounting: both");
	CHECK(t, cgf_unit_settings_directions(CGF_SETTING_RESTRICT_INTERFACES) == CGF_DIRECTIONS_BOTH, "ifaces: both");
	CHECK(t, cgf_unit_settings_directions(CGF_SETTING_IP_INGRESS_FILTER) == in, "ingress filter: ingress");
	CHECK(t, cgf_unit_settings_directions(CGF_SETTING_BPF_PROGRAM_EGRESS) == out, "BPFProgram=egress: egress");
	CHECK(t, cgf_unit_settings_directions(CGF_SETTING_IP_INGRESS_FILTER | CGF_SETTING_IP_EGRESS_FILTER) ==
			 CGF_DIRECTIONS_BOTH,
	      "both filter paths: both");
	CHECK(t, cgf_unit_settings_directions(0) == 0, "nothing: no list");

	check_settings(t, _CGF_SETTING_ALL, CGF_DIRECTIONS_BOTH,
		       "IPAddressDeny=, IPAddressAllow=, IPAccounting=yes, IPIngressFilterPath=, IPEgressFilterPath=, "
		       "BPFProgram=ingress:, BPFProgram=egress:, RestrictNetworkInterfaces=");
	check_settings(t, _CGF_SETTING_ALL, in,
		       "IPAddressDeny=, IPAddressAllow=, IPAccounting=yes, IPIngressFilterPath=, BPFProgram=ingress:, "
		       "RestrictNetworkInterfaces=");
	check_settings(t, CGF_SETTING_IP_INGRESS_FILTER, out, "");
	CHECK(t, streq(cgf_directions_to_string(CGF_DIRECTIONS_BOTH), "ingress and egress"), "both, in words");
}

static bool keep_running(const struct cgf_unit_firewall *e, void *userdata) {
	(void) userdata;
	return e->active;
}

static void test_table(struct test_state *t) {
	struct cgf_unit_firewalls u = {};

	REQUIRE(cgf_unit_firewalls_add(&u, "a.service", "system.slice/a.service", false, 1) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "b.service", "system.slice/b.service", true, 1) == 0);
	REQUIRE(cgf_unit_firewalls_put(&u, "a.service", "other.slice/a.service", true, 2) == 0);
	REQUIRE(cgf_unit_firewalls_put(&u, "c.service", "system.slice/c.service", false, 4) == 0);
	CHECK(t, u.n == 3 && streq(u.units[0].cgroup, "other.slice/a.service") && u.units[0].settings == 2,
	      "put replaces a unit's entry (%zu entries)", u.n);
	cgf_unit_firewalls_filter(&u, keep_running, NULL);
	CHECK(t, u.n == 2 && streq(u.units[0].unit, "a.service") && streq(u.units[1].unit, "b.service"),
	      "filter keeps the order of what it keeps");
	cgf_unit_firewalls_done(&u);
	CHECK(t, u.n == 0 && !u.units, "done empties it");
}

static void test_effective(struct test_state *t) {
	struct cgf_unit_firewalls u = {};
	unsigned inherited = 99, e;

	REQUIRE(cgf_unit_firewalls_add(&u, "-.slice", ".", true, CGF_SETTING_IP_ADDRESS_ALLOW) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "a.slice", "a.slice", true,
				       CGF_SETTING_IP_ADDRESS_DENY | CGF_SETTING_IP_ACCOUNTING) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "x.service", "a.slice/x.service", true, 0) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "y.service", "b.slice/y.service", false, CGF_SETTING_IP_ADDRESS_DENY) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "b.slice", "b.slice", true, 0) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "z.service", "a.slicex/z.service", true, 0) == 0);

	e = cgf_unit_firewalls_effective(&u, &u.units[1], &inherited);
	CHECK(t, e == CGF_SETTING_IP_ACCOUNTING && inherited == 0, "a slice keeps only its accounting (0x%x)", e);
	e = cgf_unit_firewalls_effective(&u, &u.units[2], &inherited);
	CHECK(t, e == CGF_SETTINGS_IP_ACCESS && inherited == CGF_SETTINGS_IP_ACCESS,
	      "a unit gets the access lists of every slice above it (0x%x, inherited 0x%x)", e, inherited);
	e = cgf_unit_firewalls_effective(&u, &u.units[3], &inherited);
	CHECK(t, e == CGF_SETTINGS_IP_ACCESS && inherited == CGF_SETTING_IP_ADDRESS_ALLOW,
	      "its own deny, the root's allow (0x%x, inherited 0x%x)", e, inherited);
	e = cgf_unit_firewalls_effective(&u, &u.units[5], &inherited);
	CHECK(t, e == CGF_SETTING_IP_ADDRESS_ALLOW, "a.slicex is not below a.slice (0x%x)", e);

	REQUIRE(cgf_unit_firewalls_prune(&u) == 0);
	CHECK(t, u.n == 5 && streq(u.units[4].unit, "z.service"), "only b.slice goes (it gives nothing): %zu", u.n);
	cgf_unit_firewalls_done(&u);

	REQUIRE(cgf_unit_firewalls_add(&u, "q.service", "q.service", true, 0) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "s.slice", "s.slice", true, 0) == 0);
	REQUIRE(cgf_unit_firewalls_prune(&u) == 0);
	CHECK(t, u.n == 0, "nothing attaches: all go (%zu)", u.n);
	cgf_unit_firewalls_done(&u);
}

static void test_types_and_forget(struct test_state *t) {
	char *paths[] = { "system.slice/b.service", ".", "system.slice" };
	struct cgf_unit_firewalls u = {};

	CHECK(t, streq(cgf_unit_interface("web.service") ?: "", "org.freedesktop.systemd1.Service"), "service");
	CHECK(t, streq(cgf_unit_interface("machine-x.scope") ?: "", "org.freedesktop.systemd1.Scope"), "scope");
	CHECK(t, streq(cgf_unit_interface("-.slice") ?: "", "org.freedesktop.systemd1.Slice"), "slice");
	CHECK(t, streq(cgf_unit_interface("dev-hugepages.mount") ?: "", "org.freedesktop.systemd1.Mount"), "mount");
	CHECK(t, !cgf_unit_interface("multi-user.target") && !cgf_unit_interface(".service") &&
			 !cgf_unit_interface("cgroup.procs") && !cgf_unit_interface("payload"),
	      "no cgroup: targets, bare suffixes, kernel files, other directories");

	REQUIRE(cgf_unit_firewalls_add(&u, "a.service", "system.slice/a.service", true, 1) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "b.service", "system.slice/b.service", true, 1) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "c.service", "system.slice/c.service", false, 1) == 0);
	REQUIRE(cgf_unit_firewalls_forget_stopped(&u, paths, ELEMENTSOF(paths)) == 0);
	CHECK(t, u.n == 2 && streq(u.units[0].unit, "b.service") && streq(u.units[1].unit, "c.service"),
	      "a unit that ran and is gone is forgotten; one known not to run stays (%zu)", u.n);
	cgf_unit_firewalls_done(&u);
}

/* ---- the daemon's record ------------------------------------------------- */

static void test_record(struct test_state *t) {
	struct cgf_missing_firewalls m = {}, more = {};
	_cleanup_(cgf_missing_firewalls_freep) struct cgf_missing_firewalls *back = NULL;
	_cleanup_free_ char *text = NULL, *table = NULL;
	size_t size = 0;
	FILE *f;

	REQUIRE(cgf_missing_firewalls_add(&m, "web.service", "system.slice/web.service", CGF_DIRECTIONS_BOTH,
					  "IPAddressDeny=") == 0);
	REQUIRE(cgf_missing_firewalls_add(&m, "evil\t\n\x1b[2J.service", "system.slice/evil\t\n\x1b[2J.service",
					  CGF_DIRECTION_BIT(CGF_EGRESS), "IPEgressFilterPath=") == 0);
	REQUIRE(cgf_missing_firewalls_format(&m, &text) == 0);
	CHECK(t, streq(text, "cgfilterd-missing-firewalls 1\n"
			     "units\t2\n"
			     "unit\tingress,egress\tweb.service\tsystem.slice/web.service\tIPAddressDeny=\n"
			     "unit\tegress\tevil\\x09\\x0a\\x1b[2J.service\tsystem.slice/evil\\x09\\x0a\\x1b[2J.service\t"
			     "IPEgressFilterPath=\n"),
	      "the file, names escaped:\n%s", text);
	REQUIRE(cgf_missing_firewalls_parse(text, &back) == 0);
	CHECK(t, back->n == 2 && back->n_total == 2 && back->items[0].directions == CGF_DIRECTIONS_BOTH &&
			 streq(back->items[1].unit, "evil\\x09\\x0a\\x1b[2J.service"),
	      "read back: the escaped forms");

	f = open_memstream(&table, &size);
	REQUIRE(f);
	CHECK(t, cgf_missing_firewalls_render_table(back, f) == 0, "table rendered");
	REQUIRE(fclose(f) == 0);
	CHECK(t, streq(table, "\nunits without their firewall: 2 (systemd's attach refused below a none of ours)\n"
			      "  UNIT                         CGROUP                                    MISSING             SETTINGS\n"
			      "  web.service                  system.slice/web.service                  ingress and egress  IPAddressDeny=\n"
			      "  evil\\x09\\x0a\\x1b[2J.service  system.slice/evil\\x09\\x0a\\x1b[2J.service  egress              IPEgressFilterPath=\n"),
	      "the table:\n%s", table);

	/* A unit found again replaces its entry: no second line, no second count. */
	REQUIRE(cgf_missing_firewalls_add(&more, "web.service", "system.slice/web.service",
					  CGF_DIRECTION_BIT(CGF_INGRESS), "IPAddressDeny=") == 0);
	REQUIRE(cgf_missing_firewalls_merge(&m, &more) == 0);
	CHECK(t, m.n == 2 && m.n_total == 2 && m.items[0].directions == CGF_DIRECTION_BIT(CGF_INGRESS),
	      "merge replaces (%zu)", m.n);
	CHECK(t, cgf_missing_firewalls_find(&m, "web.service", "system.slice/web.service") &&
			 !cgf_missing_firewalls_find(&m, "web.service", "other"),
	      "find by unit and cgroup");
	cgf_missing_firewalls_done(&m);
}

static void test_record_refused(struct test_state *t) {
	static const char *const bad[] = {
		"",
		"cgfilterd-missing-firewalls 2\nunits\t0\n",
		"cgfilterd-missing-firewalls 1\n",
		"cgfilterd-missing-firewalls 1\nunits\t0",
		"cgfilterd-missing-firewalls 1\nunits\t-1\n",
		"cgfilterd-missing-firewalls 1\nunits\t0\nunit\tegress\ta\tb\tc\n",
		"cgfilterd-missing-firewalls 1\nunits\t1\nunit\tsideways\ta\tb\tc\n",
		"cgfilterd-missing-firewalls 1\nunits\t1\nunit\tegress\ta\tb\n",
		"cgfilterd-missing-firewalls 1\nunits\t1\nunit\tegress\ta\tb\tc\td\n",
		"cgfilterd-missing-firewalls 1\nunit\tegress\ta\tb\tc\nunits\t1\n",
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_(cgf_missing_firewalls_freep) struct cgf_missing_firewalls *m = NULL;
		int r = cgf_missing_firewalls_parse(bad[i], &m);

		CHECK(t, r == -EBADMSG, "malformed record %zu refused (%d)", i, r);
	}
}

static void test_record_json(struct test_state *t) {
	struct cgf_missing_firewalls m = {};
	_cleanup_(cgf_json_freep) struct cgf_json *j = NULL;
	_cleanup_free_ char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	REQUIRE(f);
	REQUIRE(cgf_missing_firewalls_add(&m, "a\"b.service", "x/a\"b.service", CGF_DIRECTIONS_BOTH, "IPAddressDeny=") == 0);
	REQUIRE(cgf_json_new(f, 0, &j) == 0);
	cgf_missing_firewalls_render_json(&m, j);
	CHECK(t, cgf_json_finish(j) == 0, "JSON finished");
	REQUIRE(fclose(f) == 0);
	CHECK(t, streq(s, "{\"count\":1,\"units\":[{\"unit\":\"a\\\"b.service\",\"cgroup\":\"x/a\\\"b.service\","
			  "\"directions\":[\"ingress\",\"egress\"],\"settings\":\"IPAddressDeny=\"}]}\n"),
	      "JSON: %s", s);
	cgf_missing_firewalls_done(&m);
}

int main(void) {
	struct test_state t = {};

	test_names(&t);
	test_control_group(&t);
	test_settings(&t);
	test_table(&t);
	test_effective(&t);
	test_types_and_forget(&t);
	test_record(&t);
	test_record_refused(&t);
	test_record_json(&t);
	return test_finish(&t, "unit-firewalls");
}
