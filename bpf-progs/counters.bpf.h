/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The counters every built-in filter keeps: per socket cgroup (as
 * bpf_skb_cgroup_id() gives it: the cgroup of the process that owns the
 * socket, which may lie below the cgroup the program is attached to),
 * packets and bytes passed, dropped, and passed but counted as would-drop
 * (audited rules: CGF_V_WOULD_DROP).  Included by each *.bpf.c, so
 * that every object has its own map named "counters".
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "cgf-maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, CGF_COUNTERS_MAX);
	__type(key, __u64);
	__type(value, struct cgf_counters);
} counters SEC(".maps");

static __always_inline void cgf_count(struct __sk_buff *skb, int verdict)
{
	__u64 id = bpf_skb_cgroup_id(skb);
	struct cgf_counters *c;

	c = bpf_map_lookup_elem(&counters, &id);
	if (!c) {
		struct cgf_counters zero = {};

		/* Fails when the map is full (the packet is still filtered,
		 * only not counted) or when another CPU created the entry
		 * first (then the second lookup finds it). */
		bpf_map_update_elem(&counters, &id, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&counters, &id);
		if (!c)
			return;
	}
	/* Per-CPU values, yet atomic: on one CPU the egress hook can run in
	 * process context and be interrupted by a softirq that sends for a
	 * socket of the same cgroup (a TCP ACK), and a plain increment
	 * would then lose a count. */
	if (verdict == CGF_V_PASS) {
		__sync_fetch_and_add(&c->pass_packets, 1);
		__sync_fetch_and_add(&c->pass_bytes, skb->len);
		/*
		 * Keeps the branches apart (inline assembly is never sunk
		 * into a common successor).  Otherwise clang merges them
		 * into one add at "c + (pass ? 0 : 16)", and a caller that
		 * has proven its verdict walks that one instruction with a
		 * different constant offset on each path, which the
		 * verifier's pointer sanitising refuses without
		 * CAP_PERFMON ("tried to add from different maps, paths or
		 * scalars").
		 */
		asm volatile("" ::: "memory");
	} else if (verdict == CGF_V_WOULD_DROP) {
		__sync_fetch_and_add(&c->would_drop_packets, 1);
		__sync_fetch_and_add(&c->would_drop_bytes, skb->len);
		asm volatile("" ::: "memory"); /* as above */
	} else {
		__sync_fetch_and_add(&c->drop_packets, 1);
		__sync_fetch_and_add(&c->drop_bytes, skb->len);
	}
}

char LICENSE[] SEC("license") = "GPL";
