// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit test of the reference model (lib/cgbpf-model.c): pure userspace, no
 * bpf(), so it runs under ASan/UBSan from build-asan.  It walks the
 * spec's worked examples (the seed patch's, the uapi comment's Ex1, the
 * PREORDER examples and the upstream ordering / revision / invalid
 * scenarios) through the model and checks each prediction, so the model
 * that judges the kernel in the VM is itself checked against the text.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgbpf-uapi.h"
#include "fuzz-gen.h"
#include "cgbpf-model.h"
#include "report.h"

/* Programs are named by one or two letters; the handle is an index. */
static const char *prog_names[MODEL_MAX_PROGS];

static int P(const char *name)
{
	for (int i = 0; i < MODEL_MAX_PROGS; i++) {
		if (!prog_names[i]) {
			prog_names[i] = name;
			return i;
		}
		if (strcmp(prog_names[i], name) == 0)
			return i;
	}
	return -1;
}

static void names_of(const struct model *m, const int *h, int n, char *buf, size_t size)
{
	size_t off = 0;

	(void)m;
	buf[0] = '\0';
	for (int i = 0; i < n && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? "," : "",
					h[i] >= 0 && h[i] < MODEL_MAX_PROGS && prog_names[h[i]] ?
					prog_names[h[i]] : "?");
}

static void expect_runs(const struct model *m, int cg, const char *cgname, const char *want)
{
	int eff[MODEL_MAX_EFFECTIVE], n = model_effective(m, cg, eff);
	char got[512];

	names_of(m, eff, n, got, sizeof(got));
	if (!report_check(strcmp(got, want) == 0, "%s runs %s", cgname, want))
		report_detail("model computes %s", got);
}

static void expect_list(const struct model *m, int cg, const char *cgname, const char *want,
			uint64_t revision)
{
	const struct model_cgroup *c = &m->cg[cg];
	int h[MODEL_MAX_LIST];
	char got[512];

	for (int i = 0; i < c->n; i++)
		h[i] = model_entry_prog(m, &c->list[i]);
	names_of(m, h, c->n, got, sizeof(got));
	if (!report_check(strcmp(got, want) == 0 && c->revision == revision,
			  "%s list %s, revision %llu", cgname, want, (unsigned long long)revision))
		report_detail("model has %s, revision %llu", got, (unsigned long long)c->revision);
}

struct attach_args {
	uint32_t flags;
	int replace;
	struct model_anchor anchor;
	uint64_t rev;
};

static void attach_full(struct model *m, int cg, const char *cgname, const char *prog,
			bool link_create, int link, struct attach_args args, int want,
			const char *what)
{
	struct model_attach a = {
		.cgroup = cg,
		.prog = P(prog),
		.link_create = link_create,
		.flags = args.flags,
		/* .replace is read only with BPF_F_REPLACE */
		.replace_prog = (args.flags & BPF_F_REPLACE) ? args.replace : -1,
		.anchor = args.anchor,
		.expected_revision = args.rev,
	};
	struct model_prediction p = model_predict_attach(m, &a);

	if (!report_check(p.err == want, "%s: %s %s to %s -> %s", what,
			  link_create ? "link" : "attach", prog, cgname, report_errno(want)))
		report_detail("model predicts %s", report_errno(p.err));
	if (p.err == 0)
		model_apply_attach(m, &a, link);
}

