/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The rules filter's encoder and map planner, without a kernel.
 *
 * A model of the kernel's side stands in for the BPF program: maps as
 * plain arrays, an LPM lookup by scanning for the longest matching
 * prefix, and the program's steps (config, host rule set, tenant hosts
 * and children by level) as bpf-progs/rules.bpf.c takes them.  Against
 * it:
 *   - policy.md's "most specific wins" cases, written as YAML and read by
 *     the project's parser and validator, in both families;
 *   - random filters and packets, judged by the encoded maps and by a
 *     direct reading of policy.md over the rules, which must agree;
 *   - the planner: the same content twice makes no operation; a change
 *     writes new rule sets before anything names them and deletes old
 *     ones only after the barrier, checked after every single operation;
 *     tenants (children before hosts, fail-closed, sub-cgroups); errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/socket.h>

#include "filter-maps.h"
#include "policy-load.h"
#include "policy-validate.h"
#include "tests.h"

static struct test_state T;

/* ---- policies from YAML ---- */

static struct cgf_policy *load_policy(const char *yaml) {
	struct cgf_policy *p = cgf_policy_new();
	struct cgf_diags diags = CGF_DIAGS_INIT;
	const struct cgf_features features = CGF_FEATURES_PATCHED;

	REQUIRE(p);
	REQUIRE(cgf_policy_load_text(p, "test.yaml", yaml, strlen(yaml), &diags) == 0);
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

static const struct cgf_filter *filter(const struct cgf_policy *p, const char *name) {
	const struct cgf_filter *f = cgf_policy_find_filter(p, name);

	REQUIRE(f);
	return f;
}

/* ---- the kernel's side, modelled ---- */

struct image {
	struct cgf_map_entry *e;
	size_t n;
};

static void image_done(struct image *im) {
	free(im->e);
	*im = (struct image) {};
}

static ssize_t image_find(const struct image *im, enum cgf_rmap m, const uint8_t *key) {
	for (size_t i = 0; i < im->n; i++)
		if (im->e[i].map == m && memcmp(im->e[i].key, key, CGF_RMAP_KEY_MAX) == 0)
			return (ssize_t) i;
	return -1;
}

static void image_copy(const struct image *from, struct image *to) {
	*to = (struct image) {};
	for (size_t i = 0; i < from->n; i++) {
		struct cgf_map_entry *x = array_append((void **) &to->e, to->n, sizeof(*x));

		REQUIRE(x);
		*x = from->e[i];
		to->n++;
	}
}

static void image_apply(struct image *im, const struct cgf_map_op *op) {
	ssize_t i;

	if (op->kind == CGF_MAP_BARRIER)
		return;
	i = image_find(im, op->entry.map, op->entry.key);
	if (op->kind == CGF_MAP_DELETE) {
		CHECK(&T, i >= 0, "delete of a missing %s entry", cgf_rmap_name(op->entry.map));
		if (i >= 0)
			im->e[i] = im->e[--im->n];
		return;
	}
	if (i < 0) {
		struct cgf_map_entry *x = array_append((void **) &im->e, im->n, sizeof(*x));

		REQUIRE(x);
		im->n++;
		i = (ssize_t) im->n - 1;
	}
	im->e[i] = op->entry;
}

/* The longest prefix of map m that matches key (bits after prefixlen). */
static const struct cgf_map_entry *lpm(const struct image *im, enum cgf_rmap m, const uint8_t *key, unsigned bits) {
	const struct cgf_map_entry *best = NULL;
	uint32_t best_len = 0;

	for (size_t i = 0; i < im->n; i++) {
		const struct cgf_map_entry *e = &im->e[i];
		uint32_t plen;
		bool match = true;

		if (e->map != m)
			continue;
		memcpy(&plen, e->key, sizeof(plen));
		if (plen > bits)
			continue;
		for (uint32_t b = 0; b < plen && match; b++) {
			unsigned byte = 4 + b / 8, bit = 7 - b % 8;

			match = ((e->key[byte] >> bit) & 1) == ((key[byte] >> bit) & 1);
		}
		if (match && (!best || plen > best_len)) {
			best = e;
			best_len = plen;
		}
	}
	return best;
}

struct pkt {
	int family;
	uint8_t addr[16];
	int pclass;
	bool has_port;
	uint16_t port;
	bool unjudgeable; /* the parser gave up (an IPv6 header chain too long) */
};

static int sim_judge(const struct image *im, uint32_t ruleset, const struct pkt *p) {
	const struct cgf_map_entry *e;
	struct cgf_rule_node node;

	if (p->family == AF_INET) {
		struct cgf_v4_key k = { .prefixlen = 64, .ruleset = ruleset };
		uint8_t key[CGF_RMAP_KEY_MAX] = {};

		memcpy(k.addr, p->addr, 4);
		memcpy(key, &k, sizeof(k));
		e = lpm(im, CGF_RMAP_V4, key, 64);
	} else {
		struct cgf_v6_key k = { .prefixlen = 160, .ruleset = ruleset };
		uint8_t key[CGF_RMAP_KEY_MAX] = {};

		memcpy(k.addr, p->addr, 16);
		memcpy(key, &k, sizeof(k));
		e = lpm(im, CGF_RMAP_V6, key, 160);
	}
	if (!e)
		return CGF_V_DROP;
	memcpy(&node, e->value, sizeof(node));
	if (p->pclass < CGF_PC_PORTED && p->has_port && node.portset[p->pclass]) {
		struct cgf_port_key k = {
			.prefixlen = 64, .ruleset = ruleset, .portset = node.portset[p->pclass],
			.port = { (uint8_t) (p->port >> 8), (uint8_t) p->port },
		};
		uint8_t key[CGF_RMAP_KEY_MAX] = {};
		struct cgf_port_verdict v;

		memcpy(key, &k, sizeof(k));
		e = lpm(im, CGF_RMAP_PORTS, key, 64);
		if (e) {
			memcpy(&v, e->value, sizeof(v));
			return v.verdict;
		}
	}
	return node.verdict[p->pclass];
}

static bool sim_find(const struct image *im, enum cgf_rmap m, const void *key, size_t key_size, void *ret, size_t size) {
	uint8_t k[CGF_RMAP_KEY_MAX] = {};
	ssize_t i;

	memcpy(k, key, key_size);
	i = image_find(im, m, k);
	if (i < 0)
		return false;
	memcpy(ret, im->e[i].value, size);
	return true;
}

/* The program: anc[l] is the socket's ancestor at level l, l <= depth.
 * PASS, DROP, or WOULD_DROP (passed: only audited rule sets drop it). */
static int sim_filter(const struct image *im, const uint64_t *anc, unsigned depth, const struct pkt *p) {
	struct cgf_rules_config cfg;
	uint32_t key = CGF_CONFIG_KEY;
	int v = CGF_V_PASS;

	if (!sim_find(im, CGF_RMAP_CONFIG, &key, sizeof(key), &cfg, sizeof(cfg)))
		return CGF_V_DROP;
	if (p->unjudgeable)
		return cfg.flags & CGF_CONFIG_AUDIT_ALL ? CGF_V_WOULD_DROP : CGF_V_DROP;
	if (sim_judge(im, cfg.ruleset, p) != CGF_V_PASS) {
		if (!(cfg.flags & CGF_CONFIG_AUDIT))
			return CGF_V_DROP;
		v = CGF_V_WOULD_DROP;
	}
	for (uint32_t i = 0; i < cfg.n_levels && i < CGF_TENANT_LEVELS_MAX; i++) {
		struct cgf_tenant_entry e;
		uint32_t l = cfg.levels[i];

		if (l > depth || !sim_find(im, CGF_RMAP_TENANTS, &anc[l], 8, &e, sizeof(e)) ||
		    !(e.flags & CGF_TENANT_HOST))
			continue;
		if (l + 1 > depth)
			continue;
		if (!sim_find(im, CGF_RMAP_TENANTS, &anc[l + 1], 8, &e, sizeof(e)) || !(e.flags & CGF_TENANT_CHILD)) {
			if (cfg.flags & CGF_CONFIG_FAIL_CLOSED) {
				if (!(cfg.flags & CGF_CONFIG_AUDIT_ALL))
					return CGF_V_DROP;
				v = CGF_V_WOULD_DROP;
			}
			continue;
		}
		for (uint32_t j = 0; j < e.n_rulesets && j < CGF_TENANT_RULESETS_MAX; j++)
			if (sim_judge(im, e.ruleset[j], p) != CGF_V_PASS) {
				if (!(e.flags & CGF_TENANT_AUDIT(j)))
					return CGF_V_DROP;
				v = CGF_V_WOULD_DROP;
			}
	}
	return v;
}

/* ---- policy.md, read directly ---- */

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned plen) {
	for (unsigned i = 0; i < plen; i++)
		if (((a[i / 8] >> (7 - i % 8)) & 1) != ((b[i / 8] >> (7 - i % 8)) & 1))
			return false;
	return true;
}

