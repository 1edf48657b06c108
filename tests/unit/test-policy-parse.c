/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The parser on valid policies: each table entry is a policy file and the
 * model it must produce, written out one node per line with positions
 * (line:column) so that every value and every position is compared.  Then
 * the small pure helpers of the model.
 */
#include <arpa/inet.h>
#include <errno.h>

#include "policy-parse.h"
#include "policy-validate.h"
#include "policy.h"
#include "tests.h"

static void pos(FILE *f, struct cgf_pos p) {
	if (cgf_pos_is_set(p))
		fprintf(f, "@%u:%u", p.line, p.column);
}

static void dump_rules(FILE *f, const char *kind, const struct cgf_rule *r, size_t n) {
	for (size_t i = 0; i < n; i++) {
		char net[CGF_CIDR_STRLEN];

		cgf_cidr_format_network(r[i].family, r[i].addr, r[i].prefixlen, net);
		fprintf(f, "  %s", kind);
		pos(f, r[i].pos);
		fprintf(f, " cidr=%s", net);
		pos(f, r[i].cidr_pos);
		fprintf(f, " protocol=%s", cgf_protocol_to_string(r[i].protocol));
		pos(f, r[i].protocol_pos);
		for (size_t j = 0; j < r[i].n_ports; j++) {
			fprintf(f, "%s%u-%u", j ? "," : " ports=", r[i].ports[j].lo, r[i].ports[j].hi);
			pos(f, r[i].ports[j].pos);
		}
		fputc('\n', f);
	}
}

static void dump_ref(FILE *f, const char *kind, const struct cgf_filter_ref *r) {
	fprintf(f, "  %s %s", kind, r->filter);
	pos(f, r->pos);
	if (r->anchor != CGF_ANCHOR_NONE) {
		fprintf(f, " %s=%s", cgf_anchor_to_string(r->anchor), r->anchor_filter);
		pos(f, r->anchor_pos);
	}
	fputc('\n', f);
}

static char *dump(const struct cgf_policy *p) {
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	REQUIRE(f);
	for (size_t i = 0; i < p->n_filters; i++) {
		const struct cgf_filter *x = &p->filters[i];

		fprintf(f, "filter %s", x->name);
		pos(f, x->pos);
		fprintf(f, " type=%s", cgf_filter_type_to_string(x->type));
		pos(f, x->type_pos);
		fprintf(f, " direction=%s", cgf_direction_to_string(x->direction));
		pos(f, x->direction_pos);
		if (x->type == CGF_FILTER_RULES) {
			fprintf(f, " default=%s", cgf_verdict_to_string(x->default_verdict));
			pos(f, x->default_pos);
			fprintf(f, " enforce=%s", x->audit ? "false" : "true");
			pos(f, x->enforce_pos);
		}
		if (x->object) {
			fprintf(f, " object=%s", x->object);
			pos(f, x->object_pos);
			fprintf(f, " program=%s", x->program);
			pos(f, x->program_pos);
		}
		fputc('\n', f);
		dump_rules(f, "allow", x->allow, x->n_allow);
		dump_rules(f, "deny", x->deny, x->n_deny);
	}
	for (size_t i = 0; i < p->n_attachments; i++) {
		const struct cgf_attachment *a = &p->attachments[i];

		fprintf(f, "attachment");
		pos(f, a->pos);
		fprintf(f, " cgroup=%s", a->cgroup);
		pos(f, a->cgroup_pos);
		fprintf(f, " mode=%s", cgf_mode_to_string(a->mode));
		pos(f, a->mode_pos);
		fprintf(f, " preorder=%s", a->preorder ? "true" : "false");
		pos(f, a->preorder_pos);
		fputc('\n', f);
		for (size_t j = 0; j < a->n_filters; j++)
			dump_ref(f, "filter", &a->filters[j]);
		for (size_t j = 0; j < a->n_tenants; j++) {
			fprintf(f, "  tenant %s", a->tenants[j].pattern);
			pos(f, a->tenants[j].pos);
			fputc('\n', f);
			for (size_t k = 0; k < a->tenants[j].n_filters; k++)
				dump_ref(f, "  filter", &a->tenants[j].filters[k]);
		}
	}
	REQUIRE(fclose(f) == 0);
	return buf;
}

