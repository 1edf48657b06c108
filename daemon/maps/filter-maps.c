/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The rules filter's maps as pure data: the encoder (a filter's rules ->
 * its rule set) and the planner (wanted rule sets, tenants and config +
 * the maps' current contents -> ordered map operations).  No I/O: the
 * writer in filter-maps-sync.c reads the maps and applies the plan.
 *
 * Encoding (policy.md "Rules"): of the rules that match a packet the
 * longest prefix wins; for equal prefixes a rule with ports, then one
 * with only a protocol, then one with neither; a remaining tie goes to
 * deny; no match gives the default.  Resolved here once per prefix, so
 * that the BPF program needs one longest-prefix lookup:
 *
 *   fallback[class] (the verdict without a port match) = the node's own
 *     protocol rule for the class, else its own protocol-less rule, else
 *     the parent prefix's fallback[class] (the root's parent: default);
 *   ports[class] (TCP, UDP: port -> verdict where the node's ports rules
 *     or those it inherits decide) = the node's own ports rules laid over
 *     the parent's ports[class], unless the node has a protocol or a
 *     protocol-less rule of its own, which hides everything shorter.
 *
 * A node that resolves to exactly its parent's value is left out: the
 * trie finds the parent for it.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "filter-maps.h"
#include "util.h"

static const struct {
	const char *name;
	size_t key_size, value_size;
	uint32_t max_entries;
} rmap_table[_CGF_RMAP_MAX] = {
	[CGF_RMAP_CONFIG] = { "config", sizeof(uint32_t), sizeof(struct cgf_rules_config), 1 },
	[CGF_RMAP_TENANTS] = { "tenants", sizeof(uint64_t), sizeof(struct cgf_tenant_entry), CGF_TENANTS_MAX },
	[CGF_RMAP_V4] = { "rules_v4", sizeof(struct cgf_v4_key), sizeof(struct cgf_rule_node), CGF_RULE_NODES_MAX },
	[CGF_RMAP_V6] = { "rules_v6", sizeof(struct cgf_v6_key), sizeof(struct cgf_rule_node), CGF_RULE_NODES_MAX },
	[CGF_RMAP_PORTS] = { "rules_ports", sizeof(struct cgf_port_key), sizeof(struct cgf_port_verdict),
			     CGF_PORT_BLOCKS_MAX },
};

_Static_assert(sizeof(struct cgf_v6_key) <= CGF_RMAP_KEY_MAX, "key room");
_Static_assert(sizeof(struct cgf_tenant_entry) <= CGF_RMAP_VALUE_MAX, "value room");
_Static_assert(sizeof(struct cgf_rules_config) <= CGF_RMAP_VALUE_MAX, "value room");
/* A child's audit bits fit beside HOST and CHILD, one per rule set. */
_Static_assert(CGF_TENANT_AUDIT_SHIFT > 1 && CGF_TENANT_AUDIT_SHIFT + CGF_TENANT_RULESETS_MAX <= 32, "audit bits");
/* The rule set id sits at the same place in every LPM key. */
_Static_assert(offsetof(struct cgf_v4_key, ruleset) == 4, "ruleset offset");
_Static_assert(offsetof(struct cgf_v6_key, ruleset) == 4, "ruleset offset");
_Static_assert(offsetof(struct cgf_port_key, ruleset) == 4, "ruleset offset");
#define RULESET_OFFSET 4

const char *cgf_rmap_name(enum cgf_rmap m) {
	return m < _CGF_RMAP_MAX ? rmap_table[m].name : NULL;
}

size_t cgf_rmap_key_size(enum cgf_rmap m) {
	return m < _CGF_RMAP_MAX ? rmap_table[m].key_size : 0;
}

size_t cgf_rmap_value_size(enum cgf_rmap m) {
	return m < _CGF_RMAP_MAX ? rmap_table[m].value_size : 0;
}

uint32_t cgf_rmap_max_entries(enum cgf_rmap m) {
	return m < _CGF_RMAP_MAX ? rmap_table[m].max_entries : 0;
}

bool cgf_rmap_has_lock(enum cgf_rmap m) {
	return m == CGF_RMAP_CONFIG || m == CGF_RMAP_TENANTS;
}

static bool rmap_is_ruleset(enum cgf_rmap m) {
	return m == CGF_RMAP_V4 || m == CGF_RMAP_V6 || m == CGF_RMAP_PORTS;
}

uint32_t cgf_map_entry_ruleset(const struct cgf_map_entry *e) {
	uint32_t id;

	memcpy(&id, e->key + RULESET_OFFSET, sizeof(id));
	return id;
}

static void entry_set_ruleset(struct cgf_map_entry *e, uint32_t id) {
	memcpy(e->key + RULESET_OFFSET, &id, sizeof(id));
}

static int entry_compare(const struct cgf_map_entry *a, const struct cgf_map_entry *b) {
	if (a->map != b->map)
		return a->map < b->map ? -1 : 1;
	return memcmp(a->key, b->key, sizeof(a->key));
}

static int entry_compare_qsort(const void *a, const void *b) {
	return entry_compare(a, b);
}

static bool entries_equal(const struct cgf_map_entry *a, size_t n_a, const struct cgf_map_entry *b, size_t n_b) {
	if (n_a != n_b)
		return false;
	for (size_t i = 0; i < n_a; i++)
		if (a[i].map != b[i].map || memcmp(a[i].key, b[i].key, sizeof(a[i].key)) != 0 ||
		    memcmp(a[i].value, b[i].value, sizeof(a[i].value)) != 0)
			return false;
	return true;
}

/* ---- the encoder ---- */

static uint8_t verdict_of(enum cgf_verdict v) {
	return v == CGF_ALLOW ? CGF_V_PASS : CGF_V_DROP;
}

/* Two rules of the same specificity: deny wins.  -1 is "no rule". */
static int verdict_combine(int a, int b) {
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a == CGF_V_DROP || b == CGF_V_DROP ? CGF_V_DROP : CGF_V_PASS;
}

static int rule_pclass(enum cgf_protocol p) {
	switch (p) {
	case CGF_PROTO_TCP:
		return CGF_PC_TCP;
	case CGF_PROTO_UDP:
		return CGF_PC_UDP;
	case CGF_PROTO_ICMP:
		return CGF_PC_ICMP;
	case CGF_PROTO_ICMPV6:
		return CGF_PC_ICMPV6;
	default:
		return -1;
	}
}

