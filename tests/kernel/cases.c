// SPDX-License-Identifier: GPL-2.0-only
/*
 * The directed kernel cases, each on its own small cgroup tree:
 *
 *  (a) the seed patch's worked examples (BPF_F_ALLOW_OVERRIDE, 4.10),
 *  (b) the uapi comment's Ex1,
 *      plus the old rules (64 progs, REPLACE, legacy detach, drops),
 *      on both kernels;
 *  (c) every PREORDER, ordering, revision and invalid-argument scenario
 *      of the spec, through PROG_ATTACH and through BPF_LINK_CREATE,
 *      on the patched kernel;
 *  (d) on the baseline kernel, every new flag and field refused with
 *      -EINVAL and nothing changed (and link_create's new bytes ignored,
 *      the spec's caution).
 *
 * After a step a case checks what runs where twice: by
 * BPF_F_QUERY_EFFECTIVE and by real traffic (a datagram from a process
 * inside the cgroup; the recorder map says which programs ran, in which
 * order).  A call that is expected to fail must also leave the cgroup's
 * list and revision as they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cases.h"
#include "report.h"

#define OV BPF_F_ALLOW_OVERRIDE
#define PRE BPF_F_PREORDER
#define OFFSETOFEND(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

#define TCASE_MAX_CG	8
#define TCASE_MAX_LINKS	32

struct tcase {
	struct fixture *f;
	const char *name;
	char dir[PATH_MAX];
	int ncg;
	struct {
		char rel[64];
		char path[PATH_MAX];
		int fd;
	} cg[TCASE_MAX_CG];
	int nlinks;
	int links[TCASE_MAX_LINKS];
};


/* Creates <base>/<name> and the cgroups `rels` below it. */
static bool tcase_begin(struct fixture *f, struct tcase *t, const char *name, const char *const *rels)
{
	int r;

	memset(t, 0, sizeof(*t));
	t->f = f;
	t->name = name;
	report_note("case %s", name);
	r = fixture_mkcg(f, name, t->dir, sizeof(t->dir));
	if (r < 0) {
		report_fail("%s: set-up: mkdir %s: %s", name, t->dir, strerror(-r));
		return false;
	}
	for (; *rels && t->ncg < TCASE_MAX_CG; rels++) {
		char rel[PATH_MAX];

		snprintf(rel, sizeof(rel), "%s/%s", name, *rels);
		snprintf(t->cg[t->ncg].rel, sizeof(t->cg[t->ncg].rel), "%s", *rels);
		r = fixture_mkcg(f, rel, t->cg[t->ncg].path, sizeof(t->cg[t->ncg].path));
		if (r >= 0)
			r = t->cg[t->ncg].fd = fixture_open_cg(t->cg[t->ncg].path);
		if (r < 0) {
			report_fail("%s: set-up: cgroup %s: %s", name, *rels, strerror(-r));
			return false;
		}
		t->ncg++;
	}
	return true;
}

#define TCASE(f, t, name, ...) tcase_begin(f, t, name, (const char *const[]){ __VA_ARGS__, NULL })

static void tcase_end(struct tcase *t)
{
	int r;

	for (int i = 0; i < t->nlinks; i++)
		close(t->links[i]);
	for (int i = 0; i < t->ncg; i++)
		close(t->cg[i].fd);
	r = fixture_rmtree(t->dir);
	if (r < 0)
		report_note("%s: could not remove %s: %s", t->name, t->dir, strerror(-r));
}

static int cg_index(const struct tcase *t, const char *rel)
{
	for (int i = 0; i < t->ncg; i++)
		if (strcmp(t->cg[i].rel, rel) == 0)
			return i;
	return -1;
}

/* The fd of cgroup `rel`; -1 (a failing syscall, so a failed check) if unknown. */
static int cgfd(const struct tcase *t, const char *rel)
{
	int i = cg_index(t, rel);

	return i < 0 ? -1 : t->cg[i].fd;
}

static int pfd(struct tcase *t, const char *prog)
{
	return fixture_prog_fd(t->f, prog);
}

static uint32_t pid_of(struct tcase *t, const char *prog)
{
	struct prog *p = fixture_prog(t->f, prog);

	return p ? p->id : 0;
}

static bool same_list(const struct cgbpf_query *a, const struct cgbpf_query *b)
{
	return a->count == b->count && a->attach_flags == b->attach_flags && a->revision == b->revision &&
	       memcmp(a->ids, b->ids, a->count * sizeof(a->ids[0])) == 0;
}

static void describe(char *buf, size_t size, const char *verb, const char *prog, const char *cg,
		     uint32_t flags, uint32_t relative, uint64_t rev)
{
	char fl[96];
	int n;

	n = snprintf(buf, size, "%s %s %s /%s [%s", verb, prog ? prog : "(no prog)",
		     strcmp(verb, "detach") == 0 ? "from" : "to", cg, report_flags_str(flags, fl, sizeof(fl)));
	if (relative && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " rel=%u", relative);
	if (rev && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " rev=%llu", (unsigned long long)rev);
	if (n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "]");
}

/*
 * Checks a call's result; for an expected failure, that the cgroup's
 * list, mode and revision are what they were before (`before`).
 */
static bool check_result(struct tcase *t, const char *what, int cg_fd, enum bpf_attach_type type,
			 const struct cgbpf_query *before, int r, int want)
{
	struct cgbpf_query after;
	bool unchanged = true;

	if (want < 0 && r == want) {
		cgbpf_prog_query(cg_fd, type, 0, &after);
		unchanged = same_list(before, &after);
	}
	if (report_check(r == want && unchanged, "%s: %s -> %s%s", t->name, what, report_errno(want),
			 want < 0 ? ", nothing changed" : ""))
		return true;
	if (r != want)
		report_detail("got %s", report_errno(r));
	else
		report_detail("the failed call changed the list (count %u -> %u, revision %llu -> %llu)",
			      before->count, after.count, (unsigned long long)before->revision,
			      (unsigned long long)after.revision);
	return false;
}

static bool expect_attach_type(struct tcase *t, const char *cg, const char *prog, int prog_fd,
			       enum bpf_attach_type type, const struct cgbpf_attach_opts *o, int want)
{
	struct cgbpf_query before;
	char what[256];
	int fd = cgfd(t, cg), r;

	describe(what, sizeof(what), "attach", prog, cg, o ? o->flags : 0, o ? o->relative : 0,
		 o ? o->expected_revision : 0);
	cgbpf_prog_query(fd, type, 0, &before);
	r = cgbpf_prog_attach(fd, prog_fd, type, o);
	return check_result(t, what, fd, type, &before, r, want);
}

static bool expect_attach(struct tcase *t, const char *cg, const char *prog,
			  const struct cgbpf_attach_opts *o, int want)
{
	return expect_attach_type(t, cg, prog, pfd(t, prog), EGRESS, o, want);
}

/* prog NULL: detach with no valid prog fd (the legacy single-slot form). */
static bool expect_detach(struct tcase *t, const char *cg, const char *prog,
			  const struct cgbpf_detach_opts *o, int want)
{
	struct cgbpf_query before;
	char what[256];
	int fd = cgfd(t, cg), r;

	describe(what, sizeof(what), "detach", prog, cg, o ? o->flags : 0, o ? o->relative : 0,
		 o ? o->expected_revision : 0);
	cgbpf_prog_query(fd, EGRESS, 0, &before);
	r = cgbpf_prog_detach(fd, prog ? pfd(t, prog) : -1, EGRESS, o);
	return check_result(t, what, fd, EGRESS, &before, r, want);
}

/* BPF_LINK_CREATE; returns the link fd (kept until the case ends) or -1. */
static int expect_link(struct tcase *t, const char *cg, const char *prog,
		       const struct cgbpf_link_opts *o, int want)
{
	struct cgbpf_query before;
	char what[256];
	int fd = cgfd(t, cg), r;

	describe(what, sizeof(what), "link", prog, cg, o ? o->flags : 0, o ? o->relative : 0,
		 o ? o->expected_revision : 0);
	cgbpf_prog_query(fd, EGRESS, 0, &before);
	r = cgbpf_link_create(pfd(t, prog), fd, EGRESS, o);
	if (r >= 0 && t->nlinks < TCASE_MAX_LINKS)
		t->links[t->nlinks++] = r;
	check_result(t, what, fd, EGRESS, &before, r >= 0 ? 0 : r, want);
	return r >= 0 ? r : -1;
}

