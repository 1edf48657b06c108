/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * expand, table-driven: a policy (validated first: expand takes only
 * valid ones), a snapshot of the cgroup tree, and the exact desired state
 * it gives, one list per line:
 *     CGROUP DIRECTION MODE: FILTER@IDENTITY[/p]...
 *       tenant CHILD via CARRIER: FILTER...
 * Identities come from a test function ("id-" and the filter name), except
 * in the tests of the default identity.  Then a policy expanded and
 * planned against an empty kernel, the whole path without a kernel.
 */
#include "expand.h"
#include "plan-test.h"
#include "policy-load.h"
#include "policy-validate.h"

#define F(name, type, dir) "  " name ": {type: " type ", direction: " dir "}\n"

static int test_identity(const struct cgf_filter *f, void *userdata, char **ret) {
	unsigned *calls = userdata;

	if (calls)
		(*calls)++;
	return asprintf(ret, "id-%s", f->name) < 0 ? -ENOMEM : 0;
}

static char *render(const struct cgf_desired *d) {
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	REQUIRE(f);
	for (size_t i = 0; i < d->n_lists; i++) {
		const struct cgf_desired_list *l = &d->lists[i];

		fprintf(f, "%s %s %s:", l->cgroup, cgf_direction_to_string(l->direction), cgf_mode_to_string(l->mode));
		for (size_t j = 0; j < l->n_entries; j++)
			fprintf(f, " %s@%s%s", l->entries[j].filter, l->entries[j].identity, l->entries[j].preorder ? "/p" : "");
		fputc('\n', f);
		for (size_t j = 0; j < l->n_tenants; j++) {
			fprintf(f, "  tenant %s via %s:", l->tenants[j].cgroup, l->tenants[j].carrier);
			for (size_t k = 0; k < l->tenants[j].n_filters; k++)
				fprintf(f, " %s", l->tenants[j].filters[k]);
			fputc('\n', f);
		}
	}
	REQUIRE(fclose(f) == 0);
	return s;
}

static struct cgf_policy *load(const char *const *files, bool must_be_valid) {
	struct cgf_policy *p = cgf_policy_new();
	struct cgf_diags diags = CGF_DIAGS_INIT;
	const struct cgf_features features = CGF_FEATURES_PATCHED;

	REQUIRE(p);
	for (size_t i = 0; files[i]; i++) {
		char name[32];

		snprintf(name, sizeof(name), "%zu.yaml", i);
		REQUIRE(cgf_policy_load_text(p, name, files[i], strlen(files[i]), &diags) == 0);
	}
	REQUIRE(cgf_policy_validate(p, &features, &diags) == 0);
	if (must_be_valid && diags.n_errors > 0) {
		_cleanup_free_ char *s = NULL;

		REQUIRE(cgf_diags_render_string(&diags, 0, &s) == 0);
		fprintf(stderr, "test policy is invalid:\n%s", s);
		REQUIRE(false);
	}
	cgf_diags_done(&diags);
	return p;
}

static const char *const tree[] = {
	".",
	"machine.slice",
	"machine.slice/web-1.scope",
	"machine.slice/web-1.scope/payload",
	"machine.slice/web-2.scope",
	"machine.slice/batch-7.scope",
	"machine.slice/other.scope",
	"system.slice",
	"system.slice/nginx.service",
	"system.slice/db.service",
	"user.slice",
};