/* A port function: sorted, disjoint segments where it decides. */
struct pseg {
	uint16_t lo, hi;
	uint8_t v;
};

struct portfn {
	struct pseg *s;
	size_t n;
};

static int portfn_at(const struct portfn *f, uint32_t port) {
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (port < f->s[mid].lo)
			hi = mid;
		else if (port > f->s[mid].hi)
			lo = mid + 1;
		else
			return f->s[mid].v;
	}
	return -1;
}

static bool portfn_equal(const struct portfn *a, const struct portfn *b) {
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->s[i].lo != b->s[i].lo || a->s[i].hi != b->s[i].hi || a->s[i].v != b->s[i].v)
			return false;
	return true;
}

static int append_seg(struct portfn *f, uint32_t lo, uint32_t hi, uint8_t v) {
	struct pseg *s;

	if (f->n > 0 && f->s[f->n - 1].v == v && f->s[f->n - 1].hi + 1u == lo) {
		f->s[f->n - 1].hi = (uint16_t) hi;
		return 0;
	}
	s = array_append((void **) &f->s, f->n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct pseg) { .lo = (uint16_t) lo, .hi = (uint16_t) hi, .v = v };
	f->n++;
	return 0;
}

/* A ports rule of a node, with its verdict. */
struct prule {
	const struct cgf_rule *rule;
	uint8_t v;
};

static int u32_compare(const void *a, const void *b) {
	uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

	return x < y ? -1 : x > y;
}

/* A range's start and end + 1 to *b, appended as one pair. */
static int bounds_add(uint32_t **b, size_t *n_b, uint32_t lo, uint32_t hi) {
	uint32_t *p = array_append((void **) b, *n_b / 2, 2 * sizeof(uint32_t));

	if (!p)
		return -ENOMEM;
	p[0] = lo;
	p[1] = hi + 1u;
	*n_b += 2;
	return 0;
}

/* Every point where base or own (its rules of class pc) may change,
 * sorted: between two of them the overlay says one thing. */
static int overlay_bounds(const struct portfn *base, const struct prule *own, size_t n_own, int pc,
			  uint32_t **ret, size_t *ret_n) {
	_cleanup_free_ uint32_t *b = NULL;
	size_t n_b = 0;
	int r;

	for (size_t i = 0; i < base->n; i++) {
		r = bounds_add(&b, &n_b, base->s[i].lo, base->s[i].hi);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < n_own; i++) {
		const struct cgf_rule *rule = own[i].rule;

		if (rule_pclass(rule->protocol) != pc)
			continue;
		for (size_t j = 0; j < rule->n_ports; j++) {
			r = bounds_add(&b, &n_b, rule->ports[j].lo, rule->ports[j].hi);
			if (r < 0)
				return r;
		}
	}
	qsort_safe(b, n_b, sizeof(uint32_t), u32_compare);
	*ret = TAKE_PTR(b);
	*ret_n = n_b;
	return 0;
}

/*
 * own (the node's ports rules of one class) laid over base, without the
 * segments that only say what fallback says anyway.
 */
static int portfn_overlay(const struct portfn *base, const struct prule *own, size_t n_own, int pc,
			  uint8_t fallback, struct portfn *ret) {
	_cleanup_free_ uint32_t *b = NULL;
	struct portfn out = {};
	size_t n_b = 0;
	int r;

	r = overlay_bounds(base, own, n_own, pc, &b, &n_b);
	if (r < 0)
		return r;

	for (size_t i = 0; i + 1 < n_b; i++) {
		uint32_t lo = b[i], hi = b[i + 1] - 1;
		int v = -1;

		if (b[i] == b[i + 1])
			continue;
		for (size_t k = 0; k < n_own; k++) {
			const struct cgf_rule *rule = own[k].rule;

			if (rule_pclass(rule->protocol) != pc)
				continue;
			for (size_t j = 0; j < rule->n_ports; j++)
				if (rule->ports[j].lo <= lo && hi <= rule->ports[j].hi)
					v = verdict_combine(v, own[k].v);
		}
		if (v < 0)
			v = portfn_at(base, lo);
		if (v < 0 || v == fallback)
			continue;
		r = append_seg(&out, lo, hi, (uint8_t) v);
		if (r < 0) {
			free(out.s);
			return r;
		}
	}
	*ret = out;
	return 0;
}

struct enode {
	uint8_t addr[16];
	uint8_t plen;
	int own_any;                /* -1: no protocol-less rule */
	int own_proto[CGF_PC_MAX];  /* -1: no protocol-only rule of the class */
	size_t prule_start, prule_end;
	size_t parent;              /* index; the root is its own parent */
	uint8_t fallback[CGF_PC_MAX];
	struct portfn pf[CGF_PC_PORTED];
	uint16_t portset[CGF_PC_PORTED];
};

static size_t addr_len(int family) {
	return family == AF_INET ? 4 : 16;
}

static void addr_mask(uint8_t a[static 16], size_t len, unsigned plen) {
	for (size_t i = 0; i < len; i++) {
		unsigned bits = plen > i * 8 ? plen - i * 8 : 0;

		if (bits < 8)
			a[i] &= (uint8_t) (0xff00u >> bits);
	}
}