/* Closes a link fd now (its last reference: the kernel detaches it). */
static void close_link(struct tcase *t, int link_fd)
{
	for (int i = 0; i < t->nlinks; i++) {
		if (t->links[i] != link_fd)
			continue;
		close(link_fd);
		t->links[i] = t->links[--t->nlinks];
		return;
	}
}

/* Which programs run in `cg`: by BPF_F_QUERY_EFFECTIVE and by a datagram. */
static void expect_runs(struct tcase *t, const char *cg, const char *want)
{
	struct cgbpf_query q;
	struct traffic tr;
	char got[1024];
	int i = cg_index(t, cg), r;

	r = cgbpf_prog_query(cgfd(t, cg), EGRESS, BPF_F_QUERY_EFFECTIVE, &q);
	fixture_names_of_ids(t->f, q.ids, q.count, got, sizeof(got));
	if (!report_check(r == 0 && strcmp(got, want) == 0, "%s: /%s effective = [%s]", t->name, cg, want))
		report_detail("query %s: [%s]", report_errno(r), got);

	r = i < 0 ? -ENOENT : fixture_traffic(t->f, t->cg[i].path, &tr);
	fixture_names_of_tags(t->f, tr.tags, tr.n, got, sizeof(got));
	if (!report_check(r == 0 && strcmp(got, want) == 0 && tr.delivered,
			  "%s: /%s traffic ran [%s] and passed", t->name, cg, want))
		report_detail("traffic %s: ran [%s], %s", report_errno(r), got,
			      tr.delivered ? "delivered" : "not delivered");
}

/* Every cgroup of the case, in creation order. */
static void expect_tree(struct tcase *t, const char *const *want)
{
	for (int i = 0; i < t->ncg && want[i]; i++)
		expect_runs(t, t->cg[i].rel, want[i]);
}

#define EXPECT_TREE(t, ...) expect_tree(t, (const char *const[]){ __VA_ARGS__, NULL })

/* `cg`'s own list, in order, and (on the patched kernel, rev != 0) its revision. */
static void expect_list(struct tcase *t, const char *cg, const char *want, uint64_t rev)
{
	struct cgbpf_query q;
	char got[1024], rev_str[32];
	bool check_rev = t->f->patched && rev;
	int r;

	snprintf(rev_str, sizeof(rev_str), ", revision %llu", (unsigned long long)rev);
	r = cgbpf_prog_query(cgfd(t, cg), EGRESS, 0, &q);
	fixture_names_of_ids(t->f, q.ids, q.count, got, sizeof(got));
	if (!report_check(r == 0 && strcmp(got, want) == 0 && (!check_rev || q.revision == rev),
			  "%s: /%s list = [%s]%s", t->name, cg, want, check_rev ? rev_str : ""))
		report_detail("query %s: [%s] revision %llu", report_errno(r), got, (unsigned long long)q.revision);
}

static void expect_revision(struct tcase *t, const char *cg, enum bpf_attach_type type, uint64_t rev,
			    const char *why)
{
	struct cgbpf_query q;
	int r = cgbpf_prog_query_count(cgfd(t, cg), type, 0, &q);

	if (!report_check(r == 0 && q.revision == rev, "%s: /%s %s revision %llu (%s)", t->name, cg,
			  type == EGRESS ? "egress" : "ingress", (unsigned long long)rev, why))
		report_detail("query %s: revision %llu", report_errno(r), (unsigned long long)q.revision);
}

/* ---- (a) the seed patch ------------------------------------------------
 *
 * Commit 7f677633379b "bpf: introduce BPF_F_ALLOW_OVERRIDE flag" (Linux
 * 4.10), commit message as published at
 * https://gerrit-public.fairphone.software/plugins/gitiles/kernel/msm-4.19/+/7f677633379b4abb3281cdbe7e7006f049305c03
 *
 *   Examples:
 *   1.
 *   prog X attached to /A with default
 *   prog Y fails to attach to /A/B and /A/B/C
 *   Everything under /A runs prog X
 *
 *   2.
 *   prog X attached to /A with allow_override.
 *   prog Y fails to attach to /A/B with default (non-override)
 *   prog M attached to /A/B with allow_override.
 *   Everything under /A/B runs prog M only.
 *
 *   3.
 *   prog X attached to /A with allow_override.
 *   prog Y fails to attach to /A with default.
 *   The user has to detach first to switch the mode.
 *
 * Example 2's first failure is 4.10 only: since multi-prog support
 * (4.15) "a cgroup with MULTI or OVERRIDE flag allows any attach flags
 * in sub-cgroups", and 6.1 attaches Y.  We check what 6.1 does, then
 * carry on with the example's point (M overrides X below /A/B).
 */

static void seed_example_1(struct fixture *f)
{
	struct tcase t;

	if (TCASE(f, &t, "seed-1", "A", "A/B", "A/B/C")) {
		expect_attach(&t, "A", "X", NULL, 0);
		EXPECT_TREE(&t, "X", "X", "X");
		expect_attach(&t, "A/B", "Y", NULL, -EPERM);
		EXPECT_TREE(&t, "X", "X", "X");
		expect_attach(&t, "A/B/C", "Y", NULL, -EPERM);
		EXPECT_TREE(&t, "X", "X", "X");
	}
	tcase_end(&t);
}

static void seed_example_2(struct fixture *f)
{
	struct tcase t;

	if (TCASE(f, &t, "seed-2", "A", "A/B", "A/B/C")) {
		expect_attach(&t, "A", "X", AO(.flags = OV), 0);
		EXPECT_TREE(&t, "X", "X", "X");
		/* 4.10 refused; 6.1 allows any flags under an override parent */
		expect_attach(&t, "A/B", "Y", NULL, 0);
		EXPECT_TREE(&t, "X", "Y", "Y");
		expect_attach(&t, "A/B/C", "M", AO(.flags = OV), -EPERM);
		expect_detach(&t, "A/B", "Y", NULL, 0);
		EXPECT_TREE(&t, "X", "X", "X");
		expect_attach(&t, "A/B", "M", AO(.flags = OV), 0);
		EXPECT_TREE(&t, "X", "M", "M");
		/* now the example's failure: /A/B's mode is override */
		expect_attach(&t, "A/B", "Y", NULL, -EPERM);
		EXPECT_TREE(&t, "X", "M", "M");
	}
	tcase_end(&t);
}

static void seed_example_3(struct fixture *f)
{
	struct tcase t;

	if (TCASE(f, &t, "seed-3", "A", "A/B")) {
		expect_attach(&t, "A", "X", AO(.flags = OV), 0);
		EXPECT_TREE(&t, "X", "X");
		expect_attach(&t, "A", "Y", NULL, -EPERM);
		EXPECT_TREE(&t, "X", "X");
		expect_detach(&t, "A", "X", NULL, 0);
		EXPECT_TREE(&t, "", "");
		expect_attach(&t, "A", "Y", NULL, 0);
		EXPECT_TREE(&t, "Y", "Y");
	}
	tcase_end(&t);
}

/*
 * Not in the commit message (the brief recalls it; we found no source):
 * "/A/B cannot be changed anymore but can be cleared; after detach /A/B
 * will run prog J".  As 6.1 behaves: a default prog under an override
 * parent blocks everything below and any change of /A/B's mode.
 */
static void seed_example_4(struct fixture *f)
{
	struct tcase t;

	if (TCASE(f, &t, "seed-4", "A", "A/B", "A/B/C")) {
		expect_attach(&t, "A", "J", AO(.flags = OV), 0);
		EXPECT_TREE(&t, "J", "J", "J");
		expect_attach(&t, "A/B", "K", NULL, 0);
		EXPECT_TREE(&t, "J", "K", "K");
		expect_attach(&t, "A/B/C", "L", NULL, -EPERM);
		expect_attach(&t, "A/B", "L", AO(.flags = OV), -EPERM);
		expect_attach(&t, "A/B", "L", AO(.flags = MU), -EPERM);
		EXPECT_TREE(&t, "J", "K", "K");
		expect_detach(&t, "A/B", "K", NULL, 0);
		EXPECT_TREE(&t, "J", "J", "J");
	}
	tcase_end(&t);
}

/* ---- (b) the uapi comment's Ex1 ---------------------------------------
 *
 * include/uapi/linux/bpf.h: "cgrp1 (MULTI progs A, B) -> cgrp2 (OVERRIDE
 * prog C) -> cgrp3 (MULTI prog D) -> cgrp4 (OVERRIDE prog E) -> cgrp5
 * (NONE prog F) the event in cgrp5 triggers execution of F,D,A,B in that
 * order. if prog F is detached, the execution is E,D,A,B if prog F and D
 * are detached, the execution is E,A,B if prog F, E and D are detached,
 * the execution is C,A,B".  Checked at every level, not only cgrp5.
 */
