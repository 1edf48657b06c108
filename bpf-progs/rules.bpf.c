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

/*
 * Whole words on the stack.  cgfilterd loads this program with CAP_BPF
 * and CAP_NET_ADMIN only.  Without CAP_PERFMON, Linux 6.1's verifier
 * refuses a store of less than 8 bytes into a stack slot that holds a
 * spilled register, and an aligned store of a register whose bounds it
 * knows counts as a spill even when it is 4 bytes wide
 * (check_stack_write_fixed_off()): two __u32 fields stored one after the
 * other into one 8-byte slot are refused, and so is a helper's write
 * into a slot such a store used before.  So every object here is
 * written in whole 8-byte words (unions with __u64 w[], views with
 * __u64 fields), or only by bpf_skb_load_bytes().
 */
union v4_key {
	struct cgf_v4_key k;
	__u64 w[2];
};

union v6_key {
	struct cgf_v6_key k;
	__u64 w[3];
};

union port_key {
	struct cgf_port_key k;
	__u64 w[2];
};

_Static_assert(__builtin_offsetof(struct cgf_v4_key, addr) == 8, "v4 key: head is one word");
_Static_assert(__builtin_offsetof(struct cgf_v6_key, addr) == 8, "v6 key: head is one word");
_Static_assert(__builtin_offsetof(struct cgf_port_key, portset) == 8, "port key: head is one word");

/* The first word of every LPM key: prefixlen, then the rule set. */
static __always_inline __u64 lpm_head(__u32 prefixlen, __u32 ruleset)
{
	union {
		struct {
			__u32 prefixlen, ruleset;
		} f;
		__u64 w;
	} h = { .f = { prefixlen, ruleset } };

	return h.w;
}

/* What a rule looks at, taken from the packet once: the peer (the
 * destination on egress, the source on ingress) already in the key of
 * its family, whose head judge() rewrites per rule set. */
struct cgf_pkt {
	union v4_key v4;
	union v6_key v6;
	__u64 port;     /* destination port bytes as in the packet, when has_port */
	__u64 has_port;
	__u64 pclass;
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
	union {
		__u8 b[2];
		__u64 w;
	} port = {};

	if (p->pclass >= CGF_PC_PORTED)
		return;
	/* The destination port: the second half of the first 4 bytes. */
	if (bpf_skb_load_bytes(skb, off + 2, port.b, sizeof(port.b)) < 0)
		return;
	p->port = port.w;
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
	union {
		__u8 b[4];
		__u64 w;
	} addr = {};
	__u32 ihl;

	if (bpf_skb_load_bytes(skb, 0, &h, sizeof(h)) < 0)
		return -1;
	ihl = (h.ver_ihl & 0xf) * 4;
	if (h.ver_ihl >> 4 != 4 || ihl < sizeof(h))
		return -1;
	__builtin_memcpy(addr.b, egress ? h.daddr : h.saddr, 4);
	p->v4.w[1] = addr.w;
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
	} h;
	__u32 off = 40; /* the fixed header */
	__u8 nh;

	if (bpf_skb_load_bytes(skb, 0, &h, sizeof(h)) < 0 || bpf_ntohl(h.ver_tc_flow) >> 28 != 6)
		return -1;
	/* Straight into the key: saddr at 8, daddr at 24. */
	if (bpf_skb_load_bytes(skb, egress ? 24 : 8, p->v6.k.addr, 16) < 0)
		return -1;
	nh = h.nexthdr;
	/* Unrolled: the verifier knows the outcome of a loop counter's test,
	 * and without CAP_PERFMON it walks the untaken side of each such
	 * test too, the rest of the program included, once per pass. */
#pragma clang loop unroll(full)
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

/* The port key's second word: the port table, then the port's bytes. */
static __always_inline __u64 port_tail(__u16 portset, __u64 port)
{
	union {
		struct {
			__u16 portset;
			__u8 port[2];
		} f;
		__u64 w;
	} t = { .f = { .portset = portset } };
	union {
		__u8 b[2];
		__u64 w;
	} pb = { .w = port };

	t.f.port[0] = pb.b[0];
	t.f.port[1] = pb.b[1];
	return t.w;
}

/*
 * A node's verdict for a protocol class, and its port table, taken by
 * shifting a word read whole from the node rather than by indexing the
 * map value: without CAP_PERFMON the verifier sanitises pointer
 * arithmetic and refuses an index that is a different constant on
 * different paths, as the protocol class is.  Shifts on scalars are
 * not sanitised.  cgroup_skb runs on little-endian hosts only here
 * (bpfel), where verdict[i] is the i-th byte of the word.
 */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "verdict[i] is byte i of the word");
