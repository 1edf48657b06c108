// SPDX-License-Identifier: GPL-2.0-only
/*
 * deny_all: drop every packet of the cgroup it is attached to.
 *
 * The simplest filter there is, and the one the VM smoke test attaches
 * to prove that a cgroup_skb program on the booted kernel really stops
 * traffic.  One program serves both directions: cgroup_skb programs
 * return 1 to let a packet pass and 0 to drop it, whichever hook runs
 * them.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("cgroup_skb/egress")
int cgf_deny_all(struct __sk_buff *skb)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