static void uapi_ex1(struct fixture *f)
{
	struct tcase t;

	if (TCASE(f, &t, "ex1", "c1", "c1/c2", "c1/c2/c3", "c1/c2/c3/c4", "c1/c2/c3/c4/c5")) {
		expect_attach(&t, "c1", "A", AO(.flags = MU), 0);
		expect_attach(&t, "c1", "B", AO(.flags = MU), 0);
		expect_attach(&t, "c1/c2", "C", AO(.flags = OV), 0);
		expect_attach(&t, "c1/c2/c3", "D", AO(.flags = MU), 0);
		expect_attach(&t, "c1/c2/c3/c4", "E", AO(.flags = OV), 0);
		expect_attach(&t, "c1/c2/c3/c4/c5", "F", NULL, 0);
		EXPECT_TREE(&t, "A,B", "C,A,B", "D,A,B", "E,D,A,B", "F,D,A,B");
		expect_detach(&t, "c1/c2/c3/c4/c5", "F", NULL, 0);
		EXPECT_TREE(&t, "A,B", "C,A,B", "D,A,B", "E,D,A,B", "E,D,A,B");
		expect_detach(&t, "c1/c2/c3", "D", NULL, 0);
		EXPECT_TREE(&t, "A,B", "C,A,B", "C,A,B", "E,A,B", "E,A,B");
		expect_detach(&t, "c1/c2/c3/c4", "E", NULL, 0);
		EXPECT_TREE(&t, "A,B", "C,A,B", "C,A,B", "C,A,B", "C,A,B");
	}
	tcase_end(&t);
}

/* ---- old rules, both kernels ------------------------------------------ */

/* 64 programs per list; REPLACE; same prog twice; invalid combinations. */
static void old_limits(struct fixture *f)
{
	struct tcase t;
	char name[8], want[1024], want2[1024];
	size_t off = 0;
	int failures = 0;

	if (!TCASE(f, &t, "limits", "L"))
		goto out;
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		if (cgbpf_prog_attach(cgfd(&t, "L"), pfd(&t, name), EGRESS, AO(.flags = MU)) < 0)
			failures++;
		if (i > 0)
			off += (size_t)snprintf(want + off, sizeof(want) - off, "%s%s", i > 1 ? "," : "", name);
	}
	report_check(failures == 0, "limits: 64 programs attach with MULTI");
	expect_attach(&t, "L", "m64", AO(.flags = MU), -E2BIG);
	/* -E2BIG is checked before the REPLACE target is looked for */
	expect_attach(&t, "L", "m64", AO(.flags = MU | BPF_F_REPLACE, .replace_fd = pfd(&t, "m0")), -E2BIG);
	expect_detach(&t, "L", "m0", NULL, 0);
	expect_runs(&t, "L", want);
	expect_attach(&t, "L", "m1", AO(.flags = MU), -EINVAL);
	expect_attach(&t, "L", "m1", AO(.flags = MU | BPF_F_REPLACE, .replace_fd = pfd(&t, "m1")), 0);
	expect_attach(&t, "L", "m64", AO(.flags = MU | BPF_F_REPLACE, .replace_fd = pfd(&t, "m0")), -ENOENT);
	expect_attach(&t, "L", "m64", AO(.flags = BPF_F_REPLACE, .replace_fd = pfd(&t, "m1")), -EINVAL);
	expect_attach(&t, "L", "m64", AO(.flags = MU | OV), -EINVAL);
	expect_attach(&t, "L", "m64", NULL, -EPERM);
	expect_attach(&t, "L", "m64", AO(.flags = OV), -EPERM);
	expect_detach(&t, "L", NULL, NULL, -EINVAL);
	expect_detach(&t, "L", "m64", NULL, -ENOENT);
	/* REPLACE keeps the position: m0 runs where m1 did */
	expect_attach(&t, "L", "m0", AO(.flags = MU | BPF_F_REPLACE, .replace_fd = pfd(&t, "m1")), 0);
	snprintf(want2, sizeof(want2), "m0%s", want + 2);
	expect_runs(&t, "L", want2);
out:
	tcase_end(&t);
}

/* none / override detach whatever is attached, with any fd (6.1 legacy). */
static void old_legacy_detach(struct fixture *f)
{
	struct tcase t;

	if (TCASE(f, &t, "legacy-detach", "D")) {
		expect_detach(&t, "D", "X", NULL, -ENOENT);
		expect_attach(&t, "D", "X", NULL, 0);
		expect_detach(&t, "D", NULL, NULL, 0);
		expect_list(&t, "D", "", 0);
		expect_attach(&t, "D", "X", AO(.flags = OV), 0);
		expect_attach(&t, "D", "Y", AO(.flags = OV), 0);	/* replaces X */
		expect_list(&t, "D", "Y", 0);
		expect_detach(&t, "D", "M", NULL, 0);			/* any fd */
		expect_list(&t, "D", "", 0);
		expect_detach(&t, "D", "Y", NULL, -ENOENT);
		/* the mode is gone with the last prog: MULTI may attach now */
		expect_attach(&t, "D", "X", AO(.flags = MU), 0);
		expect_runs(&t, "D", "X");
	}
	tcase_end(&t);
}

/* A dropping program does not stop the array: everything runs, nothing passes. */
static void old_drop_runs_all(struct fixture *f)
{
	struct tcase t;
	struct traffic tr;
	char got[256];
	int r;

	if (TCASE(f, &t, "drop", "P", "P/Q") && fixture_prog_ex(f, "drop", 0, false)) {
		expect_attach(&t, "P", "X", AO(.flags = MU), 0);
		expect_attach(&t, "P", "drop", AO(.flags = MU), 0);
		expect_attach(&t, "P/Q", "Y", AO(.flags = MU), 0);
		r = fixture_traffic(f, t.cg[1].path, &tr);
		fixture_names_of_tags(f, tr.tags, tr.n, got, sizeof(got));
		if (!report_check(r == 0 && strcmp(got, "Y,X,drop") == 0 && !tr.delivered,
				  "drop: /P/Q ran [Y,X,drop] and the datagram was dropped"))
			report_detail("traffic %s: ran [%s], %s", report_errno(r), got,
				      tr.delivered ? "delivered" : "not delivered");
		else
			report_detail("sendto in the child: %s", report_errno(tr.send_err));
		expect_detach(&t, "P", "drop", NULL, 0);
		expect_runs(&t, "P/Q", "Y,X");
	}
	tcase_end(&t);
}

/* ---- (c) the patched kernel: PREORDER --------------------------------- */

/* spec: root [p1, p2P], sub [p3, p4P]: sub runs p2, p4, p3, p1. */
static void preorder_example_1(struct fixture *f, bool links)
{
	struct tcase t;

	if (TCASE(f, &t, links ? "preorder-1-links" : "preorder-1", "root", "root/sub")) {
		if (links) {
			expect_link(&t, "root", "p1", NULL, 0);
			expect_link(&t, "root", "p2", LO(.flags = PRE), 0);
			expect_link(&t, "root/sub", "p3", NULL, 0);
			expect_link(&t, "root/sub", "p4", LO(.flags = PRE), 0);
		} else {
			expect_attach(&t, "root", "p1", AO(.flags = MU), 0);
			expect_attach(&t, "root", "p2", AO(.flags = MU | PRE), 0);
			expect_attach(&t, "root/sub", "p3", AO(.flags = MU), 0);
			expect_attach(&t, "root/sub", "p4", AO(.flags = MU | PRE), 0);
		}
		EXPECT_TREE(&t, "p2,p1", "p2,p4,p3,p1");
	}
	tcase_end(&t);
}

