/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The built-in filters' maps, from userspace: what a rules filter (and
 * the tenant filters it applies) means as map contents, and how to bring
 * an object's maps there without a packet ever seeing half a rule set.
 *
 * Two layers (docs/filters.md has the map layout and the reasons):
 *
 *   - the encoder and the planner (this header, libcgfmaps): pure
 *     functions from the policy model and the maps' current contents to
 *     an ordered list of map operations;
 *   - the writer and the counters reader (kernel/filter-maps-sync.h, in
 *     libcgfkernel, which links libbpf): read the maps, plan, apply.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgf-maps.h"
#include "policy.h"

/* The maps of a rules object, by the names the kernel edge finds them. */
enum cgf_rmap {
	CGF_RMAP_CONFIG,
	CGF_RMAP_TENANTS,
	CGF_RMAP_V4,
	CGF_RMAP_V6,
	CGF_RMAP_PORTS,
	_CGF_RMAP_MAX,
};

const char *cgf_rmap_name(enum cgf_rmap m); /* "config", "tenants", "rules_v4", ... */
size_t cgf_rmap_key_size(enum cgf_rmap m);
size_t cgf_rmap_value_size(enum cgf_rmap m);
bool cgf_rmap_has_lock(enum cgf_rmap m); /* config, tenants: write with BPF_F_LOCK */
uint32_t cgf_rmap_max_entries(enum cgf_rmap m);
#define CGF_COUNTERS_MAP "counters"

#define CGF_RMAP_KEY_MAX 24
#define CGF_RMAP_VALUE_MAX 48

/* One element of one map, key and value as the kernel stores them (the
 * bytes after the map's sizes are zero, and so is a value's spin lock). */
struct cgf_map_entry {
	enum cgf_rmap map;
	uint8_t key[CGF_RMAP_KEY_MAX];
	uint8_t value[CGF_RMAP_VALUE_MAX];
};

/* The rule set id of an entry of rules_v4, rules_v6 or rules_ports. */
uint32_t cgf_map_entry_ruleset(const struct cgf_map_entry *e);

/*
 * The rule set of a rules filter: its rule nodes and port blocks with rule
 * set id 0, sorted by map and key.  See cgf-maps.h for what a node holds.
 * -EINVAL for a filter that is not of type rules or a rule that did not
 * parse, -E2BIG when it needs more port tables than a key can name.
 */
int cgf_ruleset_encode(const struct cgf_filter *f, struct cgf_map_entry **ret, size_t *ret_n);

/* Where the filter is attached with tenants: (cgroup id, level). */
struct cgf_tenant_host {
	uint64_t cgroup_id;
	unsigned level; /* cgroup depth, root = 0 */
};

/* A child of a tenant host and the tenant filters its entry gives it, in
 * the order written (an empty list: the host's rules only). */
struct cgf_tenant_binding {
	uint64_t cgroup_id;
	unsigned level; /* cgroup depth of the child, root = 0: a host's level + 1 */
	const struct cgf_filter *const *filters;
	size_t n_filters;
};

/* What a rules object's maps should say. */
struct cgf_filter_maps_want {
	const struct cgf_filter *filter;
	const struct cgf_tenant_host *hosts;
	size_t n_hosts;
	const struct cgf_tenant_binding *bindings;
	size_t n_bindings;
	/* A socket in a child of a host (or below one) that has no binding:
	 * drop (true), or the host's rules only (false). */
	bool fail_closed_unknown_children;
	/* filter is audited (filter->audit), and so is every tenant filter
	 * that any child may get through it: cgf_filter_audits_all().  Then
	 * what no rule set decides (a packet that cannot be judged, an
	 * unknown child) is counted as would-drop instead of dropped.  The
	 * tenant filters that bindings name say themselves whether they are
	 * audited. */
	bool audit_all;
	/* Partial: the hosts and bindings above are only those of one event's
	 * cgroups, and scope_ids (sorted, each once) are all the tenant
	 * entries this want speaks for: those cgroups and the ones that went
	 * away.  Other tenant entries are left as they are, and so are the
	 * rule sets they may name; config's levels only grow.  A full sync
	 * (not partial) is the one that removes what nothing names. */
	bool partial;
	const uint64_t *scope_ids;
	size_t n_scope_ids;
};

/*
 * Is f audited (enforce: false), and so is every tenant filter of its
 * direction that an attachment applies through it (f as the attachment's
 * first rules filter of that direction)?  Decided from the policy, not
 * from the children that exist: a child created later may get any of
 * them, and until it is bound an enforced one must find it dropped.
 */
bool cgf_filter_audits_all(const struct cgf_policy *p, const struct cgf_filter *f);

enum cgf_map_op_kind {
	CGF_MAP_UPDATE,
	CGF_MAP_DELETE,
	/* Wait until no program can still hold a pointer into what the
	 * operations before replaced: an RCU grace period. */
	CGF_MAP_BARRIER,
};

struct cgf_map_op {
	enum cgf_map_op_kind kind;
	struct cgf_map_entry entry; /* the value only for UPDATE */
};

/*
 * The operations that turn the maps' current contents into "want", in the
 * order they must run: new rule sets complete, then the tenant entries
 * (children before hosts) and config that name them, each one value
 * written in place under its lock, then stale tenant entries (hosts first), then a
 * barrier and the old rule sets.  No operation when the maps already say
 * it.  -EINVAL for a binding at a level no host has, a child bound twice,
 * a tenant filter of another direction; -E2BIG past a map's or a value's
 * room (then nothing should be applied).
 */
int cgf_filter_maps_plan(const struct cgf_filter_maps_want *want,
			 const struct cgf_map_entry *current, size_t n_current,
			 struct cgf_map_op **ret_ops, size_t *ret_n_ops);
