/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A reference model of cgroup-bpf attachment for one attach type, pure
 * (no syscalls), written from docs/cgroup-bpf-uapi.md and
 * 6.1's kernel/bpf/cgroup.c: a tree of cgroups, each with a mode
 * (none / override / multi), a list of entries (a prog attached directly
 * or through a link, with its PREORDER bit) and a revision.  It computes
 * every cgroup's effective array and predicts the result of every
 * attach, detach and link operation, in the spec's order of checks.
 *
 * One model, two users: the kernel API tests (tests/kernel/: model-test
 * on the host, cgbpf-test's random test in the VM) compare the real
 * kernel with it, and the planner's simulator (daemon/plan/plan-sim.c)
 * asks it what each action of a plan does, so the planner is tested
 * against the same reading of the kernel the kernel is tested against.
 * What only the planner needs (which program a filter uses, foreign
 * programs, refusals stricter than the kernel's) stays in plan-sim.c.
 *
 * Programs and links are small integer handles; the caller maps them to
 * fds and ids (the model only compares program handles; it indexes its
 * links by link handle).  An operation is first predicted
 * (model_predict_*, const) and then, if the kernel agreed that it
 * succeeded, applied (model_apply_*), so the model can follow the kernel
 * where the spec leaves two answers open (see struct model_prediction).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define MODEL_MAX_CGROUPS	16
#define MODEL_MAX_PROGS		128	/* cgbpf-test's handles: 0 .. MODEL_MAX_PROGS-1 */
#define MODEL_MAX_LINKS		128
#define MODEL_MAX_LIST		64	/* BPF_CGROUP_MAX_PROGS */
#define MODEL_MAX_EFFECTIVE	(MODEL_MAX_CGROUPS * MODEL_MAX_LIST)

enum model_kernel {
	MODEL_KERNEL_BASELINE,	/* Debian 6.1 as shipped: old flags, no revision */
	MODEL_KERNEL_PATCHED,	/* 6.1 with the series: the spec */
};

/* The three modes; the values are the attach flags that select them. */
enum model_mode {
	MODEL_MODE_NONE = 0,
	MODEL_MODE_OVERRIDE = 1,	/* BPF_F_ALLOW_OVERRIDE */
	MODEL_MODE_MULTI = 2,		/* BPF_F_ALLOW_MULTI */
};

struct model_entry {
	int prog;		/* direct prog handle, or -1 for a link entry */
	int link;		/* link handle, or -1 for a direct prog */
	bool preorder;
};

struct model_cgroup {
	bool used;
	int parent;		/* index, -1 for the top of the model */
	enum model_mode mode;	/* meaningful only while n > 0 */
	int n;
	struct model_entry list[MODEL_MAX_LIST];
	uint64_t revision;
};

struct model_link {
	bool used;
	int prog;		/* the link's current prog */
	int cgroup;		/* -1 once detached (a defunct link) */
	bool preorder;
};

struct model {
	enum model_kernel kernel;
	struct model_cgroup cg[MODEL_MAX_CGROUPS];
	struct model_link link[MODEL_MAX_LINKS];
};

/*
 * What the relative_fd / relative_id value of an attach names.  The
 * caller turns it into a number: with BPF_F_ID an id, otherwise an fd.
 */
enum model_anchor_kind {
	MODEL_ANCHOR_NONE,	/* value 0 */
	MODEL_ANCHOR_PROG,	/* the prog `handle` (its fd or id) */
	MODEL_ANCHOR_LINK,	/* the link `handle` (its fd or id) */
	MODEL_ANCHOR_UNKNOWN,	/* with BPF_F_ID an id nobody has; else a closed fd */
	MODEL_ANCHOR_WRONG_KIND,/* an fd of a bpf map: neither prog nor link (never with ID) */
};

struct model_anchor {
	enum model_anchor_kind kind;
	int handle;
};

struct model_attach {
	int cgroup;
	int prog;			/* prog handle being attached */
	bool link_create;		/* BPF_LINK_CREATE instead of BPF_PROG_ATTACH */
	uint32_t flags;			/* attach_flags / link_create.flags as sent */
	int replace_prog;		/* with BPF_F_REPLACE: handle, always a valid fd */
	struct model_anchor anchor;
	uint64_t expected_revision;
};

struct model_detach {
	int cgroup;
	int prog;			/* prog handle, or -1 for "no valid prog fd" */
	uint32_t flags;			/* attach_flags as sent (should be 0) */
	uint32_t relative;		/* relative_fd as sent (should be 0) */
	uint64_t expected_revision;
};

/*
 * A prediction: `err` is the result the spec (read like upstream's code)
 * gives; where the spec does not decide, `alt` is a second acceptable
 * result and `why` says what is open.  Otherwise alt == err, why == NULL.
 */
struct model_prediction {
	int err;
	int alt;
	const char *why;
};

void model_init(struct model *m, enum model_kernel kernel);
/* Adds a cgroup under `parent` (-1: the top); returns its index or -ENOSPC. */
int model_add_cgroup(struct model *m, int parent);

/* BPF_PROG_ATTACH / BPF_LINK_CREATE. */
struct model_prediction model_predict_attach(const struct model *m, const struct model_attach *a);
/* Applies a successful attach; for link_create, `link` is the new link's handle. */
void model_apply_attach(struct model *m, const struct model_attach *a, int link);

/* BPF_PROG_DETACH. */
struct model_prediction model_predict_detach(const struct model *m, const struct model_detach *d);
void model_apply_detach(struct model *m, const struct model_detach *d);

/* BPF_LINK_DETACH: detaches if still attached; the link stays (defunct). */
int model_link_detach(struct model *m, int link);
/* The last close of a link fd: detaches if still attached; the handle is free. */
void model_link_close(struct model *m, int link);
/* BPF_LINK_UPDATE without BPF_F_REPLACE; returns the predicted result and applies it. */
int model_link_update(struct model *m, int link, int new_prog);

/* The prog handle that entry `e` runs. */
int model_entry_prog(const struct model *m, const struct model_entry *e);

/*
 * The effective array of cgroup `cg` in execution order, as prog
 * handles; returns the count.  `out` holds MODEL_MAX_EFFECTIVE.
 */
int model_effective(const struct model *m, int cg, int *out);

/* The mode a query reports: the cgroup's attach flags, 0 when its list is empty. */
uint32_t model_query_flags(const struct model *m, int cg);

/* Whether attaching to `cg` is allowed by its ancestors (else -EPERM). */
bool model_hierarchy_allows(const struct model *m, int cg);
