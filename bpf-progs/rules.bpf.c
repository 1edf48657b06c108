// SPDX-License-Identifier: GPL-2.0-only
/*
 * rules: judge each packet by a rules filter's allow/deny lists, and, for
 * sockets in tenant children of the cgroup it is attached to, by each
 * child's tenant filters too.
 *
 * All the policy is data (cgf-maps.h, written by daemon/maps/filter-maps.c):
 * the userspace encoder resolves "most specific rule wins" and the
 * default into one node per prefix, so that a packet costs one LPM lookup
 * per rule set (plus one in the port table for TCP and UDP), whatever the
 * number of rules.  No loop here runs over rules.
 *
 * What the programs see (docs/filters.md): cgroup_skb runs on packets of
 * full sockets only, egress before fragmentation and ingress after
 * reassembly, so ports are nearly always there; a non-first fragment
 * (only a raw socket with IP_HDRINCL makes those) is judged without
 * ports.  An IPv6 header chain longer than CGF_IPV6_EXT_MAX, or cut
 * short, is dropped: it cannot be judged, and passing it would let
 * anyone hide a port behind padding headers.
 *
 * Audit (a filter's `enforce: false`): each rule set the program applies
 * is enforced or audited (config's CGF_CONFIG_AUDIT for the host's, a
 * tenant entry's CGF_TENANT_AUDIT(j) for each of a child's).  A drop by an
 * audited one is counted as would-drop and the packet passes, unless an
 * enforced one drops it; so switching a filter between the two is one
 * value written under its lock, with no program change.
 */
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <bpf/bpf_endian.h>

#include "counters.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	/* Written in place under the value's lock (BPF_F_LOCK) and read
	 * under it: see cgf-maps.h.  Not preallocated, as few entries are
	 * used. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct cgf_rules_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CGF_TENANTS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* as config */
	__type(key, __u64);
	__type(value, struct cgf_tenant_entry);
} tenants SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, CGF_RULE_NODES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* the kernel requires it for LPM tries */
	__type(key, struct cgf_v4_key);
	__type(value, struct cgf_rule_node);
} rules_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, CGF_RULE_NODES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct cgf_v6_key);
	__type(value, struct cgf_rule_node);
} rules_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, CGF_PORT_BLOCKS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct cgf_port_key);
	__type(value, struct cgf_port_verdict);
} rules_ports SEC(".maps");

/* What a rule looks at, taken from the packet once. */
struct cgf_pkt {
	__u8 addr[16]; /* the peer: destination on egress, source on ingress */
	__u8 port[2];  /* destination port, network order, when has_port */
	__u8 has_port;
	__u8 v6;
	__u32 pclass;
};

#define IP_OFFSET_MASK 0x1fff
#define IP6_OFFSET_MASK 0xfff8

static __always_inline __u32 pclass_of(__u8 proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return CGF_PC_TCP;
	case IPPROTO_UDP:
		return CGF_PC_UDP;
	case IPPROTO_ICMP:
		return CGF_PC_ICMP;
	case IPPROTO_ICMPV6:
		return CGF_PC_ICMPV6;
	}
	return CGF_PC_OTHER;
}

/* The destination port at off, when the protocol has ports.  A header cut
 * short leaves the packet without a port: only port-less rules judge it. */
static __always_inline void load_port(struct __sk_buff *skb, __u32 off, struct cgf_pkt *p)
{
	__u8 ports[4];

	if (p->pclass >= CGF_PC_PORTED)
		return;
	if (bpf_skb_load_bytes(skb, off, ports, sizeof(ports)) < 0)
		return;
	p->port[0] = ports[2];
	p->port[1] = ports[3];
	p->has_port = 1;
}

/* 0, or -1 for a packet that cannot be judged.  skb->data starts at the
 * network header in both cgroup_skb hooks. */
static __always_inline int parse_v4(struct __sk_buff *skb, int egress, struct cgf_pkt *p)
{
	struct {
		__u8 ver_ihl, tos;
		__u16 tot_len, id, frag_off;
		__u8 ttl, protocol;
		__u16 check;
		__u8 saddr[4], daddr[4];
	} h;
	__u32 ihl;

	if (bpf_skb_load_bytes(skb, 0, &h, sizeof(h)) < 0)
		return -1;
	ihl = (h.ver_ihl & 0xf) * 4;
	if (h.ver_ihl >> 4 != 4 || ihl < sizeof(h))
		return -1;
	__builtin_memcpy(p->addr, egress ? h.daddr : h.saddr, 4);
	p->pclass = pclass_of(h.protocol);
	/* A non-first fragment carries no transport header. */
	if (bpf_ntohs(h.frag_off) & IP_OFFSET_MASK)
		return 0;
	load_port(skb, ihl, p);
	return 0;
}

