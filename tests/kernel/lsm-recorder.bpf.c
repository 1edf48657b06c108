// SPDX-License-Identifier: GPL-2.0-only
/*
 * lsm-recorder: an lsm_cgroup program on socket_bind that writes down
 * that it ran, for the BPF_LSM_CGROUP cases (lsm.c).
 *
 * The same scheme as recorder.bpf.c: each loaded copy gets its own `tag`
 * (rodata), all copies append to one shared `cgf_lsm_record` map.  The
 * hook runs the programs of the cgroup that created the socket, and only
 * the test's child lives in the test cgroups, so every bind counted is
 * the test's own.  Every copy allows the bind (1).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define RECORD_MAX 64		/* a power of two: the index mask below */

struct lsm_record {
	__u32 count;
	__u32 tags[RECORD_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lsm_record);
} cgf_lsm_record SEC(".maps");

const volatile __u32 tag = 0;

/* The hook's arguments are not needed: a raw context keeps the object
 * free of kernel type definitions; libbpf finds the hook by name. */
SEC("lsm_cgroup/socket_bind")
int cgf_lsm_bind(unsigned long long *ctx)
{
	struct lsm_record *rec;
	__u32 key = 0, idx;

	rec = bpf_map_lookup_elem(&cgf_lsm_record, &key);
	if (!rec)
		return 1;
	idx = __sync_fetch_and_add(&rec->count, 1);
	if (idx < RECORD_MAX)
		rec->tags[idx & (RECORD_MAX - 1)] = tag;
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