static const struct {
	const char *name, *yaml, *model;
} cases[] = {
	{
		"minimal",
		"version: 1\n",
		"",
	},
	{
		"a rules filter with every key",
		"version: 1\n"
		"filters:\n"
		"  web-out:\n"
		"    type: rules\n"
		"    direction: egress\n"
		"    default: deny\n"
		"    allow:\n"
		"      - cidr: 10.0.0.0/8\n"
		"        protocol: tcp\n"
		"        ports: [443, \"8000-8080\", 22]\n"
		"      - cidr: 2001:db8::/32\n"
		"        protocol: icmpv6\n"
		"    deny:\n"
		"      - cidr: 192.0.2.7\n"
		"      - {cidr: \"::/0\", protocol: udp, ports: [53]}\n"
		"    enforce: false\n",
		"filter web-out@3:3 type=rules@4:11 direction=egress@5:16 default=deny@6:14 enforce=false@16:14\n"
		"  allow@8:9 cidr=10.0.0.0/8@8:15 protocol=tcp@9:19 ports=443-443@10:17,8000-8080@10:22,22-22@10:35\n"
		"  allow@11:9 cidr=2001:db8::/32@11:15 protocol=icmpv6@12:19\n"
		"  deny@14:9 cidr=192.0.2.7/32@14:15 protocol=any\n"
		"  deny@15:9 cidr=::/0@15:16 protocol=udp@15:34 ports=53-53@15:47\n",
	},
	{
		"the other filter types, flow style, defaults",
		"version: 1\n"
		"filters:\n"
		"  guard: {type: deny-all, direction: ingress}\n"
		"  count: {type: count-only, direction: egress}\n"
		"  mark: {type: object, direction: egress, object: /usr/lib/x.bpf.o, program: mark_it}\n"
		"  open: {type: rules, direction: egress}\n"
		"  strict: {type: rules, direction: egress, enforce: true}\n",
		"filter guard@3:3 type=deny-all@3:17 direction=ingress@3:38\n"
		"filter count@4:3 type=count-only@4:17 direction=egress@4:40\n"
		"filter mark@5:3 type=object@5:16 direction=egress@5:35 object=/usr/lib/x.bpf.o@5:51 "
		"program=mark_it@5:78\n"
		"filter open@6:3 type=rules@6:16 direction=egress@6:34 default=allow enforce=true\n"
		"filter strict@7:3 type=rules@7:18 direction=egress@7:36 default=allow enforce=true@7:53\n",
	},
	{
		"attachments: defaults, mode, preorder, anchors, tenants in order",
		"version: 1\n"
		"attachments:\n"
		"  - cgroup: system.slice\n"
		"    filters: [a]\n"
		"  - cgroup: machine.slice\n"
		"    mode: none\n"
		"    preorder: true\n"
		"    filters:\n"
		"      - host\n"
		"      - {filter: b, before: host}\n"
		"      - filter: c\n"
		"        after: b\n"
		"    tenants:\n"
		"      \"web-*\": [t1, t2]\n"
		"      db: []\n"
		"      \"*\": [t3]\n"
		"  - {cgroup: ., filters: [r], mode: override, preorder: false}\n",
		"attachment@3:5 cgroup=system.slice@3:13 mode=multi preorder=false\n"
		"  filter a@4:15\n"
		"attachment@5:5 cgroup=machine.slice@5:13 mode=none@6:11 preorder=true@7:15\n"
		"  filter host@9:9\n"
		"  filter b@10:18 before=host@10:29\n"
		"  filter c@11:17 after=b@12:16\n"
		"  tenant web-*@14:7\n"
		"    filter t1@14:17\n"
		"    filter t2@14:21\n"
		"  tenant db@15:7\n"
		"  tenant *@16:7\n"
		"    filter t3@16:13\n"
		"attachment@17:5 cgroup=.@17:14 mode=override@17:37 preorder=false@17:57\n"
		"  filter r@17:27\n",
	},
	{
		"YAML forms: comments, markers, quotes, CR LF, block scalars",
		"# a comment\r\n"
		"%YAML 1.1\r\n"
		"---\r\n"
		"version: \"1\"   # quoted is the same\r\n"
		"filters:\r\n"
		"  'quoted-name':\r\n"
		"    type: >-\r\n"
		"      deny-all\r\n"
		"    direction: \"egress\"\r\n"
		"...\r\n",
		"filter quoted-name@6:3 type=deny-all@7:11 direction=egress@9:16\n",
	},
};