static int enode_compare(const void *a, const void *b) {
	const struct enode *x = a, *y = b;

	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* A rule that belongs to a node: for sorting the ports rules by node. */
struct noderule {
	size_t node;
	const struct cgf_rule *rule;
	uint8_t v;
};

static int noderule_compare(const void *a, const void *b) {
	const struct noderule *x = a, *y = b;

	return x->node < y->node ? -1 : x->node > y->node;
}

struct encoder {
	struct enode *nodes;
	size_t n_nodes;
	struct prule *prules;
	struct portfn *portsets; /* index i is portset id i + 1; shared by both families */
	size_t n_portsets;
	struct cgf_map_entry *out;
	size_t n_out;
};

static void encoder_reset_nodes(struct encoder *e) {
	for (size_t i = 0; i < e->n_nodes; i++)
		for (size_t c = 0; c < CGF_PC_PORTED; c++)
			free(e->nodes[i].pf[c].s);
	free(e->nodes);
	free(e->prules);
	e->nodes = NULL;
	e->n_nodes = 0;
	e->prules = NULL;
}

static void encoder_done(struct encoder *e) {
	encoder_reset_nodes(e);
	for (size_t i = 0; i < e->n_portsets; i++)
		free(e->portsets[i].s);
	free(e->portsets);
	free(e->out);
	*e = (struct encoder) {};
}

static ssize_t find_node(const struct encoder *e, const uint8_t addr[static 16], uint8_t plen) {
	struct enode key = { .plen = plen };
	struct enode *n;

	memcpy(key.addr, addr, 16);
	n = bsearch(&key, e->nodes, e->n_nodes, sizeof(struct enode), enode_compare);
	return n ? n - e->nodes : -1;
}

static struct cgf_map_entry *encoder_emit(struct encoder *e, enum cgf_rmap map) {
	struct cgf_map_entry *x = array_append((void **) &e->out, e->n_out, sizeof(*x));

	if (!x)
		return NULL;
	x->map = map;
	e->n_out++;
	return x;
}

/* The port table id of a port function, shared by equal functions. */
static int intern_portset(struct encoder *e, const struct portfn *f, uint16_t *ret) {
	struct portfn *slot;

	if (f->n == 0) {
		*ret = 0;
		return 0;
	}
	for (size_t i = 0; i < e->n_portsets; i++)
		if (portfn_equal(&e->portsets[i], f)) {
			*ret = (uint16_t) (i + 1);
			return 0;
		}
	if (e->n_portsets >= UINT16_MAX)
		return -E2BIG;
	slot = array_append((void **) &e->portsets, e->n_portsets, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	slot->s = malloc(f->n * sizeof(*f->s));
	if (!slot->s)
		return -ENOMEM;
	memcpy(slot->s, f->s, f->n * sizeof(*f->s));
	slot->n = f->n;
	e->n_portsets++;
	*ret = (uint16_t) e->n_portsets;
	return 0;
}

/* Port segments as the aligned power-of-two blocks an LPM trie holds. */
static int emit_port_blocks(struct encoder *e, uint16_t portset, const struct portfn *f) {
	for (size_t i = 0; i < f->n; i++) {
		uint32_t lo = f->s[i].lo, hi = f->s[i].hi;

		while (lo <= hi) {
			unsigned k = 0;
			struct cgf_port_key key = {};
			struct cgf_port_verdict val = { .verdict = f->s[i].v };
			struct cgf_map_entry *x;

			while (k < 16 && (lo & ((2u << k) - 1)) == 0 && lo + (2u << k) - 1 <= hi)
				k++;
			key.prefixlen = CGF_PORT_PREFIX_BITS + 16 - k;
			key.portset = portset;
			key.port[0] = (uint8_t) (lo >> 8);
			key.port[1] = (uint8_t) lo;
			x = encoder_emit(e, CGF_RMAP_PORTS);
			if (!x)
				return -ENOMEM;
			memcpy(x->key, &key, sizeof(key));
			memcpy(x->value, &val, sizeof(val));
			lo += 1u << k;
		}
	}
	return 0;
}

static void node_value(const struct enode *n, struct cgf_rule_node *ret) {
	*ret = (struct cgf_rule_node) {};
	memcpy(ret->verdict, n->fallback, sizeof(ret->verdict));
	memcpy(ret->portset, n->portset, sizeof(ret->portset));
}

/* One family's encoding: what encode_family's steps share.  The nodes,
 * their ports rules and the port tables live in the encoder. */
struct family_enc {
	struct encoder *e;
	const struct cgf_filter *f;
	int family;
	size_t alen;
	const struct cgf_rule *lists[2]; /* allow, deny */
	size_t counts[2];
	struct noderule *nr; /* the family's ports rules, until grouped by node */
	size_t n_nr;
};

static void family_enc_done(struct family_enc *fe) {
	free(fe->nr);
}

static uint8_t list_verdict(size_t l) {
	return verdict_of(l == 0 ? CGF_ALLOW : CGF_DENY);
}

/* Nodes sorted by prefix: keep the first of each run of equal ones. */
static void nodes_dedup(struct encoder *e) {
	size_t w = 0;

	for (size_t i = 0; i < e->n_nodes; i++)
		if (w == 0 || enode_compare(&e->nodes[w - 1], &e->nodes[i]) != 0)
			e->nodes[w++] = e->nodes[i];
	e->n_nodes = w;
}

static int family_add_node(struct family_enc *fe, const struct cgf_rule *rule) {
	struct encoder *e = fe->e;
	struct enode *n = array_append((void **) &e->nodes, e->n_nodes, sizeof(struct enode));

	if (!n)
		return -ENOMEM;
	memcpy(n->addr, rule->addr, fe->alen);
	n->plen = rule->prefixlen;
	addr_mask(n->addr, fe->alen, n->plen);
	e->n_nodes++;
	return 0;
}

/* The nodes: the root and every prefix a rule names, each once and
 * shortest first (find_node() searches them; a parent comes before its
 * children), none with a rule of its own yet. */
static int family_collect_nodes(struct family_enc *fe) {
	struct encoder *e = fe->e;
	int r;

	if (!array_append((void **) &e->nodes, 0, sizeof(struct enode)))
		return -ENOMEM;
	e->n_nodes = 1;
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < fe->counts[l]; i++) {
			if (fe->lists[l][i].family != fe->family)
				continue;
			r = family_add_node(fe, &fe->lists[l][i]);
			if (r < 0)
				return r;
		}
	qsort_safe(e->nodes, e->n_nodes, sizeof(struct enode), enode_compare);
	nodes_dedup(e);
	for (size_t i = 0; i < e->n_nodes; i++) {
		e->nodes[i].own_any = -1;
		for (size_t c = 0; c < CGF_PC_MAX; c++)
			e->nodes[i].own_proto[c] = -1;
	}
	return 0;
}

/* One rule to its node: a rule without ports combines into the node's
 * own verdicts at once; a ports rule waits in fe->nr until
 * family_group_prules(), as only the overlay needs it. */
static int family_assign_rule(struct family_enc *fe, const struct cgf_rule *rule, uint8_t v) {
	uint8_t a[16] = {};
	struct enode *n;
	ssize_t k;
	int pc;

	memcpy(a, rule->addr, fe->alen);
	addr_mask(a, fe->alen, rule->prefixlen);
	k = find_node(fe->e, a, rule->prefixlen);
	if (k < 0)
		return -EINVAL;
	n = &fe->e->nodes[k];
	pc = rule_pclass(rule->protocol);
	if (rule->n_ports > 0) {
		struct noderule *x;

		if (pc != CGF_PC_TCP && pc != CGF_PC_UDP)
			return -EINVAL; /* the validator refuses it */
		x = array_append((void **) &fe->nr, fe->n_nr, sizeof(*x));
		if (!x)
			return -ENOMEM;
		*x = (struct noderule) { .node = (size_t) k, .rule = rule, .v = v };
		fe->n_nr++;
	} else if (pc >= 0)
		n->own_proto[pc] = verdict_combine(n->own_proto[pc], v);
	else
		n->own_any = verdict_combine(n->own_any, v);
	return 0;
}

static int family_assign_rules(struct family_enc *fe) {
	int r;

	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < fe->counts[l]; i++) {
			if (fe->lists[l][i].family != fe->family)
				continue;
			r = family_assign_rule(fe, &fe->lists[l][i], list_verdict(l));
			if (r < 0)
				return r;
		}
	return 0;
}

