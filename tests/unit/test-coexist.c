/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Coexistence with other controllers below a `mode: none` (coexist.h),
 * without systemd and without a kernel: the units systemd would report
 * and the kernel's lists are tables written here.
 *
 *   - a none above units with an IP firewall is refused, the units named
 *     (escaped), with what to write instead (preorder only where the
 *     kernel has it); `foreign-below: lock-out` accepts it;
 *   - which units count: the none's directions, at or below a cgroup its
 *     pattern matches (globs, the root), running or not;
 *   - foreign programs attached now below the none; not the none's own
 *     list, not a unit's cgroup twice;
 *   - the one-line summary of a refused reload;
 *   - while running: which units miss their firewall.
 */
#include "coexist.h"
#include "plan-test.h"
#include "policy-load.h"
#include "policy-validate.h"

static struct cgf_policy *load(const char *text) {
	struct cgf_policy *p = cgf_policy_new();
	struct cgf_diags diags = CGF_DIAGS_INIT;
	const struct cgf_features features = CGF_FEATURES_PATCHED;

	REQUIRE(p);
	REQUIRE(cgf_policy_load_text(p, "policy.yaml", text, strlen(text), &diags) == 0);
	REQUIRE(cgf_policy_validate(p, &features, &diags) == 0);
	if (diags.n_errors > 0) {
		_cleanup_free_ char *s = NULL;

		REQUIRE(cgf_diags_render_string(&diags, 0, &s) == 0);
		fprintf(stderr, "test policy is invalid:\n%s", s);
		REQUIRE(false);
	}
	cgf_diags_done(&diags);
	return p;
}

/* The rendered refusal (with source lines and carets) of a policy
 * against units and the kernel. */
static char *refusal(const struct cgf_policy *p, const struct cgf_unit_firewalls *units,
		     const struct cgf_actual *actual, const struct cgf_features *features, size_t *ret_refused) {
	struct cgf_diags diags = CGF_DIAGS_INIT;
	struct cgf_coexist c;
	char *s = NULL;

	REQUIRE(cgf_coexist_check(p, units, actual, &c) == 0);
	cgf_coexist_report(&c, p, features, &diags);
	REQUIRE(cgf_diags_status(&diags) == 0);
	cgf_diags_sort(&diags);
	REQUIRE(cgf_diags_render_string(&diags, CGF_RENDER_SOURCE, &s) == 0);
	if (ret_refused)
		*ret_refused = c.n_refused;
	cgf_diags_done(&diags);
	cgf_coexist_done(&c);
	return s;
}

#define GUARD_POLICY(extra) \
	"version: 1\n" \
	"filters:\n" \
	"  guard: {type: deny-all, direction: egress}\n" \
	"attachments:\n" \
	"  - cgroup: system.slice\n" \
	"    filters: [guard]\n" \
	"    mode: none\n" extra

static void units_of_a_host(struct cgf_unit_firewalls *u) {
	REQUIRE(cgf_unit_firewalls_add(u, "web.service", "system.slice/web.service", true,
				       CGF_SETTING_IP_ADDRESS_DENY | CGF_SETTING_IP_ADDRESS_ALLOW) == 0);
	/* Ingress only: an egress none does not touch it. */
	REQUIRE(cgf_unit_firewalls_add(u, "in.service", "system.slice/in.service", true,
				       CGF_SETTING_IP_INGRESS_FILTER) == 0);
	/* Not running: its cgroup from its slice. */
	REQUIRE(cgf_unit_firewalls_add(u, "getty@tty1.service", "system.slice/system-getty.slice/getty@tty1.service",
				       false, CGF_SETTING_BPF_PROGRAM_EGRESS | CGF_SETTING_BPF_PROGRAM_INGRESS) == 0);
	/* Elsewhere. */
	REQUIRE(cgf_unit_firewalls_add(u, "user-1000.slice", "user.slice/user-1000.slice", true,
				       CGF_SETTING_IP_ADDRESS_DENY) == 0);
	/* The none's own cgroup: systemd's multi attach meets our none there. */
	REQUIRE(cgf_unit_firewalls_add(u, "system.slice", "system.slice", true, CGF_SETTING_IP_ACCOUNTING) == 0);
	/* A name nobody should print raw. */
	REQUIRE(cgf_unit_firewalls_add(u, "evil\n\x1b[31mred.service", "system.slice/evil\n\x1b[31mred.service", true,
				       CGF_SETTING_RESTRICT_INTERFACES) == 0);
}

