/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The layout of the built-in filters' maps: one header for the BPF side
 * (bpf-progs/ *.bpf.c) and for userspace (daemon/maps/filter-maps.c), so that
 * both agree on every byte.  Only fixed-size types from linux/types.h;
 * every struct is padded explicitly, since the kernel compares and copies
 * keys and values as bytes.
 *
 * docs/filters.md explains how the maps work together; in short:
 *
 *   counters     PERCPU_HASH  cgroup id            -> struct cgf_counters      (every object)
 *   config       HASH         0                    -> struct cgf_rules_config  (rules)
 *   tenants      HASH         cgroup id            -> struct cgf_tenant_entry  (rules)
 *   rules_v4     LPM_TRIE     cgf_v4_key           -> struct cgf_rule_node     (rules)
 *   rules_v6     LPM_TRIE     cgf_v6_key           -> struct cgf_rule_node     (rules)
 *   rules_ports  LPM_TRIE     cgf_port_key         -> struct cgf_port_verdict  (rules)
 *
 * A rule set is everything one rules filter says, stored under a rule set
 * id that prefixes every LPM key: the filter's own rules and each tenant
 * filter are rule sets of their own, side by side in the same tries.
 * config names the host's rule set; tenants names the rule sets of each
 * tenant child.  A change writes complete new rule sets under fresh ids,
 * then rewrites the one config or tenant value that names them, then
 * deletes the old ones after an RCU grace period: a packet sees one
 * complete rule set or the other.  config and tenant values carry a
 * bpf_spin_lock: userspace writes them in place with BPF_F_LOCK and the
 * program copies them out under the lock, so that a value is never read
 * half old, half new, nor (never freed by an update) recycled for another
 * key while a program reads it, which 6.1's hash maps would allow.
 */

#include <linux/bpf.h>
#include <linux/types.h>

#define CGF_COUNTERS_MAX 16384   /* cgroups counted per object; more: filtered, not counted */
#define CGF_TENANTS_MAX 65536    /* tenant hosts + children per rules object (no prealloc: costs what is used) */
#define CGF_RULE_NODES_MAX 16384 /* per family, all rule sets of an object together */
#define CGF_PORT_BLOCKS_MAX 65536
#define CGF_TENANT_LEVELS_MAX 4   /* distinct cgroup levels of tenant hosts */
#define CGF_TENANT_RULESETS_MAX 8 /* tenant filters per child and direction */
#define CGF_IPV6_EXT_MAX 8        /* IPv6 extension headers walked before giving up */

/* Verdicts as stored in the maps, and as cgroup_skb programs return them:
 * a zeroed value drops, so that anything half-initialised fails closed. */
#define CGF_V_DROP 0
#define CGF_V_PASS 1
/* Never stored nor returned: what the rules program counts for a packet
 * that only audited rule sets would drop (it returns CGF_V_PASS then). */
#define CGF_V_WOULD_DROP 2

/* Protocol classes: each rule node has a verdict per class. */
enum {
	CGF_PC_TCP,
	CGF_PC_UDP,
	CGF_PC_ICMP,
	CGF_PC_ICMPV6,
	CGF_PC_OTHER, /* any other protocol: only rules without `protocol:` match it */
	CGF_PC_MAX,
};
#define CGF_PC_PORTED 2 /* the classes with ports: TCP and UDP */

/*
 * Every packet a program judged is counted once, as passed, dropped, or
 * would-drop: passed only because each rule set that would drop it is
 * audited (the filter's `enforce: false`).  The would-drop fields came
 * later: a map created before them has values of
 * CGF_COUNTERS_SIZE_V1 bytes, which userspace still reads (the value
 * size is the map's, read from the kernel).
 */
struct cgf_counters {
	__u64 pass_packets;
	__u64 pass_bytes; /* skb->len: from the network header, GSO packets as one */
	__u64 drop_packets;
	__u64 drop_bytes;
	__u64 would_drop_packets;
	__u64 would_drop_bytes;
};
#define CGF_COUNTERS_SIZE_V1 32 /* pass and drop only */

/* config[0]: the host's rule set and how tenants are found. */
#define CGF_CONFIG_KEY 0
#define CGF_CONFIG_FAIL_CLOSED (1u << 0) /* a child of a tenant host without an entry: drop */
/* The host filter is audited: a drop by its rule set is counted as
 * would-drop, and the packet goes on to the tenants' rule sets. */
#define CGF_CONFIG_AUDIT (1u << 1)
/* Every filter the program applies is audited, the host's and every
 * tenant filter any child may get: then what no single rule set decides
 * (a packet that cannot be judged, a child of a host not bound yet) is
 * counted as would-drop too, instead of dropped. */
#define CGF_CONFIG_AUDIT_ALL (1u << 2)
struct cgf_rules_config {
	struct bpf_spin_lock lock;
	__u32 ruleset;  /* the host filter's rule set; never 0 once synced */
	__u32 flags;
	__u32 n_levels; /* entries of levels[] in use */
	__u32 levels[CGF_TENANT_LEVELS_MAX]; /* cgroup levels (root = 0) at which tenant hosts sit */
};

/* tenants[cgroup id]: a cgroup that is a tenant host (the filter is
 * attached there with tenants:), a child of one, or both. */
#define CGF_TENANT_HOST (1u << 0)
#define CGF_TENANT_CHILD (1u << 1)
/* CHILD: ruleset[j] is of an audited tenant filter (bits 8 to 15). */
#define CGF_TENANT_AUDIT_SHIFT 8
#define CGF_TENANT_AUDIT(j) (1u << (CGF_TENANT_AUDIT_SHIFT + (j)))
struct cgf_tenant_entry {
	struct bpf_spin_lock lock;
	__u32 flags;
	__u32 n_rulesets; /* CHILD: how many of ruleset[] apply; 0: host rules only */
	__u32 ruleset[CGF_TENANT_RULESETS_MAX];
};

/* LPM keys: prefixlen counts the bits after itself, ruleset included:
 * an entry for 10.0.0.0/8 of rule set 7 has prefixlen 32 + 8, and a
 * lookup uses 32 + 32.  Addresses and ports are in network order, as the
 * trie compares bytes from the first. */
struct cgf_v4_key {
	__u32 prefixlen;
	__u32 ruleset;
	__u8 addr[4];
};

struct cgf_v6_key {
	__u32 prefixlen;
	__u32 ruleset;
	__u8 addr[16];
};

#define CGF_LPM_RULESET_BITS 32
#define CGF_PORT_PREFIX_BITS (32 + 16) /* ruleset + portset */

struct cgf_port_key {
	__u32 prefixlen; /* 48 + the port block's prefix length (0..16) */
	__u32 ruleset;
	__u16 portset;   /* a port table of this rule set, from cgf_rule_node.portset[] */
	__u8 port[2];    /* big-endian */
};

/*
 * A rule node: one prefix of a rule set, resolved.  The userspace encoder
 * folds everything a lookup needs into the longest matching prefix: the
 * node's own rules, those of every shorter prefix it lies in, and the
 * filter's default.  So one LPM lookup gives the verdict per protocol
 * class for a packet without a port match; for TCP and UDP, a non-zero
 * portset names a port table (in rules_ports) whose blocks override it.
 * Every rule set has a /0 node, so a lookup in a synced rule set never
 * misses.
 */
struct cgf_rule_node {
	__u8 verdict[CGF_PC_MAX];
	__u8 pad[3];
	__u16 portset[CGF_PC_PORTED]; /* TCP, UDP; 0: no port table */
};

struct cgf_port_verdict {
	__u8 verdict;
	__u8 pad[3];
};
