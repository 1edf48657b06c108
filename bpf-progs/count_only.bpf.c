// SPDX-License-Identifier: GPL-2.0-only
/*
 * count_only: let every packet through and count it per socket cgroup
 * (`cgfilterctl status` shows the counters).
 */
#include "counters.bpf.h"

SEC("cgroup_skb/egress")
int cgf_count_only(struct __sk_buff *skb)
{
	cgf_count(skb, CGF_V_PASS);
	return CGF_V_PASS;
}

SEC("cgroup_skb/ingress")
int cgf_count_only_in(struct __sk_buff *skb)
{
	cgf_count(skb, CGF_V_PASS);
	return CGF_V_PASS;
}