static void test_units_refused(struct test_state *t) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = load(GUARD_POLICY(""));
	const struct cgf_features patched = CGF_FEATURES_PATCHED, stock = CGF_FEATURES_STOCK;
	struct cgf_unit_firewalls u = {};
	_cleanup_free_ char *got = NULL, *got_stock = NULL;
	size_t refused = 0;

	units_of_a_host(&u);
	got = refusal(p, &u, NULL, &patched, &refused);
	CHECK(t, refused == 1, "one attachment refused, not %zu", refused);
	CHECK_STREQ(t, got,
		    "policy.yaml:7:11: error: mode none on 'system.slice' (egress) would lock out what other "
		    "controllers attach below it: the programs systemd attaches for 4 units (their IP firewall or "
		    "accounting: the kernel refuses the attach below a none with EPERM, and systemd then starts the "
		    "unit without them)\n"
		    "    mode: none\n"
		    "          ^~~~\n"
		    "note: unit web.service (system.slice/web.service): IPAddressDeny=, IPAddressAllow=, on egress\n"
		    "note: unit getty@tty1.service (system.slice/system-getty.slice/getty@tty1.service, not running): "
		    "BPFProgram=egress:, on egress\n"
		    "note: unit system.slice (system.slice): IPAccounting=yes, on egress\n"
		    "note: unit evil\\x0a\\x1b[31mred.service (system.slice/evil\\x0a\\x1b[31mred.service): "
		    "RestrictNetworkInterfaces=, on egress\n"
		    "note: write 'mode: multi' and 'preorder: true' instead: these filters then run first and a "
		    "packet must pass every program, so nothing below can weaken them; or, if locking these out is "
		    "meant (a container host's tenants), add 'foreign-below: lock-out' to this attachment\n",
		    "the units below system.slice, named and escaped, with the fix");

	/* Without BPF_F_PREORDER the fix is multi alone. */
	got_stock = refusal(p, &u, NULL, &stock, NULL);
	CHECK(t, strstr(got_stock, "note: write 'mode: multi' instead: a packet must pass every program, so nothing "
				   "below can weaken these filters ('preorder: true', to run them first, needs the "
				   "kernel-patch series)"),
	      "stock kernel: no preorder in the fix:\n%s", got_stock);
	cgf_unit_firewalls_done(&u);
}

static void test_opt_in(struct test_state *t) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = load(GUARD_POLICY("    foreign-below: lock-out\n"));
	const struct cgf_features patched = CGF_FEATURES_PATCHED;
	struct cgf_unit_firewalls u = {};
	_cleanup_free_ char *got = NULL;
	struct cgf_coexist c;
	size_t refused = 1;

	units_of_a_host(&u);
	got = refusal(p, &u, NULL, &patched, &refused);
	CHECK_STREQ(t, got, "", "foreign-below: lock-out: no error");
	CHECK(t, refused == 0, "nothing refused, not %zu", refused);
	/* Still found (the daemon watches those units), only allowed. */
	REQUIRE(cgf_coexist_check(p, &u, NULL, &c) == 0);
	CHECK(t, c.n_lockouts == 1 && c.lockouts[0].allowed && c.lockouts[0].n_units == 4,
	      "the lockout is known and allowed (%zu lockouts)", c.n_lockouts);
	cgf_coexist_done(&c);
	cgf_unit_firewalls_done(&u);
}