static const struct {
	const char *name;
	const char *files[3];
	const char *expected;
} cases[] = {
	{ "a literal path",
	  { "version: 1\nfilters:\n" F("w", "deny-all", "egress")
	    "attachments:\n  - {cgroup: system.slice/nginx.service, filters: [w]}\n" },
	  "system.slice/nginx.service egress multi: w@id-w\n" },
	{ "a path that does not exist gives nothing",
	  { "version: 1\nfilters:\n" F("w", "deny-all", "egress")
	    "attachments:\n  - {cgroup: system.slice/gone.service, filters: [w]}\n" },
	  "" },
	{ "the root cgroup",
	  { "version: 1\nfilters:\n" F("w", "count-only", "ingress")
	    "attachments:\n  - {cgroup: ., filters: [w]}\n" },
	  ". ingress multi: w@id-w\n" },
	{ "'*' stays within one component",
	  { "version: 1\nfilters:\n" F("w", "deny-all", "egress")
	    "attachments:\n  - {cgroup: machine.slice/web-*, filters: [w], mode: override}\n" },
	  "machine.slice/web-1.scope egress override: w@id-w\n"
	  "machine.slice/web-2.scope egress override: w@id-w\n" },
	{ "'**' is the cgroup and everything below",
	  { "version: 1\nfilters:\n" F("w", "count-only", "egress")
	    "attachments:\n  - {cgroup: system.slice/**, filters: [w]}\n" },
	  "system.slice egress multi: w@id-w\n"
	  "system.slice/db.service egress multi: w@id-w\n"
	  "system.slice/nginx.service egress multi: w@id-w\n" },
	{ "'**' in the middle, '?' and a bracket",
	  { "version: 1\nfilters:\n" F("w", "count-only", "egress")
	    "attachments:\n  - {cgroup: '**/web-?.scope/pay[a-z]oad', filters: [w]}\n" },
	  "machine.slice/web-1.scope/payload egress multi: w@id-w\n" },
	{ "one attachment, both directions",
	  { "version: 1\nfilters:\n" F("out", "deny-all", "egress") F("in", "count-only", "ingress")
	    F("out2", "count-only", "egress")
	    "attachments:\n  - {cgroup: user.slice, filters: [out, in, out2], preorder: true}\n" },
	  "user.slice ingress multi: in@id-in/p\n"
	  "user.slice egress multi: out@id-out/p out2@id-out2/p\n" },
	{ "attachments merge in file order",
	  { "version: 1\nfilters:\n" F("a", "count-only", "egress") F("b", "count-only", "egress")
	    "attachments:\n  - {cgroup: user.slice, filters: [b]}\n",
	    "version: 1\nfilters:\n" F("c", "count-only", "egress")
	    "attachments:\n  - {cgroup: user.slice, filters: [a, c]}\n" },
	  "user.slice egress multi: b@id-b a@id-a c@id-c\n" },
	{ "a glob and a literal meet: file order",
	  { "version: 1\nfilters:\n" F("g", "count-only", "egress") F("l", "count-only", "egress")
	    "attachments:\n"
	    "  - {cgroup: system.slice/nginx.service, filters: [l]}\n"
	    "  - {cgroup: system.slice/*, filters: [g]}\n" },
	  "system.slice/db.service egress multi: g@id-g\n"
	  "system.slice/nginx.service egress multi: l@id-l g@id-g\n" },
	{ "before: and after: across files; 'after' means later, not right after",
	  { "version: 1\nfilters:\n" F("a", "count-only", "egress") F("b", "count-only", "egress")
	    F("c", "count-only", "egress") F("d", "count-only", "egress")
	    "attachments:\n  - {cgroup: user.slice, filters: [a, b]}\n",
	    "version: 1\nattachments:\n"
	    "  - cgroup: user.slice\n    filters: [{filter: c, before: a}, {filter: d, after: a}]\n" },
	  "user.slice egress multi: c@id-c a@id-a b@id-b d@id-d\n" },
	{ "an anchor pulls an earlier attachment's filter behind a later one",
	  { "version: 1\nfilters:\n" F("a", "count-only", "egress") F("b", "count-only", "egress")
	    F("c", "count-only", "egress")
	    "attachments:\n"
	    "  - {cgroup: user.slice, filters: [{filter: a, after: c}]}\n"
	    "  - {cgroup: user.slice, filters: [b]}\n"
	    "  - {cgroup: user.slice, filters: [c]}\n" },
	  "user.slice egress multi: b@id-b c@id-c a@id-a\n" },
	{ "preorder and plain attachments on one cgroup, ordered",
	  { "version: 1\nfilters:\n" F("p", "count-only", "egress") F("q", "count-only", "egress")
	    F("s", "count-only", "egress")
	    "attachments:\n"
	    "  - {cgroup: system.slice, filters: [s]}\n"
	    "  - {cgroup: system.slice, filters: [p], preorder: true}\n"
	    "  - {cgroup: system.slice, filters: [{filter: q, before: p}], preorder: true}\n" },
	  "system.slice egress multi: s@id-s q@id-q/p p@id-p/p\n" },
	{ "tenants: per child, first match, per direction",
	  { "version: 1\nfilters:\n"
	    "  host-out: {type: rules, direction: egress}\n"
	    "  host-in: {type: rules, direction: ingress}\n"
	    "  web: {type: rules, direction: egress}\n"
	    "  web-in: {type: rules, direction: ingress}\n"
	    "  batch: {type: rules, direction: egress}\n"
	    "  quarantine: {type: rules, direction: egress, default: deny}\n"
	    "attachments:\n"
	    "  - cgroup: machine.slice\n"
	    "    filters: [host-out, host-in]\n"
	    "    mode: none\n"
	    "    tenants:\n"
	    "      'web-2.scope': []\n"
	    "      'web-*.scope': [web, web-in]\n"
	    "      'batch-*.scope': [batch]\n"
	    "      'other.scope': [quarantine]\n" },
	  "machine.slice ingress none: host-in@id-host-in\n"
	  "  tenant machine.slice/batch-7.scope via host-in:\n"
	  "  tenant machine.slice/other.scope via host-in:\n"
	  "  tenant machine.slice/web-1.scope via host-in: web-in\n"
	  "  tenant machine.slice/web-2.scope via host-in:\n"
	  "machine.slice egress none: host-out@id-host-out\n"
	  "  tenant machine.slice/batch-7.scope via host-out: batch\n"
	  "  tenant machine.slice/other.scope via host-out: quarantine\n"
	  "  tenant machine.slice/web-1.scope via host-out: web\n"
	  "  tenant machine.slice/web-2.scope via host-out:\n" },
	{ "tenants on a glob: each match's own children",
	  { "version: 1\nfilters:\n"
	    "  host: {type: rules, direction: egress}\n"
	    "  t: {type: rules, direction: egress}\n"
	    "attachments:\n"
	    "  - cgroup: '*.slice'\n"
	    "    filters: [host]\n"
	    "    tenants: {'*.service': [t]}\n" },
	  "machine.slice egress multi: host@id-host\n"
	  "system.slice egress multi: host@id-host\n"
	  "  tenant system.slice/db.service via host: t\n"
	  "  tenant system.slice/nginx.service via host: t\n"
	  "user.slice egress multi: host@id-host\n" },
};