static __always_inline int parse_v6(struct __sk_buff *skb, int egress, struct cgf_pkt *p)
{
	struct {
		__u32 ver_tc_flow;
		__u16 payload_len;
		__u8 nexthdr, hop_limit;
		__u8 saddr[16], daddr[16];
	} h;
	__u32 off = sizeof(h);
	__u8 nh;

	if (bpf_skb_load_bytes(skb, 0, &h, sizeof(h)) < 0 || bpf_ntohl(h.ver_tc_flow) >> 28 != 6)
		return -1;
	__builtin_memcpy(p->addr, egress ? h.daddr : h.saddr, 16);
	nh = h.nexthdr;
	for (int i = 0; i < CGF_IPV6_EXT_MAX; i++) {
		__u8 e[8];

		switch (nh) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
			if (bpf_skb_load_bytes(skb, off, e, 2) < 0)
				return -1;
			nh = e[0];
			off += (e[1] + 1) * 8;
			continue;
		case IPPROTO_AH:
			if (bpf_skb_load_bytes(skb, off, e, 2) < 0)
				return -1;
			nh = e[0];
			off += (e[1] + 2) * 4;
			continue;
		case IPPROTO_FRAGMENT:
			if (bpf_skb_load_bytes(skb, off, e, 8) < 0)
				return -1;
			nh = e[0];
			off += 8;
			if (((e[2] << 8) | e[3]) & IP6_OFFSET_MASK) {
				/* Non-first fragment: the protocol, no ports. */
				p->pclass = pclass_of(nh);
				return 0;
			}
			continue;
		}
		p->pclass = pclass_of(nh);
		load_port(skb, off, p);
		return 0;
	}
	return -1;
}

/* The verdict of one rule set.  A rule set that is not there (a program
 * attached before its maps were synced) drops. */
static __always_inline int judge(__u32 ruleset, const struct cgf_pkt *p)
{
	struct cgf_rule_node *n;
	__u32 pc = p->pclass;

	if (p->v6) {
		struct cgf_v6_key k = { .prefixlen = 32 + 128, .ruleset = ruleset };

		__builtin_memcpy(k.addr, p->addr, 16);
		n = bpf_map_lookup_elem(&rules_v6, &k);
	} else {
		struct cgf_v4_key k = { .prefixlen = 32 + 32, .ruleset = ruleset };

		__builtin_memcpy(k.addr, p->addr, 4);
		n = bpf_map_lookup_elem(&rules_v4, &k);
	}
	if (!n || pc >= CGF_PC_MAX)
		return CGF_V_DROP;
	if (pc < CGF_PC_PORTED && p->has_port && n->portset[pc]) {
		struct cgf_port_key k = {
			.prefixlen = CGF_PORT_PREFIX_BITS + 16,
			.ruleset = ruleset,
			.portset = n->portset[pc],
			.port = { p->port[0], p->port[1] },
		};
		struct cgf_port_verdict *v = bpf_map_lookup_elem(&rules_ports, &k);

		if (v)
			return v->verdict == CGF_V_PASS ? CGF_V_PASS : CGF_V_DROP;
	}
	return n->verdict[pc] == CGF_V_PASS ? CGF_V_PASS : CGF_V_DROP;
}

/* Copies of the config and tenant values, taken under their locks (no
 * helper may be called while a lock is held). */
static __always_inline int read_config(struct cgf_rules_config *ret)
{
	__u32 key = CGF_CONFIG_KEY;
	struct cgf_rules_config *c = bpf_map_lookup_elem(&config, &key);

	if (!c)
		return -1;
	bpf_spin_lock(&c->lock);
	ret->ruleset = c->ruleset;
	ret->flags = c->flags;
	ret->n_levels = c->n_levels;
	__builtin_memcpy(ret->levels, c->levels, sizeof(ret->levels));
	bpf_spin_unlock(&c->lock);
	return 0;
}