/* spec: root [r1, r2P], mid [m1P, m2], leaf [l1, l2P, l3P]. */
static void preorder_example_2(struct fixture *f)
{
	struct tcase t;

	if (TCASE(f, &t, "preorder-2", "root", "root/mid", "root/mid/leaf")) {
		expect_attach(&t, "root", "r1", AO(.flags = MU), 0);
		expect_attach(&t, "root", "r2", AO(.flags = MU | PRE), 0);
		expect_attach(&t, "root/mid", "m1", AO(.flags = MU | PRE), 0);
		expect_attach(&t, "root/mid", "m2", AO(.flags = MU), 0);
		expect_attach(&t, "root/mid/leaf", "l1", AO(.flags = MU), 0);
		expect_attach(&t, "root/mid/leaf", "l2", AO(.flags = MU | PRE), 0);
		expect_attach(&t, "root/mid/leaf", "l3", AO(.flags = MU | PRE), 0);
		EXPECT_TREE(&t, "r2,r1", "r2,m1,m2,r1", "r2,m1,l2,l3,l1,m2,r1");
	}
	tcase_end(&t);
}

/* spec: root MULTI [r1P], mid OVERRIDE [m1]; then the leaf attaches l1. */
static void preorder_example_3(struct fixture *f)
{
	struct tcase t;

	if (TCASE(f, &t, "preorder-3", "root", "root/mid", "root/mid/leaf")) {
		expect_attach(&t, "root", "r1", AO(.flags = MU | PRE), 0);
		expect_attach(&t, "root/mid", "m1", AO(.flags = OV), 0);
		EXPECT_TREE(&t, "r1", "r1,m1", "r1,m1");
		expect_attach(&t, "root/mid/leaf", "l1", NULL, 0);
		EXPECT_TREE(&t, "r1", "r1,m1", "r1,l1");
	}
	tcase_end(&t);
}

/* Upstream's preorder scenario: the child alone, then with its parent. */
static void preorder_upstream(struct fixture *f, bool all_preorder)
{
	uint32_t plain = all_preorder ? MU | PRE : MU;
	struct tcase t;

	if (TCASE(f, &t, all_preorder ? "preorder-all" : "preorder-mixed", "parent", "parent/child")) {
		expect_attach(&t, "parent/child", "c1", AO(.flags = plain), 0);
		expect_attach(&t, "parent/child", "c2", AO(.flags = MU | PRE), 0);
		expect_runs(&t, "parent/child", all_preorder ? "c1,c2" : "c2,c1");
		expect_attach(&t, "parent", "p1", AO(.flags = plain), 0);
		expect_attach(&t, "parent", "p2", AO(.flags = MU | PRE), 0);
		expect_runs(&t, "parent/child", all_preorder ? "p1,p2,c1,c2" : "p2,c2,c1,p1");
	}
	tcase_end(&t);
}

/*
 * The per-prog flags a query reports: the cgroup's mode, for a
 * BPF_F_PREORDER entry too, as upstream's __cgroup_bpf_query().
 */
static void expect_query_flags(struct tcase *t, const char *cg, const char *prog, bool preorder)
{
	struct cgbpf_query q;
	uint32_t id = pid_of(t, prog);
	int r = cgbpf_prog_query(cgfd(t, cg), EGRESS, 0, &q);

	for (uint32_t i = 0; r == 0 && i < q.count; i++) {
		char fl[96];

		if (q.ids[i] != id)
			continue;
		if (!report_check(q.prog_flags[i] == q.attach_flags, "%s: /%s prog_attach_flags of %s%s = the mode only",
				  t->name, cg, prog, preorder ? " (PREORDER)" : ""))
			report_detail("prog_attach_flags %s, mode %s",
				      report_flags_str(q.prog_flags[i], fl, sizeof(fl)),
				      report_flags_str(q.attach_flags, fl + 48, sizeof(fl) - 48));
		return;
	}
	report_fail("%s: /%s: %s not in the query (%s)", t->name, cg, prog, report_errno(r));
}

/* REPLACE and a single-slot override take the new PREORDER bit; LINK_UPDATE keeps the link's. */
static void preorder_replace(struct fixture *f)
{
	struct tcase t;
	int link;

	if (!TCASE(f, &t, "preorder-replace", "root", "root/leaf"))
		goto out;
	expect_attach(&t, "root", "r1", AO(.flags = MU), 0);
	expect_attach(&t, "root/leaf", "l1", AO(.flags = OV), 0);
	EXPECT_TREE(&t, "r1", "l1,r1");
	expect_attach(&t, "root", "r2", AO(.flags = MU | BPF_F_REPLACE | PRE, .replace_fd = pfd(&t, "r1")), 0);
	EXPECT_TREE(&t, "r2", "r2,l1");
	expect_attach(&t, "root", "r1", AO(.flags = MU), 0);
	expect_attach(&t, "root/leaf", "l2", AO(.flags = OV | PRE), 0);
	EXPECT_TREE(&t, "r2,r1", "r2,l2,r1");
	expect_query_flags(&t, "root/leaf", "l2", true);
	expect_attach(&t, "root/leaf", "l3", AO(.flags = OV), 0);
	EXPECT_TREE(&t, "r2,r1", "r2,l3,r1");
	expect_query_flags(&t, "root/leaf", "l3", false);
	link = expect_link(&t, "root", "k1", LO(.flags = PRE), 0);
	EXPECT_TREE(&t, "r2,k1,r1", "r2,k1,l3,r1");
	report_check(bpf_link_update(link, pfd(&t, "k2"), NULL) == 0, "preorder-replace: link update k1 -> k2");
	EXPECT_TREE(&t, "r2,k2,r1", "r2,k2,l3,r1");
	expect_list(&t, "root", "r2,r1,k2", 6);
	expect_list(&t, "root/leaf", "l3", 4);
out:
	tcase_end(&t);
}

/* ---- (c) ordering ----------------------------------------------------- */

/* Upstream's prog attach/detach scenario, then the same with BPF_F_ID. */
static void ordering_progs(struct fixture *f)
{
	struct tcase t;
	struct cgbpf_query q;
	int r;

	if (!TCASE(f, &t, "order-progs", "o"))
		goto out;
	expect_attach(&t, "o", "fd1", AO(.flags = MU | BPF_F_BEFORE | BPF_F_AFTER, .expected_revision = 1), 0);
	expect_attach(&t, "o", "fd2", AO(.flags = MU | BPF_F_BEFORE, .expected_revision = 2), 0);
	expect_attach(&t, "o", "fd3", AO(.flags = MU | BPF_F_AFTER, .relative = (uint32_t)pfd(&t, "fd2"),
				      .expected_revision = 3), 0);
	expect_attach(&t, "o", "fd4", AO(.flags = MU, .expected_revision = 4), 0);
	r = cgbpf_prog_query_count(cgfd(&t, "o"), EGRESS, 0, &q);
	report_check(r == 0 && q.count == 4 && q.revision == 5, "order-progs: count-only query: 4 progs, revision 5");
	expect_list(&t, "o", "fd2,fd3,fd1,fd4", 5);
	expect_runs(&t, "o", "fd2,fd3,fd1,fd4");
	expect_detach(&t, "o", "fd4", DO(.expected_revision = 5), 0);
	expect_detach(&t, "o", "fd3", DO(.expected_revision = 0), 0);
	expect_list(&t, "o", "fd2,fd1", 7);
	expect_attach(&t, "o", "fd5", AO(.flags = MU | BPF_F_AFTER | BPF_F_ID, .relative = pid_of(&t, "fd2")), 0);
	expect_attach(&t, "o", "fd6", AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = pid_of(&t, "fd1")), 0);
	/* without an anchor BEFORE goes to the head, AFTER to the tail */
	expect_attach(&t, "o", "fd7", AO(.flags = MU | BPF_F_BEFORE), 0);
	expect_attach(&t, "o", "fd8", AO(.flags = MU | BPF_F_AFTER), 0);
	expect_list(&t, "o", "fd7,fd2,fd5,fd6,fd1,fd8", 11);
	expect_runs(&t, "o", "fd7,fd2,fd5,fd6,fd1,fd8");
out:
	tcase_end(&t);
}