static void test_cases(struct test_state *t) {
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
		const struct cgf_source *s;
		struct cgf_diags d = CGF_DIAGS_INIT;
		_cleanup_free_ char *got = NULL, *diags = NULL;

		REQUIRE(p);
		REQUIRE(cgf_policy_add_source(p, "t.yaml", cases[i].yaml, strlen(cases[i].yaml), &s) == 0);
		REQUIRE(cgf_policy_parse(p, s, &d) == 0);
		REQUIRE(cgf_diags_render_string(&d, 0, &diags) == 0);
		CHECK_STREQ(t, diags, "", cases[i].name);
		got = dump(p);
		CHECK_STREQ(t, got, cases[i].model, cases[i].name);
		cgf_diags_done(&d);
	}
}

static void test_prog_names(struct test_state *t) {
	static const struct {
		const char *filter, *prog;
	} table[] = {
		{ "web", "cgf_web" },
		{ "host-egress", "cgf_host_egress" },           /* 11 characters: kept whole */
		{ "host-ingress", "cgf_host_id3616" },           /* 12: cut and hashed */
		{ "allow-monitoring-to-prometheus", "cgf_allow_06c11" },
		{ "0", "cgf_0" },
	};
	char name[CGF_PROG_NAME_MAX + 1];

	for (size_t i = 0; i < ELEMENTSOF(table); i++) {
		cgf_filter_prog_name(table[i].filter, name);
		CHECK_STREQ(t, name, table[i].prog, table[i].filter);
		CHECK(t, strlen(name) <= CGF_PROG_NAME_MAX, "%s: too long", name);
	}
	CHECK(t, cgf_filter_name_is_valid("a") && cgf_filter_name_is_valid("0-a-"), "valid names");
	CHECK(t, !cgf_filter_name_is_valid("") && !cgf_filter_name_is_valid("-a") && !cgf_filter_name_is_valid("A") &&
		      !cgf_filter_name_is_valid("a_b") && !cgf_filter_name_is_valid("a.b"),
	      "invalid names");
	CHECK(t, cgf_filter_name_is_valid("abcdefghijklmnopqrstuvwxyz012345") &&
		      !cgf_filter_name_is_valid("abcdefghijklmnopqrstuvwxyz0123456"),
	      "32 characters at most");
}

static void test_cidr(struct test_state *t) {
	static const struct {
		const char *text;
		int r, family;
		unsigned prefixlen;
		bool host_bits;
		const char *network;
	} table[] = {
		{ "10.0.0.0/8", 0, AF_INET, 8, false, "10.0.0.0/8" },
		{ "10.1.2.3/8", 0, AF_INET, 8, true, "10.0.0.0/8" },
		{ "10.1.2.3", 0, AF_INET, 32, false, "10.1.2.3/32" },
		{ "0.0.0.0/0", 0, AF_INET, 0, false, "0.0.0.0/0" },
		{ "::/0", 0, AF_INET6, 0, false, "::/0" },
		{ "2001:db8::1/127", 0, AF_INET6, 127, true, "2001:db8::/127" },
		{ "::ffff:10.0.0.0/104", 0, AF_INET6, 104, false, "::ffff:10.0.0.0/104" },
		{ .text = "10.0.0.0/33", .r = -ERANGE },
		{ .text = "::/129", .r = -ERANGE },
		{ .text = "10.0.0.0/", .r = -ERANGE },
		{ .text = "10.0.0.0/8a", .r = -ERANGE },
		{ .text = "10.0.0.0/0008", .r = -ERANGE },
		{ .text = "10.0.0/8", .r = -EINVAL },
		{ .text = "/8", .r = -EINVAL },
		{ .text = "", .r = -EINVAL },
		{ .text = "fe80::1%lo", .r = -EINVAL },
		{ .text = "example.com/24", .r = -EINVAL },
	};

	for (size_t i = 0; i < ELEMENTSOF(table); i++) {
		uint8_t addr[16];
		uint8_t len;
		int family, r;
		char net[CGF_CIDR_STRLEN];

		r = cgf_cidr_parse(table[i].text, &family, addr, &len);
		CHECK(t, r == table[i].r, "'%s': %d", table[i].text, r);
		if (r < 0 || table[i].r < 0)
			continue;
		CHECK(t, family == table[i].family && len == table[i].prefixlen, "'%s': family/len", table[i].text);
		CHECK(t, cgf_cidr_has_host_bits(family, addr, len) == table[i].host_bits, "'%s': host bits",
		      table[i].text);
		cgf_cidr_format_network(family, addr, len, net);
		CHECK_STREQ(t, net, table[i].network, table[i].text);
	}
}