static void test_nothing_below(struct test_state *t) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = load(GUARD_POLICY(""));
	_cleanup_(cgf_policy_freep) struct cgf_policy *multi = load(
		"version: 1\n"
		"filters:\n"
		"  guard: {type: deny-all, direction: egress}\n"
		"attachments:\n"
		"  - {cgroup: system.slice, filters: [guard], preorder: true}\n");
	const struct cgf_features patched = CGF_FEATURES_PATCHED;
	struct cgf_unit_firewalls u = {};
	_cleanup_free_ char *unknown = NULL, *none = NULL, *m = NULL;

	unknown = refusal(p, NULL, NULL, &patched, NULL);
	CHECK_STREQ(t, unknown, "", "no units known, no kernel read: nothing refused");
	REQUIRE(cgf_unit_firewalls_add(&u, "a.service", "user.slice/a.service", true, CGF_SETTING_IP_ADDRESS_DENY) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "b.service", "system.slice/b.service", true, CGF_SETTING_IP_INGRESS_FILTER) == 0);
	/* A sibling whose name starts like the none's cgroup is not below it. */
	REQUIRE(cgf_unit_firewalls_add(&u, "c.service", "system.slice2/c.service", true, CGF_SETTING_IP_ADDRESS_DENY) == 0);
	none = refusal(p, &u, NULL, &patched, NULL);
	CHECK_STREQ(t, none, "", "units elsewhere, or for the other direction: nothing refused");
	cgf_unit_firewalls_done(&u);
	units_of_a_host(&u);
	m = refusal(multi, &u, NULL, &patched, NULL);
	CHECK_STREQ(t, m, "", "a multi guard locks nothing out");
	cgf_unit_firewalls_done(&u);
}

static void test_globs_and_root(struct test_state *t) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *glob = load(
		"version: 1\n"
		"filters:\n"
		"  in: {type: deny-all, direction: ingress}\n"
		"  out: {type: deny-all, direction: egress}\n"
		"attachments:\n"
		"  - cgroup: machine.slice/*.scope\n"
		"    filters: [in, out]\n"
		"    mode: none\n");
	_cleanup_(cgf_policy_freep) struct cgf_policy *root = load(
		"version: 1\n"
		"filters:\n"
		"  out: {type: deny-all, direction: egress}\n"
		"attachments:\n"
		"  - {cgroup: ., filters: [out], mode: none}\n");
	struct cgf_unit_firewalls u = {};
	struct cgf_coexist c;

	REQUIRE(cgf_unit_firewalls_add(&u, "machine-a.scope", "machine.slice/machine-a.scope", true,
				       CGF_SETTING_IP_INGRESS_FILTER) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "inner.service", "machine.slice/machine-b.scope/inner.service", true,
				       CGF_SETTING_IP_ADDRESS_DENY) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "machine.slice", "machine.slice", true, CGF_SETTING_IP_ACCOUNTING) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "-.slice", ".", true, CGF_SETTING_IP_EGRESS_FILTER) == 0);

	REQUIRE(cgf_coexist_check(glob, &u, NULL, &c) == 0);
	CHECK(t, c.n_lockouts == 1 && c.lockouts[0].directions == CGF_DIRECTIONS_BOTH && c.lockouts[0].n_units == 2,
	      "glob: the scope it matches and a unit below another, not the slice above (%zu units)",
	      c.n_lockouts ? c.lockouts[0].n_units : 0);
	CHECK(t, c.n_lockouts == 1 && streq(c.lockouts[0].units[0].unit, "machine-a.scope") &&
		 c.lockouts[0].units[0].directions == CGF_DIRECTION_BIT(CGF_INGRESS),
	      "glob: machine-a.scope on ingress only");
	cgf_coexist_done(&c);

	REQUIRE(cgf_coexist_check(root, &u, NULL, &c) == 0);
	CHECK(t, c.n_lockouts == 1 && c.lockouts[0].n_units == 3, "root: every unit with an egress setting (%zu)",
	      c.n_lockouts ? c.lockouts[0].n_units : 0);
	cgf_coexist_done(&c);
	cgf_unit_firewalls_done(&u);
}