/* The same through links: anchors are links, by id or by fd. */
static void ordering_links(struct fixture *f)
{
	struct tcase t;
	int l1, l2, l3, l4;

	if (!TCASE(f, &t, "order-links", "o"))
		goto out;
	l1 = expect_link(&t, "o", "k1", LO(.flags = BPF_F_BEFORE | BPF_F_AFTER, .expected_revision = 1), 0);
	l2 = expect_link(&t, "o", "k2", LO(.flags = BPF_F_BEFORE | BPF_F_LINK | BPF_F_ID,
					   .relative = fixture_link_id(l1), .expected_revision = 2), 0);
	l3 = expect_link(&t, "o", "k3", LO(.flags = BPF_F_AFTER | BPF_F_LINK, .relative = (uint32_t)l2,
					   .expected_revision = 3), 0);
	l4 = expect_link(&t, "o", "k4", LO(.expected_revision = 4), 0);
	expect_list(&t, "o", "k2,k3,k1,k4", 5);
	expect_runs(&t, "o", "k2,k3,k1,k4");
	report_check(bpf_link_detach(l4) == 0, "order-links: BPF_LINK_DETACH k4");
	close_link(&t, l3);
	expect_list(&t, "o", "k2,k1", 7);
	expect_runs(&t, "o", "k2,k1");
	report_check(bpf_link_update(l4, pfd(&t, "k9"), NULL) == -ENOLINK,
		     "order-links: update of a detached link -> -ENOLINK");
	report_check(bpf_link_detach(l4) == 0, "order-links: detach of a detached link -> 0");
	expect_list(&t, "o", "k2,k1", 7);
	/* a link may be placed relative to another by id, before or after */
	expect_link(&t, "o", "k5", LO(.flags = BPF_F_AFTER | BPF_F_LINK | BPF_F_ID, .relative = fixture_link_id(l2)), 0);
	expect_list(&t, "o", "k2,k5,k1", 8);
out:
	tcase_end(&t);
}

/* spec: an anchor's PREORDER bit must match the new attach's. */
static void ordering_preorder_anchors(struct fixture *f)
{
	struct tcase t;
	int b1;

	if (!TCASE(f, &t, "order-preorder", "o"))
		goto out;
	expect_attach(&t, "o", "a1", AO(.flags = MU), 0);
	expect_attach(&t, "o", "a2", AO(.flags = MU | PRE), 0);
	expect_attach(&t, "o", "a3", AO(.flags = MU | BPF_F_AFTER, .relative = (uint32_t)pfd(&t, "a2")), -EINVAL);
	expect_attach(&t, "o", "a3", AO(.flags = MU | BPF_F_AFTER | PRE, .relative = (uint32_t)pfd(&t, "a2")), 0);
	expect_attach(&t, "o", "a4", AO(.flags = MU | BPF_F_BEFORE | PRE, .relative = (uint32_t)pfd(&t, "a1")), -EINVAL);
	expect_attach(&t, "o", "a4", AO(.flags = MU | BPF_F_BEFORE, .relative = (uint32_t)pfd(&t, "a1")), 0);
	expect_list(&t, "o", "a4,a1,a2,a3", 5);
	expect_runs(&t, "o", "a2,a3,a4,a1");
	b1 = expect_link(&t, "o", "b1", LO(.flags = PRE), 0);
	expect_link(&t, "o", "b2", LO(.flags = BPF_F_AFTER | BPF_F_LINK, .relative = (uint32_t)b1), -EINVAL);
	expect_link(&t, "o", "b2", LO(.flags = BPF_F_BEFORE | BPF_F_LINK | PRE, .relative = (uint32_t)b1), 0);
	expect_runs(&t, "o", "a2,a3,b2,b1,a4,a1");
out:
	tcase_end(&t);
}

/* The spec's invalid arguments; every failure leaves the list alone. */
static void invalid_arguments(struct fixture *f)
{
	struct tcase t;
	int link;

	if (!TCASE(f, &t, "invalid", "i", "other"))
		goto out;
	expect_attach(&t, "i", "v1", AO(.flags = MU), 0);
	expect_attach(&t, "i", "v2", AO(.flags = MU), 0);
	expect_attach(&t, "other", "vo", AO(.flags = MU), 0);
	link = expect_link(&t, "other", "vl", NULL, 0);
	fixture_prog(f, "v9");	/* loaded, never attached */

	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE | BPF_F_AFTER | BPF_F_ID,
					.relative = pid_of(&t, "v1")), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = 0), -ENOENT);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE | BPF_F_LINK | BPF_F_ID,
					.relative = pid_of(&t, "v1")), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_ID, .relative = pid_of(&t, "v1")), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU, .relative = (uint32_t)pfd(&t, "v1")), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE, .relative = (uint32_t)pfd(&t, "vo")), -ENOENT);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = pid_of(&t, "v9")), -ENOENT);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = FIXTURE_UNKNOWN_ID), -ENOENT);
	expect_attach(&t, "i", "v1", AO(.flags = MU | BPF_F_AFTER), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_REPLACE | BPF_F_AFTER, .replace_fd = pfd(&t, "v1")), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE | BPF_F_AFTER), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE, .relative = FIXTURE_CLOSED_FD), -EBADF);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE, .relative = (uint32_t)f->record_fd), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | BPF_F_BEFORE, .relative = (uint32_t)link), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | (1U << 7)), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | (1U << 14)), -EINVAL);
	expect_attach(&t, "i", "v3", AO(.flags = MU | (1U << 31)), -EINVAL);

	expect_link(&t, "i", "v3", LO(.flags = BPF_F_ALLOW_MULTI), -EINVAL);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_ALLOW_OVERRIDE), -EINVAL);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_REPLACE), -EINVAL);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_AFTER, .relative = (uint32_t)link), -EINVAL);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_AFTER | BPF_F_ID, .relative = pid_of(&t, "v1")), -EINVAL);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_AFTER | BPF_F_LINK, .relative = (uint32_t)pfd(&t, "v1")), -EINVAL);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_AFTER | BPF_F_LINK | BPF_F_ID, .relative = 0), -ENOENT);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_AFTER | BPF_F_LINK | BPF_F_ID, .relative = FIXTURE_UNKNOWN_ID), -ENOENT);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_AFTER | BPF_F_LINK, .relative = FIXTURE_CLOSED_FD), -EBADF);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_AFTER | BPF_F_LINK, .relative = (uint32_t)link), -ENOENT);
	expect_link(&t, "i", "v3", LO(.flags = BPF_F_BEFORE | BPF_F_AFTER | BPF_F_LINK, .relative = (uint32_t)link), -EINVAL);

	expect_detach(&t, "i", "v1", DO(.flags = MU), -EINVAL);
	expect_detach(&t, "i", "v1", DO(.relative = (uint32_t)pfd(&t, "v2")), -EINVAL);
	expect_list(&t, "i", "v1,v2", 3);
	expect_runs(&t, "i", "v1,v2");
out:
	tcase_end(&t);
}

/* ---- (c) revision ----------------------------------------------------- */

/* spec: -ESTALE on a stale attach or detach; nothing changes. */
static void revision_stale(struct fixture *f)
{
	struct tcase t;

	if (!TCASE(f, &t, "stale", "s"))
		goto out;
	expect_attach(&t, "s", "s1", AO(.flags = MU, .expected_revision = 1), 0);
	expect_attach(&t, "s", "s2", AO(.flags = MU, .expected_revision = 2), 0);
	expect_attach(&t, "s", "s3", AO(.flags = MU, .expected_revision = 2), -ESTALE);
	expect_attach(&t, "s", "s3", AO(.flags = MU, .expected_revision = 4), -ESTALE);
	expect_list(&t, "s", "s1,s2", 3);
	expect_detach(&t, "s", "s1", DO(.expected_revision = 2), -ESTALE);
	expect_list(&t, "s", "s1,s2", 3);
	expect_runs(&t, "s", "s1,s2");
	expect_link(&t, "s", "s3", LO(.expected_revision = 1), -ESTALE);
	expect_detach(&t, "s", "s1", DO(.expected_revision = 3), 0);
	expect_link(&t, "s", "s3", LO(.expected_revision = 4), 0);
	expect_list(&t, "s", "s2,s3", 5);
out:
	tcase_end(&t);
}

