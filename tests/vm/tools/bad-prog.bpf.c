// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program the verifier refuses (it dereferences a packet length as a
 * pointer): watch.test's "a kernel that refuses" case.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("cgroup_skb/egress")
int cgf_bad(struct __sk_buff *skb)
{
	return *(volatile int *)(unsigned long)skb->len;
}

char LICENSE[] SEC("license") = "GPL";