static void test_programs_now(struct test_state *t) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = load(GUARD_POLICY(""));
	_cleanup_(cgf_actual_freep) struct cgf_actual *a = parse_actual(
		"system.slice egress multi 3: 7:acme_fw\n"
		"system.slice/a.service egress multi 2: 11:sd_fw_egress\n"
		"system.slice/b.service egress multi 4: 12:acme_fw 13:x@id\n"
		"system.slice/b.service ingress multi 2: 14:acme_in\n"
		"user.slice egress multi 2: 15:acme_fw\n");
	const struct cgf_features patched = CGF_FEATURES_PATCHED;
	struct cgf_unit_firewalls u = {};
	_cleanup_free_ char *got = NULL, *summary = NULL;
	struct cgf_coexist c;

	REQUIRE(cgf_unit_firewalls_add(&u, "a.service", "system.slice/a.service", true, CGF_SETTING_IP_ADDRESS_DENY) == 0);
	got = refusal(p, &u, a, &patched, NULL);
	CHECK(t, strstr(got, "the programs systemd attaches for 1 unit (") &&
		 strstr(got, "; and 1 foreign program attached now (each replaces ours for its subtree, and its owner "
			     "could not change it any more)\n"),
	      "a unit and a program below:\n%s", got);
	CHECK(t, strstr(got, "note: unit a.service (system.slice/a.service): IPAddressDeny=, on egress\n"),
	      "the unit named:\n%s", got);
	CHECK(t, strstr(got, "note: program 'acme_fw' (id 12) on system.slice/b.service egress\n"),
	      "the foreign program below named, not ours beside it:\n%s", got);
	CHECK(t, !strstr(got, "id 11") && !strstr(got, "id 7)") && !strstr(got, "id 14") && !strstr(got, "id 15"),
	      "not the unit's own program again, not the none's own list, not ingress, not elsewhere:\n%s", got);

	REQUIRE(cgf_coexist_check(p, &u, a, &c) == 0);
	REQUIRE(cgf_coexist_summary(&c, p, &summary) == 0);
	CHECK_STREQ(t, summary,
		    "mode none would lock out other controllers' programs below it: 'system.slice' "
		    "(policy.yaml:7:11) locks out unit a.service, program 12 on system.slice/b.service; write mode "
		    "multi (with preorder: true where the kernel has it), or foreign-below: lock-out",
		    "the reload's one-line verdict");
	cgf_coexist_done(&c);
	cgf_unit_firewalls_done(&u);
}

static void test_many_named(struct test_state *t) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = load(GUARD_POLICY(""));
	const struct cgf_features patched = CGF_FEATURES_PATCHED;
	struct cgf_unit_firewalls u = {};
	_cleanup_free_ char *got = NULL, *summary = NULL;
	struct cgf_coexist c;
	size_t notes = 0;

	for (unsigned i = 0; i < 20; i++) {
		char unit[32], cgroup[64];

		snprintf(unit, sizeof(unit), "u%02u.service", i);
		snprintf(cgroup, sizeof(cgroup), "system.slice/%s", unit);
		REQUIRE(cgf_unit_firewalls_add(&u, unit, cgroup, true, CGF_SETTING_IP_ADDRESS_DENY) == 0);
	}
	got = refusal(p, &u, NULL, &patched, NULL);
	for (const char *s = got; (s = strstr(s, "note: unit ")); s++)
		notes++;
	CHECK(t, notes == CGF_COEXIST_NAMED_MAX, "%d units named, not %zu", CGF_COEXIST_NAMED_MAX, notes);
	CHECK(t, strstr(got, "for 20 units (") && strstr(got, "note: ... and 12 more\n"), "the rest counted:\n%s", got);
	REQUIRE(cgf_coexist_check(p, &u, NULL, &c) == 0);
	REQUIRE(cgf_coexist_summary(&c, p, &summary) == 0);
	CHECK(t, strstr(summary, "unit u00.service, unit u01.service, unit u02.service and 17 more;"),
	      "the summary names three: %s", summary);
	cgf_coexist_done(&c);
	cgf_unit_firewalls_done(&u);
}

/* A slice's IP access lists land on every unit below it, not on the
 * slice: systemd compiles them into the units' own programs. */
static void test_inherited(struct test_state *t) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = load(GUARD_POLICY(""));
	const struct cgf_features patched = CGF_FEATURES_PATCHED;
	struct cgf_unit_firewalls u = {};
	_cleanup_free_ char *got = NULL;

	REQUIRE(cgf_unit_firewalls_add(&u, "system-getty.slice", "system.slice/system-getty.slice", true,
				       CGF_SETTING_IP_ADDRESS_DENY) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "getty@tty1.service", "system.slice/system-getty.slice/getty@tty1.service",
				       true, 0) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "getty@tty2.service", "system.slice/system-getty.slice/getty@tty2.service",
				       true, CGF_SETTING_IP_ACCOUNTING | CGF_SETTING_IP_ADDRESS_DENY) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "other.service", "system.slice/other.service", true, 0) == 0);
	got = refusal(p, &u, NULL, &patched, NULL);
	CHECK(t, strstr(got, "for 2 units (") &&
		 strstr(got, "note: unit getty@tty1.service (system.slice/system-getty.slice/getty@tty1.service): "
			     "IPAddressDeny= of a slice above, on egress\n") &&
		 strstr(got, "note: unit getty@tty2.service (system.slice/system-getty.slice/getty@tty2.service): "
			     "IPAddressDeny=, IPAccounting=yes, on egress\n") &&
		 !strstr(got, "unit system-getty.slice") && !strstr(got, "other.service"),
	      "the slice's deny list on the units below it, not on the slice, not beside it:\n%s", got);
	cgf_unit_firewalls_done(&u);
}