/* The ports rules in node order, so that each node's are one range of
 * e->prules, [prule_start, prule_end). */
static int family_group_prules(struct family_enc *fe) {
	struct encoder *e = fe->e;

	qsort_safe(fe->nr, fe->n_nr, sizeof(*fe->nr), noderule_compare);
	e->prules = calloc(fe->n_nr ? fe->n_nr : 1, sizeof(struct prule));
	if (!e->prules)
		return -ENOMEM;
	for (size_t i = 0; i < fe->n_nr; i++)
		e->prules[i] = (struct prule) { .rule = fe->nr[i].rule, .v = fe->nr[i].v };
	for (size_t i = 0, j = 0; i < e->n_nodes; i++) {
		e->nodes[i].prule_start = j;
		while (j < fe->n_nr && fe->nr[j].node == i)
			j++;
		e->nodes[i].prule_end = j;
	}
	return 0;
}

/* The node of the longest shorter prefix: the one the trie would find
 * if this node were not there.  The root is its own parent. */
static size_t node_parent(const struct encoder *e, size_t i, size_t alen) {
	const struct enode *n = &e->nodes[i];

	for (int l = (int) n->plen - 1; i > 0 && l >= 0; l--) {
		uint8_t a[16];
		ssize_t k;

		memcpy(a, n->addr, 16);
		addr_mask(a, alen, (unsigned) l);
		k = find_node(e, a, (uint8_t) l);
		if (k >= 0)
			return (size_t) k;
	}
	return 0;
}

/* fallback[class]: the node's own protocol rule, else its protocol-less
 * one, else what the parent says (the root's parent: the default). */
static void node_resolve_fallback(struct enode *n, const struct enode *p, bool root, uint8_t dflt) {
	for (size_t c = 0; c < CGF_PC_MAX; c++) {
		int v = n->own_proto[c] >= 0 ? n->own_proto[c] : n->own_any;

		if (v < 0)
			v = root ? dflt : p->fallback[c];
		n->fallback[c] = (uint8_t) v;
	}
}

/* ports[class]: the node's own ports rules over the parent's, unless a
 * rule of its own without ports hides everything shorter (the root has
 * nothing shorter); then the port table that holds it. */
