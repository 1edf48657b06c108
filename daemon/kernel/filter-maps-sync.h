/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The built-in filters' maps through libbpf: writing what the pure
 * planner of maps/filter-maps.h says, and reading the counters.
 */

#include "filter-maps.h"

struct cgf_filter_maps_stats {
	unsigned updates, deletes, barriers;
};

/*
 * Make the object's maps say exactly this filter's rules, tenant hosts and
 * bindings, and unknown-child verdict.  map_fd(name) returns the fd of the
 * object's map of that name (not closed here), or -errno.  Idempotent:
 * syncing the same content again makes no map update.  For deny-all and
 * count-only filters there is nothing to write (0); object filters are
 * not ours (-EINVAL).  On an error in the middle the maps hold a mix of
 * complete rule sets, each named or unnamed whole; syncing again repairs.
 */
int cgf_filter_maps_sync(const struct cgf_filter *f,
			 const struct cgf_tenant_host *hosts, size_t n_hosts,
			 const struct cgf_tenant_binding *t, size_t n_t,
			 bool fail_closed_unknown_children,
			 int (*map_fd)(const char *name, void *userdata), void *userdata);

/* The same, from a want, with what was done (ret_stats may be NULL). */
int cgf_filter_maps_sync_want(const struct cgf_filter_maps_want *want,
			      int (*map_fd)(const char *name, void *userdata), void *userdata,
			      struct cgf_filter_maps_stats *ret_stats);

/* Has the object's config map been written (1), or not yet (0)?  Or -errno. */
int cgf_filter_maps_synced(int config_fd);

/* Does the object's config say that its host filter is audited
 * (enforce: false) (1), or enforced (0)?  -ENOENT before the first sync. */
int cgf_filter_maps_audited(int config_fd);

/* The counters of one cgroup, summed over the CPUs; -ENOENT when the
 * program has not counted a packet of it. */
int cgf_counters_read(int map_fd, uint64_t cgroup_id, struct cgf_counters *ret);

/* Every counted cgroup, summed over the CPUs; stops at the first negative
 * return of cb and returns it. */
int cgf_counters_foreach(int map_fd,
			 int (*cb)(uint64_t cgroup_id, const struct cgf_counters *c, void *userdata),
			 void *userdata);
