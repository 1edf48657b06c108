/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The data half of a reconcile: every rules filter's maps say its rules,
 * and for attachments with tenants, which child gets which tenant
 * filters (filter-maps.h writes them without a packet ever seeing half a
 * rule set).  Run after the programs are loaded and before the first
 * attach, so that no program is attached with empty maps, and on every
 * reconcile, so that a changed rule changes data and nothing else.
 *
 * Children of a tenant host: one that a tenant entry matches gets its
 * filters; one that no entry matches gets the host's rules only; one the
 * daemon has not seen yet (created since the last reconcile) is dropped
 * until it has been (fail-closed).
 *
 * scope NULL: a full sync (the tree of a full reconcile).  Else the tree is
 * an event's partial one (cgf_cgroup_tree_read_scope()) and desired was
 * expanded from it: only the tenant entries of its cgroups, and those of
 * the cgroups in scope->removed (gone: their entries go), are written;
 * every other entry stays as the last full sync left it.
 */
#include "cgroup-tree.h"
#include "filter-object.h"
#include "kernel.h"
#include "state.h"

struct cgf_maps_scope {
	const uint64_t *removed; /* cgroup ids */
	size_t n_removed;
};

/*
 * Each rules filter's maps on their own: with "failed", a filter whose
 * maps cannot be written (-E2BIG past CGF_TENANTS_MAX, -ENOSPC, ...) is
 * handed to it, with a message naming the filter and its object, and
 * the other filters' syncs go on; the caller must then not attach that
 * filter's program anywhere (its maps may say less than the policy).
 * Without "failed", the first failure stops the sync and is returned
 * with *ret_message.
 */
typedef void (*cgf_maps_sync_failed_t)(void *userdata, const char *filter, int error, const char *message);

int cgf_maps_sync(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_objects *objects,
		  const struct cgf_desired *desired, const struct cgf_cgroup_tree *tree,
		  const struct cgf_maps_scope *scope, cgf_maps_sync_failed_t failed, void *userdata,
		  char **ret_message);
