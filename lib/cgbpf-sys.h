/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Raw bpf(2) wrappers for the cgroup attach API with the new fields
 * (libbpf 1.1 does not know them).  Thin: one syscall each, the attr
 * zeroed and sized to our struct, and the result as a negative errno.
 * Options structs start with their size, as libbpf's do, but an older
 * caller is not understood: opts->sz below this header's struct size (a
 * caller built against an older copy) is refused with -EINVAL (OPTS_OK
 * in cgbpf-sys.c), and bytes beyond it are not read.  Callers build
 * against this very header.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cgbpf-uapi.h"

struct cgbpf_attach_opts {
	size_t sz;			/* sizeof(struct cgbpf_attach_opts) */
	uint32_t flags;			/* attach_flags */
	int replace_fd;			/* replace_bpf_fd, with BPF_F_REPLACE */
	uint32_t relative;		/* relative_fd, or relative_id with BPF_F_ID */
	uint64_t expected_revision;
};

struct cgbpf_detach_opts {
	size_t sz;
	uint32_t flags;			/* attach_flags: must be 0 on cgroups */
	uint32_t relative;		/* relative_fd: must be 0 on cgroups */
	uint64_t expected_revision;
};

struct cgbpf_link_opts {
	size_t sz;
	uint32_t flags;			/* link_create.flags */
	uint32_t relative;		/* cgroup.relative_fd / relative_id */
	uint64_t expected_revision;
};

#define CGBPF_MAX_QUERY 128

struct cgbpf_query {
	uint32_t attach_flags;
	uint32_t count;
	uint64_t revision;
	uint32_t ids[CGBPF_MAX_QUERY];
	uint32_t prog_flags[CGBPF_MAX_QUERY];	/* only for non-effective queries */
};

/* BPF_PROG_ATTACH; opts may be NULL.  Returns 0 or -errno. */
int cgbpf_prog_attach(int cgroup_fd, int prog_fd, enum bpf_attach_type type,
		      const struct cgbpf_attach_opts *opts);

/* BPF_PROG_DETACH; prog_fd < 0 sends no prog (legacy single-mode detach). */
int cgbpf_prog_detach(int cgroup_fd, int prog_fd, enum bpf_attach_type type,
		      const struct cgbpf_detach_opts *opts);

/* BPF_LINK_CREATE on a cgroup.  Returns the link fd or -errno. */
int cgbpf_link_create(int prog_fd, int cgroup_fd, enum bpf_attach_type type,
		      const struct cgbpf_link_opts *opts);

/*
 * BPF_PROG_QUERY for one attach type: ids in list (or effective) order,
 * attach_flags, revision and, for a non-effective query, each entry's
 * prog_attach_flags.  Returns 0 or -errno (-ENOSPC when more than
 * CGBPF_MAX_QUERY programs are attached).
 */
int cgbpf_prog_query(int cgroup_fd, enum bpf_attach_type type, uint32_t query_flags,
		     struct cgbpf_query *ret);

/* What a query says besides the ids. */
struct cgbpf_query_head {
	uint32_t attach_flags;
	uint32_t count;			/* programs attached (or effective) */
	uint64_t revision;		/* 0 on kernels without revisions */
};

/*
 * BPF_PROG_QUERY into the caller's arrays of "capacity" entries (ids
 * and, for a non-effective query, prog_flags, which may be NULL).  With
 * capacity 0 only the head is read.  -ENOSPC: more than capacity
 * programs; the head's count says how many.
 */
int cgbpf_prog_query_buf(int cgroup_fd, enum bpf_attach_type type, uint32_t query_flags,
			 uint32_t *ids, uint32_t *prog_flags, uint32_t capacity,
			 struct cgbpf_query_head *ret);

/* BPF_PROG_QUERY with prog_cnt 0: count, attach_flags and revision only. */
int cgbpf_prog_query_count(int cgroup_fd, enum bpf_attach_type type,
			   uint32_t query_flags, struct cgbpf_query *ret);
