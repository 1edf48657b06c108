/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The thin side of filter-maps: read a rules object's maps, let the pure
 * planner (filter-maps.c) say what to change, apply it; and read the
 * counters every built-in object keeps.  The file of the filters'
 * userspace that makes bpf() calls (filter-maps.c makes none): map
 * element reads and writes only (and the counters map's value size from
 * its info), on fds the caller opened (the kernel
 * edge's cgf_kernel_map_fd(), or a test's); programs, pins and
 * attachments are the kernel edge's (kernel.c, kernel-progs.c).
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "filter-maps-sync.h"
#include "util.h"

static void freep_entries(struct cgf_map_entry **p) {
	free(*p);
}

/* Every element of one map, appended to *entries. */
static int read_map(int fd, enum cgf_rmap m, struct cgf_map_entry **entries, size_t *n) {
	uint8_t key[CGF_RMAP_KEY_MAX] = {}, next[CGF_RMAP_KEY_MAX] = {};
	bool first = true;

	for (;;) {
		struct cgf_map_entry *e;

		if (bpf_map_get_next_key(fd, first ? NULL : key, next) < 0) {
			if (errno == ENOENT)
				return 0;
			return -errno;
		}
		first = false;
		memcpy(key, next, sizeof(key));
		e = array_append((void **) entries, *n, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->map = m;
		memcpy(e->key, key, cgf_rmap_key_size(m));
		if (bpf_map_lookup_elem(fd, e->key, e->value) < 0) {
			/* Gone between the two calls: only we write, but be
			 * robust against an operator's bpftool. */
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		(*n)++;
	}
}

/* The tenant entries of a partial sync's scope: one lookup each, so
 * that an event's sync costs what its cgroups cost, not what the map
 * holds. */
static int read_tenants_scope(int fd, const uint64_t *ids, size_t n_ids, struct cgf_map_entry **entries,
			      size_t *n) {
	for (size_t i = 0; i < n_ids; i++) {
		struct cgf_map_entry *e = array_append((void **) entries, *n, sizeof(**entries));

		if (!e)
			return -ENOMEM;
		e->map = CGF_RMAP_TENANTS;
		memcpy(e->key, &ids[i], sizeof(ids[i]));
		if (bpf_map_lookup_elem(fd, e->key, e->value) < 0) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		(*n)++;
	}
	return 0;
}

/* An RCU grace period: every program run that began before has ended,
 * so nothing still reads the rule sets that are about to be deleted.
 * MEMBARRIER_CMD_GLOBAL is synchronize_rcu() on more than one CPU (and
 * -EINVAL on nohz_full kernels, where we fall back to waiting). */
static int grace_period(void) {
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	usleep(100 * 1000);
	return 0;
}

int cgf_filter_maps_sync_want(const struct cgf_filter_maps_want *want,
			      int (*map_fd)(const char *name, void *userdata), void *userdata,
			      struct cgf_filter_maps_stats *ret_stats) {
	_cleanup_(freep_entries) struct cgf_map_entry *cur = NULL;
	_cleanup_free_ struct cgf_map_op *ops = NULL;
	struct cgf_filter_maps_stats stats = {};
	int fds[_CGF_RMAP_MAX];
	size_t n_cur = 0, n_ops = 0;
	int r;

	if (!want || !want->filter || !map_fd)
		return -EINVAL;
	if (want->filter->type == CGF_FILTER_DENY_ALL || want->filter->type == CGF_FILTER_COUNT_ONLY) {
		if (ret_stats)
			*ret_stats = stats;
		return 0;
	}
	if (want->filter->type != CGF_FILTER_RULES)
		return -EINVAL;

	for (size_t m = 0; m < _CGF_RMAP_MAX; m++) {
		fds[m] = map_fd(cgf_rmap_name(m), userdata);
		if (fds[m] < 0)
			return fds[m];
		if (want->partial && m == CGF_RMAP_TENANTS)
			r = read_tenants_scope(fds[m], want->scope_ids, want->n_scope_ids, &cur, &n_cur);
		else
			r = read_map(fds[m], m, &cur, &n_cur);
		if (r < 0)
			return r;
	}
	r = cgf_filter_maps_plan(want, cur, n_cur, &ops, &n_ops);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n_ops; i++) {
		const struct cgf_map_op *op = &ops[i];
		int fd = op->kind == CGF_MAP_BARRIER ? -1 : fds[op->entry.map];

		switch (op->kind) {
		case CGF_MAP_UPDATE:
			/* In place under the value's lock where it has one
			 * (see cgf-maps.h). */
			if (bpf_map_update_elem(fd, op->entry.key, op->entry.value,
						cgf_rmap_has_lock(op->entry.map) ? BPF_F_LOCK : BPF_ANY) < 0)
				return -errno;
			stats.updates++;
			break;
		case CGF_MAP_DELETE:
			if (bpf_map_delete_elem(fd, op->entry.key) < 0 && errno != ENOENT)
				return -errno;
			stats.deletes++;
			break;
		case CGF_MAP_BARRIER:
			r = grace_period();
			if (r < 0)
				return r;
			stats.barriers++;
			break;
		}
	}
	if (ret_stats)
		*ret_stats = stats;
	return 0;
}

int cgf_filter_maps_sync(const struct cgf_filter *f,
			 const struct cgf_tenant_host *hosts, size_t n_hosts,
			 const struct cgf_tenant_binding *t, size_t n_t,
			 bool fail_closed_unknown_children,
			 int (*map_fd)(const char *name, void *userdata), void *userdata) {
	struct cgf_filter_maps_want want = {
		.filter = f,
		.hosts = hosts,
		.n_hosts = n_hosts,
		.bindings = t,
		.n_bindings = n_t,
		.fail_closed_unknown_children = fail_closed_unknown_children,
	};

	return cgf_filter_maps_sync_want(&want, map_fd, userdata, NULL);
}

int cgf_filter_maps_synced(int config_fd) {
	uint32_t key = CGF_CONFIG_KEY;
	struct cgf_rules_config v;

	if (bpf_map_lookup_elem(config_fd, &key, &v) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

int cgf_filter_maps_audited(int config_fd) {
	uint32_t key = CGF_CONFIG_KEY;
	struct cgf_rules_config v;

	if (bpf_map_lookup_elem(config_fd, &key, &v) < 0)
		return -errno;
	return !!(v.flags & CGF_CONFIG_AUDIT);
}

/* A counters map's per-CPU values: one buffer for a lookup, and the size
 * of one CPU's value.  A map created before the would-drop fields has
 * CGF_COUNTERS_SIZE_V1-byte values (an object pinned by an older daemon,
 * still attached until a reconcile replaces it); its would-drop reads 0. */
struct counters_buf {
	uint8_t *values;
	size_t value_size; /* rounded up to 8 bytes per CPU, as the kernel copies them */
	int n_cpus;
};

static void counters_buf_done(struct counters_buf *b) {
	free(b->values);
}

static int counters_buf_init(int fd, struct counters_buf *ret) {
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	int n_cpus = libbpf_num_possible_cpus();

	if (n_cpus <= 0)
		return n_cpus < 0 ? n_cpus : -EINVAL;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	if (info.value_size != CGF_COUNTERS_SIZE_V1 && info.value_size != sizeof(struct cgf_counters))
		return -EPROTO; /* not a counters map of ours */
	*ret = (struct counters_buf) { .value_size = (info.value_size + 7) & ~7u, .n_cpus = n_cpus };
	ret->values = calloc((size_t) n_cpus, ret->value_size);
	return ret->values ? 0 : -ENOMEM;
}

/* One per-CPU value of the counters map, summed. */
static int counters_lookup(int fd, uint64_t id, struct counters_buf *b, struct cgf_counters *ret) {
	struct cgf_counters sum = {};

	if (bpf_map_lookup_elem(fd, &id, b->values) < 0)
		return -errno;
	for (int c = 0; c < b->n_cpus; c++) {
		struct cgf_counters v = {};

		memcpy(&v, b->values + (size_t) c * b->value_size, b->value_size < sizeof(v) ? b->value_size : sizeof(v));
		sum.pass_packets += v.pass_packets;
		sum.pass_bytes += v.pass_bytes;
		sum.drop_packets += v.drop_packets;
		sum.drop_bytes += v.drop_bytes;
		sum.would_drop_packets += v.would_drop_packets;
		sum.would_drop_bytes += v.would_drop_bytes;
	}
	*ret = sum;
	return 0;
}

_Static_assert(sizeof(struct cgf_counters) % 8 == 0, "per-CPU values are 8-byte aligned");
_Static_assert(CGF_COUNTERS_SIZE_V1 == offsetof(struct cgf_counters, would_drop_packets), "the old layout is a prefix");

int cgf_counters_read(int map_fd, uint64_t cgroup_id, struct cgf_counters *ret) {
	_cleanup_(counters_buf_done) struct counters_buf b = {};
	int r;

	r = counters_buf_init(map_fd, &b);
	if (r < 0)
		return r;
	return counters_lookup(map_fd, cgroup_id, &b, ret);
}

int cgf_counters_foreach(int map_fd,
			 int (*cb)(uint64_t cgroup_id, const struct cgf_counters *c, void *userdata),
			 void *userdata) {
	_cleanup_(counters_buf_done) struct counters_buf b = {};
	uint64_t key = 0, next;
	bool first = true;
	int r;

	r = counters_buf_init(map_fd, &b);
	if (r < 0)
		return r;
	for (;;) {
		struct cgf_counters sum;

		if (bpf_map_get_next_key(map_fd, first ? NULL : &key, &next) < 0)
			return errno == ENOENT ? 0 : -errno;
		first = false;
		key = next;
		r = counters_lookup(map_fd, key, &b, &sum);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			return r;
		r = cb(key, &sum, userdata);
		if (r < 0)
			return r;
	}
}
