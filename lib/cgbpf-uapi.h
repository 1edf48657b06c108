/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The cgroup-bpf attach API of upstream Linux 6.15 / 6.17 that Debian's
 * 6.1 linux/bpf.h does not have: BPF_F_PREORDER, BPF_F_BEFORE/AFTER/ID/
 * LINK, relative_fd/relative_id and expected_revision on PROG_ATTACH and
 * PROG_DETACH, link_ids/link_attach_flags/revision on PROG_QUERY, and the
 * link_create.cgroup member.
 *
 * We describe only the parts of union bpf_attr that these commands use,
 * as our own structs, so the tests build against Debian's headers and
 * never depend on a newer one.  Every offset is pinned to the table in
 * docs/cgroup-bpf-uapi.md (x86_64), and the fields 6.1
 * already has are pinned to Debian's union bpf_attr as well, so a typo
 * here fails the build instead of silently sending the kernel garbage.
 */
#pragma once

#include <stddef.h>
#include <linux/bpf.h>
#include <linux/types.h>

/* Flag values: the upstream UAPI numbers (spec "Flag values"). */
#ifndef BPF_F_BEFORE
#define BPF_F_BEFORE	(1U << 3)
#endif
#ifndef BPF_F_AFTER
#define BPF_F_AFTER	(1U << 4)
#endif
#ifndef BPF_F_ID
#define BPF_F_ID	(1U << 5)
#endif
#ifndef BPF_F_PREORDER
#define BPF_F_PREORDER	(1U << 6)
#endif
#ifndef BPF_F_LINK
#define BPF_F_LINK	(1U << 13)
#endif

_Static_assert(BPF_F_ALLOW_OVERRIDE == (1U << 0), "spec: BPF_F_ALLOW_OVERRIDE");
_Static_assert(BPF_F_ALLOW_MULTI == (1U << 1), "spec: BPF_F_ALLOW_MULTI");
_Static_assert(BPF_F_REPLACE == (1U << 2), "spec: BPF_F_REPLACE");
_Static_assert(BPF_F_BEFORE == (1U << 3), "spec: BPF_F_BEFORE");
_Static_assert(BPF_F_AFTER == (1U << 4), "spec: BPF_F_AFTER");
_Static_assert(BPF_F_ID == (1U << 5), "spec: BPF_F_ID");
_Static_assert(BPF_F_PREORDER == (1U << 6), "spec: BPF_F_PREORDER");
_Static_assert(BPF_F_LINK == (1U << 13), "spec: BPF_F_LINK");

/* attr for BPF_PROG_ATTACH and BPF_PROG_DETACH. */
struct cgbpf_attach_attr {
	__u32 target_fd;
	__u32 attach_bpf_fd;
	__u32 attach_type;
	__u32 attach_flags;
	__u32 replace_bpf_fd;
	union {
		__u32 relative_fd;
		__u32 relative_id;
	};
	__u64 expected_revision;
};

/* attr for BPF_PROG_QUERY (attr->query). */
struct cgbpf_query_attr {
	__u32 target_fd;
	__u32 attach_type;
	__u32 query_flags;
	__u32 attach_flags;
	__aligned_u64 prog_ids;
	union {
		__u32 prog_cnt;
		__u32 count;
	};
	__u32 :32;
	__aligned_u64 prog_attach_flags;
	/* Cgroups never fill the link arrays; they exist so revision is at 56. */
	__aligned_u64 link_ids;
	__aligned_u64 link_attach_flags;
	__u64 revision;
};

/* attr for BPF_LINK_CREATE with a cgroup target. */
struct cgbpf_link_create_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	struct {
		union {
			__u32 relative_fd;
			__u32 relative_id;
		};
		__u64 expected_revision;
	} cgroup;
};