static int node_resolve_ports(struct encoder *e, size_t i) {
	static const struct portfn empty = {};
	struct enode *n = &e->nodes[i];
	const struct enode *p = &e->nodes[n->parent];
	int r;

	for (size_t c = 0; c < CGF_PC_PORTED; c++) {
		bool hides = n->own_proto[c] >= 0 || n->own_any >= 0 || i == 0;

		r = portfn_overlay(hides ? &empty : &p->pf[c], e->prules + n->prule_start,
				   n->prule_end - n->prule_start, (int) c, n->fallback[c], &n->pf[c]);
		if (r < 0)
			return r;
		r = intern_portset(e, &n->pf[c], &n->portset[c]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Shortest prefixes first (the sort order), so that a parent is
 * resolved before its children. */
static int family_resolve(struct family_enc *fe) {
	struct encoder *e = fe->e;
	int r;

	for (size_t i = 0; i < e->n_nodes; i++) {
		struct enode *n = &e->nodes[i];

		n->parent = node_parent(e, i, fe->alen);
		node_resolve_fallback(n, &e->nodes[n->parent], i == 0, verdict_of(fe->f->default_verdict));
		r = node_resolve_ports(e, i);
		if (r < 0)
			return r;
	}
	return 0;
}

static void node_key(const struct enode *n, int family, uint8_t key[static CGF_RMAP_KEY_MAX]) {
	if (family == AF_INET) {
		struct cgf_v4_key k = { .prefixlen = CGF_LPM_RULESET_BITS + n->plen };

		memcpy(k.addr, n->addr, 4);
		memcpy(key, &k, sizeof(k));
	} else {
		struct cgf_v6_key k = { .prefixlen = CGF_LPM_RULESET_BITS + n->plen };

		memcpy(k.addr, n->addr, 16);
		memcpy(key, &k, sizeof(k));
	}
}

/* The nodes that say something their parent does not (and the root,
 * which has no parent to say it). */
static int family_emit_nodes(struct family_enc *fe) {
	struct encoder *e = fe->e;

	for (size_t i = 0; i < e->n_nodes; i++) {
		const struct enode *n = &e->nodes[i];
		struct cgf_rule_node v, pv;
		struct cgf_map_entry *x;

		node_value(n, &v);
		node_value(&e->nodes[n->parent], &pv);
		if (i > 0 && memcmp(&v, &pv, sizeof(v)) == 0)
			continue;
		x = encoder_emit(e, fe->family == AF_INET ? CGF_RMAP_V4 : CGF_RMAP_V6);
		if (!x)
			return -ENOMEM;
		node_key(n, fe->family, x->key);
		memcpy(x->value, &v, sizeof(v));
	}
	return 0;
}

/* One family's rule nodes into e->out; its port functions interned into
 * e->portsets, which cgf_ruleset_encode() emits once for both. */
static int encode_family(const struct cgf_filter *f, int family, struct encoder *e) {
	_cleanup_(family_enc_done) struct family_enc fe = {
		.e = e,
		.f = f,
		.family = family,
		.alen = addr_len(family),
		.lists = { f->allow, f->deny },
		.counts = { f->n_allow, f->n_deny },
	};
	int r;

	encoder_reset_nodes(e);
	r = family_collect_nodes(&fe);
	if (r < 0)
		return r;
	r = family_assign_rules(&fe);
	if (r < 0)
		return r;
	r = family_group_prules(&fe);
	if (r < 0)
		return r;
	r = family_resolve(&fe);
	if (r < 0)
		return r;
	return family_emit_nodes(&fe);
}

static void encoder_donep(struct encoder *e) {
	encoder_done(e);
}

int cgf_ruleset_encode(const struct cgf_filter *f, struct cgf_map_entry **ret, size_t *ret_n) {
	_cleanup_(encoder_donep) struct encoder e = {};
	static const int families[] = { AF_INET, AF_INET6 };
	int r;

	if (!f || f->type != CGF_FILTER_RULES)
		return -EINVAL;
	for (size_t l = 0; l < 2; l++) {
		const struct cgf_rule *rules = l == 0 ? f->allow : f->deny;
		size_t n = l == 0 ? f->n_allow : f->n_deny;

		for (size_t i = 0; i < n; i++)
			if ((rules[i].family != AF_INET && rules[i].family != AF_INET6) ||
			    rules[i].prefixlen > addr_len(rules[i].family) * 8)
				return -EINVAL;
	}
	for (size_t i = 0; i < ELEMENTSOF(families); i++) {
		r = encode_family(f, families[i], &e);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < e.n_portsets; i++) {
		r = emit_port_blocks(&e, (uint16_t) (i + 1), &e.portsets[i]);
		if (r < 0)
			return r;
	}
	qsort_safe(e.out, e.n_out, sizeof(*e.out), entry_compare_qsort);
	*ret = TAKE_PTR(e.out);
	*ret_n = e.n_out;
	return 0;
}

/* ---- the planner ---- */

/* A rule set: wanted (id 0 until assigned) or found in the maps. */
struct rset {
	const struct cgf_filter *filter; /* wanted: the first filter it was encoded from */
	uint32_t id;
	struct cgf_map_entry *e; /* rule set id zeroed, sorted */
	size_t n;
	bool is_new; /* wanted, not in the maps yet */
	bool used;   /* found, and wanted again */
};

struct plan {
	struct cgf_map_op *ops;
	size_t n_ops;
	struct rset *cur;
	size_t n_cur;
	struct rset *want;
	size_t n_want;
};

static void plan_done(struct plan *p) {
	free(p->ops);
	for (size_t i = 0; i < p->n_cur; i++)
		free(p->cur[i].e);
	free(p->cur);
	for (size_t i = 0; i < p->n_want; i++)
		free(p->want[i].e);
	free(p->want);
	*p = (struct plan) {};
}

static int plan_op(struct plan *p, enum cgf_map_op_kind kind, const struct cgf_map_entry *e) {
	struct cgf_map_op *op = array_append((void **) &p->ops, p->n_ops, sizeof(*op));

	if (!op)
		return -ENOMEM;
	op->kind = kind;
	if (e)
		op->entry = *e;
	if (kind == CGF_MAP_DELETE)
		memset(op->entry.value, 0, sizeof(op->entry.value));
	p->n_ops++;
	return 0;
}

/* Group the maps' rule set entries by id. */
static int plan_read_current(struct plan *p, const struct cgf_map_entry *cur, size_t n_cur) {
	for (size_t i = 0; i < n_cur; i++) {
		uint32_t id;
		struct rset *s = NULL;
		struct cgf_map_entry *x;

		if (!rmap_is_ruleset(cur[i].map))
			continue;
		id = cgf_map_entry_ruleset(&cur[i]);
		for (size_t k = 0; k < p->n_cur; k++)
			if (p->cur[k].id == id) {
				s = &p->cur[k];
				break;
			}
		if (!s) {
			s = array_append((void **) &p->cur, p->n_cur, sizeof(*s));
			if (!s)
				return -ENOMEM;
			s->id = id;
			p->n_cur++;
		}
		x = array_append((void **) &s->e, s->n, sizeof(*x));
		if (!x)
			return -ENOMEM;
		*x = cur[i];
		entry_set_ruleset(x, 0);
		s->n++;
	}
	for (size_t k = 0; k < p->n_cur; k++)
		qsort_safe(p->cur[k].e, p->cur[k].n, sizeof(struct cgf_map_entry), entry_compare_qsort);
	return 0;
}

static bool id_taken(const struct plan *p, uint32_t id) {
	for (size_t k = 0; k < p->n_cur; k++)
		if (p->cur[k].id == id)
			return true;
	for (size_t k = 0; k < p->n_want; k++)
		if (p->want[k].id == id)
			return true;
	return false;
}

/* The rule set of a filter, added to the wanted ones unless an equal one
 * is there; its index in ret. */
static int plan_want_filter(struct plan *p, const struct cgf_filter *f, size_t *ret) {
	_cleanup_free_ struct cgf_map_entry *e = NULL;
	struct rset *s;
	size_t n;
	int r;

	/* Thousands of tenants name a handful of filters: encode each once. */
	for (size_t k = 0; k < p->n_want; k++)
		if (p->want[k].filter == f) {
			*ret = k;
			return 0;
		}
	r = cgf_ruleset_encode(f, &e, &n);
	if (r < 0)
		return r;
	for (size_t k = 0; k < p->n_want; k++)
		if (entries_equal(p->want[k].e, p->want[k].n, e, n)) {
			*ret = k;
			return 0;
		}
	s = array_append((void **) &p->want, p->n_want, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->filter = f;
	s->e = TAKE_PTR(e);
	s->n = n;
	p->n_want++;
	*ret = p->n_want - 1;
	return 0;
}

/* Wanted rule sets get the id of an equal one in the maps, or a new one. */
static void plan_assign_ids(struct plan *p) {
	uint32_t next = 1;

	for (size_t k = 0; k < p->n_want; k++) {
		struct rset *w = &p->want[k];

		for (size_t c = 0; c < p->n_cur; c++)
			if (p->cur[c].id != 0 && entries_equal(p->cur[c].e, p->cur[c].n, w->e, w->n)) {
				w->id = p->cur[c].id;
				p->cur[c].used = true;
				break;
			}
	}
	for (size_t k = 0; k < p->n_want; k++) {
		struct rset *w = &p->want[k];

		if (w->id != 0)
			continue;
		while (id_taken(p, next))
			next++;
		w->id = next;
		w->is_new = true;
	}
}

struct tenant_want {
	uint64_t id;
	struct cgf_tenant_entry v;
};

static int tenant_want_compare(const void *a, const void *b) {
	const struct tenant_want *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* t sorted by id (after build_tenants_merge()). */
static struct tenant_want *tenant_find(struct tenant_want *t, size_t n, uint64_t id) {
	struct tenant_want key = { .id = id };

	return n > 0 ? bsearch(&key, t, n, sizeof(*t), tenant_want_compare) : NULL;
}

/* The maps' entries, sorted by map and key for lookups: with thousands
 * of tenants a scan per entry would make a sync quadratic. */
struct cur_index {
	const struct cgf_map_entry **v;
	size_t n;
};

static int cur_ptr_compare(const void *a, const void *b) {
	const struct cgf_map_entry *x = *(const struct cgf_map_entry *const *) a;
	const struct cgf_map_entry *y = *(const struct cgf_map_entry *const *) b;

	if (x->map != y->map)
		return x->map < y->map ? -1 : 1;
	return memcmp(x->key, y->key, sizeof(x->key));
}

static int cur_index_build(struct cur_index *ix, const struct cgf_map_entry *cur, size_t n_cur) {
	*ix = (struct cur_index) {};
	if (n_cur == 0)
		return 0;
	ix->v = malloc(n_cur * sizeof(*ix->v));
	if (!ix->v)
		return -ENOMEM;
	for (size_t i = 0; i < n_cur; i++)
		ix->v[i] = &cur[i];
	ix->n = n_cur;
	qsort_safe(ix->v, ix->n, sizeof(*ix->v), cur_ptr_compare);
	return 0;
}

static const struct cgf_map_entry *current_find(const struct cur_index *ix, const struct cgf_map_entry *e) {
	const struct cgf_map_entry *const *hit;

	if (ix->n == 0)
		return NULL;
	hit = bsearch(&e, ix->v, ix->n, sizeof(*ix->v), cur_ptr_compare);
	return hit ? *hit : NULL;
}

/* UPDATE e unless the maps hold exactly it. */
static int plan_update_if_changed(struct plan *p, const struct cur_index *ix, const struct cgf_map_entry *e) {
	const struct cgf_map_entry *c = current_find(ix, e);

	if (c && memcmp(c->value, e->value, sizeof(e->value)) == 0)
		return 0;
	return plan_op(p, CGF_MAP_UPDATE, e);
}

static struct cgf_map_entry tenant_entry(const struct tenant_want *t) {
	struct cgf_map_entry e = { .map = CGF_RMAP_TENANTS };

	memcpy(e.key, &t->id, sizeof(t->id));
	memcpy(e.value, &t->v, sizeof(t->v));
	return e;
}

static int tenant_append(struct tenant_want **tw, size_t *n_tw, uint64_t id, uint32_t flags) {
	struct tenant_want *t = array_append((void **) tw, *n_tw, sizeof(**tw));

	if (!t)
		return -ENOMEM;
	t->id = id;
	t->v.flags = flags;
	(*n_tw)++;
	return 0;
}

/* The config value: the host's rule set, the levels of the hosts (in a
 * partial sync also those the maps name already: another event's hosts
 * are not in this want, and their children must stay found). */
static int plan_config(const struct cgf_filter_maps_want *want, const struct cur_index *ix, uint32_t host_set_id,
		       struct cgf_rules_config *ret) {
	struct cgf_rules_config cfg = {}, old = {};
	struct cgf_map_entry key = { .map = CGF_RMAP_CONFIG };
	const struct cgf_map_entry *c;
	size_t n_levels;
	uint32_t levels[CGF_TENANT_LEVELS_MAX * 2];

	cfg.ruleset = host_set_id;
	cfg.flags = want->fail_closed_unknown_children ? CGF_CONFIG_FAIL_CLOSED : 0;
	if (want->filter->audit)
		cfg.flags |= CGF_CONFIG_AUDIT | (want->audit_all ? CGF_CONFIG_AUDIT_ALL : 0);
	n_levels = 0;
	if (want->partial && (c = current_find(ix, &key))) {
		memcpy(&old, c->value, sizeof(old));
		for (uint32_t k = 0; k < old.n_levels && k < CGF_TENANT_LEVELS_MAX; k++)
			levels[n_levels++] = old.levels[k];
	}
	for (size_t i = 0; i < want->n_hosts; i++) {
		uint32_t l = want->hosts[i].level, k;

		for (k = 0; k < n_levels && levels[k] != l; k++)
			;
		if (k < n_levels)
			continue;
		if (n_levels >= CGF_TENANT_LEVELS_MAX)
			return -E2BIG;
		levels[n_levels++] = l;
	}
	/* Sorted, so that the same hosts give the same bytes. */
	for (size_t i = 0; i < n_levels; i++) {
		uint32_t l = levels[i], k;

		for (k = cfg.n_levels; k > 0 && cfg.levels[k - 1] > l; k--)
			cfg.levels[k] = cfg.levels[k - 1];
		cfg.levels[k] = l;
		cfg.n_levels++;
	}
	*ret = cfg;
	return 0;
}

static bool in_scope(const struct cgf_filter_maps_want *want, uint64_t id) {
	size_t lo = 0, hi = want->n_scope_ids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (want->scope_ids[mid] == id)
			return true;
		if (want->scope_ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* What plan_build's steps share: the want, the maps' contents, and what
 * the steps before found (the wanted rule sets themselves are in p). */
struct build {
	struct plan *p;
	const struct cgf_filter_maps_want *want;
	const struct cgf_map_entry *cur;
	size_t n_cur;
	struct cur_index ix;
	size_t host_set;      /* index in p->want */
	size_t *binding_sets; /* index in p->want, for each filter of each binding in turn */
	size_t n_binding_sets;
	struct cgf_rules_config cfg;
	struct tenant_want *tw; /* sorted by id, each once */
	size_t n_tw;
};

static void build_done(struct build *b) {
	free(b->ix.v);
	free(b->binding_sets);
	free(b->tw);
}

static int build_want_binding(struct build *b, const struct cgf_tenant_binding *binding) {
	int r;

	if (binding->n_filters > CGF_TENANT_RULESETS_MAX)
		return -E2BIG;
	for (size_t j = 0; j < binding->n_filters; j++) {
		const struct cgf_filter *f = binding->filters[j];
		size_t *x;

		if (!f || f->type != CGF_FILTER_RULES || f->direction != b->want->filter->direction)
			return -EINVAL;
		x = array_append((void **) &b->binding_sets, b->n_binding_sets, sizeof(*x));
		if (!x)
			return -ENOMEM;
		r = plan_want_filter(b->p, f, x);
		if (r < 0)
			return r;
		b->n_binding_sets++;
	}
	return 0;
}

/* Rule sets: the host's, then the tenants', each under an id. */
static int build_want_rulesets(struct build *b) {
	int r;

	r = plan_want_filter(b->p, b->want->filter, &b->host_set);
	if (r < 0)
		return r;
	for (size_t i = 0; i < b->want->n_bindings; i++) {
		r = build_want_binding(b, &b->want->bindings[i]);
		if (r < 0)
			return r;
	}
	plan_assign_ids(b->p);
	return 0;
}

static bool level_has_host(const struct cgf_rules_config *cfg, unsigned child_level) {
	bool ok = false;

	for (size_t k = 0; k < cfg->n_levels; k++)
		ok = ok || cfg->levels[k] + 1 == child_level;
	return ok;
}

/* A tenant entry for every host and every child, in want's order. */
static int build_tenants_collect(struct build *b) {
	const struct cgf_filter_maps_want *want = b->want;
	int r;

	for (size_t i = 0; i < want->n_hosts; i++) {
		r = tenant_append(&b->tw, &b->n_tw, want->hosts[i].cgroup_id, CGF_TENANT_HOST);
		if (r < 0)
			return r;
	}
	for (size_t i = 0, s = 0; i < want->n_bindings; i++) {
		const struct cgf_tenant_binding *binding = &want->bindings[i];
		struct tenant_want *t;

		if (!level_has_host(&b->cfg, binding->level))
			return -EINVAL;
		r = tenant_append(&b->tw, &b->n_tw, binding->cgroup_id, CGF_TENANT_CHILD);
		if (r < 0)
			return r;
		t = &b->tw[b->n_tw - 1];
		t->v.n_rulesets = (uint32_t) binding->n_filters;
		for (size_t j = 0; j < binding->n_filters; j++, s++) {
			t->v.ruleset[j] = b->p->want[b->binding_sets[s]].id;
			if (binding->filters[j]->audit)
				t->v.flags |= CGF_TENANT_AUDIT(j);
		}
	}
	return 0;
}

/* Sorted by id, one entry per cgroup: a child of one host can be a host
 * itself, and then its entry says both. */
static int build_tenants_merge(struct build *b) {
	struct tenant_want *tw = b->tw;
	size_t n = 0;

	qsort_safe(tw, b->n_tw, sizeof(*tw), tenant_want_compare);
	for (size_t i = 0; i < b->n_tw; i++) {
		if (n > 0 && tw[n - 1].id == tw[i].id) {
			if (tw[n - 1].v.flags & tw[i].v.flags & CGF_TENANT_CHILD)
				return -EINVAL; /* a child bound twice */
			if (tw[i].v.flags & CGF_TENANT_CHILD) {
				tw[n - 1].v.n_rulesets = tw[i].v.n_rulesets;
				memcpy(tw[n - 1].v.ruleset, tw[i].v.ruleset, sizeof(tw[i].v.ruleset));
			}
			tw[n - 1].v.flags |= tw[i].v.flags;
			continue;
		}
		tw[n++] = tw[i];
	}
	b->n_tw = n;
	return 0;
}

static int build_tenants(struct build *b) {
	int r;

	r = build_tenants_collect(b);
	if (r < 0)
		return r;
	r = build_tenants_merge(b);
	if (r < 0)
		return r;
	if (b->want->partial)
		for (size_t i = 0; i < b->n_tw; i++)
			if (!in_scope(b->want, b->tw[i].id))
				return -EINVAL; /* a partial want speaks only for its scope */
	return 0;
}

/* Room: new rule sets are written before the old ones leave, so both
 * count.  A partial sync does not know every tenant entry: the kernel's
 * -E2BIG says when that map is full. */
static int build_check_room(const struct build *b) {
	const struct plan *p = b->p;
	size_t room[_CGF_RMAP_MAX] = {};

	for (size_t i = 0; i < b->n_cur; i++)
		room[b->cur[i].map]++;
	for (size_t k = 0; k < p->n_want; k++)
		for (size_t i = 0; p->want[k].is_new && i < p->want[k].n; i++)
			room[p->want[k].e[i].map]++;
	for (size_t i = 0; i < b->n_tw; i++) {
		struct cgf_map_entry e = tenant_entry(&b->tw[i]);

		if (!current_find(&b->ix, &e))
			room[CGF_RMAP_TENANTS]++;
	}
	for (size_t m = 0; m < _CGF_RMAP_MAX; m++)
		if (m != CGF_RMAP_CONFIG && !(b->want->partial && m == CGF_RMAP_TENANTS) &&
		    room[m] > rmap_table[m].max_entries)
			return -E2BIG;
	return 0;
}

/* 1. New rule sets, whole, under ids nothing names yet. */
static int emit_new_rulesets(struct build *b) {
	struct plan *p = b->p;
	int r;

	for (size_t k = 0; k < p->n_want; k++)
		for (size_t i = 0; p->want[k].is_new && i < p->want[k].n; i++) {
			struct cgf_map_entry e = p->want[k].e[i];

			entry_set_ruleset(&e, p->want[k].id);
			r = plan_op(p, CGF_MAP_UPDATE, &e);
			if (r < 0)
				return r;
		}
	return 0;
}

/* One half of step 2: the children's entries, or the hosts'. */
static int emit_tenant_entries(struct build *b, bool children) {
	int r;

	for (size_t i = 0; i < b->n_tw; i++) {
		struct cgf_map_entry e;

		if (!!(b->tw[i].v.flags & CGF_TENANT_CHILD) != children)
			continue;
		e = tenant_entry(&b->tw[i]);
		r = plan_update_if_changed(b->p, &b->ix, &e);
		if (r < 0)
			return r;
	}
	return 0;
}

/* 2. Children before hosts: a host entry makes its children's entries
 * count, and one without them would fail closed. */
static int emit_tenants(struct build *b) {
	int r;

	r = emit_tenant_entries(b, true);
	if (r < 0)
		return r;
	return emit_tenant_entries(b, false);
}

/* 3. The host's rule set and the levels: one value. */
static int emit_config(struct build *b) {
	struct cgf_map_entry e = { .map = CGF_RMAP_CONFIG };

	memcpy(e.value, &b->cfg, sizeof(b->cfg));
	return plan_update_if_changed(b->p, &b->ix, &e);
}

/* Whether pass 0 (config keys that are not ours, host entries) or pass 1
 * (child entries) of step 4 deletes c. */
static bool stale_in_pass(const struct build *b, const struct cgf_map_entry *c, int pass) {
	struct cgf_tenant_entry v;
	uint64_t id;

	if (c->map == CGF_RMAP_CONFIG) {
		uint32_t key;

		memcpy(&key, c->key, sizeof(key));
		return pass == 0 && key != CGF_CONFIG_KEY;
	}
	if (c->map != CGF_RMAP_TENANTS)
		return false;
	memcpy(&id, c->key, sizeof(id));
	memcpy(&v, c->value, sizeof(v));
	if (tenant_find(b->tw, b->n_tw, id) || (b->want->partial && !in_scope(b->want, id)))
		return false;
	return ((v.flags & CGF_TENANT_HOST) != 0) == (pass == 0);
}

/* 4. Stale tenant entries, hosts first (the reverse of 2.), and config
 * keys that are not ours.  A partial sync was given only the entries of
 * its scope. */
static int emit_stale(struct build *b) {
	int r;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < b->n_cur; i++) {
			if (!stale_in_pass(b, &b->cur[i], pass))
				continue;
			r = plan_op(b->p, CGF_MAP_DELETE, &b->cur[i]);
			if (r < 0)
				return r;
		}
	return 0;
}

static int plan_delete_rset(struct plan *p, const struct rset *s) {
	int r;

	for (size_t i = 0; i < s->n; i++) {
		struct cgf_map_entry e = s->e[i];

		entry_set_ruleset(&e, s->id);
		r = plan_op(p, CGF_MAP_DELETE, &e);
		if (r < 0)
			return r;
	}
	return 0;
}

/* 5. Old rule sets, once no program can be in the middle of one (one
 * barrier before the first).  Not in a partial sync: a tenant entry it
 * did not read may name one. */
static int emit_old_rulesets(struct build *b) {
	struct plan *p = b->p;
	bool barrier = false;
	int r;

	if (b->want->partial)
		return 0;
	for (size_t c = 0; c < p->n_cur; c++) {
		if (p->cur[c].used)
			continue;
		if (!barrier) {
			r = plan_op(p, CGF_MAP_BARRIER, NULL);
			if (r < 0)
				return r;
			barrier = true;
		}
		r = plan_delete_rset(p, &p->cur[c]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* What the maps should hold, checked against their room, then the
 * operations in the order that keeps every lookup whole: steps 1.-5. */
static int plan_build(struct plan *p, const struct cgf_filter_maps_want *want,
		      const struct cgf_map_entry *cur, size_t n_cur) {
	_cleanup_(build_done) struct build b = { .p = p, .want = want, .cur = cur, .n_cur = n_cur };
	int r;

	if (!want->filter || want->filter->type != CGF_FILTER_RULES)
		return -EINVAL;
	r = plan_read_current(p, cur, n_cur);
	if (r < 0)
		return r;
	r = cur_index_build(&b.ix, cur, n_cur);
	if (r < 0)
		return r;
	r = build_want_rulesets(&b);
	if (r < 0)
		return r;
	r = plan_config(want, &b.ix, p->want[b.host_set].id, &b.cfg);
	if (r < 0)
		return r;
	r = build_tenants(&b);
	if (r < 0)
		return r;
	r = build_check_room(&b);
	if (r < 0)
		return r;

	r = emit_new_rulesets(&b);
	if (r < 0)
		return r;
	r = emit_tenants(&b);
	if (r < 0)
		return r;
	r = emit_config(&b);
	if (r < 0)
		return r;
	r = emit_stale(&b);
	if (r < 0)
		return r;
	return emit_old_rulesets(&b);
}

int cgf_filter_maps_plan(const struct cgf_filter_maps_want *want,
			 const struct cgf_map_entry *current, size_t n_current,
			 struct cgf_map_op **ret_ops, size_t *ret_n_ops) {
	_cleanup_(plan_done) struct plan p = {};
	int r;

	r = plan_build(&p, want, current, n_current);
	if (r < 0)
		return r;
	*ret_ops = TAKE_PTR(p.ops);
	*ret_n_ops = p.n_ops;
	return 0;
}

/* The attachment's carrier of direction d: its first rules filter of d. */
static const struct cgf_filter *carrier_of(const struct cgf_policy *p, const struct cgf_attachment *a,
					   enum cgf_direction d) {
	for (size_t i = 0; i < a->n_filters; i++) {
		const struct cgf_filter *x = cgf_policy_find_filter(p, a->filters[i].filter);

		if (x && x->type == CGF_FILTER_RULES && x->direction == d)
			return x;
	}
	return NULL;
}

bool cgf_filter_audits_all(const struct cgf_policy *p, const struct cgf_filter *f) {
	if (!f->audit)
		return false;
	for (size_t i = 0; i < p->n_attachments; i++) {
		const struct cgf_attachment *a = &p->attachments[i];

		if (a->n_tenants == 0 || carrier_of(p, a, f->direction) != f)
			continue;
		for (size_t t = 0; t < a->n_tenants; t++)
			for (size_t j = 0; j < a->tenants[t].n_filters; j++) {
				const struct cgf_filter *x = cgf_policy_find_filter(p, a->tenants[t].filters[j].filter);

				/* Unknown: a policy the validator refuses; say no. */
				if (!x || (x->direction == f->direction && !x->audit))
					return false;
			}
	}
	return true;
}
