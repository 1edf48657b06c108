/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The validator, table-driven: each case is one or more files (merged in
 * order, as drop-ins are), the kernel's features, and the exact
 * diagnostics.  Most are policies that must pass: the malformed ones live
 * in tests/policies/bad/, these guard against false alarms and pin the
 * limits.
 */
#include "policy-load.h"
#include "policy-validate.h"
#include "tests.h"

#define F(name, type, dir) "  " name ": {type: " type ", direction: " dir "}\n"

struct file {
	const char *name, *text;
};

static const struct {
	const char *name;
	struct file files[4];
	bool stock;
	const char *expected;
} cases[] = {
	{
		"sibling and cousin cgroups do not meet",
		{ { "a.yaml",
		    "version: 1\nfilters:\n" F("g", "deny-all", "egress") F("c", "count-only", "egress")
		    "attachments:\n"
		    "  - {cgroup: machine.slice/web-*, filters: [g], mode: none}\n"
		    "  - {cgroup: machine.slice/db-*/payload, filters: [c]}\n"
		    "  - {cgroup: machine.slice/web, filters: [c]}\n"      /* 'web' does not match 'web-*' */
		    "  - {cgroup: system.slice, filters: [g], mode: none}\n"
		    "  - {cgroup: system.slice.d/x, filters: [c]}\n" } },
		false,
		"",
	},
	{
		"directions are separate attach types",
		{ { "a.yaml",
		    "version: 1\nfilters:\n" F("out", "deny-all", "egress") F("in", "count-only", "ingress")
		    "attachments:\n"
		    "  - {cgroup: a, filters: [out, in], mode: none}\n"  /* one program per direction */
		    "  - {cgroup: a/b, filters: [in]}\n"                 /* below none, on ingress only */
		    "  - {cgroup: c, filters: [out], mode: none}\n"
		    "  - {cgroup: c, filters: [in], mode: multi}\n" } }, /* modes differ per direction */
		false,
		"a.yaml:7:14: error: cgroup 'a/b' lies below 'a', which has mode none on ingress: the kernel "
		"refuses any ingress program there (EPERM)\n"
		"a.yaml:6:43: note: mode none is set here; its 'tenants' give children rules of their own\n",
	},
	{
		"override and multi allow attachments below",
		{ { "a.yaml",
		    "version: 1\nfilters:\n" F("x", "count-only", "egress") F("y", "count-only", "egress")
		    "attachments:\n"
		    "  - {cgroup: a, filters: [x], mode: override}\n"
		    "  - {cgroup: a/b, filters: [y], mode: none}\n"
		    "  - {cgroup: m, filters: [x]}\n"
		    "  - {cgroup: m/n, filters: [y], mode: none}\n"
		    "  - {cgroup: m/o, filters: [x, y]}\n" } },
		false,
		"",
	},
	{
		"ordering across files without a cycle, preorder with preorder",
		{ { "main.yaml",
		    "version: 1\nfilters:\n" F("a", "count-only", "egress") F("b", "count-only", "egress")
		    F("p", "count-only", "egress") F("q", "count-only", "egress")
		    "attachments:\n"
		    "  - {cgroup: s, filters: [a, b]}\n"
		    "  - {cgroup: s, filters: [p], preorder: true}\n" },
		  { "10.yaml",
		    "version: 1\nfilters:\n" F("c", "count-only", "egress")
		    "attachments:\n"
		    "  - cgroup: s\n"
		    "    filters: [{filter: c, before: b}, {filter: q, after: p}]\n"
		    "    preorder: false\n" } },
		false,
		"10.yaml:6:58: error: 'q' is not preorder and 'p' is preorder: the kernel runs preorder programs in "
		"a pass of their own and cannot order them against the others\n"
		"main.yaml:9:27: note: 'p' is attached here\n",
	},
	{
		"tenants that work",
		{ { "a.yaml",
		    "version: 1\nfilters:\n" F("host", "rules", "egress") F("count", "count-only", "egress")
		    F("host-in", "rules", "ingress") F("t", "rules", "egress") F("u", "rules", "ingress")
		    "attachments:\n"
		    "  - cgroup: machine.slice\n"
		    "    filters: [count, host, host-in]\n"   /* the first rules filter per direction */
		    "    mode: multi\n"
		    "    tenants:\n"
		    "      web-1.scope: [t, u]\n"
		    "      \"web-*\": [t]\n"                  /* after the literal: fine */
		    "      special: []\n"                      /* nothing more for this one */
		    "      \"*\": [u]\n" } },
		false,
		"",
	},
	{
		"64 programs is the limit, not an error",
		{ { "a.yaml",
		    "version: 1\nfilters:\n"
		    F("c1", "count-only", "egress") F("c2", "count-only", "egress") F("c3", "count-only", "egress")
		    F("c4", "count-only", "egress")
		    "attachments:\n"
		    "  - {cgroup: s, filters: [c1, c2, c3, c4]}\n" } },
		false,
		"",
	},
	{
		"a stock kernel: no preorder, no anchors, no errors",
		{ { "a.yaml",
		    "version: 1\nfilters:\n" F("a", "count-only", "egress")
		    "attachments:\n"
		    "  - {cgroup: s, filters: [a], preorder: false, mode: override}\n" } },
		true,
		"",
	},
	{
		"a stock kernel refuses each use of the series",
		{ { "a.yaml",
		    "version: 1\nfilters:\n" F("a", "count-only", "egress") F("b", "count-only", "egress")
		    "attachments:\n"
		    "  - {cgroup: s, filters: [a], preorder: true}\n"
		    "  - {cgroup: t, filters: [a, {filter: b, after: a}]}\n" } },
		true,
		"a.yaml:6:41: error: preorder: true needs the kernel-patch series (BPF_F_PREORDER, Linux ≥ 6.15 or "
		"cgfilterd's kernel-patch/)\n"
		"a.yaml:7:49: error: after: needs the kernel-patch series (BPF_F_AFTER, Linux ≥ 6.17 or "
		"cgfilterd's kernel-patch/)\n",
	},
	{
		"a name defined in three files: each repeat points at the first",
		{ { "a.yaml", "version: 1\nfilters:\n" F("x", "count-only", "egress") },
		  { "b.yaml", "version: 1\nfilters:\n" F("x", "count-only", "egress") },
		  { "c.yaml", "version: 1\nfilters:\n" F("x", "deny-all", "ingress") } },
		false,
		"b.yaml:3:3: error: filter 'x' is already defined\n"
		"a.yaml:3:3: note: first defined here\n"
		"c.yaml:3:3: error: filter 'x' is already defined\n"
		"a.yaml:3:3: note: first defined here\n",
	},
	{
		"a broken filter is not reported again where it is used",
		{ { "a.yaml",
		    "version: 1\nfilters:\n"
		    "  x: {type: nope, direction: egress}\n"
		    "attachments:\n"
		    "  - {cgroup: s, filters: [x]}\n"
		    "  - {cgroup: /bad, filters: [x]}\n" } },
		false,
		"a.yaml:3:13: error: invalid type 'nope'; expected rules, deny-all, count-only or object\n"
		"a.yaml:6:14: error: invalid cgroup '/bad': write the path relative to the cgroup2 mount, without "
		"a leading '/'\n",
	},
};