static void run_cases(struct test_state *t) {
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(cgf_policy_freep) struct cgf_policy *p = NULL;
		_cleanup_(cgf_desired_freep) struct cgf_desired *d = NULL;
		_cleanup_free_ char *got = NULL;
		unsigned calls = 0;
		int r;

		p = load(cases[i].files, true);
		r = cgf_expand(p, tree, ELEMENTSOF(tree), test_identity, &calls, &d);
		CHECK(t, r == 0, "%s: expand failed: %s", cases[i].name, strerror(-r));
		if (r < 0)
			continue;
		got = render(d);
		CHECK_STREQ(t, got, cases[i].expected, cases[i].name);
		/* Once per filter used, not per cgroup. */
		CHECK(t, calls <= p->n_filters, "%s: identity computed %u times", cases[i].name, calls);
	}
}

/* What a validator would have refused: expand says -EINVAL, never a wrong list. */
static void run_errors(struct test_state *t) {
	static const struct {
		const char *name, *text;
	} bad[] = {
		{ "a cycle", "version: 1\nfilters:\n" F("a", "count-only", "egress") F("b", "count-only", "egress")
		  "attachments:\n  - {cgroup: s, filters: [a, {filter: b, before: a}]}\n" },
		{ "modes disagree", "version: 1\nfilters:\n" F("a", "count-only", "egress") F("b", "count-only", "egress")
		  "attachments:\n  - {cgroup: s, filters: [a]}\n  - {cgroup: s, filters: [b], mode: none}\n" },
		{ "an unknown filter", "version: 1\nfilters:\n" F("a", "count-only", "egress")
		  "attachments:\n  - {cgroup: s, filters: [a, zz]}\n" },
		{ "a filter twice on one list", "version: 1\nfilters:\n" F("a", "count-only", "egress")
		  "attachments:\n  - {cgroup: s, filters: [a]}\n  - {cgroup: 's*', filters: [a]}\n" },
	};
	static const char *const snapshot[] = { ".", "s" };

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		const char *files[] = { bad[i].text, NULL };
		_cleanup_(cgf_policy_freep) struct cgf_policy *p = load(files, false);
		struct cgf_desired *d = NULL;
		int r = cgf_expand(p, snapshot, ELEMENTSOF(snapshot), NULL, NULL, &d);

		CHECK(t, r == -EINVAL && !d, "%s: %d", bad[i].name, r);
		cgf_desired_free(d);
	}
}

static char *identity_of(const char *filter_yaml) {
	_cleanup_free_ char *text = NULL;
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = NULL;
	const char *files[2] = {};
	char *id = NULL;

	REQUIRE(asprintf(&text, "version: 1\nfilters:\n  f: %s\n", filter_yaml) >= 0);
	files[0] = text;
	p = load(files, true);
	REQUIRE(cgf_filter_identity(&p->filters[0], NULL, &id) == 0);
	return id;
}