static int proto_class(enum cgf_protocol p) {
	static const int map[] = {
		[CGF_PROTO_ANY] = -1, [CGF_PROTO_TCP] = CGF_PC_TCP, [CGF_PROTO_UDP] = CGF_PC_UDP,
		[CGF_PROTO_ICMP] = CGF_PC_ICMP, [CGF_PROTO_ICMPV6] = CGF_PC_ICMPV6,
	};
	return map[p];
}

static int ref_judge(const struct cgf_filter *f, const struct pkt *p) {
	int best_len = -1, best_spec = -1, best_v = -1;

	for (int l = 0; l < 2; l++) {
		const struct cgf_rule *rules = l == 0 ? f->allow : f->deny;
		size_t n = l == 0 ? f->n_allow : f->n_deny;

		for (size_t i = 0; i < n; i++) {
			const struct cgf_rule *r = &rules[i];
			int spec = r->n_ports ? 2 : r->protocol != CGF_PROTO_ANY ? 1 : 0;
			bool port_ok = r->n_ports == 0;
			int v = l == 0 ? CGF_V_PASS : CGF_V_DROP;

			if (r->family != p->family || !prefix_match(r->addr, p->addr, r->prefixlen))
				continue;
			if (r->protocol != CGF_PROTO_ANY && proto_class(r->protocol) != p->pclass)
				continue;
			for (size_t j = 0; j < r->n_ports; j++)
				port_ok = port_ok || (p->has_port && r->ports[j].lo <= p->port && p->port <= r->ports[j].hi);
			if (!port_ok)
				continue;
			if (r->prefixlen > best_len || (r->prefixlen == best_len && spec > best_spec)) {
				best_len = r->prefixlen;
				best_spec = spec;
				best_v = v;
			} else if (r->prefixlen == best_len && spec == best_spec && v == CGF_V_DROP)
				best_v = v;
		}
	}
	if (best_v < 0)
		return f->default_verdict == CGF_ALLOW ? CGF_V_PASS : CGF_V_DROP;
	return best_v;
}

/* ---- helpers ---- */

static void sync_image(struct image *im, const struct cgf_filter_maps_want *w, size_t *ret_n_ops) {
	_cleanup_free_ struct cgf_map_op *ops = NULL;
	size_t n = 0;

	REQUIRE(cgf_filter_maps_plan(w, im->e, im->n, &ops, &n) == 0);
	for (size_t i = 0; i < n; i++)
		image_apply(im, &ops[i]);
	if (ret_n_ops)
		*ret_n_ops = n;
}

static struct image encode_alone(const struct cgf_filter *f) {
	struct cgf_filter_maps_want w = { .filter = f };
	struct image im = {};

	sync_image(&im, &w, NULL);
	return im;
}

static struct pkt P(const char *addr, int pclass, int port) {
	struct pkt p = { .pclass = pclass, .has_port = port >= 0, .port = port >= 0 ? (uint16_t) port : 0 };

	if (inet_pton(AF_INET, addr, p.addr) == 1)
		p.family = AF_INET;
	else {
		REQUIRE(inet_pton(AF_INET6, addr, p.addr) == 1);
		p.family = AF_INET6;
	}
	return p;
}

static const char *vs(int v) {
	return v == CGF_V_PASS ? "pass" : v == CGF_V_WOULD_DROP ? "would-drop" : "drop";
}

/* A packet against a filter alone: encoded maps and policy.md agree, and
 * give the expected verdict. */
static void expect(const struct cgf_filter *f, const char *addr, int pclass, int port, int want) {
	struct image im = encode_alone(f);
	struct pkt p = P(addr, pclass, port);
	uint64_t anc[1] = { 1 };
	int got = sim_filter(&im, anc, 0, &p), ref = ref_judge(f, &p);

	CHECK(&T, got == want && ref == want, "filter %s, %s class %d port %d: maps %s, reference %s, want %s",
	      f->name, addr, pclass, port, vs(got), vs(ref), vs(want));
	image_done(&im);
}

#define PASS CGF_V_PASS
#define DROP CGF_V_DROP
#define TCP CGF_PC_TCP
#define UDP CGF_PC_UDP
#define ICMP CGF_PC_ICMP
#define ICMP6 CGF_PC_ICMPV6
#define OTHER CGF_PC_OTHER
#define NOPORT (-1)

static const char *policy_yaml =
	"version: 1\n"
	"filters:\n"
	/* policy.md's example */
	"  doc:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    deny: [{cidr: 10.0.0.0/8}]\n"
	"    allow: [{cidr: 10.1.0.0/16, protocol: tcp, ports: [5432]}]\n"
	/* equal prefixes: ports > protocol > neither; a tie goes to deny */
	"  spec:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    default: allow\n"
	"    deny:\n"
	"      - {cidr: 192.0.2.0/24}\n"
	"      - {cidr: 192.0.2.0/24, protocol: udp, ports: [\"100-200\"]}\n"
	"      - {cidr: 2001:db8::/32, protocol: tcp}\n"
	"    allow:\n"
	"      - {cidr: 192.0.2.0/24, protocol: udp}\n"
	"      - {cidr: 192.0.2.0/24, protocol: tcp, ports: [22, \"8000-8080\"]}\n"
	"      - {cidr: 192.0.2.0/24, protocol: udp, ports: [150]}\n"
	"      - {cidr: 2001:db8::/32, protocol: tcp, ports: [443]}\n"
	"      - {cidr: 2001:db8::/32}\n"
	/* inheritance: a shorter prefix's ports rules reach a longer prefix
	 * unless it has a rule of its own for the protocol */
	"  inherit:\n"
	"    type: rules\n"
	"    direction: ingress\n"
	"    default: deny\n"
	"    allow:\n"
	"      - {cidr: 0.0.0.0/0, protocol: tcp, ports: [80, 443]}\n"
	"      - {cidr: 10.0.0.0/8, protocol: udp, ports: [\"1000-2000\"]}\n"
	"      - {cidr: \"::/0\", protocol: udp, ports: [53]}\n"
	"      - {cidr: 10.0.0.0/8, protocol: icmp}\n"
	"      - {cidr: \"fd00::/8\", protocol: icmpv6}\n"
	"    deny:\n"
	"      - {cidr: 10.1.0.0/16, protocol: tcp}\n"
	"      - {cidr: 10.2.0.0/16, protocol: udp, ports: [1500]}\n"
	"      - {cidr: 10.3.3.3}\n"
	"      - {cidr: \"fd00:1::/32\", protocol: udp, ports: [\"50-60\"]}\n"
	"  open:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"  closed:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    default: deny\n"
	"  t-web:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    default: deny\n"
	"    allow: [{cidr: 127.0.0.1, protocol: udp, ports: [7001]}]\n"
	"  t-batch:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    deny: [{cidr: 127.0.0.0/8, protocol: udp, ports: [7001]}]\n"
	"  t-in:\n"
	"    type: rules\n"
	"    direction: ingress\n"
	"attachments:\n"
	"  - {cgroup: a, filters: [doc, spec, open, closed, t-web, t-batch]}\n"
	"  - {cgroup: b, filters: [inherit, t-in]}\n";