static char *format_missing(const struct cgf_missing_firewalls *m) {
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	REQUIRE(f);
	for (size_t i = 0; i < m->n; i++)
		fprintf(f, "%s %s %s: %s\n", m->items[i].unit, m->items[i].cgroup,
			cgf_directions_to_string(m->items[i].directions), m->items[i].settings);
	REQUIRE(fclose(f) == 0);
	return s;
}

static void test_missing(struct test_state *t) {
	_cleanup_(cgf_desired_freep) struct cgf_desired *d = parse_desired(
		"system.slice egress none: guard@g\n"
		"user.slice egress multi: count@c\n");
	_cleanup_(cgf_actual_freep) struct cgf_actual *a = parse_actual(
		"system.slice egress none 2: 5:guard@g\n"
		"system.slice/kept.service egress multi 2: 9:sd_fw_egress\n"
		"system.slice/kept.service ingress multi 2: 10:sd_fw_ingress\n");
	char *paths[] = {
		"user.slice/u.service", "system.slice/lost.service", "system.slice", ".", "system.slice/kept.service",
		"system.slice/in.service", "user.slice",
	};
	struct cgf_missing_firewalls m = {};
	struct cgf_unit_firewalls u = {};
	_cleanup_free_ char *got = NULL;

	REQUIRE(cgf_unit_firewalls_add(&u, "lost.service", "system.slice/lost.service", true,
				       CGF_SETTING_IP_ADDRESS_DENY) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "kept.service", "system.slice/kept.service", true,
				       CGF_SETTING_IP_ADDRESS_DENY) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "stopped.service", "system.slice/stopped.service", false,
				       CGF_SETTING_IP_ADDRESS_DENY) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "in.service", "system.slice/in.service", true,
				       CGF_SETTING_IP_INGRESS_FILTER) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "u.service", "user.slice/u.service", true, CGF_SETTING_IP_ADDRESS_DENY) == 0);
	REQUIRE(cgf_unit_firewalls_add(&u, "system.slice", "system.slice", true,
				       CGF_SETTING_IP_ACCOUNTING | CGF_SETTING_IP_INGRESS_FILTER) == 0);
	REQUIRE(cgf_coexist_missing(d, a, &u, paths, ELEMENTSOF(paths), &m) == 0);
	got = format_missing(&m);
	CHECK_STREQ(t, got,
		    "lost.service system.slice/lost.service ingress and egress: IPAddressDeny=\n"
		    "system.slice system.slice ingress and egress: IPAccounting=yes, IPIngressFilterPath=\n",
		    "missing: below the none (egress) with no foreign program there, and at the none itself, with "
		    "their other direction (systemd stops at the first refusal); not a unit whose programs are "
		    "there, not a stopped one, not one asking for ingress only, not below a multi");
	cgf_missing_firewalls_done(&m);
	cgf_unit_firewalls_done(&u);
}

