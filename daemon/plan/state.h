/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The two states the planner compares, as plain data: what the policy
 * wants (desired, made by expand.c from the policy and a snapshot of the
 * cgroup tree) and what the kernel has (actual, read by the kernel edge,
 * or written by hand in a test).  No I/O here, and nothing that knows
 * where a state came from.
 *
 * Both are lists of "lists": one per cgroup and direction (the kernel
 * keeps one program list per cgroup and attach type).  Paths are relative
 * to the cgroup2 mount, "." for the root, as the policy writes them.
 *
 * A desired state keeps positions into the policy's sources (for
 * messages): free it before the policy it was expanded from.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "kernel-features.h" /* struct cgf_features: what the kernel offers */
#include "attach-flags.h"
#include "macro.h"
#include "policy.h"

/* ---- desired ------------------------------------------------------------- */

/* One program the policy puts on a cgroup and direction. */
struct cgf_desired_entry {
	char *filter;   /* the filter's name */
	char *identity; /* digest of the program and its load-time config: a
			 * changed identity is "same filter, changed program" */
	bool preorder;  /* BPF_F_PREORDER */
	struct cgf_pos pos; /* the filters: entry that puts it here */
};

/* A child cgroup below a host attachment with tenants: which tenant
 * filters the carrier (the attachment's first rules filter of this
 * direction) applies to it, as map data keyed by the child's cgroup id. */
struct cgf_desired_tenant {
	char *cgroup;    /* the child's path */
	char *carrier;   /* the filter whose program applies them */
	char **filters;  /* tenant filters of this direction, in policy order; may be empty */
	size_t n_filters;
	struct cgf_pos pos; /* the tenants: key that matched */
};

struct cgf_desired_list {
	char *cgroup;
	enum cgf_direction direction;
	enum cgf_mode mode;
	struct cgf_pos mode_pos; /* where the mode is set; unset: the default */
	struct cgf_pos pos;      /* the cgroup: of the first attachment that hits it */
	struct cgf_desired_entry *entries; /* in execution order within each preorder class */
	size_t n_entries;
	struct cgf_desired_tenant *tenants; /* children, in path order */
	size_t n_tenants;
	char *tenant_carrier; /* the filter that applies tenants here (even when no
			       * child exists yet: new ones are its to judge); NULL: none */
};

struct cgf_desired {
	struct cgf_desired_list *lists; /* sorted by cgroup (strcmp), then direction */
	size_t n_lists;
};

struct cgf_desired *cgf_desired_new(void);
struct cgf_desired *cgf_desired_free(struct cgf_desired *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_desired *, cgf_desired_free);

/* Appends a list (the caller keeps the order or calls cgf_desired_sort()). */
int cgf_desired_add_list(struct cgf_desired *d, const char *cgroup, enum cgf_direction direction,
			 enum cgf_mode mode, struct cgf_desired_list **ret);
int cgf_desired_list_add_entry(struct cgf_desired_list *l, const char *filter, const char *identity,
			       bool preorder, struct cgf_pos pos);
int cgf_desired_list_add_tenant(struct cgf_desired_list *l, const char *cgroup, const char *carrier,
				struct cgf_pos pos, struct cgf_desired_tenant **ret);
int cgf_desired_tenant_add_filter(struct cgf_desired_tenant *t, const char *filter);
void cgf_desired_sort(struct cgf_desired *d);
/* NULL when the policy puts nothing there.  The lists must be sorted. */
const struct cgf_desired_list *cgf_desired_find(const struct cgf_desired *d, const char *cgroup,
						enum cgf_direction direction);

/* ---- actual -------------------------------------------------------------- */

/* One program in a kernel list, in list order. */
struct cgf_actual_entry {
	uint32_t prog_id;
	uint32_t link_id;   /* 0: attached with BPF_PROG_ATTACH; else through this link */
	char *prog_name;    /* as the kernel reports it (at most 15 characters) */
	bool ours;          /* pinned by us under /sys/fs/bpf/cgfilterd and named "cgf_..." */
	char *filter;       /* ours: the filter it was loaded for (pin metadata); NULL if unknown */
	char *identity;     /* ours: its identity (pin metadata); NULL if unknown */
	bool preorder;      /* BPF_F_PREORDER: no query reports it, so the kernel
			     * edge takes it from the pin name for ours and leaves
			     * it false for foreign entries (a test table may set it) */
};

struct cgf_actual_list {
	char *cgroup;
	enum cgf_direction direction;
	uint32_t flags;     /* the list's mode: 0, CGF_ATTACH_OVERRIDE or CGF_ATTACH_MULTI; 0 when empty */
	uint64_t revision;  /* 0: unknown (a kernel without the series) */
	struct cgf_actual_entry *entries;
	size_t n_entries;
};

struct cgf_actual {
	struct cgf_actual_list *lists; /* sorted by cgroup (strcmp), then direction */
	size_t n_lists;
};

struct cgf_actual *cgf_actual_new(void);
struct cgf_actual *cgf_actual_free(struct cgf_actual *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_actual *, cgf_actual_free);
int cgf_actual_copy(const struct cgf_actual *a, struct cgf_actual **ret);

int cgf_actual_add_list(struct cgf_actual *a, const char *cgroup, enum cgf_direction direction,
			uint32_t flags, uint64_t revision, struct cgf_actual_list **ret);
/* Inserts at index "at" (n_entries: append).  filter and identity may be NULL. */
int cgf_actual_list_insert(struct cgf_actual_list *l, size_t at, const struct cgf_actual_entry *e);
void cgf_actual_list_remove(struct cgf_actual_list *l, size_t at);
void cgf_actual_entry_clear(struct cgf_actual_entry *e);
void cgf_actual_sort(struct cgf_actual *a);
/* Drops the lists added after the first n (before sorting: the newest). */
void cgf_actual_truncate(struct cgf_actual *a, size_t n);
/* NULL when there is no such list.  The lists must be sorted. */
const struct cgf_actual_list *cgf_actual_find(const struct cgf_actual *a, const char *cgroup,
					      enum cgf_direction direction);
struct cgf_actual_list *cgf_actual_find_mutable(struct cgf_actual *a, const char *cgroup,
						enum cgf_direction direction);

/* ---- paths --------------------------------------------------------------- */

/* Path helpers for cgroup paths ("." is the root). */
unsigned cgf_cgroup_depth(const char *path);
/* Is "path" strictly below "ancestor"? */
bool cgf_cgroup_is_below(const char *path, const char *ancestor);
/* The parent's path into buf (at least strlen(path) + 2 bytes); false for the root. */
bool cgf_cgroup_parent(const char *path, char *buf, size_t size);

/* Orders (cgroup, direction) pairs as the lists are sorted. */
int cgf_list_key_compare(const char *cgroup_a, enum cgf_direction dir_a, const char *cgroup_b,
			 enum cgf_direction dir_b);