static void test_most_specific(const struct cgf_policy *pol) {
	const struct cgf_filter *doc = filter(pol, "doc"), *spec = filter(pol, "spec"), *inh = filter(pol, "inherit");

	/* The private network is denied except PostgreSQL on 10.1/16. */
	expect(doc, "10.1.2.3", TCP, 5432, PASS);
	expect(doc, "10.1.2.3", TCP, 5433, DROP);
	expect(doc, "10.1.2.3", UDP, 5432, DROP);
	expect(doc, "10.2.0.1", TCP, 5432, DROP);
	expect(doc, "11.0.0.1", TCP, 5432, PASS); /* default allow */
	expect(doc, "10.1.2.3", TCP, NOPORT, DROP); /* a non-first fragment: port-less rules only */
	expect(doc, "2001:db8::1", TCP, 5432, PASS); /* other family: default */

	/* Equal prefixes. */
	expect(spec, "192.0.2.9", TCP, 22, PASS);    /* ports beat neither */
	expect(spec, "192.0.2.9", TCP, 8000, PASS);
	expect(spec, "192.0.2.9", TCP, 8080, PASS);
	expect(spec, "192.0.2.9", TCP, 8081, DROP);  /* neither */
	expect(spec, "192.0.2.9", UDP, 99, PASS);    /* protocol beats neither */
	expect(spec, "192.0.2.9", UDP, 100, DROP);   /* ports beat protocol */
	expect(spec, "192.0.2.9", UDP, 150, DROP);   /* ports tie: deny wins */
	expect(spec, "192.0.2.9", UDP, 200, DROP);
	expect(spec, "192.0.2.9", UDP, 201, PASS);
	expect(spec, "192.0.2.9", UDP, NOPORT, PASS);
	expect(spec, "192.0.2.9", ICMP, NOPORT, DROP);
	expect(spec, "192.0.3.9", UDP, 150, PASS);
	expect(spec, "2001:db8:1::1", TCP, 443, PASS);
	expect(spec, "2001:db8:1::1", TCP, 444, DROP);  /* protocol beats neither */
	expect(spec, "2001:db8:1::1", UDP, 444, PASS);
	expect(spec, "2001:db8:1::1", ICMP6, NOPORT, PASS);
	expect(spec, "2001:db9::1", TCP, 444, PASS);

	/* Inheritance across prefixes. */
	expect(inh, "198.51.100.1", TCP, 80, PASS);
	expect(inh, "198.51.100.1", TCP, 81, DROP);
	expect(inh, "10.9.0.1", TCP, 443, PASS);    /* /0 ports reach into 10/8 */
	expect(inh, "10.9.0.1", UDP, 1000, PASS);
	expect(inh, "10.9.0.1", UDP, 2001, DROP);
	expect(inh, "10.9.0.1", ICMP, NOPORT, PASS);
	expect(inh, "10.1.0.1", TCP, 443, DROP);    /* /16 tcp hides the /0 ports */
	expect(inh, "10.1.0.1", UDP, 1200, PASS);   /* ... but not udp's */
	expect(inh, "10.2.0.1", UDP, 1499, PASS);
	expect(inh, "10.2.0.1", UDP, 1500, DROP);
	expect(inh, "10.2.0.1", UDP, 1501, PASS);
	expect(inh, "10.2.0.1", TCP, 80, PASS);
	expect(inh, "10.3.3.3", TCP, 80, DROP);     /* /32 neither */
	expect(inh, "10.3.3.4", TCP, 80, PASS);
	expect(inh, "::1", UDP, 53, PASS);
	expect(inh, "::1", TCP, 80, DROP);          /* v4 rules stay v4 */
	expect(inh, "fd00:1::5", UDP, 53, DROP);    /* the /32's ports beat /0's */
	expect(inh, "fd00:2::5", UDP, 53, PASS);
	expect(inh, "fd00:1::5", UDP, 61, DROP);
	expect(inh, "fd00:1::5", ICMP6, NOPORT, PASS);
	expect(inh, "fe80::5", ICMP6, NOPORT, DROP);
	expect(inh, "fd00:1::5", OTHER, NOPORT, DROP);

	expect(filter(pol, "open"), "203.0.113.1", OTHER, NOPORT, PASS);
	expect(filter(pol, "closed"), "::", UDP, 1, DROP);
}

static void test_compact(const struct cgf_policy *pol) {
	_cleanup_free_ struct cgf_map_entry *e = NULL;
	size_t n = 0, ports = 0;

	/* A filter without rules: one /0 node per family, nothing else. */
	REQUIRE(cgf_ruleset_encode(filter(pol, "open"), &e, &n) == 0);
	CHECK(&T, n == 2, "open: %zu entries", n);
	free(e);
	e = NULL;

	/* 8000-8080 is 8000/11 8064/12 8080/16 ... as aligned blocks. */
	REQUIRE(cgf_ruleset_encode(filter(pol, "spec"), &e, &n) == 0);
	for (size_t i = 0; i < n; i++)
		ports += e[i].map == CGF_RMAP_PORTS;
	CHECK(&T, ports > 0 && ports < 40, "spec: %zu port blocks", ports);
	for (size_t i = 0; i < n; i++)
		CHECK(&T, cgf_map_entry_ruleset(&e[i]) == 0, "encoded entries carry rule set 0");
}

/* ---- random filters against policy.md ---- */

static uint32_t rnd_state = 12345;

