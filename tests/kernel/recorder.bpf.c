// SPDX-License-Identifier: GPL-2.0-only
/*
 * recorder: a cgroup_skb program that writes down that it ran.
 *
 * The kernel tests need to see which programs of a cgroup's effective
 * array really run, and in which order.  Each loaded copy of this object
 * gets its own `tag` (rodata, set through the skeleton before load), so
 * one object yields as many distinct programs as a test wants; all
 * copies share one `cgf_record` map (the test reuses its fd) and append
 * their tag to it.  Only test traffic counts: IPv4 UDP to 127.0.0.1 on
 * `test_port`, so whatever else the guest sends changes nothing.
 *
 * Every copy returns `verdict` (1 pass, 0 drop); a drop does not stop
 * the programs after it, the kernel runs the whole array.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define RECORD_MAX 256		/* a power of two: the index mask below */

struct record {
	__u32 count;
	__u32 tags[RECORD_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct record);
} cgf_record SEC(".maps");

const volatile __u32 tag = 0;
const volatile __u32 verdict = 1;
const volatile __u16 test_port = 0;	/* host order */

static __always_inline int is_test_datagram(struct __sk_buff *skb)
{
	struct iphdr ip;
	struct udphdr udp;

	if (skb->protocol != bpf_htons(ETH_P_IP))
		return 0;
	/* cgroup_skb sees the packet from the network header on */
	if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) < 0)
		return 0;
	if (ip.protocol != IPPROTO_UDP || ip.daddr != bpf_htonl(0x7f000001))
		return 0;
	if (bpf_skb_load_bytes(skb, ip.ihl * 4, &udp, sizeof(udp)) < 0)
		return 0;
	return udp.dest == bpf_htons(test_port);
}

static __always_inline int record_and_return(struct __sk_buff *skb)
{
	struct record *rec;
	__u32 key = 0, idx;

	if (!is_test_datagram(skb))
		return 1;
	rec = bpf_map_lookup_elem(&cgf_record, &key);
	if (!rec)
		return 1;
	idx = __sync_fetch_and_add(&rec->count, 1);
	/* The count keeps going past the end, so an overflow shows. */
	if (idx < RECORD_MAX)
		rec->tags[idx & (RECORD_MAX - 1)] = tag;
	return verdict;
}

SEC("cgroup_skb/egress")
int cgf_rec_egress(struct __sk_buff *skb)
{
	return record_and_return(skb);
}

/* Only for the per-attach-type revision checks; never sees test traffic. */
SEC("cgroup_skb/ingress")
int cgf_rec_ingress(struct __sk_buff *skb)
{
	return record_and_return(skb);
}

char LICENSE[] SEC("license") = "GPL";