_Static_assert(__builtin_offsetof(struct cgf_rule_node, portset) == 8, "verdict[] + pad is one word");
_Static_assert(CGF_PC_MAX <= 8 && CGF_PC_PORTED == 2, "a class fits the word and portset[]");

static __always_inline __u32 node_verdict(const struct cgf_rule_node *n, __u32 pc)
{
	__u64 w;

	__builtin_memcpy(&w, n->verdict, sizeof(w));
	return (w >> (pc & 7) * 8) & 0xff;
}

static __always_inline __u16 node_portset(const struct cgf_rule_node *n, __u32 pc)
{
	__u32 w;

	__builtin_memcpy(&w, n->portset, sizeof(w));
	return w >> (pc & 1) * 16;
}

/*
 * The verdict of one rule set, as the map holds it: CGF_V_PASS passes,
 * anything else drops.  A rule set that is not there (a program
 * attached before its maps were synced) drops.  v6 is a constant at
 * each call (decide() is built once per family), and the value is
 * returned as read rather than folded into two constants: a branch
 * whose outcome the verifier knows is walked twice without CAP_PERFMON
 * (see verdict_in_range()), so the fewer of them, the shorter the load.
 */
static __always_inline __u32 judge(__u32 ruleset, struct cgf_pkt *p, const int v6)
{
	struct cgf_rule_node *n;
	__u32 pc = p->pclass;

	if (v6) {
		p->v6.w[0] = lpm_head(32 + 128, ruleset);
		n = bpf_map_lookup_elem(&rules_v6, &p->v6.k);
	} else {
		p->v4.w[0] = lpm_head(32 + 32, ruleset);
		n = bpf_map_lookup_elem(&rules_v4, &p->v4.k);
	}
	if (!n)
		return CGF_V_DROP;
	/* pclass_of() gives only classes below CGF_PC_MAX. */
	if (pc < CGF_PC_PORTED && p->has_port) {
		__u16 portset = node_portset(n, pc);
		union port_key k;
		struct cgf_port_verdict *v;

		if (portset) {
			k.w[0] = lpm_head(CGF_PORT_PREFIX_BITS + 16, ruleset);
			k.w[1] = port_tail(portset, p->port);
			v = bpf_map_lookup_elem(&rules_ports, &k.k);
			if (v)
				return v->verdict;
		}
	}
	return node_verdict(n, pc);
}

/* Copies of the config and tenant values, taken under their locks (no
 * helper may be called while a lock is held), in whole words. */
struct config_view {
	__u64 ruleset;
	__u64 flags;
	__u64 n_levels;
	__u64 levels[CGF_TENANT_LEVELS_MAX];
};

struct tenant_view {
	__u64 flags;
	__u64 n_rulesets;
	__u64 ruleset[CGF_TENANT_RULESETS_MAX];
};

static __always_inline int read_config(struct config_view *ret)
{
	__u32 key = CGF_CONFIG_KEY;
	struct cgf_rules_config *c = bpf_map_lookup_elem(&config, &key);

	if (!c)
		return -1;
	bpf_spin_lock(&c->lock);
	ret->ruleset = c->ruleset;
	ret->flags = c->flags;
	ret->n_levels = c->n_levels;
	for (int i = 0; i < CGF_TENANT_LEVELS_MAX; i++)
		ret->levels[i] = c->levels[i];
	bpf_spin_unlock(&c->lock);
	return 0;
}