static uint32_t rnd(uint32_t n) {
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

static void random_addr(int family, uint8_t a[16]) {
	memset(a, 0, 16);
	if (family == AF_INET) {
		static const uint8_t firsts[] = { 10, 10, 10, 192, 0 };

		a[0] = firsts[rnd(ELEMENTSOF(firsts))];
		a[1] = (uint8_t) rnd(3);
		a[2] = (uint8_t) rnd(3);
		a[3] = (uint8_t) rnd(4) * 64;
	} else {
		a[0] = 0xfd;
		a[1] = (uint8_t) rnd(2);
		a[7] = (uint8_t) rnd(3);
		a[15] = (uint8_t) rnd(4);
	}
}

static void random_rule(struct cgf_rule *r) {
	static const unsigned plens4[] = { 0, 8, 12, 16, 24, 26, 32 };
	static const unsigned plens6[] = { 0, 8, 16, 64, 120, 128 };
	static const struct { uint16_t lo, hi; } ranges[] = {
		{ 20, 30 }, { 25, 25 }, { 80, 80 }, { 443, 443 }, { 1000, 2000 }, { 1500, 1500 },
		{ 1, 65535 }, { 65535, 65535 }, { 1, 1 }, { 24, 1024 },
	};
	int family = rnd(2) ? AF_INET : AF_INET6;

	*r = (struct cgf_rule) { .family = family };
	random_addr(family, r->addr);
	r->prefixlen = (uint8_t) (family == AF_INET ? plens4[rnd(ELEMENTSOF(plens4))] : plens6[rnd(ELEMENTSOF(plens6))]);
	for (unsigned i = r->prefixlen; i < (family == AF_INET ? 32u : 128u); i++)
		r->addr[i / 8] &= (uint8_t) ~(0x80u >> (i % 8));
	switch (rnd(5)) {
	case 0:
		r->protocol = CGF_PROTO_ANY;
		break;
	case 1:
		r->protocol = family == AF_INET ? CGF_PROTO_ICMP : CGF_PROTO_ICMPV6;
		break;
	default:
		r->protocol = rnd(2) ? CGF_PROTO_TCP : CGF_PROTO_UDP;
		if (rnd(3)) {
			r->n_ports = 1 + rnd(3);
			r->ports = calloc(r->n_ports, sizeof(*r->ports));
			REQUIRE(r->ports);
			for (size_t j = 0; j < r->n_ports; j++) {
				size_t k = rnd(ELEMENTSOF(ranges));

				r->ports[j].lo = ranges[k].lo;
				r->ports[j].hi = ranges[k].hi;
			}
		}
	}
}

static void random_filter(struct cgf_filter *f) {
	*f = (struct cgf_filter) { .type = CGF_FILTER_RULES, .direction = CGF_EGRESS };
	f->name = strdup("random");
	REQUIRE(f->name);
	f->default_verdict = rnd(2) ? CGF_ALLOW : CGF_DENY;
	f->n_allow = rnd(8);
	f->n_deny = rnd(8);
	f->allow = calloc(f->n_allow + 1, sizeof(struct cgf_rule));
	f->deny = calloc(f->n_deny + 1, sizeof(struct cgf_rule));
	REQUIRE(f->allow && f->deny);
	for (size_t i = 0; i < f->n_allow; i++)
		random_rule(&f->allow[i]);
	for (size_t i = 0; i < f->n_deny; i++)
		random_rule(&f->deny[i]);
}

static struct pkt random_pkt(void) {
	static const uint16_t ports[] = { 0, 1, 2, 19, 20, 24, 25, 26, 30, 31, 79, 80, 81, 443, 999, 1000,
					  1499, 1500, 1501, 2000, 2001, 1024, 1025, 65534, 65535 };
	struct pkt p = { .family = rnd(2) ? AF_INET : AF_INET6 };

	random_addr(p.family, p.addr);
	if (rnd(4) == 0)
		p.addr[p.family == AF_INET ? 3 : 15] |= (uint8_t) rnd(256);
	p.pclass = (int) rnd(CGF_PC_MAX);
	p.has_port = p.pclass < CGF_PC_PORTED && rnd(8) != 0;
	p.port = p.has_port ? ports[rnd(ELEMENTSOF(ports))] : 0;
	return p;
}

static void test_random(void) {
	unsigned mismatches = 0, packets = 0;

	for (int round = 0; round < 1500; round++) {
		struct cgf_filter f;
		struct image im;

		random_filter(&f);
		im = encode_alone(&f);
		for (int i = 0; i < 150; i++) {
			struct pkt p = random_pkt();
			uint64_t anc[1] = { 1 };
			int got = sim_filter(&im, anc, 0, &p), ref = ref_judge(&f, &p);

			packets++;
			if (got != ref && mismatches++ < 5)
				fprintf(stderr, "random round %d: family %d class %d port %d%s: maps %s, reference %s\n",
					round, p.family, p.pclass, p.port, p.has_port ? "" : " (none)", vs(got), vs(ref));
		}
		image_done(&im);
		cgf_filter_clear(&f);
	}
	CHECK(&T, mismatches == 0, "%u of %u random packets judged differently", mismatches, packets);
}

/* ---- the planner ---- */

/* The rule set ids config and tenants name. */
static size_t referenced(const struct image *im, uint32_t *ids, size_t max) {
	size_t n = 0;

	for (size_t i = 0; i < im->n && n < max; i++) {
		if (im->e[i].map == CGF_RMAP_CONFIG) {
			struct cgf_rules_config c;

			memcpy(&c, im->e[i].value, sizeof(c));
			ids[n++] = c.ruleset;
		} else if (im->e[i].map == CGF_RMAP_TENANTS) {
			struct cgf_tenant_entry t;

			memcpy(&t, im->e[i].value, sizeof(t));
			for (uint32_t j = 0; j < t.n_rulesets && n < max; j++)
				ids[n++] = t.ruleset[j];
		}
	}
	return n;
}

/* The entries of one rule set, as a canonical string of bytes. */
static char *ruleset_dump(const struct image *im, uint32_t id) {
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);
	_cleanup_free_ struct cgf_map_entry *sorted = NULL;
	size_t n = 0;

	REQUIRE(f);
	sorted = calloc(im->n + 1, sizeof(*sorted));
	REQUIRE(sorted);
	for (size_t i = 0; i < im->n; i++)
		if (im->e[i].map >= CGF_RMAP_V4 && cgf_map_entry_ruleset(&im->e[i]) == id)
			sorted[n++] = im->e[i];
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && (sorted[j - 1].map > sorted[j].map ||
				(sorted[j - 1].map == sorted[j].map &&
				 memcmp(sorted[j - 1].key, sorted[j].key, CGF_RMAP_KEY_MAX) > 0)); j--) {
			struct cgf_map_entry t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%d:", sorted[i].map);
		for (size_t k = 0; k < CGF_RMAP_KEY_MAX; k++)
			fprintf(f, "%02x", sorted[i].key[k]);
		fputc('=', f);
		for (size_t k = 0; k < CGF_RMAP_VALUE_MAX; k++)
			fprintf(f, "%02x", sorted[i].value[k]);
		fputc('\n', f);
	}
	REQUIRE(fclose(f) == 0);
	return s;
}

/*
 * Plan from im to w and apply step by step.  A rule set that config or
 * tenants named at any point before the barrier must be whole (as it was
 * before, or as it is at the end) after every step until the barrier;
 * after it, only rule set deletions.  Returns the number of operations.
 */
