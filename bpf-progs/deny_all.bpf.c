// SPDX-License-Identifier: GPL-2.0-only
/*
 * deny_all: drop every packet of the cgroup it is attached to, and count
 * what it dropped.
 *
 * The simplest filter there is, and the one the VM smoke test attaches
 * to prove that a cgroup_skb program on the booted kernel really stops
 * traffic.  cgroup_skb programs return 1 to let a packet pass and 0 to
 * drop it, whichever hook runs them; the object has one program per
 * direction, and the egress one comes first and keeps the name
 * cgf_deny_all, which is the program `bpftool prog load` pins.
 */
#include "counters.bpf.h"

SEC("cgroup_skb/egress")
int cgf_deny_all(struct __sk_buff *skb)
{
	cgf_count(skb, CGF_V_DROP);
	return CGF_V_DROP;
}

SEC("cgroup_skb/ingress")
int cgf_deny_all_in(struct __sk_buff *skb)
{
	cgf_count(skb, CGF_V_DROP);
	return CGF_V_DROP;
}