/* spec: the order of checks around -ESTALE, -EPERM, -E2BIG and the anchor. */
static void check_order(struct fixture *f)
{
	struct tcase t;
	char name[8];

	if (!TCASE(f, &t, "check-order", "e", "e/c", "big", "d"))
		goto out;
	expect_attach(&t, "e", "x1", NULL, 0);
	/* flag mask and invalid combinations before the revision */
	expect_attach(&t, "e", "x2", AO(.flags = MU | (1U << 7), .expected_revision = 99), -EINVAL);
	expect_attach(&t, "e", "x2", AO(.flags = MU | OV, .expected_revision = 99), -EINVAL);
	expect_attach(&t, "e", "x2", AO(.flags = BPF_F_REPLACE, .replace_fd = pfd(&t, "x1"), .expected_revision = 99), -EINVAL);
	/* the revision before the hierarchy and the mode */
	expect_attach(&t, "e/c", "y1", AO(.flags = MU, .expected_revision = 5), -ESTALE);
	expect_attach(&t, "e/c", "y1", AO(.flags = MU, .expected_revision = 1), -EPERM);
	expect_attach(&t, "e", "x2", AO(.flags = MU, .expected_revision = 1), -ESTALE);
	expect_attach(&t, "e", "x2", AO(.flags = MU, .expected_revision = 2), -EPERM);
	/* the hierarchy before the anchor */
	expect_attach(&t, "e/c", "y1", AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = FIXTURE_UNKNOWN_ID), -EPERM);
	expect_link(&t, "e/c", "y1", LO(.flags = BPF_F_BEFORE | BPF_F_LINK, .relative = FIXTURE_CLOSED_FD), -EPERM);

	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		cgbpf_prog_attach(cgfd(&t, "big"), pfd(&t, name), EGRESS, AO(.flags = MU));
	}
	expect_revision(&t, "big", EGRESS, 65, "64 attaches");
	expect_attach(&t, "big", "m64", AO(.flags = MU, .expected_revision = 64), -ESTALE);
	expect_attach(&t, "big", "m64", AO(.flags = MU, .expected_revision = 65), -E2BIG);
	expect_attach(&t, "big", "m1", AO(.flags = MU), -E2BIG);	/* before "same prog twice" */
	expect_attach(&t, "big", "m64", AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = FIXTURE_UNKNOWN_ID), -E2BIG);
	expect_link(&t, "big", "m64", LO(.expected_revision = 65), -E2BIG);

	expect_attach(&t, "d", "d1", AO(.flags = MU), 0);
	expect_attach(&t, "d", "d2", AO(.flags = MU), 0);
	/* same prog twice before the missing REPLACE target */
	expect_attach(&t, "d", "d1", AO(.flags = MU | BPF_F_REPLACE, .replace_fd = pfd(&t, "d9")), -EINVAL);
	/* the missing REPLACE target before anchor errors */
	expect_attach(&t, "d", "d3", AO(.flags = MU | BPF_F_REPLACE | BPF_F_ID, .replace_fd = pfd(&t, "d9"),
					.relative = FIXTURE_UNKNOWN_ID), -ENOENT);
	/* detach: arguments, then the revision, then the entry */
	expect_detach(&t, "d", "d9", DO(.flags = MU, .expected_revision = 99), -EINVAL);
	expect_detach(&t, "d", "d9", DO(.expected_revision = 99), -ESTALE);
	expect_detach(&t, "d", "d9", DO(.expected_revision = 3), -ENOENT);
	expect_list(&t, "d", "d1,d2", 3);
out:
	tcase_end(&t);
}

/* spec "Revision": what moves it and what does not. */
static void revision_rules(struct fixture *f)
{
	struct tcase t;
	struct cgbpf_query q;
	struct prog *ing;
	int l1, l2, r;

	if (!TCASE(f, &t, "revision", "v", "v/w"))
		goto out;
	expect_revision(&t, "v", EGRESS, 1, "a new cgroup starts at 1");
	expect_revision(&t, "v", BPF_CGROUP_INET_INGRESS, 1, "per attach type");
	expect_attach(&t, "v", "e1", AO(.flags = MU), 0);
	expect_revision(&t, "v", EGRESS, 2, "attach");
	expect_revision(&t, "v", BPF_CGROUP_INET_INGRESS, 1, "egress attach leaves ingress");
	ing = fixture_prog_ex(f, "ing", 1, true);
	if (ing)
		expect_attach_type(&t, "v", "ing", ing->ingress_fd, BPF_CGROUP_INET_INGRESS, AO(.flags = MU), 0);
	expect_revision(&t, "v", BPF_CGROUP_INET_INGRESS, 2, "ingress attach");
	expect_revision(&t, "v", EGRESS, 2, "ingress attach leaves egress");
	expect_attach(&t, "v", "e1", AO(.flags = MU), -EINVAL);
	expect_revision(&t, "v", EGRESS, 2, "a failure leaves it");
	expect_revision(&t, "v/w", EGRESS, 1, "a parent's change leaves the child");
	expect_attach(&t, "v/w", "o1", AO(.flags = OV), 0);
	expect_attach(&t, "v/w", "o2", AO(.flags = OV), 0);
	expect_revision(&t, "v/w", EGRESS, 3, "single-slot override");
	expect_attach(&t, "v", "e2", AO(.flags = MU | BPF_F_REPLACE, .replace_fd = pfd(&t, "e1")), 0);
	expect_revision(&t, "v", EGRESS, 3, "REPLACE");
	l1 = expect_link(&t, "v", "k1", NULL, 0);
	expect_revision(&t, "v", EGRESS, 4, "link create");
	report_check(bpf_link_update(l1, pfd(&t, "k2"), NULL) == 0, "revision: link update k1 -> k2");
	expect_revision(&t, "v", EGRESS, 5, "link update");
	report_check(bpf_link_detach(l1) == 0, "revision: BPF_LINK_DETACH");
	expect_revision(&t, "v", EGRESS, 6, "link detach");
	l2 = expect_link(&t, "v", "k3", NULL, 0);
	close_link(&t, l2);
	expect_revision(&t, "v", EGRESS, 8, "link create, link close");
	expect_detach(&t, "v", "e2", NULL, 0);
	expect_revision(&t, "v", EGRESS, 9, "PROG_DETACH");
	r = cgbpf_prog_query(cgfd(&t, "v/w"), EGRESS, BPF_F_QUERY_EFFECTIVE, &q);
	report_check(r == 0 && q.revision == 0 && q.count == 1, "revision: an effective query reports revision 0");
	r = cgbpf_prog_query(cgfd(&t, "v/w"), EGRESS, 0, &q);
	report_check(r == 0 && q.revision == 3 && q.count == 1, "revision: a full query reports it too");
out:
	tcase_end(&t);
}

/* ---- (d) compatibility ------------------------------------------------ */

/*
 * LINK_CREATE with flags 0 but the new bytes set: 6.1 never reads them
 * (the spec's caution), the series checks them.
 */
static void compat_link_create_bytes(struct fixture *f)
{
	struct tcase t;
	bool p = f->patched;

	if (!TCASE(f, &t, "compat-link-bytes", "k"))
		goto out;
	expect_link(&t, "k", "c1", LO(.expected_revision = 42), p ? -ESTALE : 0);
	expect_link(&t, "k", "c2", LO(.relative = (uint32_t)pfd(&t, "c1")), p ? -EINVAL : 0);
	expect_link(&t, "k", "c3", LO(.relative = FIXTURE_CLOSED_FD), p ? -EINVAL : 0);
	expect_list(&t, "k", p ? "" : "c1,c2,c3", 0);
out:
	tcase_end(&t);
}

/* On 6.1 every new flag and field is -EINVAL, and nothing changes. */
static void baseline_refuses_new_api(struct fixture *f)
{
	static const uint32_t new_flags[] = { BPF_F_PREORDER, BPF_F_BEFORE, BPF_F_AFTER, BPF_F_ID, BPF_F_LINK };
	struct tcase t;
	struct cgbpf_query q;
	int r;

	if (!TCASE(f, &t, "baseline-new-api", "b"))
		goto out;
	expect_attach(&t, "b", "b1", AO(.flags = MU), 0);
	for (size_t i = 0; i < sizeof(new_flags) / sizeof(new_flags[0]); i++) {
		expect_attach(&t, "b", "b2", AO(.flags = MU | new_flags[i]), -EINVAL);
		expect_attach(&t, "b", "b2", AO(.flags = new_flags[i]), -EINVAL);
		expect_link(&t, "b", "b2", LO(.flags = new_flags[i]), -EINVAL);
	}
	expect_attach(&t, "b", "b2", AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = pid_of(&t, "b1")), -EINVAL);
	expect_attach(&t, "b", "b2", AO(.flags = MU, .expected_revision = 1), -EINVAL);
	expect_attach(&t, "b", "b2", AO(.flags = MU, .expected_revision = 2), -EINVAL);
	expect_attach(&t, "b", "b2", AO(.flags = MU, .relative = (uint32_t)pfd(&t, "b1")), -EINVAL);
	expect_detach(&t, "b", "b1", DO(.expected_revision = 2), -EINVAL);
	expect_detach(&t, "b", "b1", DO(.relative = (uint32_t)pfd(&t, "b1")), -EINVAL);
	r = cgbpf_prog_query(cgfd(&t, "b"), EGRESS, 0, &q);
	report_check(r == 0 && q.revision == 0, "baseline-new-api: 6.1 leaves query.revision alone");
	expect_list(&t, "b", "b1", 0);
	expect_runs(&t, "b", "b1");