static size_t sync_checked(struct image *im, const struct cgf_filter_maps_want *w) {
	_cleanup_free_ struct cgf_map_op *ops = NULL;
	struct image before, after;
	uint32_t ever[512];
	size_t n_ever = 0, n = 0;
	bool barrier = false;

	image_copy(im, &before);
	REQUIRE(cgf_filter_maps_plan(w, im->e, im->n, &ops, &n) == 0);
	image_copy(im, &after);
	for (size_t i = 0; i < n; i++)
		image_apply(&after, &ops[i]);
	n_ever = referenced(im, ever, ELEMENTSOF(ever));

	for (size_t i = 0; i < n; i++) {
		uint32_t now[512];
		size_t n_now;

		if (ops[i].kind == CGF_MAP_BARRIER) {
			barrier = true;
			continue;
		}
		if (barrier)
			CHECK(&T, ops[i].kind == CGF_MAP_DELETE && ops[i].entry.map >= CGF_RMAP_V4,
			      "after the barrier only rule sets are deleted (op %zu)", i);
		image_apply(im, &ops[i]);
		n_now = referenced(im, now, ELEMENTSOF(now));
		for (size_t k = 0; k < n_now && !barrier && n_ever < ELEMENTSOF(ever); k++)
			ever[n_ever++] = now[k];
		for (size_t k = 0; k < (barrier ? n_now : n_ever); k++) {
			uint32_t id = barrier ? now[k] : ever[k];
			_cleanup_free_ char *cur = ruleset_dump(im, id), *was = ruleset_dump(&before, id),
					    *will = ruleset_dump(&after, id);
			bool whole = streq(cur, *will ? will : was);

			CHECK(&T, *cur && whole, "op %zu: rule set %u named but not whole", i, id);
		}
	}
	image_done(&before);
	image_done(&after);
	return n;
}

static void test_plan(const struct cgf_policy *pol) {
	const struct cgf_filter *doc = filter(pol, "doc"), *spec = filter(pol, "spec");
	const struct cgf_filter *web = filter(pol, "t-web"), *batch = filter(pol, "t-batch");
	const struct cgf_filter *open = filter(pol, "open");
	const struct cgf_filter *const web_list[] = { web }, *const batch_list[] = { batch, open };
	/* machine.slice (id 10, level 1): web-1 (11) with a payload (12),
	 * batch-7 (13), other (14: no entry); the host's own socket. */
	const struct cgf_tenant_host hosts[] = { { 10, 1 } };
	const struct cgf_tenant_binding bindings[] = {
		{ 11, 2, web_list, 1 },
		{ 13, 2, batch_list, 2 },
	};
	struct cgf_filter_maps_want w = { .filter = doc };
	struct image im = {};
	size_t n;
	const uint64_t web_payload[] = { 1, 10, 11, 12 }, batch_sock[] = { 1, 10, 13 }, other[] = { 1, 10, 14 },
		       host_sock[] = { 1, 10 }, outside[] = { 1, 20, 21 };
	struct pkt lo7001 = P("127.0.0.1", UDP, 7001), lo7002 = P("127.0.0.1", UDP, 7002),
		   pg = P("10.1.0.1", TCP, 5432), pg2 = P("10.1.0.1", TCP, 5433);

	/* Nothing synced: everything drops. */
	CHECK(&T, sim_filter(&im, host_sock, 1, &lo7001) == DROP, "unsynced maps fail closed");

	n = sync_checked(&im, &w);
	CHECK(&T, n > 0, "first sync writes");
	n = sync_checked(&im, &w);
	CHECK(&T, n == 0, "the same content again: %zu operations", n);
	CHECK(&T, sim_filter(&im, host_sock, 1, &pg) == PASS, "doc synced");
	CHECK(&T, sim_filter(&im, host_sock, 1, &pg2) == DROP, "doc synced");

	/* A change of rules: new set, flip, barrier, old set gone. */
	w.filter = spec;
	n = sync_checked(&im, &w);
	CHECK(&T, n > 0, "a change writes");
	CHECK(&T, sim_filter(&im, host_sock, 1, &pg2) == PASS, "spec applies after the change");
	{
		uint32_t ids[8];

		CHECK(&T, referenced(&im, ids, 8) == 1, "one rule set named");
		for (size_t i = 0; i < im.n; i++)
			CHECK(&T, im.e[i].map < CGF_RMAP_V4 || cgf_map_entry_ruleset(&im.e[i]) == ids[0],
			      "the old rule set is gone");
	}
	CHECK(&T, sync_checked(&im, &w) == 0, "idempotent after a change");

	/* Tenants, fail-closed. */
	w = (struct cgf_filter_maps_want) {
		.filter = open, .hosts = hosts, .n_hosts = 1,
		.bindings = bindings, .n_bindings = 2, .fail_closed_unknown_children = true,
	};
	n = sync_checked(&im, &w);
	CHECK(&T, n > 0, "tenants written");
	CHECK(&T, sync_checked(&im, &w) == 0, "tenants idempotent");
	CHECK(&T, sim_filter(&im, web_payload, 3, &lo7001) == PASS, "web's sub-cgroup: tenant allows 7001");
	CHECK(&T, sim_filter(&im, web_payload, 3, &lo7002) == DROP, "web's sub-cgroup: tenant default deny");
	CHECK(&T, sim_filter(&im, web_payload, 2, &lo7002) == DROP, "web itself: tenant default deny");
	CHECK(&T, sim_filter(&im, batch_sock, 2, &lo7001) == DROP, "batch: tenant denies 7001");
	CHECK(&T, sim_filter(&im, batch_sock, 2, &lo7002) == PASS, "batch: both its filters allow 7002");
	CHECK(&T, sim_filter(&im, other, 2, &lo7002) == DROP, "unknown child: fail closed");
	CHECK(&T, sim_filter(&im, host_sock, 1, &lo7002) == PASS, "the host's own socket: host rules only");
	CHECK(&T, sim_filter(&im, outside, 2, &lo7002) == PASS, "outside the host: host rules only");

	/* Host rules AND tenant rules. */
	w.filter = doc;
	sync_checked(&im, &w);
	{
		struct pkt p = P("10.1.0.1", UDP, 7001);

		CHECK(&T, sim_filter(&im, web_payload, 3, &p) == DROP, "host denies what the tenant allows");
	}

	/* Fail open; then a child leaves, and the host. */
	w.fail_closed_unknown_children = false;
	CHECK(&T, sync_checked(&im, &w) == 1, "fail-open is one config update");
	CHECK(&T, sim_filter(&im, other, 2, &lo7002) == PASS, "unknown child: host rules only");
	w.n_bindings = 1;
	sync_checked(&im, &w);
	CHECK(&T, sim_filter(&im, batch_sock, 2, &lo7001) == PASS, "batch unbound: host rules only");
	w.n_hosts = 0;
	w.n_bindings = 0;
	sync_checked(&im, &w);
	for (size_t i = 0; i < im.n; i++)
		CHECK(&T, im.e[i].map != CGF_RMAP_TENANTS, "no tenant entry left");
	{
		uint32_t ids[8];

		CHECK(&T, referenced(&im, ids, 8) == 1, "one rule set named");
		for (size_t i = 0; i < im.n; i++)
			CHECK(&T, im.e[i].map < CGF_RMAP_V4 || cgf_map_entry_ruleset(&im.e[i]) == ids[0],
			      "tenant rule sets are gone");
	}
	image_done(&im);

	/* Children are written before the host entry that makes them count:
	 * a child must never be unknown while its host is there. */
	{
		_cleanup_free_ struct cgf_map_op *ops = NULL;
		struct cgf_filter_maps_want t = {
			.filter = open, .hosts = hosts, .n_hosts = 1,
			.bindings = bindings, .n_bindings = 2, .fail_closed_unknown_children = true,
		};
		struct image step = {};
		size_t n_ops = 0;
		bool seen_drop = false;

		REQUIRE(cgf_filter_maps_plan(&t, NULL, 0, &ops, &n_ops) == 0);
		for (size_t i = 0; i < n_ops; i++) {
			image_apply(&step, &ops[i]);
			/* Until config exists everything drops anyway; after
			 * it, web's permitted datagram must pass. */
			if (sim_find(&step, CGF_RMAP_CONFIG, &(uint32_t) { 0 }, 4, &(struct cgf_rules_config) {},
				     sizeof(struct cgf_rules_config)))
				seen_drop = seen_drop || sim_filter(&step, web_payload, 3, &lo7001) == DROP;
		}
		CHECK(&T, !seen_drop, "a bound child never fails closed during a sync");
		image_done(&step);
	}

	/* Errors. */
	{
		_cleanup_free_ struct cgf_map_op *ops = NULL;
		const struct cgf_filter *in = filter(pol, "t-in");
		const struct cgf_filter *const in_list[] = { in };
		const struct cgf_filter *const nine[9] = { web, web, web, web, web, web, web, web, web };
		const struct cgf_tenant_binding bad_level[] = { { 11, 3, web_list, 1 } };
		const struct cgf_tenant_binding twice[] = { { 11, 2, web_list, 1 }, { 11, 2, web_list, 1 } };
		const struct cgf_tenant_binding wrong_dir[] = { { 11, 2, in_list, 1 } };
		const struct cgf_tenant_binding too_many[] = { { 11, 2, nine, 9 } };
		const struct cgf_tenant_host five_levels[] = { { 1, 1 }, { 2, 2 }, { 3, 3 }, { 4, 4 }, { 5, 5 } };
		struct cgf_filter_maps_want e = { .filter = open, .hosts = hosts, .n_hosts = 1 };
		size_t n_ops;

		e.bindings = bad_level, e.n_bindings = 1;
		CHECK(&T, cgf_filter_maps_plan(&e, NULL, 0, &ops, &n_ops) == -EINVAL, "a child at no host's level + 1");
		e.bindings = twice, e.n_bindings = 2;
		CHECK(&T, cgf_filter_maps_plan(&e, NULL, 0, &ops, &n_ops) == -EINVAL, "a child bound twice");
		e.bindings = wrong_dir, e.n_bindings = 1;
		CHECK(&T, cgf_filter_maps_plan(&e, NULL, 0, &ops, &n_ops) == -EINVAL, "a tenant filter of the other direction");
		e.bindings = too_many, e.n_bindings = 1;
		CHECK(&T, cgf_filter_maps_plan(&e, NULL, 0, &ops, &n_ops) == -E2BIG, "nine tenant filters");
		e.bindings = NULL, e.n_bindings = 0, e.hosts = five_levels, e.n_hosts = 5;
		CHECK(&T, cgf_filter_maps_plan(&e, NULL, 0, &ops, &n_ops) == -E2BIG, "five host levels");
		e.filter = filter(pol, "t-in"), e.n_hosts = 0;
		CHECK(&T, cgf_filter_maps_plan(&e, NULL, 0, &ops, &n_ops) == 0, "an ingress filter alone is fine");
		free(ops);
		ops = NULL;
	}
}