/* The default identity changes with the program, not with map data. */
static void run_identity(struct test_state *t) {
	_cleanup_free_ char *rules = identity_of("{type: rules, direction: egress}");
	_cleanup_free_ char *rules_data = identity_of("{type: rules, direction: egress, default: deny, "
						      "deny: [{cidr: 10.0.0.0/8}]}");
	_cleanup_free_ char *rules_audit = identity_of("{type: rules, direction: egress, enforce: false}");
	_cleanup_free_ char *rules_in = identity_of("{type: rules, direction: ingress}");
	_cleanup_free_ char *deny = identity_of("{type: deny-all, direction: egress}");
	_cleanup_free_ char *obj = identity_of("{type: object, direction: egress, object: /x.o, program: p}");
	_cleanup_free_ char *obj_path = identity_of("{type: object, direction: egress, object: /y.o, program: p}");
	_cleanup_free_ char *obj_prog = identity_of("{type: object, direction: egress, object: /x.o, program: q}");

	CHECK(t, strncmp(rules, "rules:", 6) == 0 && strlen(rules) == 6 + 16, "format: %s", rules);
	CHECK(t, strncmp(obj, "object:", 7) == 0, "format: %s", obj);
	CHECK(t, streq(rules, rules_data), "rules and default are map data: %s %s", rules, rules_data);
	/* The switch between audit and enforce must never replace a program. */
	CHECK(t, streq(rules, rules_audit), "enforce is map data: %s %s", rules, rules_audit);
	CHECK(t, !streq(rules, rules_in), "direction: %s", rules);
	CHECK(t, !streq(rules, deny), "type: %s", rules);
	CHECK(t, !streq(obj, obj_path) && !streq(obj, obj_prog) && !streq(obj_path, obj_prog), "object: %s", obj);
}

/* The whole path without a kernel: policy → expand → plan → simulate. */
static void run_pipeline(struct test_state *t) {
	const char *files[] = {
		"version: 1\nfilters:\n"
		"  host-out: {type: rules, direction: egress}\n"
		"  web: {type: rules, direction: egress}\n"
		F("count", "count-only", "egress") F("guard", "deny-all", "ingress")
		"attachments:\n"
		"  - cgroup: machine.slice\n"
		"    filters: [host-out]\n"
		"    mode: none\n"
		"    tenants: {'web-*.scope': [web]}\n"
		"  - {cgroup: system.slice/**, filters: [count]}\n"
		"  - {cgroup: system.slice, filters: [guard], mode: override}\n",
		NULL,
	};
	const struct cgf_features features = CGF_FEATURES_PATCHED;
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = load(files, true);
	_cleanup_(cgf_desired_freep) struct cgf_desired *d = NULL;
	_cleanup_(cgf_actual_freep) struct cgf_actual *empty = cgf_actual_new(), *after = NULL;
	_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL, *again = NULL;
	_cleanup_free_ char *got = NULL;
	struct invariant_stats stats = {};
	const char *violation;
	char buf[1024];

	REQUIRE(empty);
	REQUIRE(cgf_expand(p, tree, ELEMENTSOF(tree), test_identity, NULL, &d) == 0);
	/* The kernel edge would query every list of desired: revision 1. */
	for (size_t i = 0; i < d->n_lists; i++)
		REQUIRE(cgf_actual_add_list(empty, d->lists[i].cgroup, d->lists[i].direction, 0, 1, NULL) == 0);
	cgf_actual_sort(empty);
	REQUIRE(cgf_plan(d, empty, &features, &plan) == 0);
	got = format_plan(plan);
	CHECK_STREQ(t, got,
		    "#0 attach machine.slice egress host-out@id-host-out none rev 1 (new)\n"
		    "#1 attach system.slice ingress guard@id-guard override rev 1 (new)\n"
		    "#2 attach system.slice egress count@id-count multi rev 1 (new)\n"
		    "#3 attach system.slice/db.service egress count@id-count multi rev 1 (new)\n"
		    "#4 attach system.slice/nginx.service egress count@id-count multi rev 1 (new)\n",
		    "pipeline plan");
	violation = check_invariants(empty, d, &features, plan, &stats, buf, sizeof(buf));
	CHECK(t, !violation, "pipeline: %s", violation);
	REQUIRE(cgf_plan_apply_to_state(empty, plan, &features, &after, NULL, NULL) == 0);
	REQUIRE(cgf_plan(d, after, &features, &again) == 0);
	CHECK(t, again->n_actions == 0 && again->n_reports == 0, "pipeline: planning again gives %zu actions",
	      again->n_actions);
}

int main(void) {
	struct test_state t = {};

	run_cases(&t);
	run_errors(&t);
	run_identity(&t);
	run_pipeline(&t);
	printf("test-expand: %zu policy cases, 4 error cases, identity, pipeline\n", ELEMENTSOF(cases));
	return test_finish(&t, "test-expand");
}