static __always_inline int read_tenant(__u64 id, struct tenant_view *ret)
{
	struct cgf_tenant_entry *e = bpf_map_lookup_elem(&tenants, &id);

	if (!e)
		return -1;
	bpf_spin_lock(&e->lock);
	ret->flags = e->flags;
	ret->n_rulesets = e->n_rulesets;
	for (int i = 0; i < CGF_TENANT_RULESETS_MAX; i++)
		ret->ruleset[i] = e->ruleset[i];
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* A drop that no rule set decides (a packet that cannot be judged, a
 * child not bound yet): counted as would-drop only when every filter the
 * program applies is audited, so that an audited filter never lets
 * through what an enforced one might drop. */
static __always_inline int unjudged(const struct config_view *cfg)
{
	return cfg->flags & CGF_CONFIG_AUDIT_ALL ? CGF_V_WOULD_DROP : CGF_V_DROP;
}

/* The verdict of the host's rule set and of the socket's tenants, for a
 * parsed packet of one family: CGF_V_PASS, CGF_V_DROP, or
 * CGF_V_WOULD_DROP (passed, but an audited rule set would have dropped
 * it). */
static __always_inline int decide(struct __sk_buff *skb, struct cgf_pkt *p,
				  const struct config_view *cfg, const int v6)
{
	struct tenant_view e;
	/* A drop by an audited rule set is counted, not made: the packet
	 * still meets the other rule sets, any enforced one may drop it. */
	int v = CGF_V_PASS;

	if (judge(cfg->ruleset, p, v6) != CGF_V_PASS) {
		if (!(cfg->flags & CGF_CONFIG_AUDIT))
			return CGF_V_DROP;
		v = CGF_V_WOULD_DROP;
	}

	/*
	 * Tenants: for each level at which a tenant host of this filter
	 * sits, the socket's ancestor there; if that is a host, the
	 * socket's ancestor one level down is the child whose rule sets
	 * apply too (a socket in the host itself has none).
	 *
	 * Both loops are unrolled, so that each view entry is read at a
	 * constant stack offset: without CAP_PERFMON the verifier
	 * sanitises pointer arithmetic, and an index that is a different
	 * constant on each pass of one instruction fails that ("tried to
	 * add from different maps, paths or scalars").
	 */
#pragma clang loop unroll(full)
	for (__u32 i = 0; i < CGF_TENANT_LEVELS_MAX; i++) {
		__u64 id;

		if (i >= cfg->n_levels)
			break;
		id = bpf_skb_ancestor_cgroup_id(skb, cfg->levels[i]);
		if (!id)
			continue;
		if (read_tenant(id, &e) < 0 || !(e.flags & CGF_TENANT_HOST))
			continue;
		id = bpf_skb_ancestor_cgroup_id(skb, cfg->levels[i] + 1);
		if (!id)
			continue;
		if (read_tenant(id, &e) < 0 || !(e.flags & CGF_TENANT_CHILD)) {
			if (cfg->flags & CGF_CONFIG_FAIL_CLOSED) {
				if (unjudged(cfg) == CGF_V_DROP)
					return CGF_V_DROP;
				v = CGF_V_WOULD_DROP;
			}
			continue;
		}
#pragma clang loop unroll(full)
		for (__u32 j = 0; j < CGF_TENANT_RULESETS_MAX; j++) {
			if (j >= e.n_rulesets)
				break;
			if (judge(e.ruleset[j], p, v6) != CGF_V_PASS) {
				if (!(e.flags & CGF_TENANT_AUDIT(j)))
					return CGF_V_DROP;
				v = CGF_V_WOULD_DROP;
			}
		}
	}
	return v;
}

static __always_inline int filter(struct __sk_buff *skb, int egress)
{
	struct config_view cfg;
	struct cgf_pkt p = {};

	if (read_config(&cfg) < 0)
		return CGF_V_DROP; /* not synced yet: fail closed */

	/* skb->protocol is set on both hooks (ip_output(), ip6_output(),
	 * the driver on receive); the parsers check the version nibble
	 * against it, so that a mislabelled packet is not misread. */
	switch (skb->protocol) {
	case bpf_htons(ETH_P_IP):
		if (parse_v4(skb, egress, &p) < 0)
			return unjudged(&cfg);
		return decide(skb, &p, &cfg, 0);
	case bpf_htons(ETH_P_IPV6):
		if (parse_v6(skb, egress, &p) < 0)
			return unjudged(&cfg);
		return decide(skb, &p, &cfg, 1);
	}
	/* cgroup_skb runs for inet sockets only. */
	return unjudged(&cfg);
}

/*
 * The verdict, with its range said again where the verifier can see it.
 * Without CAP_PERFMON the verifier sanitises Spectre v1: at a branch
 * whose outcome it knows (cgf_count()'s test of a verdict it has proven
 * to be CGF_V_DROP, say) it also walks the side never taken, with the
 * tested register made unknown, and that walk ends at our exit too.
 * Clang knows the verdict is 0 or 1 and returns the tested register
 * as is; the mask, which clang cannot see through, keeps R0 within
 * cgroup_skb's return range on that path.  One instruction per packet.
 */
static __always_inline int verdict_in_range(__u64 v)
{
	asm volatile("%[v] &= 1" : [v] "+r"(v));
	return v;
}

static __always_inline int run(struct __sk_buff *skb, int egress)
{
	int v = filter(skb, egress);

	cgf_count(skb, v);
	/* Would-drop passes: only audited rule sets wanted it dropped. */
	return verdict_in_range(v == CGF_V_DROP ? CGF_V_DROP : CGF_V_PASS);
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