out:
	tcase_end(&t);
}

/* ---- (c) anchors exactly as upstream's get_prog_list() ---------------- */

/* A program of another type (a socket filter returning 0), for anchors. */
static int load_socket_filter(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "cgf_sockfilt", "GPL", insns, 2, NULL);

	return fd < 0 ? -errno : fd;
}

/* A link that is no cgroup link: XDP_PASS on lo. */
static int xdp_link_on_lo(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 2 /* XDP_PASS */ },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog, link, ifindex = (int)if_nametoindex("lo");

	if (!ifindex)
		return -errno;
	prog = bpf_prog_load(BPF_PROG_TYPE_XDP, "cgf_xdp_pass", "GPL", insns, 2, NULL);
	if (prog < 0)
		return -errno;
	link = bpf_link_create(prog, ifindex, BPF_XDP, NULL);
	link = link < 0 ? -errno : link;
	close(prog);
	return link;
}

/*
 * A program anchor is the entry of that program attached directly, a
 * link anchor the entry of that link; the first match decides; what is
 * not such an entry of this list (a program only linked in, another
 * type, another attach type, a link of another kind) is -ENOENT.
 */
static void anchors_as_upstream(struct fixture *f)
{
	struct tcase t;
	struct prog *ing;
	int lx, lw, other, ing_link, xdp;

	if (!TCASE(f, &t, "anchors-upstream", "a"))
		goto out;
	lx = expect_link(&t, "a", "x", NULL, 0);
	expect_attach(&t, "a", "y", AO(.flags = MU), 0);
	/* x runs in the list, but only through a link: no program anchor */
	expect_attach(&t, "a", "z", AO(.flags = MU | BPF_F_BEFORE, .relative = (uint32_t)pfd(&t, "x")), -ENOENT);
	expect_attach(&t, "a", "z", AO(.flags = MU | BPF_F_AFTER | BPF_F_ID, .relative = pid_of(&t, "x")), -ENOENT);
	/* x attached directly too: the anchor is the direct entry, not the link's */
	expect_attach(&t, "a", "x", AO(.flags = MU), 0);
	expect_list(&t, "a", "x,y,x", 4);
	expect_attach(&t, "a", "z", AO(.flags = MU | BPF_F_BEFORE, .relative = (uint32_t)pfd(&t, "x")), 0);
	expect_list(&t, "a", "x,y,z,x", 5);
	/* the first match decides: w is linked in with PREORDER and
	 * attached directly without; the direct entry is the anchor */
	lw = expect_link(&t, "a", "w", LO(.flags = PRE), 0);
	expect_attach(&t, "a", "w", AO(.flags = MU), 0);
	expect_attach(&t, "a", "v", AO(.flags = MU | PRE | BPF_F_AFTER, .relative = (uint32_t)pfd(&t, "w")), -EINVAL);
	expect_attach(&t, "a", "v", AO(.flags = MU | BPF_F_AFTER, .relative = (uint32_t)pfd(&t, "w")), 0);
	expect_list(&t, "a", "x,y,z,x,w,w,v", 8);
	/* a link anchor is that link's entry, not the direct x */
	expect_link(&t, "a", "u", LO(.flags = BPF_F_BEFORE | BPF_F_LINK, .relative = (uint32_t)lx), 0);
	expect_link(&t, "a", "s", LO(.flags = PRE | BPF_F_AFTER | BPF_F_LINK | BPF_F_ID,
				     .relative = fixture_link_id(lw)), 0);
	expect_list(&t, "a", "u,x,y,z,x,w,s,w,v", 10);
	expect_runs(&t, "a", "w,s,u,x,y,z,x,w,v");

	/* anchors of another program type: not in the list, no type check */
	other = load_socket_filter();
	if (report_check(other >= 0, "anchors-upstream: load a socket filter")) {
		expect_attach(&t, "a", "r", AO(.flags = MU | BPF_F_BEFORE, .relative = (uint32_t)other), -ENOENT);
		expect_attach(&t, "a", "r", AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = fixture_prog_id(other)),
			      -ENOENT);
		close(other);
	}
	/* a program and a cgroup link of this cgroup's ingress list */
	ing = fixture_prog_ex(f, "ing-a", 1, true);
	if (ing) {
		expect_attach_type(&t, "a", "ing-a", ing->ingress_fd, BPF_CGROUP_INET_INGRESS, AO(.flags = MU), 0);
		expect_attach(&t, "a", "r", AO(.flags = MU | BPF_F_AFTER, .relative = (uint32_t)ing->ingress_fd), -ENOENT);
		ing_link = cgbpf_link_create(ing->ingress_fd, cgfd(&t, "a"), BPF_CGROUP_INET_INGRESS, NULL);
		if (report_check(ing_link >= 0, "anchors-upstream: an ingress cgroup link") && t.nlinks < TCASE_MAX_LINKS) {
			t.links[t.nlinks++] = ing_link;
			expect_link(&t, "a", "r", LO(.flags = BPF_F_AFTER | BPF_F_LINK, .relative = (uint32_t)ing_link),
				    -ENOENT);
		}
	}
	/* a link that is no cgroup link */
	xdp = xdp_link_on_lo();
	if (report_check(xdp >= 0, "anchors-upstream: an XDP link on lo (%s)", report_errno(xdp < 0 ? xdp : 0))) {
		expect_link(&t, "a", "r", LO(.flags = BPF_F_AFTER | BPF_F_LINK, .relative = (uint32_t)xdp), -ENOENT);
		expect_link(&t, "a", "r", LO(.flags = BPF_F_AFTER | BPF_F_LINK | BPF_F_ID,
					     .relative = fixture_link_id(xdp)), -ENOENT);
		close(xdp);
	}
	expect_list(&t, "a", "u,x,y,z,x,w,s,w,v", 10);
out:
	tcase_end(&t);
}

/*
 * A non-empty NONE / OVERRIDE list has one slot: the attach replaces it
 * and never looks at positional flags or the anchor (upstream:
 * find_attach_entry() returns the slot, get_prog_list() is not called).
 * An empty one is checked like an insert.
 */
static void positions_single_slot(struct fixture *f)
{
	struct tcase t;

	if (!TCASE(f, &t, "single-slot", "n", "o", "e"))
		goto out;
	expect_attach(&t, "n", "s1", NULL, 0);
	expect_attach(&t, "n", "s2", AO(.flags = BPF_F_BEFORE | BPF_F_AFTER), 0);
	expect_attach(&t, "n", "s3", AO(.flags = BPF_F_BEFORE | BPF_F_ID, .relative = FIXTURE_UNKNOWN_ID), 0);
	expect_attach(&t, "n", "s4", AO(.flags = BPF_F_AFTER | BPF_F_LINK, .relative = FIXTURE_CLOSED_FD), 0);
	expect_attach(&t, "n", "s5", AO(.flags = BPF_F_ID, .relative = pid_of(&t, "s1")), 0);
	expect_list(&t, "n", "s5", 6);
	expect_runs(&t, "n", "s5");
	expect_attach(&t, "o", "s1", AO(.flags = OV), 0);
	expect_attach(&t, "o", "s2", AO(.flags = OV | BPF_F_AFTER, .relative = FIXTURE_CLOSED_FD), 0);
	expect_attach(&t, "o", "s3", AO(.flags = OV | PRE | BPF_F_BEFORE | BPF_F_ID, .relative = pid_of(&t, "s9")), 0);
	expect_list(&t, "o", "s3", 4);
	expect_runs(&t, "o", "s3");
	expect_attach(&t, "e", "s1", AO(.flags = BPF_F_BEFORE | BPF_F_ID, .relative = FIXTURE_UNKNOWN_ID), -ENOENT);
	expect_attach(&t, "e", "s1", AO(.flags = BPF_F_ID, .relative = pid_of(&t, "s2")), -EINVAL);
	expect_attach(&t, "e", "s1", AO(.flags = OV | BPF_F_AFTER | BPF_F_LINK, .relative = FIXTURE_CLOSED_FD), -EINVAL);
	expect_attach(&t, "e", "s1", AO(.flags = BPF_F_BEFORE | BPF_F_AFTER), 0);
	expect_list(&t, "e", "s1", 2);
out:
	tcase_end(&t);
}

/* BPF_F_REPLACE keeps the replaced entry's place: a relative value, BPF_F_ID
 * or BPF_F_LINK given with it is not looked at (upstream, likewise).
 */