/* Rule sets shared: two children with the same tenant filter, and a
 * tenant filter equal to the host's, give one rule set each. */
static void test_sharing(const struct cgf_policy *pol) {
	const struct cgf_filter *web = filter(pol, "t-web"), *open = filter(pol, "open");
	const struct cgf_filter *const web_list[] = { web }, *const open_list[] = { open };
	const struct cgf_tenant_host hosts[] = { { 10, 1 } };
	const struct cgf_tenant_binding b[] = { { 11, 2, web_list, 1 }, { 12, 2, web_list, 1 }, { 13, 2, open_list, 1 } };
	struct cgf_filter_maps_want w = { .filter = open, .hosts = hosts, .n_hosts = 1, .bindings = b, .n_bindings = 3 };
	struct image im = {};
	uint32_t ids[16], distinct[16];
	size_t n, n_distinct = 0;

	sync_checked(&im, &w);
	n = referenced(&im, ids, 16);
	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t k = 0; k < n_distinct; k++)
			seen = seen || distinct[k] == ids[i];
		if (!seen)
			distinct[n_distinct++] = ids[i];
	}
	CHECK(&T, n == 4 && n_distinct == 2, "%zu names, %zu rule sets", n, n_distinct);
	image_done(&im);
}

/* What a partial sync reads: every entry but the tenant entries outside
 * its scope (those it looks up one by one). */
static void partial_view(const struct image *im, const uint64_t *ids, size_t n_ids, struct image *ret) {
	*ret = (struct image) {};
	for (size_t i = 0; i < im->n; i++) {
		bool keep = im->e[i].map != CGF_RMAP_TENANTS;
		struct cgf_map_entry *x;

		for (size_t k = 0; !keep && k < n_ids; k++)
			keep = memcmp(im->e[i].key, &ids[k], sizeof(ids[k])) == 0;
		if (!keep)
			continue;
		x = array_append((void **) &ret->e, ret->n, sizeof(*x));
		REQUIRE(x);
		*x = im->e[i];
		ret->n++;
	}
}

/* Plans a partial sync from what it would read, applies it to the whole
 * image; returns the number of operations. */
static size_t sync_partial(struct image *im, const struct cgf_filter_maps_want *w) {
	_cleanup_free_ struct cgf_map_op *ops = NULL;
	struct image view;
	size_t n = 0;

	partial_view(im, w->scope_ids, w->n_scope_ids, &view);
	REQUIRE(cgf_filter_maps_plan(w, view.e, view.n, &ops, &n) == 0);
	image_done(&view);
	for (size_t i = 0; i < n; i++) {
		CHECK(&T, ops[i].kind != CGF_MAP_BARRIER &&
			  !(ops[i].kind == CGF_MAP_DELETE && ops[i].entry.map >= CGF_RMAP_V4),
		      "a partial sync deletes no rule set (op %zu)", i);
		image_apply(im, &ops[i]);
	}
	return n;
}

/*
 * An event's sync: only its cgroups' tenant entries (and those of the
 * removed ones) change; every other child stays bound as the full sync
 * left it, and config's levels only grow.
 */