#define ATTACH(cg, prog, want, ...) \
	attach_full(&m, cg, #cg, prog, false, -1, (struct attach_args){ __VA_ARGS__ }, want, __func__)
#define LINK(cg, prog, link, want, ...) \
	attach_full(&m, cg, #cg, prog, true, link, (struct attach_args){ __VA_ARGS__ }, want, __func__)

static void detach_full(struct model *m, int cg, const char *cgname, const char *prog,
			uint64_t rev, int want, const char *what)
{
	struct model_detach d = { .cgroup = cg, .prog = prog ? P(prog) : -1, .expected_revision = rev };
	struct model_prediction p = model_predict_detach(m, &d);

	if (!report_check(p.err == want, "%s: detach %s from %s -> %s", what, prog ? prog : "(no fd)",
			  cgname, report_errno(want)))
		report_detail("model predicts %s", report_errno(p.err));
	if (p.err == 0)
		model_apply_detach(m, &d);
}

#define DETACH(cg, prog, want) detach_full(&m, cg, #cg, prog, 0, want, __func__)
#define DETACH_REV(cg, prog, rev, want) detach_full(&m, cg, #cg, prog, rev, want, __func__)

#define ANCHOR_PROG(name) .anchor = { MODEL_ANCHOR_PROG, P(name) }
#define ANCHOR_LINK(h) .anchor = { MODEL_ANCHOR_LINK, h }

/* Seed patch 7f677633379b, example 1: /A default, nothing below can attach. */
static void seed_example_1(enum model_kernel k)
{
	struct model m;
	int A, AB, ABC;

	model_init(&m, k);
	A = model_add_cgroup(&m, -1);
	AB = model_add_cgroup(&m, A);
	ABC = model_add_cgroup(&m, AB);
	ATTACH(A, "X", 0);
	ATTACH(AB, "Y", -EPERM);
	ATTACH(ABC, "Y", -EPERM);
	expect_runs(&m, A, "/A", "X");
	expect_runs(&m, AB, "/A/B", "X");
	expect_runs(&m, ABC, "/A/B/C", "X");
}

/* Example 2, as 6.1 behaves: an override parent allows any flags below. */
static void seed_example_2(enum model_kernel k)
{
	struct model m;
	int A, AB, ABC;

	model_init(&m, k);
	A = model_add_cgroup(&m, -1);
	AB = model_add_cgroup(&m, A);
	ABC = model_add_cgroup(&m, AB);
	ATTACH(A, "X", 0, .flags = BPF_F_ALLOW_OVERRIDE);
	ATTACH(AB, "Y", 0);	/* 4.10 refused this; 4.15+ allow it */
	expect_runs(&m, AB, "/A/B", "Y");
	ATTACH(AB, "M", -EPERM, .flags = BPF_F_ALLOW_OVERRIDE);
	DETACH(AB, "Y", 0);
	ATTACH(AB, "M", 0, .flags = BPF_F_ALLOW_OVERRIDE);
	expect_runs(&m, A, "/A", "X");
	expect_runs(&m, AB, "/A/B", "M");
	expect_runs(&m, ABC, "/A/B/C", "M");
}

/* Example 3: the mode of /A cannot be switched without a detach. */
static void seed_example_3(enum model_kernel k)
{
	struct model m;
	int A, AB;

	model_init(&m, k);
	A = model_add_cgroup(&m, -1);
	AB = model_add_cgroup(&m, A);
	ATTACH(A, "X", 0, .flags = BPF_F_ALLOW_OVERRIDE);
	ATTACH(A, "Y", -EPERM);
	expect_runs(&m, AB, "/A/B", "X");
	DETACH(A, "X", 0);
	ATTACH(A, "Y", 0);
	expect_runs(&m, AB, "/A/B", "Y");
	DETACH(A, NULL, 0);	/* none mode: any fd detaches the prog */
	DETACH(A, NULL, -ENOENT);
	expect_runs(&m, AB, "/A/B", "");
}

/* The brief's fourth case: /A/B's prog cannot be overridden below, can be cleared. */
static void seed_example_4(enum model_kernel k)
{
	struct model m;
	int A, AB, ABC;

	model_init(&m, k);
	A = model_add_cgroup(&m, -1);
	AB = model_add_cgroup(&m, A);
	ABC = model_add_cgroup(&m, AB);
	ATTACH(A, "J", 0, .flags = BPF_F_ALLOW_OVERRIDE);
	ATTACH(AB, "K", 0);
	ATTACH(ABC, "L", -EPERM);
	ATTACH(AB, "L", -EPERM, .flags = BPF_F_ALLOW_OVERRIDE);
	ATTACH(AB, "L", -EPERM, .flags = BPF_F_ALLOW_MULTI);
	expect_runs(&m, ABC, "/A/B/C", "K");
	DETACH(AB, "K", 0);
	expect_runs(&m, AB, "/A/B", "J");
	expect_runs(&m, ABC, "/A/B/C", "J");
}

/* The uapi comment's Ex1. */
static void uapi_ex1(enum model_kernel k)
{
	struct model m;
	int c1, c2, c3, c4, c5;

	model_init(&m, k);
	c1 = model_add_cgroup(&m, -1);
	c2 = model_add_cgroup(&m, c1);
	c3 = model_add_cgroup(&m, c2);
	c4 = model_add_cgroup(&m, c3);
	c5 = model_add_cgroup(&m, c4);
	ATTACH(c1, "A", 0, .flags = BPF_F_ALLOW_MULTI);
	ATTACH(c1, "B", 0, .flags = BPF_F_ALLOW_MULTI);
	ATTACH(c2, "C", 0, .flags = BPF_F_ALLOW_OVERRIDE);
	ATTACH(c3, "D", 0, .flags = BPF_F_ALLOW_MULTI);
	ATTACH(c4, "E", 0, .flags = BPF_F_ALLOW_OVERRIDE);
	ATTACH(c5, "F", 0);
	expect_runs(&m, c5, "cgrp5", "F,D,A,B");
	DETACH(c5, "F", 0);
	expect_runs(&m, c5, "cgrp5", "E,D,A,B");
	DETACH(c3, "D", 0);
	expect_runs(&m, c5, "cgrp5", "E,A,B");
	DETACH(c4, "E", 0);
	expect_runs(&m, c5, "cgrp5", "C,A,B");
}

/* Limits and legacy rules every kernel keeps. */
static void old_rules(enum model_kernel k)
{
	/* static: the names outlive this call in prog_names[] */
	static char name[MODEL_MAX_LIST + 1][4];
	struct model m;
	int A;

	model_init(&m, k);
	A = model_add_cgroup(&m, -1);
	for (int i = 0; i <= MODEL_MAX_LIST; i++) {
		snprintf(name[i], sizeof(name[i]), "p%d", i);
		if (i < MODEL_MAX_LIST)
			ATTACH(A, name[i], 0, .flags = BPF_F_ALLOW_MULTI);
	}
	ATTACH(A, name[MODEL_MAX_LIST], -E2BIG, .flags = BPF_F_ALLOW_MULTI);
	/* E2BIG is checked before the REPLACE target: even a replace fails */
	ATTACH(A, name[MODEL_MAX_LIST], -E2BIG, .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE,
	       .replace = P("p0"));
	DETACH(A, "p0", 0);
	ATTACH(A, "p1", -EINVAL, .flags = BPF_F_ALLOW_MULTI);	/* same prog twice */
	ATTACH(A, "p1", 0, .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE, .replace = P("p1"));
	ATTACH(A, "q", -ENOENT, .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE, .replace = P("p0"));
	ATTACH(A, "q", -EINVAL, .flags = BPF_F_REPLACE, .replace = P("p1"));
	ATTACH(A, "q", -EINVAL, .flags = BPF_F_ALLOW_MULTI | BPF_F_ALLOW_OVERRIDE);
	ATTACH(A, "q", -EPERM);
	DETACH(A, NULL, -EINVAL);	/* multi needs the prog's fd */
	DETACH(A, "q", -ENOENT);
	LINK(A, "p5", 0, 0);		/* a link may carry an attached prog */
	ATTACH(A, "q", -E2BIG, .flags = BPF_F_ALLOW_MULTI);
	DETACH(A, "p5", 0);		/* removes the direct p5, not the link */
	ATTACH(A, "p5", 0, .flags = BPF_F_ALLOW_MULTI);
	ATTACH(A, "q", -E2BIG, .flags = BPF_F_ALLOW_MULTI);
}

/* The spec's PREORDER examples. */
static void preorder_examples(void)
{
	struct model m;
	int root, mid, leaf, sub;
	const uint32_t MP = BPF_F_ALLOW_MULTI | BPF_F_PREORDER, MU = BPF_F_ALLOW_MULTI;

	model_init(&m, MODEL_KERNEL_PATCHED);
	root = model_add_cgroup(&m, -1);
	sub = model_add_cgroup(&m, root);
	ATTACH(root, "p1", 0, .flags = MU);
	ATTACH(root, "p2", 0, .flags = MP);
	ATTACH(sub, "p3", 0, .flags = MU);
	ATTACH(sub, "p4", 0, .flags = MP);
	expect_runs(&m, sub, "sub", "p2,p4,p3,p1");

	model_init(&m, MODEL_KERNEL_PATCHED);
	root = model_add_cgroup(&m, -1);
	mid = model_add_cgroup(&m, root);
	leaf = model_add_cgroup(&m, mid);
	ATTACH(root, "r1", 0, .flags = MU);
	ATTACH(root, "r2", 0, .flags = MP);
	ATTACH(mid, "m1", 0, .flags = MP);
	ATTACH(mid, "m2", 0, .flags = MU);
	ATTACH(leaf, "l1", 0, .flags = MU);
	ATTACH(leaf, "l2", 0, .flags = MP);
	ATTACH(leaf, "l3", 0, .flags = MP);
	expect_runs(&m, leaf, "leaf", "r2,m1,l2,l3,l1,m2,r1");
	expect_runs(&m, mid, "mid", "r2,m1,m2,r1");

	model_init(&m, MODEL_KERNEL_PATCHED);
	root = model_add_cgroup(&m, -1);
	mid = model_add_cgroup(&m, root);
	leaf = model_add_cgroup(&m, mid);
	ATTACH(root, "r1", 0, .flags = MP);
	ATTACH(mid, "m1", 0, .flags = BPF_F_ALLOW_OVERRIDE);
	expect_runs(&m, leaf, "leaf", "r1,m1");
	ATTACH(leaf, "l1", 0);
	expect_runs(&m, leaf, "leaf", "r1,l1");
}

/* Upstream's preorder scenario: child alone, then with a parent. */
static void preorder_upstream(void)
{
	const uint32_t MP = BPF_F_ALLOW_MULTI | BPF_F_PREORDER, MU = BPF_F_ALLOW_MULTI;

	for (int all = 0; all <= 1; all++) {
		struct model m;
		int parent, child;

		model_init(&m, MODEL_KERNEL_PATCHED);
		parent = model_add_cgroup(&m, -1);
		child = model_add_cgroup(&m, parent);
		ATTACH(child, "c1", 0, .flags = all ? MP : MU);
		ATTACH(child, "c2", 0, .flags = MP);
		expect_runs(&m, child, "child", all ? "c1,c2" : "c2,c1");
		ATTACH(parent, "p1", 0, .flags = all ? MP : MU);
		ATTACH(parent, "p2", 0, .flags = MP);
		expect_runs(&m, child, "child", all ? "p1,p2,c1,c2" : "p2,c2,c1,p1");
	}
}

/* REPLACE and single-slot override take the new PREORDER bit; LINK_UPDATE keeps it. */
static void preorder_replace(void)
{
	struct model m;
	int root, leaf;

	model_init(&m, MODEL_KERNEL_PATCHED);
	root = model_add_cgroup(&m, -1);
	leaf = model_add_cgroup(&m, root);
	ATTACH(root, "r1", 0, .flags = BPF_F_ALLOW_MULTI);
	ATTACH(leaf, "l1", 0, .flags = BPF_F_ALLOW_OVERRIDE);
	expect_runs(&m, leaf, "leaf", "l1,r1");
	ATTACH(root, "r2", 0, .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE | BPF_F_PREORDER,
	       .replace = P("r1"));
	expect_runs(&m, leaf, "leaf", "r2,l1");
	ATTACH(root, "r1", 0, .flags = BPF_F_ALLOW_MULTI);
	ATTACH(leaf, "l2", 0, .flags = BPF_F_ALLOW_OVERRIDE | BPF_F_PREORDER);
	expect_runs(&m, leaf, "leaf", "r2,l2,r1");
	ATTACH(leaf, "l3", 0, .flags = BPF_F_ALLOW_OVERRIDE);
	expect_runs(&m, leaf, "leaf", "r2,l3,r1");
	LINK(root, "k1", 0, 0, .flags = BPF_F_PREORDER);
	expect_runs(&m, leaf, "leaf", "r2,k1,l3,r1");
	report_check(model_link_update(&m, 0, P("k2")) == 0, "link update k1 -> k2");
	expect_runs(&m, leaf, "leaf", "r2,k2,l3,r1");
	expect_list(&m, root, "root", "r2,r1,k2", 6);
}

/* Upstream's prog attach/detach ordering scenario, with revisions. */
static void ordering_progs(void)
{
	struct model m;
	int cg;
	const uint32_t MU = BPF_F_ALLOW_MULTI;

	model_init(&m, MODEL_KERNEL_PATCHED);
	cg = model_add_cgroup(&m, -1);
	ATTACH(cg, "fd1", 0, .flags = MU | BPF_F_BEFORE | BPF_F_AFTER, .rev = 1);
	ATTACH(cg, "fd2", 0, .flags = MU | BPF_F_BEFORE, .rev = 2);
	ATTACH(cg, "fd3", 0, .flags = MU | BPF_F_AFTER, ANCHOR_PROG("fd2"), .rev = 3);
	ATTACH(cg, "fd4", 0, .flags = MU, .rev = 4);
	expect_list(&m, cg, "cg", "fd2,fd3,fd1,fd4", 5);
	{
		struct model m2 = m;
		int c2 = cg;

		/* without an anchor: BEFORE to the head, AFTER to the tail */
		attach_full(&m2, c2, "cg", "fd5", false, -1, (struct attach_args){ .flags = MU | BPF_F_AFTER }, 0, __func__);
		attach_full(&m2, c2, "cg", "fd6", false, -1, (struct attach_args){ .flags = MU | BPF_F_BEFORE }, 0, __func__);
		expect_list(&m2, c2, "cg", "fd6,fd2,fd3,fd1,fd4,fd5", 7);
	}
	DETACH_REV(cg, "fd4", 5, 0);
	DETACH_REV(cg, "fd3", 0, 0);
	expect_list(&m, cg, "cg", "fd2,fd1", 7);
	/* stale: nothing changes */
	ATTACH(cg, "fd3", -ESTALE, .flags = MU, .rev = 5);
	DETACH_REV(cg, "fd1", 6, -ESTALE);
	expect_list(&m, cg, "cg", "fd2,fd1", 7);
	/* -ESTALE before -EPERM, -EINVAL combos before -ESTALE */
	ATTACH(cg, "fd3", -ESTALE, .flags = BPF_F_ALLOW_OVERRIDE, .rev = 3);
	ATTACH(cg, "fd3", -EPERM, .flags = BPF_F_ALLOW_OVERRIDE, .rev = 7);
	ATTACH(cg, "fd3", -EINVAL, .flags = MU | BPF_F_REPLACE | BPF_F_AFTER, .replace = P("fd1"), .rev = 3);
	expect_list(&m, cg, "cg", "fd2,fd1", 7);
}

/* The same through links (relative values name links). */
static void ordering_links(void)
{
	struct model m;
	int cg;

	model_init(&m, MODEL_KERNEL_PATCHED);
	cg = model_add_cgroup(&m, -1);
	LINK(cg, "k1", 1, 0, .flags = BPF_F_BEFORE | BPF_F_AFTER, .rev = 1);
	LINK(cg, "k2", 2, 0, .flags = BPF_F_BEFORE | BPF_F_LINK | BPF_F_ID, ANCHOR_LINK(1), .rev = 2);
	LINK(cg, "k3", 3, 0, .flags = BPF_F_AFTER | BPF_F_LINK, ANCHOR_LINK(2), .rev = 3);
	LINK(cg, "k4", 4, 0, .rev = 4);
	expect_list(&m, cg, "cg", "k2,k3,k1,k4", 5);
	LINK(cg, "k5", 5, -ESTALE, .rev = 4);
	LINK(cg, "k5", 5, -EINVAL, .flags = BPF_F_AFTER, ANCHOR_LINK(2));	/* no BPF_F_LINK */
	LINK(cg, "k5", 5, -EINVAL, .flags = BPF_F_ALLOW_MULTI);
	LINK(cg, "k5", 5, -EINVAL, .flags = BPF_F_AFTER | BPF_F_LINK, ANCHOR_PROG("k1"));
	model_link_detach(&m, 4);
	model_link_close(&m, 3);
	expect_list(&m, cg, "cg", "k2,k1", 7);
	report_check(model_link_update(&m, 4, P("k9")) == -ENOLINK, "update of a detached link -> -ENOLINK");
	report_check(model_link_detach(&m, 4) == 0, "detach of a detached link -> 0");
	expect_list(&m, cg, "cg", "k2,k1", 7);
}

/* The spec's anchor and invalid-argument scenarios. */
static void invalid_arguments(void)
{
	struct model m;
	int cg, other;
	const uint32_t MU = BPF_F_ALLOW_MULTI;

	model_init(&m, MODEL_KERNEL_PATCHED);
	cg = model_add_cgroup(&m, -1);
	other = model_add_cgroup(&m, -1);
	ATTACH(cg, "fd1", 0, .flags = MU);
	ATTACH(cg, "fd2", 0, .flags = MU | BPF_F_PREORDER);
	ATTACH(other, "fo", 0, .flags = MU);
	ATTACH(cg, "fd3", -EINVAL, .flags = MU | BPF_F_AFTER, ANCHOR_PROG("fd2"));
	ATTACH(cg, "fd3", 0, .flags = MU | BPF_F_AFTER | BPF_F_PREORDER, ANCHOR_PROG("fd2"));
	ATTACH(cg, "fd4", -EINVAL, .flags = MU | BPF_F_BEFORE | BPF_F_AFTER | BPF_F_ID, ANCHOR_PROG("fd1"));
	ATTACH(cg, "fd4", -ENOENT, .flags = MU | BPF_F_BEFORE | BPF_F_ID);
	ATTACH(cg, "fd4", -EINVAL, .flags = MU | BPF_F_BEFORE | BPF_F_LINK | BPF_F_ID, ANCHOR_PROG("fd1"));
	ATTACH(cg, "fd4", -EINVAL, .flags = MU | BPF_F_ID, ANCHOR_PROG("fd1"));
	ATTACH(cg, "fd4", -ENOENT, .flags = MU | BPF_F_BEFORE, ANCHOR_PROG("fo"));
	ATTACH(cg, "fd4", -ENOENT, .flags = MU | BPF_F_BEFORE | BPF_F_ID, ANCHOR_PROG("fd9"));
	ATTACH(cg, "fd1", -EINVAL, .flags = MU | BPF_F_AFTER);
	ATTACH(cg, "fd4", -EINVAL, .flags = MU | BPF_F_REPLACE | BPF_F_AFTER, .replace = P("fd1"));
	ATTACH(cg, "fd4", -EINVAL, .flags = MU | BPF_F_BEFORE | BPF_F_AFTER);
	ATTACH(cg, "fd4", -EBADF, .flags = MU | BPF_F_BEFORE, .anchor = { MODEL_ANCHOR_UNKNOWN, 0 });
	ATTACH(cg, "fd4", -EINVAL, .flags = MU | BPF_F_BEFORE, .anchor = { MODEL_ANCHOR_WRONG_KIND, 0 });
	ATTACH(cg, "fd4", -EINVAL, .flags = MU | (1U << 7));
	ATTACH(cg, "fd4", -EINVAL, .flags = MU | (1U << 14));
	ATTACH(cg, "fd4", -ENOENT, .flags = MU | BPF_F_AFTER | BPF_F_PREORDER | BPF_F_ID, .anchor = { MODEL_ANCHOR_UNKNOWN, 0 });
	expect_list(&m, cg, "cg", "fd1,fd2,fd3", 4);
	/* anchor errors come last: -EPERM and -E2BIG win */
	ATTACH(cg, "fd4", -EPERM, .flags = BPF_F_ALLOW_OVERRIDE | BPF_F_BEFORE | BPF_F_LINK);
	{
		struct model_detach d = { .cgroup = cg, .prog = P("fd1"), .flags = MU };

		report_check(model_predict_detach(&m, &d).err == -EINVAL, "detach with attach_flags -> -EINVAL");
		d.flags = 0;
		d.relative = 3;
		report_check(model_predict_detach(&m, &d).err == -EINVAL, "detach with relative_fd -> -EINVAL");
	}
}

/* Positional flags on a single-slot override: never looked at, as upstream. */
static void single_slot_positional(void)
{
	struct model m;
	struct model_attach a;
	struct model_prediction p;
	int cg;

	model_init(&m, MODEL_KERNEL_PATCHED);
	cg = model_add_cgroup(&m, -1);
	ATTACH(cg, "o1", 0, .flags = BPF_F_ALLOW_OVERRIDE | BPF_F_BEFORE | BPF_F_AFTER);
	ATTACH(cg, "o2", 0, .flags = BPF_F_ALLOW_OVERRIDE | BPF_F_BEFORE);
	expect_list(&m, cg, "cg", "o2", 3);
	a = (struct model_attach){ .cgroup = cg, .prog = P("o3"), .flags = BPF_F_ALLOW_OVERRIDE | BPF_F_AFTER | BPF_F_ID,
				   .anchor = { MODEL_ANCHOR_UNKNOWN, 0 }, .replace_prog = -1 };
	p = model_predict_attach(&m, &a);
	report_check(p.err == 0 && p.alt == 0 && !p.why,
		     "override with an unknown anchor: replaced, the anchor never looked at");
	ATTACH(cg, "o3", 0, .flags = BPF_F_ALLOW_OVERRIDE | BPF_F_AFTER | BPF_F_LINK);
	expect_list(&m, cg, "cg", "o3", 4);
}

/* upstream's get_prog_list(): direct entries for prog anchors, the link for link anchors */
static void anchors_as_upstream(void)
{
	const uint32_t MU = BPF_F_ALLOW_MULTI;
	struct model m;
	int cg;

	model_init(&m, MODEL_KERNEL_PATCHED);
	cg = model_add_cgroup(&m, -1);
	LINK(cg, "x", 1, 0);
	ATTACH(cg, "y", 0, .flags = MU);
	ATTACH(cg, "z", -ENOENT, .flags = MU | BPF_F_BEFORE, ANCHOR_PROG("x"));
	ATTACH(cg, "z", -ENOENT, .flags = MU | BPF_F_AFTER | BPF_F_ID, ANCHOR_PROG("x"));
	ATTACH(cg, "x", 0, .flags = MU);
	ATTACH(cg, "z", 0, .flags = MU | BPF_F_BEFORE, ANCHOR_PROG("x"));
	expect_list(&m, cg, "cg", "x,y,z,x", 5);
	LINK(cg, "w", 2, 0, .flags = BPF_F_PREORDER);
	ATTACH(cg, "w", 0, .flags = MU);
	ATTACH(cg, "v", -EINVAL, .flags = MU | BPF_F_PREORDER | BPF_F_AFTER, ANCHOR_PROG("w"));
	ATTACH(cg, "v", 0, .flags = MU | BPF_F_AFTER, ANCHOR_PROG("w"));
	LINK(cg, "u", 3, 0, .flags = BPF_F_BEFORE | BPF_F_LINK, ANCHOR_LINK(1));
	expect_list(&m, cg, "cg", "u,x,y,z,x,w,w,v", 9);
	/* REPLACE never looks at the relative value, BPF_F_ID or BPF_F_LINK */
	ATTACH(cg, "r1", 0, .flags = MU | BPF_F_REPLACE | BPF_F_ID, .replace = P("y"),
	       .anchor = { MODEL_ANCHOR_UNKNOWN, 0 });
	ATTACH(cg, "r2", 0, .flags = MU | BPF_F_REPLACE | BPF_F_LINK, .replace = P("z"), ANCHOR_PROG("v"));
	expect_list(&m, cg, "cg", "u,x,r1,r2,x,w,w,v", 11);
}

/* The 6.1 kernel: new flags and bytes are refused, link_create's new bytes ignored. */
static void baseline_refuses_new_flags(void)
{
	struct model m;
	int cg;
	const uint32_t MU = BPF_F_ALLOW_MULTI;

	model_init(&m, MODEL_KERNEL_BASELINE);
	cg = model_add_cgroup(&m, -1);
	ATTACH(cg, "b1", -EINVAL, .flags = MU | BPF_F_PREORDER);
	ATTACH(cg, "b1", -EINVAL, .flags = MU | BPF_F_BEFORE);
	ATTACH(cg, "b1", -EINVAL, .flags = MU | BPF_F_AFTER);
	ATTACH(cg, "b1", -EINVAL, .flags = MU | BPF_F_ID);
	ATTACH(cg, "b1", -EINVAL, .flags = MU | BPF_F_LINK);
	ATTACH(cg, "b1", -EINVAL, .flags = MU, .rev = 1);
	ATTACH(cg, "b1", -EINVAL, .flags = MU, ANCHOR_PROG("b2"));
	LINK(cg, "b1", 0, -EINVAL, .flags = BPF_F_PREORDER);
	LINK(cg, "b1", 0, -EINVAL, .flags = BPF_F_BEFORE);
	LINK(cg, "b1", 0, 0, .rev = 42);
	DETACH_REV(cg, "b1", 1, -EINVAL);
	expect_list(&m, cg, "cg", "b1", 2);
}

/* Applies an op to the model as if the kernel gave the model's answer. */
static int model_step(struct model *m, const struct fuzz_op *op)
{
	struct model_prediction p;

	switch (op->kind) {
	case FUZZ_ATTACH:
	case FUZZ_LINK_CREATE:
		p = model_predict_attach(m, &op->attach);
		if (p.err == 0)
			model_apply_attach(m, &op->attach, op->link);
		return p.err;
	case FUZZ_DETACH:
		p = model_predict_detach(m, &op->detach);
		if (p.err == 0)
			model_apply_detach(m, &op->detach);
		return p.err;
	case FUZZ_LINK_DETACH:
		return model_link_detach(m, op->link);
	case FUZZ_LINK_CLOSE:
		model_link_close(m, op->link);
		return 0;
	case FUZZ_LINK_UPDATE:
		return model_link_update(m, op->link, op->prog);
	default:
		return 0;
	}
}

/* The model's own invariants, whatever the history. */
static bool model_consistent(const struct model *m, int ncg)
{
	int eff[MODEL_MAX_EFFECTIVE];

	for (int cg = 0; cg < ncg; cg++) {
		const struct model_cgroup *c = &m->cg[cg];

		if (c->n < 0 || c->n > MODEL_MAX_LIST)
			return false;
		if (c->n > 1 && c->mode != MODEL_MODE_MULTI)
			return false;	/* none / override hold one prog */
		for (int i = 0; i < c->n; i++) {
			const struct model_entry *e = &c->list[i];

			if (e->link >= 0 && (!m->link[e->link].used || m->link[e->link].cgroup != cg))
				return false;
			if (e->link >= 0 && c->mode != MODEL_MODE_MULTI)
				return false;	/* links are always multi */
		}
		if (model_effective(m, cg, eff) > MODEL_MAX_EFFECTIVE)
			return false;
	}
	return true;
}

/*
 * The generator driven through the model alone: no crash, no broken
 * invariant, and every kind of result reached.  Also prints the mix of
 * results, the thing to look at when tuning fuzz-gen.c.
 */
static void generator_soak(bool patched)
{
	static const int errs[] = { 0, -EINVAL, -EPERM, -ENOENT, -ESTALE, -E2BIG, -EBADF, -ENOLINK };
	unsigned count[sizeof(errs) / sizeof(errs[0])] = { 0 }, open_cases = 0, longest = 0;
	static const int parent[8] = { -1, 0, 0, 1, 1, 2, 3, 5 };
	struct fuzz_gen g;
	struct model m;
	bool consistent = true;
	char line[512];

	model_init(&m, patched ? MODEL_KERNEL_PATCHED : MODEL_KERNEL_BASELINE);
	for (int i = 0; i < 8; i++)
		model_add_cgroup(&m, parent[i]);
	fuzz_gen_init(&g, 12345, patched, 8, 24, 40);
	for (int i = 0; i < 20000 && consistent; i++) {
		struct fuzz_op op;
		int r;

		fuzz_gen_op(&g, &m, &op);
		fuzz_op_describe(&op, line, sizeof(line));
		if ((op.kind == FUZZ_ATTACH || op.kind == FUZZ_LINK_CREATE) &&
		    model_predict_attach(&m, &op.attach).why)
			open_cases++;
		r = model_step(&m, &op);
		for (size_t k = 0; k < sizeof(errs) / sizeof(errs[0]); k++)
			if (errs[k] == r)
				count[k]++;
		consistent = model_consistent(&m, 8);
		for (int cg = 0; cg < 8; cg++)
			if ((unsigned)m.cg[cg].n > longest)
				longest = (unsigned)m.cg[cg].n;
		if (!consistent)
			report_detail("after op %d: %s", i, line);
	}
	report_check(consistent, "generator soak (%s): 20000 ops keep the model consistent",
		     patched ? "patched" : "baseline");
	for (size_t k = 0; k < sizeof(errs) / sizeof(errs[0]); k++)
		report_note("  %-8s %u", report_errno(errs[k]), count[k]);
	report_note("  open cases %u, longest list %u", open_cases, longest);
	report_check(count[0] > 4000 && count[1] > 1000 && count[2] > 500 && count[3] > 200 &&
		     (!patched || count[4] > 200),
		     "generator soak (%s): successes and the main errors all occur", patched ? "patched" : "baseline");
}

int main(void)
{
	for (int k = MODEL_KERNEL_BASELINE; k <= MODEL_KERNEL_PATCHED; k++) {
		report_note("old-flag examples, %s kernel", k == MODEL_KERNEL_PATCHED ? "patched" : "baseline");
		seed_example_1(k);
		seed_example_2(k);
		seed_example_3(k);
		seed_example_4(k);
		uapi_ex1(k);
		old_rules(k);
	}
	preorder_examples();
	preorder_upstream();
	preorder_replace();
	ordering_progs();
	ordering_links();
	invalid_arguments();
	single_slot_positional();
	anchors_as_upstream();
	baseline_refuses_new_flags();
	generator_soak(false);
	generator_soak(true);
	return report_finish();
}