#define CGBPF_ASSERT_OFF(type, field, off) \
	_Static_assert(offsetof(type, field) == (off), #type "." #field " at " #off)

/* PROG_ATTACH / PROG_DETACH, spec table. */
CGBPF_ASSERT_OFF(struct cgbpf_attach_attr, target_fd, 0);
CGBPF_ASSERT_OFF(struct cgbpf_attach_attr, attach_bpf_fd, 4);
CGBPF_ASSERT_OFF(struct cgbpf_attach_attr, attach_type, 8);
CGBPF_ASSERT_OFF(struct cgbpf_attach_attr, attach_flags, 12);
CGBPF_ASSERT_OFF(struct cgbpf_attach_attr, replace_bpf_fd, 16);
CGBPF_ASSERT_OFF(struct cgbpf_attach_attr, relative_fd, 20);
CGBPF_ASSERT_OFF(struct cgbpf_attach_attr, relative_id, 20);
CGBPF_ASSERT_OFF(struct cgbpf_attach_attr, expected_revision, 24);
_Static_assert(sizeof(struct cgbpf_attach_attr) == 32, "attach attr ends after expected_revision");

/* PROG_QUERY, spec table. */
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, target_fd, 0);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, attach_type, 4);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, query_flags, 8);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, attach_flags, 12);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, prog_ids, 16);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, prog_cnt, 24);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, count, 24);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, prog_attach_flags, 32);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, link_ids, 40);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, link_attach_flags, 48);
CGBPF_ASSERT_OFF(struct cgbpf_query_attr, revision, 56);
_Static_assert(sizeof(struct cgbpf_query_attr) == 64, "query attr ends after revision");

/* LINK_CREATE: the per-type union starts at 16. */
CGBPF_ASSERT_OFF(struct cgbpf_link_create_attr, prog_fd, 0);
CGBPF_ASSERT_OFF(struct cgbpf_link_create_attr, target_fd, 4);
CGBPF_ASSERT_OFF(struct cgbpf_link_create_attr, attach_type, 8);
CGBPF_ASSERT_OFF(struct cgbpf_link_create_attr, flags, 12);
CGBPF_ASSERT_OFF(struct cgbpf_link_create_attr, cgroup.relative_fd, 16);
CGBPF_ASSERT_OFF(struct cgbpf_link_create_attr, cgroup.relative_id, 16);
CGBPF_ASSERT_OFF(struct cgbpf_link_create_attr, cgroup.expected_revision, 24);
_Static_assert(sizeof(struct cgbpf_link_create_attr) == 32, "link_create cgroup attr size");

/* The fields 6.1 already has sit where Debian's union bpf_attr has them. */
CGBPF_ASSERT_OFF(union bpf_attr, target_fd, 0);
CGBPF_ASSERT_OFF(union bpf_attr, attach_bpf_fd, 4);
CGBPF_ASSERT_OFF(union bpf_attr, attach_type, 8);
CGBPF_ASSERT_OFF(union bpf_attr, attach_flags, 12);
CGBPF_ASSERT_OFF(union bpf_attr, replace_bpf_fd, 16);
CGBPF_ASSERT_OFF(union bpf_attr, query.target_fd, 0);
CGBPF_ASSERT_OFF(union bpf_attr, query.attach_type, 4);
CGBPF_ASSERT_OFF(union bpf_attr, query.query_flags, 8);
CGBPF_ASSERT_OFF(union bpf_attr, query.attach_flags, 12);
CGBPF_ASSERT_OFF(union bpf_attr, query.prog_ids, 16);
CGBPF_ASSERT_OFF(union bpf_attr, query.prog_cnt, 24);
CGBPF_ASSERT_OFF(union bpf_attr, query.prog_attach_flags, 32);
CGBPF_ASSERT_OFF(union bpf_attr, link_create.prog_fd, 0);
CGBPF_ASSERT_OFF(union bpf_attr, link_create.target_fd, 4);
CGBPF_ASSERT_OFF(union bpf_attr, link_create.attach_type, 8);
CGBPF_ASSERT_OFF(union bpf_attr, link_create.flags, 12);
CGBPF_ASSERT_OFF(union bpf_attr, link_create.target_btf_id, 16);
/* Our structs are prefixes of the kernel's attr: sizes below sizeof(bpf_attr). */
_Static_assert(sizeof(struct cgbpf_query_attr) <= sizeof(union bpf_attr), "query attr fits");