static void test_partial(const struct cgf_policy *pol) {
	const struct cgf_filter *web = filter(pol, "t-web"), *batch = filter(pol, "t-batch");
	const struct cgf_filter *open = filter(pol, "open");
	const struct cgf_filter *const web_list[] = { web }, *const batch_list[] = { batch };
	const struct cgf_tenant_host hosts[] = { { 10, 1 } };
	const struct cgf_tenant_binding full[] = { { 11, 2, web_list, 1 }, { 13, 2, batch_list, 1 } };
	const struct cgf_tenant_binding full3[] = { { 11, 2, web_list, 1 }, { 13, 2, batch_list, 1 },
						    { 15, 2, web_list, 1 } };
	struct cgf_filter_maps_want w = {
		.filter = open, .hosts = hosts, .n_hosts = 1, .bindings = full, .n_bindings = 2,
		.fail_closed_unknown_children = true,
	};
	const uint64_t web_sock[] = { 1, 10, 11 }, batch_sock[] = { 1, 10, 13 }, new_sock[] = { 1, 10, 15 },
		       deep_sock[] = { 1, 10, 11, 20, 21 };
	struct pkt lo7001 = P("127.0.0.1", UDP, 7001), lo7002 = P("127.0.0.1", UDP, 7002);
	struct image im = {};
	size_t n;

	sync_checked(&im, &w);
	CHECK(&T, sim_filter(&im, new_sock, 2, &lo7001) == DROP, "partial: a new child fails closed until bound");

	/* mkdir 15, a web tenant: one tenant entry, nothing else. */
	{
		const struct cgf_tenant_binding b[] = { { 15, 2, web_list, 1 } };
		const uint64_t scope[] = { 10, 15 };
		struct cgf_filter_maps_want p = w;

		p.bindings = b, p.n_bindings = 1, p.partial = true, p.scope_ids = scope, p.n_scope_ids = 2;
		n = sync_partial(&im, &p);
		CHECK(&T, n == 1, "partial: a new child is one tenant entry, got %zu operations", n);
		CHECK(&T, sim_filter(&im, new_sock, 2, &lo7001) == PASS && sim_filter(&im, new_sock, 2, &lo7002) == DROP,
		      "partial: the new child has web's rules");
		CHECK(&T, sim_filter(&im, web_sock, 2, &lo7001) == PASS && sim_filter(&im, batch_sock, 2, &lo7002) == PASS &&
			  sim_filter(&im, batch_sock, 2, &lo7001) == DROP,
		      "partial: the other children keep their bindings");
		CHECK(&T, sync_partial(&im, &p) == 0, "partial: idempotent");
		w.bindings = full3;
		w.n_bindings = 3;
		CHECK(&T, sync_checked(&im, &w) == 0, "partial: a full sync after it has nothing to do");
	}
	/* rmdir 13: its entry goes, no other. */
	{
		const uint64_t scope[] = { 13 };
		struct cgf_filter_maps_want p = w;

		p.hosts = NULL, p.n_hosts = 0, p.bindings = NULL, p.n_bindings = 0;
		p.partial = true, p.scope_ids = scope, p.n_scope_ids = 1;
		n = sync_partial(&im, &p);
		CHECK(&T, n == 1 && image_find(&im, CGF_RMAP_TENANTS, (const uint8_t *) &(uint64_t[3]) { 13 }[0]) < 0,
		      "partial: a removed child's entry is deleted, %zu operations", n);
		CHECK(&T, sim_filter(&im, web_sock, 2, &lo7001) == PASS && sim_filter(&im, new_sock, 2, &lo7001) == PASS,
		      "partial: the others stay bound");
	}
	/* A new host below child 11 (level 3): the levels grow, the old
	 * host's children stay found. */
	{
		const struct cgf_tenant_host h2[] = { { 20, 3 } };
		const struct cgf_tenant_binding b[] = { { 21, 4, batch_list, 1 } };
		const uint64_t scope[] = { 20, 21 };
		struct cgf_filter_maps_want p = w;

		p.hosts = h2, p.n_hosts = 1, p.bindings = b, p.n_bindings = 1;
		p.partial = true, p.scope_ids = scope, p.n_scope_ids = 2;
		sync_partial(&im, &p);
		CHECK(&T, sim_filter(&im, web_sock, 2, &lo7001) == PASS && sim_filter(&im, web_sock, 2, &lo7002) == DROP,
		      "partial: level 1's children still found after a host at level 3 appeared");
		CHECK(&T, sim_filter(&im, deep_sock, 4, &lo7001) == DROP,
		      "partial: the new host's child gets batch's rules too (7001 denied)");
	}
	/* Out of scope: refused, not written. */
	{
		_cleanup_free_ struct cgf_map_op *ops = NULL;
		const uint64_t scope[] = { 10 };
		struct cgf_filter_maps_want p = w;

		p.partial = true, p.scope_ids = scope, p.n_scope_ids = 1;
		CHECK(&T, cgf_filter_maps_plan(&p, im.e, im.n, &ops, &n) == -EINVAL,
		      "partial: a binding outside the scope ids is refused");
	}
	image_done(&im);
}

/* ---- audit: enforce: false ---- */

static const char *audit_yaml =
	"version: 1\n"
	"filters:\n"
	"  host:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    deny: [{cidr: 127.0.0.3}]\n"
	"  host-audit:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    deny: [{cidr: 127.0.0.3}]\n"
	"    enforce: false\n"
	"  first:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"  other-audit:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    enforce: false\n"
	"  alone-audit:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    enforce: false\n"
	"  in-host:\n"
	"    type: rules\n"
	"    direction: ingress\n"
	"  t-strict:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    default: deny\n"
	"    allow: [{cidr: 127.0.0.0/8, protocol: udp, ports: [7001]}]\n"
	"  t-trial:\n"
	"    type: rules\n"
	"    direction: egress\n"
	"    default: deny\n"
	"    allow: [{cidr: 127.0.0.0/8, protocol: udp, ports: [7001]}]\n"
	"    enforce: false\n"
	"  t-in-strict:\n"
	"    type: rules\n"
	"    direction: ingress\n"
	"    default: deny\n"
	"attachments:\n"
	/* host-audit carries only audited egress tenant filters (an enforced
	 * ingress one goes to in-host) */
	"  - cgroup: m1\n"
	"    filters: [host-audit, in-host]\n"
	"    tenants: {\"a-*\": [t-trial], \"b-*\": [t-trial, t-in-strict]}\n"
	/* other-audit carries an enforced one in one attachment of two */
	"  - cgroup: m2\n"
	"    filters: [other-audit]\n"
	"    tenants: {\"*\": [t-trial]}\n"
	"  - cgroup: m3\n"
	"    filters: [other-audit]\n"
	"    tenants: {\"*\": [t-strict]}\n"
	/* first is the carrier here, not alone-audit */
	"  - cgroup: m4\n"
	"    filters: [first, alone-audit]\n"
	"    tenants: {\"*\": [t-strict]}\n"
	"  - cgroup: m5\n"
	"    filters: [host]\n"
	"    tenants: {\"*\": [t-trial]}\n";

static void test_audits_all(const struct cgf_policy *pol) {
	CHECK(&T, cgf_filter_audits_all(pol, filter(pol, "host-audit")),
	      "host-audit: its egress tenant filters are all audited");
	CHECK(&T, !cgf_filter_audits_all(pol, filter(pol, "other-audit")),
	      "other-audit: one attachment gives an enforced tenant filter through it");
	CHECK(&T, cgf_filter_audits_all(pol, filter(pol, "alone-audit")), "alone-audit carries nothing");
	CHECK(&T, !cgf_filter_audits_all(pol, filter(pol, "host")), "host is enforced");
	CHECK(&T, !cgf_filter_audits_all(pol, filter(pol, "in-host")), "in-host is enforced");
}

/* A filter as a reload with only enforce: changed would give it. */
static struct cgf_filter with_audit(const struct cgf_filter *f, bool audit) {
	struct cgf_filter c = *f; /* shares f's arrays: never cleared */

	c.audit = audit;
	return c;
}