static void run(struct test_state *t, size_t i) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	struct cgf_features features = cases[i].stock ? CGF_FEATURES_STOCK : CGF_FEATURES_PATCHED;
	struct cgf_diags d = CGF_DIAGS_INIT;
	_cleanup_free_ char *out = NULL;

	REQUIRE(p);
	for (size_t j = 0; j < ELEMENTSOF(cases[i].files) && cases[i].files[j].name; j++)
		REQUIRE(cgf_policy_load_text(p, cases[i].files[j].name, cases[i].files[j].text,
					     strlen(cases[i].files[j].text), &d) == 0);
	REQUIRE(cgf_policy_validate(p, &features, &d) == 0);
	cgf_diags_sort(&d);
	REQUIRE(cgf_diags_render_string(&d, 0, &out) == 0);
	CHECK_STREQ(t, out, cases[i].expected, cases[i].name);
	cgf_diags_done(&d);
}

/* 64 then 65 programs, spread over two attachments of one cgroup. */
static void test_limit(struct test_state *t) {
	for (unsigned total = 64; total <= 65; total++) {
		_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
		struct cgf_features features = CGF_FEATURES_PATCHED;
		struct cgf_diags d = CGF_DIAGS_INIT;
		_cleanup_free_ char *text = NULL, *out = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&text, &size);

		REQUIRE(p && f);
		fprintf(f, "version: 1\nfilters:\n");
		for (unsigned i = 0; i < total; i++)
			fprintf(f, "  f%u: {type: count-only, direction: egress}\n", i);
		fprintf(f, "attachments:\n  - cgroup: s\n    filters:\n");
		for (unsigned i = 0; i < 40; i++)
			fprintf(f, "      - f%u\n", i);
		fprintf(f, "  - cgroup: s\n    filters:\n");
		for (unsigned i = 40; i < total; i++)
			fprintf(f, "      - f%u\n", i);
		REQUIRE(fclose(f) == 0);

		REQUIRE(cgf_policy_load_text(p, "gen.yaml", text, size, &d) == 0);
		REQUIRE(cgf_policy_validate(p, &features, &d) == 0);
		REQUIRE(cgf_diags_render_string(&d, 0, &out) == 0);
		if (total == 64)
			CHECK_STREQ(t, out, "", "64 programs");
		else
			/* f64: 2 + 65 filters + 3 + 40 entries + 2 + 25th entry */
			CHECK_STREQ(t, out,
				    "gen.yaml:137:9: error: more than 64 programs on cgroup 's' egress: this is "
				    "number 65; the kernel refuses it (E2BIG)\n",
				    "65 programs");
		cgf_diags_done(&d);
	}
}

int main(void) {
	struct test_state t = {};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		run(&t, i);
	test_limit(&t);
	return test_finish(&t, "policy validate");
}