static void replace_with_relative(struct fixture *f)
{
	struct tcase t;

	if (!TCASE(f, &t, "replace-relative", "r"))
		goto out;
	expect_attach(&t, "r", "r1", AO(.flags = MU), 0);
	expect_attach(&t, "r", "r2", AO(.flags = MU), 0);
	expect_attach(&t, "r", "r3", AO(.flags = MU | BPF_F_REPLACE, .replace_fd = pfd(&t, "r1"),
					.relative = (uint32_t)pfd(&t, "r2")), 0);
	expect_attach(&t, "r", "r4", AO(.flags = MU | BPF_F_REPLACE | BPF_F_ID, .replace_fd = pfd(&t, "r3"),
					.relative = FIXTURE_UNKNOWN_ID), 0);
	expect_attach(&t, "r", "r5", AO(.flags = MU | BPF_F_REPLACE | BPF_F_LINK, .replace_fd = pfd(&t, "r2"),
					.relative = FIXTURE_CLOSED_FD), 0);
	expect_attach(&t, "r", "r6", AO(.flags = MU | BPF_F_REPLACE | BPF_F_BEFORE, .replace_fd = pfd(&t, "r5"),
					.relative = (uint32_t)pfd(&t, "r4")), -EINVAL);
	expect_list(&t, "r", "r4,r5", 6);
	expect_runs(&t, "r", "r4,r5");
out:
	tcase_end(&t);
}

/* ---- both kernels: the query and detach attr --------------------------- */

/*
 * A BPF_PROG_QUERY attr of 40 bytes (the 6.1 size, up to
 * prog_attach_flags): nothing is written behind it.  A 64 byte one gets
 * revision on the patched kernel and keeps 0 on 6.1.
 */
static void query_short_attr(struct fixture *f)
{
	unsigned char buf[96];
	struct cgbpf_query_attr *attr = (struct cgbpf_query_attr *)buf;
	uint32_t ids[4] = {};
	struct tcase t;
	bool untouched = true;
	long r;

	if (!TCASE(f, &t, "query-size", "q"))
		goto out;
	expect_attach(&t, "q", "q1", AO(.flags = MU), 0);
	expect_attach(&t, "q", "q2", AO(.flags = MU), 0);

	memset(buf, 0xa5, sizeof(buf));
	memset(buf, 0, offsetof(struct cgbpf_query_attr, link_ids));
	attr->target_fd = (uint32_t)cgfd(&t, "q");
	attr->attach_type = EGRESS;
	attr->prog_ids = (uint64_t)(uintptr_t)ids;
	attr->prog_cnt = 4;
	r = syscall(__NR_bpf, BPF_PROG_QUERY, buf, offsetof(struct cgbpf_query_attr, link_ids));
	for (size_t i = offsetof(struct cgbpf_query_attr, link_ids); i < sizeof(buf); i++)
		untouched &= buf[i] == 0xa5;
	if (!report_check(r == 0 && attr->count == 2 && ids[0] == pid_of(&t, "q1") && ids[1] == pid_of(&t, "q2") &&
			  untouched, "query-size: a 40 byte query attr: 2 progs, nothing written behind it"))
		report_detail("r %ld (%s), count %u, bytes 40..95 %s", r, r < 0 ? strerror(errno) : "ok", attr->count,
			      untouched ? "untouched" : "written");

	memset(buf, 0, sizeof(buf));
	attr->target_fd = (uint32_t)cgfd(&t, "q");
	attr->attach_type = EGRESS;
	r = syscall(__NR_bpf, BPF_PROG_QUERY, buf, OFFSETOFEND(struct cgbpf_query_attr, revision));
	untouched = true;
	for (size_t i = OFFSETOFEND(struct cgbpf_query_attr, revision); i < sizeof(buf); i++)
		untouched &= buf[i] == 0;
	if (!report_check(r == 0 && attr->count == 2 && attr->revision == (f->patched ? 3 : 0) && untouched,
			  "query-size: a 64 byte query attr: revision %d", f->patched ? 3 : 0))
		report_detail("r %ld, count %u, revision %llu", r, attr->count, (unsigned long long)attr->revision);
out:
	tcase_end(&t);
}

/*
 * -ENOSPC: the query fills prog_ids and prog_attach_flags up to prog_cnt,
 * reports the full count, and prog_attach_flags is the mode for every
 * entry, a BPF_F_PREORDER one too (upstream's __cgroup_bpf_query()).
 */
static void query_enospc(struct fixture *f)
{
	uint32_t ids[4] = { 0xdead, 0xdead, 0xdead, 0xdead };
	uint32_t flags[4] = { 0xdead, 0xdead, 0xdead, 0xdead };
	struct cgbpf_query_head head = {};
	struct tcase t;
	int r;

	if (!TCASE(f, &t, "query-enospc", "q"))
		goto out;
	expect_attach(&t, "q", "n1", AO(.flags = MU), 0);
	expect_attach(&t, "q", "n2", AO(.flags = MU | (f->patched ? PRE : 0)), 0);
	expect_attach(&t, "q", "n3", AO(.flags = MU), 0);
	r = cgbpf_prog_query_buf(cgfd(&t, "q"), EGRESS, 0, ids, flags, 2, &head);
	if (!report_check(r == -ENOSPC && head.count == 3 && head.attach_flags == MU &&
			  ids[0] == pid_of(&t, "n1") && ids[1] == pid_of(&t, "n2") && flags[0] == MU && flags[1] == MU &&
			  ids[2] == 0xdead && flags[2] == 0xdead,
			  "query-enospc: 2 of 3 ids and prog_attach_flags [MULTI,MULTI]%s, -ENOSPC, count 3",
			  f->patched ? " (n2 PREORDER)" : ""))
		report_detail("%s: count %u ids [%u,%u,%u] flags [0x%x,0x%x,0x%x]", report_errno(r), head.count, ids[0],
			      ids[1], ids[2], flags[0], flags[1], flags[2]);
out:
	tcase_end(&t);
}

/*
 * BPF_PROG_DETACH with a non-zero replace_bpf_fd: upstream ignores it
 * (BPF_PROG_DETACH_LAST_FIELD is expected_revision); 6.1 refuses every
 * byte after attach_type.
 */
static void detach_with_replace_fd(struct fixture *f)
{
	struct cgbpf_attach_attr attr;
	struct cgbpf_query before;
	struct tcase t;
	int r;

	if (!TCASE(f, &t, "detach-replace-fd", "d"))
		goto out;
	expect_attach(&t, "d", "d1", AO(.flags = MU), 0);
	expect_attach(&t, "d", "d2", AO(.flags = MU), 0);
	cgbpf_prog_query(cgfd(&t, "d"), EGRESS, 0, &before);
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cgfd(&t, "d");
	attr.attach_bpf_fd = (uint32_t)pfd(&t, "d1");
	attr.attach_type = EGRESS;
	attr.replace_bpf_fd = (uint32_t)pfd(&t, "d2");
	r = syscall(__NR_bpf, BPF_PROG_DETACH, &attr, sizeof(attr)) < 0 ? -errno : 0;
	check_result(&t, "detach d1 from /d with replace_bpf_fd = d2", cgfd(&t, "d"), EGRESS, &before, r,
		     f->patched ? 0 : -EINVAL);
	expect_list(&t, "d", f->patched ? "d2" : "d1,d2", f->patched ? 4 : 0);
out:
	tcase_end(&t);
}

void cases_run(struct fixture *f)
{
	seed_example_1(f);
	seed_example_2(f);
	seed_example_3(f);
	seed_example_4(f);
	uapi_ex1(f);
	old_limits(f);
	old_legacy_detach(f);
	old_drop_runs_all(f);
	compat_link_create_bytes(f);
	query_short_attr(f);
	query_enospc(f);
	detach_with_replace_fd(f);
	if (!f->patched) {
		baseline_refuses_new_api(f);
		return;
	}
	preorder_example_1(f, false);
	preorder_example_1(f, true);
	preorder_example_2(f);
	preorder_example_3(f);
	preorder_upstream(f, false);
	preorder_upstream(f, true);
	preorder_replace(f);
	ordering_progs(f);
	ordering_links(f);
	ordering_preorder_anchors(f);
	invalid_arguments(f);
	anchors_as_upstream(f);
	positions_single_slot(f);
	replace_with_relative(f);
	revision_stale(f);
	check_order(f);
	revision_rules(f);
}