static void test_audit(const struct cgf_policy *pol) {
	struct cgf_filter host_audit = with_audit(filter(pol, "host"), true);
	struct cgf_filter host_enforce = with_audit(filter(pol, "host"), false);
	struct cgf_filter trial = with_audit(filter(pol, "t-strict"), true);
	const struct cgf_filter *strict = filter(pol, "t-strict");
	const struct cgf_filter *const strict_list[] = { strict }, *const trial_list[] = { &trial },
				    *const both_list[] = { &trial, strict };
	const struct cgf_tenant_host hosts[] = { { 10, 1 } };
	const struct cgf_tenant_binding bindings[] = {
		{ 11, 2, strict_list, 1 }, { 13, 2, trial_list, 1 }, { 15, 2, both_list, 2 },
	};
	struct cgf_filter_maps_want w = {
		.filter = &host_audit, .hosts = hosts, .n_hosts = 1, .bindings = bindings, .n_bindings = 3,
		.fail_closed_unknown_children = true,
	};
	const uint64_t host_sock[] = { 1, 10 }, strict_sock[] = { 1, 10, 11 }, trial_sock[] = { 1, 10, 13 },
		       both_sock[] = { 1, 10, 15 }, unknown[] = { 1, 10, 14 };
	struct pkt denied_by_host = P("127.0.0.3", UDP, 7001), denied_by_tenant = P("127.0.0.1", UDP, 7002),
		   allowed = P("127.0.0.1", UDP, 7001), bad = allowed;
	_cleanup_free_ struct cgf_map_op *ops = NULL;
	struct image im = {};
	size_t n;

	bad.unjudgeable = true;
	sync_checked(&im, &w);
	CHECK(&T, sim_filter(&im, host_sock, 1, &denied_by_host) == CGF_V_WOULD_DROP, "audited host: would-drop");
	CHECK(&T, sim_filter(&im, host_sock, 1, &allowed) == PASS, "audited host: what it allows passes");
	CHECK(&T, sim_filter(&im, strict_sock, 2, &denied_by_host) == CGF_V_WOULD_DROP,
	      "audited host, enforced tenant that allows: would-drop");
	CHECK(&T, sim_filter(&im, strict_sock, 2, &denied_by_tenant) == DROP,
	      "an audited host never saves what an enforced tenant filter drops");
	CHECK(&T, sim_filter(&im, trial_sock, 2, &denied_by_tenant) == CGF_V_WOULD_DROP, "audited tenant: would-drop");
	CHECK(&T, sim_filter(&im, both_sock, 2, &denied_by_tenant) == DROP,
	      "audited and enforced tenant filters: the enforced one drops");
	CHECK(&T, sim_filter(&im, both_sock, 2, &allowed) == PASS, "audited and enforced tenant filters: pass");
	CHECK(&T, sim_filter(&im, unknown, 2, &allowed) == DROP, "unknown child, not all audited: fail closed");
	CHECK(&T, sim_filter(&im, host_sock, 1, &bad) == DROP, "unjudgeable, not all audited: dropped");

	/* Every filter it applies audited: nothing dropped at all. */
	w.bindings = &bindings[1];
	w.n_bindings = 1;
	w.audit_all = true;
	sync_checked(&im, &w);
	CHECK(&T, sim_filter(&im, unknown, 2, &allowed) == CGF_V_WOULD_DROP, "unknown child, all audited: would-drop");
	CHECK(&T, sim_filter(&im, host_sock, 1, &bad) == CGF_V_WOULD_DROP, "unjudgeable, all audited: would-drop");
	CHECK(&T, sim_filter(&im, trial_sock, 2, &denied_by_host) == CGF_V_WOULD_DROP, "both would drop: counted once");

	/* The switch to enforce: one config value written in place, no rule
	 * set, no tenant entry: no packet between two states. */
	w.filter = &host_enforce;
	w.audit_all = false;
	REQUIRE(cgf_filter_maps_plan(&w, im.e, im.n, &ops, &n) == 0);
	CHECK(&T, n == 1 && ops[0].kind == CGF_MAP_UPDATE && ops[0].entry.map == CGF_RMAP_CONFIG,
	      "host to enforce: one config update, got %zu operations", n);
	CHECK(&T, sync_checked(&im, &w) == 1, "host to enforce applied");
	CHECK(&T, sim_filter(&im, host_sock, 1, &denied_by_host) == DROP, "enforced host drops");
	CHECK(&T, sim_filter(&im, unknown, 2, &allowed) == DROP, "enforced host: unknown child fails closed");
	free(ops);
	ops = NULL;

	/* A tenant filter to enforce: its children's entries only. */
	w.bindings = bindings;
	w.n_bindings = 3;
	sync_checked(&im, &w);
	trial.audit = false;
	REQUIRE(cgf_filter_maps_plan(&w, im.e, im.n, &ops, &n) == 0);
	CHECK(&T, n == 2, "tenant filter to enforce: the two entries naming it, got %zu operations", n);
	for (size_t i = 0; i < n; i++)
		CHECK(&T, ops[i].kind == CGF_MAP_UPDATE && ops[i].entry.map == CGF_RMAP_TENANTS,
		      "tenant filter to enforce: op %zu is a tenant entry update", i);
	sync_checked(&im, &w);
	CHECK(&T, sim_filter(&im, trial_sock, 2, &denied_by_tenant) == DROP, "enforced tenant drops");
	CHECK(&T, sync_checked(&im, &w) == 0, "idempotent");
	image_done(&im);
}

/* The verdict the audit rules give, read directly: any enforced rule set
 * that drops drops; else any audited one that drops makes would-drop. */
static int ref_combined(const struct cgf_filter *const *fs, size_t n, const struct pkt *p) {
	bool would = false;

	for (size_t i = 0; i < n; i++)
		if (ref_judge(fs[i], p) != CGF_V_PASS) {
			if (!fs[i]->audit)
				return CGF_V_DROP;
			would = true;
		}
	return would ? CGF_V_WOULD_DROP : CGF_V_PASS;
}

static void test_audit_random(void) {
	unsigned mismatches = 0, packets = 0, would = 0;

	for (int round = 0; round < 300; round++) {
		struct cgf_filter fs[1 + 3];
		const struct cgf_filter *all[1 + 3];
		size_t n_t = 1 + rnd(3);
		const struct cgf_tenant_host hosts[] = { { 10, 1 } };
		struct cgf_tenant_binding b = { 11, 2, &all[1], n_t };
		struct cgf_filter_maps_want w = { .filter = &fs[0], .hosts = hosts, .n_hosts = 1, .bindings = &b,
						  .n_bindings = 1, .fail_closed_unknown_children = true };
		struct image im = {};

		for (size_t i = 0; i <= n_t; i++) {
			random_filter(&fs[i]);
			fs[i].audit = rnd(2);
			all[i] = &fs[i];
		}
		sync_image(&im, &w, NULL);
		for (int i = 0; i < 100; i++) {
			struct pkt p = random_pkt();
			const uint64_t child[] = { 1, 10, 11 }, own[] = { 1, 10 };
			int got = sim_filter(&im, child, 2, &p), ref = ref_combined(all, 1 + n_t, &p);
			int got_host = sim_filter(&im, own, 1, &p), ref_host = ref_combined(all, 1, &p);

			packets += 2;
			would += (ref == CGF_V_WOULD_DROP) + (ref_host == CGF_V_WOULD_DROP);
			if ((got != ref || got_host != ref_host) && mismatches++ < 5)
				fprintf(stderr, "audit round %d: child: maps %s, reference %s; host: maps %s, reference %s\n",
					round, vs(got), vs(ref), vs(got_host), vs(ref_host));
		}
		image_done(&im);
		for (size_t i = 0; i <= n_t; i++)
			cgf_filter_clear(&fs[i]);
	}
	CHECK(&T, mismatches == 0, "audit: %u of %u random packets judged differently", mismatches, packets);
	CHECK(&T, would > packets / 20, "audit: %u of %u random packets would-drop: the test reaches it", would, packets);
}

int main(void) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *pol = load_policy(policy_yaml);

	test_most_specific(pol);
	test_compact(pol);
	test_random();
	test_plan(pol);
	test_sharing(pol);
	test_partial(pol);
	{
		_cleanup_(cgf_policy_freep) struct cgf_policy *ap = load_policy(audit_yaml);

		test_audits_all(ap);
		test_audit(ap);
		test_audit_random();
	}
	return test_finish(&T, "test-filter-maps");
}