static __always_inline int read_tenant(__u64 id, struct cgf_tenant_entry *ret)
{
	struct cgf_tenant_entry *e = bpf_map_lookup_elem(&tenants, &id);

	if (!e)
		return -1;
	bpf_spin_lock(&e->lock);
	ret->flags = e->flags;
	ret->n_rulesets = e->n_rulesets;
	__builtin_memcpy(ret->ruleset, e->ruleset, sizeof(ret->ruleset));
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* A drop that no rule set decides (a packet that cannot be judged, a
 * child not bound yet): counted as would-drop only when every filter the
 * program applies is audited, so that an audited filter never lets
 * through what an enforced one might drop. */
static __always_inline int unjudged(const struct cgf_rules_config *cfg)
{
	return cfg->flags & CGF_CONFIG_AUDIT_ALL ? CGF_V_WOULD_DROP : CGF_V_DROP;
}

/* CGF_V_PASS, CGF_V_DROP, or CGF_V_WOULD_DROP: passed, but an audited
 * rule set would have dropped it. */
static __always_inline int filter(struct __sk_buff *skb, int egress)
{
	struct cgf_rules_config cfg;
	struct cgf_tenant_entry e;
	struct cgf_pkt p = {};
	/* A drop by an audited rule set is counted, not made: the packet
	 * still meets the other rule sets, any enforced one may drop it. */
	int v = CGF_V_PASS;

	if (read_config(&cfg) < 0)
		return CGF_V_DROP; /* not synced yet: fail closed */

	/* skb->protocol is set on both hooks (ip_output(), ip6_output(),
	 * the driver on receive); the parsers check the version nibble
	 * against it, so that a mislabelled packet is not misread. */
	switch (skb->protocol) {
	case bpf_htons(ETH_P_IP):
		if (parse_v4(skb, egress, &p) < 0)
			return unjudged(&cfg);
		break;
	case bpf_htons(ETH_P_IPV6):
		p.v6 = 1;
		if (parse_v6(skb, egress, &p) < 0)
			return unjudged(&cfg);
		break;
	default:
		/* cgroup_skb runs for inet sockets only. */
		return unjudged(&cfg);
	}

	if (judge(cfg.ruleset, &p) != CGF_V_PASS) {
		if (!(cfg.flags & CGF_CONFIG_AUDIT))
			return CGF_V_DROP;
		v = CGF_V_WOULD_DROP;
	}

	/*
	 * Tenants: for each level at which a tenant host of this filter
	 * sits, the socket's ancestor there; if that is a host, the
	 * socket's ancestor one level down is the child whose rule sets
	 * apply too (a socket in the host itself has none).
	 */
	for (__u32 i = 0; i < CGF_TENANT_LEVELS_MAX; i++) {
		__u64 id;

		if (i >= cfg.n_levels)
			break;
		id = bpf_skb_ancestor_cgroup_id(skb, cfg.levels[i]);
		if (!id)
			continue;
		if (read_tenant(id, &e) < 0 || !(e.flags & CGF_TENANT_HOST))
			continue;
		id = bpf_skb_ancestor_cgroup_id(skb, cfg.levels[i] + 1);
		if (!id)
			continue;
		if (read_tenant(id, &e) < 0 || !(e.flags & CGF_TENANT_CHILD)) {
			if (cfg.flags & CGF_CONFIG_FAIL_CLOSED) {
				if (unjudged(&cfg) == CGF_V_DROP)
					return CGF_V_DROP;
				v = CGF_V_WOULD_DROP;
			}
			continue;
		}
		for (__u32 j = 0; j < CGF_TENANT_RULESETS_MAX; j++) {
			if (j >= e.n_rulesets)
				break;
			if (judge(e.ruleset[j], &p) != CGF_V_PASS) {
				if (!(e.flags & CGF_TENANT_AUDIT(j)))
					return CGF_V_DROP;
				v = CGF_V_WOULD_DROP;
			}
		}
	}
	return v;
}

static __always_inline int run(struct __sk_buff *skb, int egress)
{
	int v = filter(skb, egress);

	cgf_count(skb, v);
	/* Would-drop passes: only audited rule sets wanted it dropped. */
	return v == CGF_V_DROP ? CGF_V_DROP : CGF_V_PASS;
}

SEC("cgroup_skb/egress")
int cgf_rules(struct __sk_buff *skb)
{
	return run(skb, 1);
}

SEC("cgroup_skb/ingress")
int cgf_rules_in(struct __sk_buff *skb)
{
	return run(skb, 0);
}