static void test_where_units_appear(struct test_state *t) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = load(
		"version: 1\n"
		"filters:\n"
		"  guard: {type: deny-all, direction: egress}\n"
		"  count: {type: count-only, direction: egress}\n"
		"attachments:\n"
		"  - {cgroup: system.slice, filters: [guard], mode: none}\n"
		"  - {cgroup: user.slice, filters: [count]}\n"
		"  - {cgroup: machine.slice/*.scope, filters: [guard], mode: none}\n"
		"  - {cgroup: pods, filters: [guard], mode: none}\n");
	static const char *const watched[] = {
		"system.slice", "system.slice/system-getty.slice", "system.slice/a.slice/a-b.slice",
	};
	static const char *const not_watched[] = {
		".", "system.slice/web.service", "system.slice/web.service/x.slice", "user.slice",
		"user.slice/user-1000.slice", "system.slice2", "machine.slice", "machine.slice/machine-a.scope",
		"machine.slice/machine-a.scope/x.slice", "pods", "pods/a.slice",
	};
	char *tree[] = {
		".", "system.slice", "system.slice/new.service", "system.slice/new.service/inner.service",
		"system.slice/system-x.slice", "system.slice/system-x.slice/x@1.service",
		"system.slice/system-x.slice/_cpu.service", "system.slice/old.service", "system.slice/payload",
		"system.slice/system-x.slice/x.target", "user.slice", "user.slice/u.service", "machine.slice/machine-a.scope",
		"machine.slice/machine-a.scope/evil.service", "pods/p.service",
	};
	const char *created[] = { "system.slice/new.service", "system.slice/system-x.slice", "user.slice/u.service",
				  "machine.slice/machine-a.scope/evil.service", "pods/p.service" };
	char **found = NULL;
	size_t n = 0, more = 0;

	for (size_t i = 0; i < ELEMENTSOF(watched); i++)
		CHECK(t, cgf_coexist_watches(p, watched[i]), "'%s' watched", watched[i]);
	for (size_t i = 0; i < ELEMENTSOF(not_watched); i++)
		CHECK(t, !cgf_coexist_watches(p, not_watched[i]), "'%s' not watched", not_watched[i]);

	REQUIRE(cgf_coexist_new_unit_cgroups(p, tree, ELEMENTSOF(tree), created, ELEMENTSOF(created), 10, &found, &n,
					     &more) == 0);
	CHECK(t, n == 4 && more == 0 && streq(found[0], "system.slice/new.service") &&
			 streq(found[1], "system.slice/system-x.slice") &&
			 streq(found[2], "system.slice/system-x.slice/x@1.service") &&
			 streq(found[3], "system.slice/system-x.slice/_cpu.service"),
	      "new units in systemd's tree below the none (%zu): not inside a service, not an old one, not a "
	      "target, not below a multi, not what a tenant names like a unit below a none on a scope or a "
	      "directory",
	      n);
	for (size_t i = 0; i < n; i++)
		free(found[i]);
	free(found);
	REQUIRE(cgf_coexist_new_unit_cgroups(p, tree, ELEMENTSOF(tree), created, ELEMENTSOF(created), 1, &found, &n,
					     &more) == 0);
	CHECK(t, n == 1 && more == 3, "at most max, the rest counted (%zu, %zu more)", n, more);
	for (size_t i = 0; i < n; i++)
		free(found[i]);
	free(found);
}

/* Which nones can have a unit of PID 1's below them: asked about only
 * then. */
static void test_may_hold_units(struct test_state *t) {
	static const struct {
		const char *cgroup;
		bool may;
	} cases[] = {
		{ ".", true },
		{ "system.slice", true },
		{ "machine.slice/*.scope", true },
		{ "machine.slice/*", true },
		{ "*", true },
		{ "a.slice/b.slice/web.service", true },
		{ "pods/*", false },
		{ "*/web.service", true },
		{ "pods", false },
		{ "cgf-du/host", false },
		{ "system.slice/web.service/inner", false },
		{ "machine.slice/machine-x.scope/payload.service", false },
		{ "a.slice/*/x", false },
		{ "a.slice/*/x.[st]*", true },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_free_ char *text = NULL;
		_cleanup_(cgf_policy_freep) struct cgf_policy *p = NULL;

		REQUIRE(asprintf(&text,
				 "version: 1\n"
				 "filters:\n"
				 "  guard: {type: deny-all, direction: egress}\n"
				 "attachments:\n"
				 "  - {cgroup: '%s', filters: [guard], mode: none}\n",
				 cases[i].cgroup) >= 0);
		p = load(text);
		CHECK(t, cgf_coexist_may_hold_units(p, false) == cases[i].may, "none on '%s': %s", cases[i].cgroup,
		      cases[i].may ? "may hold units" : "holds no unit");
	}
}

int main(void) {
	struct test_state t = {};

	test_units_refused(&t);
	test_opt_in(&t);
	test_nothing_below(&t);
	test_globs_and_root(&t);
	test_programs_now(&t);
	test_many_named(&t);
	test_inherited(&t);
	test_missing(&t);
	test_where_units_appear(&t);
	test_may_hold_units(&t);
	return test_finish(&t, "coexist");
}
