// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgbpf-sys.h"

/* An options struct is usable when it is absent or at least as large as
 * the fields we read; like libbpf's OPTS_VALID, a too small one is a bug. */
#define OPTS_OK(o) (!(o) || (o)->sz >= sizeof(*(o)))

static int sys_bpf(int cmd, void *attr, size_t size)
{
	long r = syscall(__NR_bpf, cmd, attr, (unsigned int)size);

	return r < 0 ? -errno : (int)r;
}

int cgbpf_prog_attach(int cgroup_fd, int prog_fd, enum bpf_attach_type type,
		      const struct cgbpf_attach_opts *opts)
{
	struct cgbpf_attach_attr attr;

	if (!OPTS_OK(opts))
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (__u32)cgroup_fd;
	attr.attach_bpf_fd = (__u32)prog_fd;
	attr.attach_type = type;
	if (opts) {
		attr.attach_flags = opts->flags;
		attr.replace_bpf_fd = opts->replace_fd > 0 ? (__u32)opts->replace_fd : 0;
		attr.relative_fd = opts->relative;
		attr.expected_revision = opts->expected_revision;
	}
	return sys_bpf(BPF_PROG_ATTACH, &attr, sizeof(attr));
}

int cgbpf_prog_detach(int cgroup_fd, int prog_fd, enum bpf_attach_type type,
		      const struct cgbpf_detach_opts *opts)
{
	struct cgbpf_attach_attr attr;

	if (!OPTS_OK(opts))
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (__u32)cgroup_fd;
	/* fd 0 is stdin, never a prog: the kernel then detaches "no prog". */
	attr.attach_bpf_fd = prog_fd >= 0 ? (__u32)prog_fd : 0;
	attr.attach_type = type;
	if (opts) {
		attr.attach_flags = opts->flags;
		attr.relative_fd = opts->relative;
		attr.expected_revision = opts->expected_revision;
	}
	return sys_bpf(BPF_PROG_DETACH, &attr, sizeof(attr));
}

int cgbpf_link_create(int prog_fd, int cgroup_fd, enum bpf_attach_type type,
		      const struct cgbpf_link_opts *opts)
{
	struct cgbpf_link_create_attr attr;

	if (!OPTS_OK(opts))
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)prog_fd;
	attr.target_fd = (__u32)cgroup_fd;
	attr.attach_type = type;
	if (opts) {
		attr.flags = opts->flags;
		attr.cgroup.relative_fd = opts->relative;
		attr.cgroup.expected_revision = opts->expected_revision;
	}
	return sys_bpf(BPF_LINK_CREATE, &attr, sizeof(attr));
}

int cgbpf_prog_query_buf(int cgroup_fd, enum bpf_attach_type type, uint32_t query_flags,
			 uint32_t *ids, uint32_t *prog_flags, uint32_t capacity,
			 struct cgbpf_query_head *ret)
{
	struct cgbpf_query_attr attr;
	int r;

	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (__u32)cgroup_fd;
	attr.attach_type = type;
	attr.query_flags = query_flags;
	attr.prog_cnt = capacity;
	if (capacity > 0) {
		attr.prog_ids = (__u64)(uintptr_t)ids;
		/* The kernel refuses per-prog flags for an effective query. */
		if (prog_flags && !(query_flags & BPF_F_QUERY_EFFECTIVE))
			attr.prog_attach_flags = (__u64)(uintptr_t)prog_flags;
	}
	r = sys_bpf(BPF_PROG_QUERY, &attr, sizeof(attr));
	if (r < 0 && r != -ENOSPC)
		return r;
	ret->attach_flags = attr.attach_flags;
	ret->count = attr.prog_cnt;
	ret->revision = attr.revision;
	return r;
}

static int prog_query(int cgroup_fd, enum bpf_attach_type type, uint32_t query_flags,
		      uint32_t capacity, struct cgbpf_query *ret)
{
	struct cgbpf_query_head head;
	int r;

	r = cgbpf_prog_query_buf(cgroup_fd, type, query_flags, ret->ids, ret->prog_flags,
				 capacity, &head);
	if (r < 0 && r != -ENOSPC)
		return r;
	ret->attach_flags = head.attach_flags;
	ret->count = head.count;
	ret->revision = head.revision;
	return r;
}

int cgbpf_prog_query(int cgroup_fd, enum bpf_attach_type type, uint32_t query_flags,
		     struct cgbpf_query *ret)
{
	memset(ret, 0, sizeof(*ret));
	return prog_query(cgroup_fd, type, query_flags, CGBPF_MAX_QUERY, ret);
}

int cgbpf_prog_query_count(int cgroup_fd, enum bpf_attach_type type,
			   uint32_t query_flags, struct cgbpf_query *ret)
{
	memset(ret, 0, sizeof(*ret));
	return prog_query(cgroup_fd, type, query_flags, 0, ret);
}
