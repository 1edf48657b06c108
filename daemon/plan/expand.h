/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * expand: a valid policy and a snapshot of the cgroup tree (the paths that
 * exist) → the desired state, per cgroup and direction.  Pure: no I/O, no
 * kernel.  reconcile.c calls it after every read of the tree: for a full
 * reconcile the cgroups within the policy's reach (reach.h; the whole
 * host for a reconcile that only plans, and without a valid reach
 * record), for a batch of cgroup events a partial snapshot (the cgroups
 * created, their ancestors and subtrees: cgf_cgroup_tree_read_scope()).
 *
 *  - An attachment applies to every existing cgroup its `cgroup:` matches
 *    (cgroup-pattern.h: fnmatch per component, `**` for any depth).  A
 *    literal path that does not exist yields nothing.
 *  - Where several attachments hit one cgroup and direction, their
 *    filters merge into one list: each list's own order, `before:` /
 *    `after:` between entries of attachments with the same `cgroup:`
 *    value, otherwise the order of the files; ties go to the earlier
 *    entry (a stable topological order).
 *  - `tenants:` add no programs: the desired list of the host cgroup
 *    keeps, per existing child that a tenant entry matches, which tenant
 *    filters the attachment's first rules filter of that direction (the
 *    carrier) applies to it.  maps-sync.c writes them into the carrier's
 *    maps, on the kernel edge's map fds.
 *
 * The policy must have passed cgf_policy_validate(): a cycle, an unknown
 * filter, a filter twice on one list or modes that disagree give -EINVAL
 * (the validator reports them with positions; expand does not).
 */

#include "identity.h"
#include "policy.h"
#include "state.h"

/*
 * cgroups: the existing cgroup paths, relative to the mount ("." or "" for
 * the root), in any order.  identity: NULL for cgf_filter_identity().
 * On success *ret is sorted (cgf_desired_find() works on it) and keeps
 * positions into p's sources: free it first.
 */
int cgf_expand(const struct cgf_policy *p, const char *const *cgroups, size_t n_cgroups,
	       cgf_identity_func_t identity, void *userdata, struct cgf_desired **ret);