static void test_strings(struct test_state *t) {
	CHECK(t, cgf_filter_type_from_string("deny-all") == CGF_FILTER_DENY_ALL, "type");
	CHECK(t, cgf_filter_type_from_string("deny") == -EINVAL, "type unknown");
	CHECK(t, cgf_protocol_from_string("any") == -EINVAL, "'any' is not written in a policy");
	CHECK(t, cgf_protocol_from_string("icmpv6") == CGF_PROTO_ICMPV6, "protocol");
	CHECK(t, cgf_mode_from_string("override") == CGF_MODE_OVERRIDE, "mode");
	CHECK(t, !cgf_mode_to_string(_CGF_MODE_MAX), "out of range");
	CHECK(t, cgf_mode_from_string(NULL) == -EINVAL, "NULL");
	CHECK(t, cgf_policy_free(NULL) == NULL, "NULL-safe destructor");

	/* "did you mean": transpositions count as one edit. */
	CHECK(t, edit_distance("wbe", "web") == 1, "transposition");
	CHECK(t, edit_distance("directon", "direction") == 1, "deletion");
	CHECK(t, edit_distance("", "abc") == 3 && edit_distance("abc", "abc") == 0, "edges");
	CHECK(t, is_close_match("gurd", "guard", NULL) && !is_close_match("zz", "a", NULL), "closeness");
}

/* Files are merged: a second parse appends, names stay findable. */
static void test_merge(struct test_state *t) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	static const char a[] = "version: 1\nfilters:\n  x: {type: deny-all, direction: egress}\n";
	static const char b[] = "version: 1\nfilters:\n  y: {type: deny-all, direction: egress}\n"
				"attachments:\n  - {cgroup: a, filters: [x, y]}\n";
	const struct cgf_source *sa, *sb;
	struct cgf_diags d = CGF_DIAGS_INIT;
	struct cgf_features f = CGF_FEATURES_PATCHED;

	REQUIRE(p);
	REQUIRE(cgf_policy_add_source(p, "a", a, strlen(a), &sa) == 0);
	REQUIRE(cgf_policy_add_source(p, "b", b, strlen(b), &sb) == 0);
	REQUIRE(cgf_policy_parse(p, sa, &d) == 0 && cgf_policy_parse(p, sb, &d) == 0);
	REQUIRE(cgf_policy_validate(p, &f, &d) == 0);
	CHECK(t, d.n == 0, "%zu diagnostics", d.n);
	CHECK(t, p->n_filters == 2 && p->n_attachments == 1 && p->n_sources == 2, "merged");
	CHECK(t, cgf_policy_find_filter(p, "y") && cgf_policy_find_filter(p, "y")->pos.source == sb, "y from b");
	CHECK(t, sa->index == 0 && sb->index == 1, "source order");
	cgf_diags_done(&d);
}

int main(void) {
	struct test_state t = {};

	test_cases(&t);
	test_prog_names(&t);
	test_cidr(&t);
	test_strings(&t);
	test_merge(&t);
	return test_finish(&t, "policy parse");
}
