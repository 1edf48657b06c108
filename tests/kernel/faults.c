// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fault sweeps (f): every allocation that a cgroup-bpf attach, detach,
 * replace, link create, link update or link detach makes is made to
 * fail, one at a time, through the task's fail-nth (failslab with
 * GFP_KERNEL allocations allowed to fail).  For each operation and each
 * k = 1, 2, ... until the operation has fewer than k fault points:
 *
 *  - a fresh tree P > C > G with programs and links at every level,
 *  - fail-nth = k, the operation, fail-nth read back (0: injected),
 *  - the result: either -ENOMEM and the tree exactly as before, or
 *    success and the tree exactly as after the same operation without
 *    a fault (a reference run): each cgroup's list, mode and revision,
 *    its effective array (BPF_F_QUERY_EFFECTIVE) and what a datagram
 *    sent from inside it really ran;
 *  - a teardown that detaches everything and checks that nothing runs
 *    any more anywhere (a stale program left behind in an effective
 *    array by an error path would still run);
 * and at the end no reference leaked: every link and every program the
 * sweeps used is gone once its last file descriptor is closed.
 *
 * Plus the reproducers of the series' two fixes, each of which must show
 * its bug on the baseline kernel and not on the patched one: patch 1,
 * the link update that followed a detach that ran out of memory; patch
 * 2, the effective query of an array that such a detach left ending in
 * a dummy (-ENOSPC with room for every id; the sweeps above count it).
 *
 * On the debug kernel (KASAN, lockdep) the same sweeps also run under
 * the checkers; tests/vm/kernel-api.test reads the kernel log after.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cases.h"
#include "report.h"


#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FAILSLAB_GFP	"/sys/kernel/debug/failslab/ignore-gfp-wait"
/* Quiet: each injected fault would otherwise log a stack trace, which
 * tests/vm/run's kernel log check rightly takes for a report. */
#define FAILSLAB_VERBOSE "/sys/kernel/debug/failslab/verbose"
/* No operation here has anywhere near this many allocations. */
#define MAX_FAULT_POINTS 64
#define MAX_LINKS_SEEN 1024


enum { CG_P, CG_C, CG_G, N_CG };
static const char *const cg_names[N_CG] = { "P", "P/C", "P/C/G" };

struct faults;

/* One tree for one try of one operation. */
struct tree {
	struct fixture *f;
	struct faults *z;
	char dir[PATH_MAX];
	char path[N_CG][PATH_MAX];
	int cg[N_CG];
	int link_p;		/* the link running fB at P */
	int link_g;		/* the link running fE at G */
	int link_new;		/* a link the operation created, or -1 */
};

struct faults {
	struct fixture *f;
	int nth_fd;
	/* Effective queries that said -ENOSPC with room to spare (patch 2). */
	int spurious_enospc;
	uint32_t link_ids[MAX_LINKS_SEEN];
	int nlink_ids;
};

/* write(), not pwrite(): failslab's debugfs numbers are nonseekable files. */
static int write_str(int fd, const char *s)
{
	return write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -errno;
}

/* What is left of fail-nth: 0 once the fault was injected. */
static int fail_nth_left(int fd)
{
	char buf[32] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	return n > 0 ? atoi(buf) : -EIO;
}

static void remember_link(struct faults *z, int link_fd)
{
	uint32_t id = link_fd >= 0 ? fixture_link_id(link_fd) : 0;

	if (id && z->nlink_ids < MAX_LINKS_SEEN)
		z->link_ids[z->nlink_ids++] = id;
}

/*
 * P: [fA, link fB] (multi), C: [fD] (multi), G: [link fE] (multi), and
 * on the patched kernel also fF with BPF_F_PREORDER at P, so that the
 * effective arrays are built by both passes.
 */
static int tree_build(struct faults *z, struct tree *t, const char *op, const char *try)
{
	char rel[128], path[PATH_MAX];
	int r;

	memset(t, 0, sizeof(*t));
	t->f = z->f;
	t->z = z;
	t->link_p = t->link_g = t->link_new = -1;
	for (int i = 0; i < N_CG; i++)
		t->cg[i] = -1;
	snprintf(rel, sizeof(rel), "faults/%s", op);
	r = fixture_mkcg(z->f, rel, path, sizeof(path));
	if (r < 0 && r != -EEXIST)
		return r;
	snprintf(rel, sizeof(rel), "faults/%s/%s", op, try);
	r = fixture_mkcg(z->f, rel, t->dir, sizeof(t->dir));
	if (r < 0)
		return r;
	for (int i = 0; i < N_CG; i++) {
		char sub[160];

		snprintf(sub, sizeof(sub), "%s/%s", rel, cg_names[i]);
		r = fixture_mkcg(z->f, sub, t->path[i], sizeof(t->path[i]));
		if (r < 0)
			return r;
		t->cg[i] = fixture_open_cg(t->path[i]);
		if (t->cg[i] < 0)
			return t->cg[i];
	}
	r = cgbpf_prog_attach(t->cg[CG_P], fixture_prog_fd(z->f, "fA"), EGRESS, AO(.flags = MU));
	if (r == 0 && z->f->patched)
		r = cgbpf_prog_attach(t->cg[CG_P], fixture_prog_fd(z->f, "fF"), EGRESS, AO(.flags = MU | BPF_F_PREORDER));
	if (r == 0)
		r = t->link_p = cgbpf_link_create(fixture_prog_fd(z->f, "fB"), t->cg[CG_P], EGRESS, NULL);
	if (r >= 0)
		r = cgbpf_prog_attach(t->cg[CG_C], fixture_prog_fd(z->f, "fD"), EGRESS, AO(.flags = MU));
	if (r == 0)
		r = t->link_g = cgbpf_link_create(fixture_prog_fd(z->f, "fE"), t->cg[CG_G], EGRESS, NULL);
	remember_link(z, t->link_p);
	remember_link(z, t->link_g);
	return r < 0 ? r : 0;
}

/*
 * BPF_F_QUERY_EFFECTIVE of cgroup i.  A kernel without the series' patch
 * 2 answers -ENOSPC, all ids given, when the array ends in a dummy: that
 * is counted (and checked once at the end), not taken for a failure.
 */
static int query_effective(struct tree *t, int i, struct cgbpf_query *e)
{
	int r = cgbpf_prog_query(t->cg[i], EGRESS, BPF_F_QUERY_EFFECTIVE, e);

	if (r == -ENOSPC && e->count <= CGBPF_MAX_QUERY) {
		t->z->spurious_enospc++;
		r = 0;
	}
	return r;
}

/* Every cgroup: mode, revision, own list, effective array, what ran. */
static int tree_snapshot(struct tree *t, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < N_CG && off < size; i++) {
		char list[512], eff[512], ran[512];
		struct cgbpf_query q, e;
		struct traffic tr;
		int r;

		if (t->cg[i] < 0)
			continue;	/* a tree of P alone */
		r = cgbpf_prog_query(t->cg[i], EGRESS, 0, &q);
		if (r == 0)
			r = query_effective(t, i, &e);
		if (r == 0)
			r = fixture_traffic(t->f, t->path[i], &tr);
		if (r < 0) {
			snprintf(buf, size, "%s: %s", cg_names[i], report_errno(r));
			return r;
		}
		fixture_names_of_ids(t->f, q.ids, q.count, list, sizeof(list));
		fixture_names_of_ids(t->f, e.ids, e.count, eff, sizeof(eff));
		fixture_names_of_tags(t->f, tr.tags, tr.n, ran, sizeof(ran));
		off += (size_t)snprintf(buf + off, size - off,
					"%s/%s: mode %#x rev %llu list [%s] effective [%s] ran [%s]%s",
					i ? " " : "", cg_names[i], q.attach_flags, (unsigned long long)q.revision,
					list, eff, ran, tr.delivered ? "" : " (not delivered)");
	}
	return 0;
}

/* Nothing in the tree's effective arrays, nothing run by its traffic. */
static bool tree_quiet(struct tree *t, char *why, size_t size)
{
	for (int i = 0; i < N_CG; i++) {
		struct cgbpf_query q;
		struct traffic tr;
		char ran[512];
		int r;

		if (t->cg[i] < 0)
			continue;
		r = query_effective(t, i, &q);
		if (r == 0)
			r = fixture_traffic(t->f, t->path[i], &tr);
		if (r < 0 || q.count || tr.n || !tr.delivered) {
			fixture_names_of_tags(t->f, tr.tags, tr.n, ran, sizeof(ran));
			snprintf(why, size, "%s: %s, %u effective, ran [%s]%s", cg_names[i], report_errno(r), q.count,
				 ran, tr.delivered ? "" : ", not delivered");
			return false;
		}
	}
	return true;
}

/* Detaches all, checks that nothing runs any more, removes the tree. */
static void tree_teardown(struct faults *z, struct tree *t, const char *what)
{
	static const char *const progs[] = { "fA", "fD", "fF", "fX", "fW" };
	char why[768];

	for (int i = 0; i < N_CG; i++)
		for (size_t p = 0; t->cg[i] >= 0 && p < sizeof(progs) / sizeof(progs[0]); p++)
			cgbpf_prog_detach(t->cg[i], fixture_prog_fd(z->f, progs[p]), EGRESS, NULL);
	if (t->link_p >= 0)
		close(t->link_p);
	if (t->link_g >= 0)
		close(t->link_g);
	if (t->link_new >= 0)
		close(t->link_new);
	if (!report_check(tree_quiet(t, why, sizeof(why)), "%s: after detaching everything nothing runs", what))
		report_detail("%s", why);
	for (int i = 0; i < N_CG; i++)
		if (t->cg[i] >= 0)
			close(t->cg[i]);
	if (t->dir[0])
		fixture_rmtree(t->dir);
}

/* The operations under test; each returns 0 or -errno. */
static int op_prog_attach(struct tree *t)
{
	return cgbpf_prog_attach(t->cg[CG_P], fixture_prog_fd(t->f, "fX"), EGRESS, AO(.flags = MU));
}

static int op_prog_detach(struct tree *t)
{
	return cgbpf_prog_detach(t->cg[CG_P], fixture_prog_fd(t->f, "fA"), EGRESS, NULL);
}

static int op_prog_replace(struct tree *t)
{
	return cgbpf_prog_attach(t->cg[CG_P], fixture_prog_fd(t->f, "fW"), EGRESS,
				 AO(.flags = MU | BPF_F_REPLACE, .replace_fd = fixture_prog_fd(t->f, "fA")));
}

static int op_link_create(struct tree *t)
{
	int r = cgbpf_link_create(fixture_prog_fd(t->f, "fY"), t->cg[CG_C], EGRESS, NULL);

	if (r < 0)
		return r;
	t->link_new = r;
	return 0;
}

static int op_link_update(struct tree *t)
{
	return bpf_link_update(t->link_p, fixture_prog_fd(t->f, "fZ"), NULL);
}

static int op_link_detach(struct tree *t)
{
	return bpf_link_detach(t->link_p);
}

static int op_preorder_before(struct tree *t)
{
	return cgbpf_prog_attach(t->cg[CG_P], fixture_prog_fd(t->f, "fX"), EGRESS,
				 AO(.flags = MU | BPF_F_PREORDER | BPF_F_BEFORE, .relative = (uint32_t)fixture_prog_fd(t->f, "fF")));
}

static int op_link_after_link(struct tree *t)
{
	int r = cgbpf_link_create(fixture_prog_fd(t->f, "fY"), t->cg[CG_P], EGRESS,
				  LO(.flags = BPF_F_AFTER | BPF_F_LINK, .relative = (uint32_t)t->link_p));

	if (r < 0)
		return r;
	t->link_new = r;
	return 0;
}

struct fault_op {
	const char *name;
	int (*run)(struct tree *t);
	bool patched_only;
};

static const struct fault_op fault_ops[] = {
	{ "prog-attach", op_prog_attach, false },
	{ "prog-detach", op_prog_detach, false },
	{ "prog-replace", op_prog_replace, false },
	{ "link-create", op_link_create, false },
	{ "link-update", op_link_update, false },
	{ "link-detach", op_link_detach, false },
	{ "preorder-before", op_preorder_before, true },
	{ "link-after-link", op_link_after_link, true },
};

/* Runs `op` once with fail-nth = k; returns the fault left (0: injected). */
static int run_with_fault(struct faults *z, const struct fault_op *op, struct tree *t, int k, int *ret)
{
	char nth[16];
	int left;

	snprintf(nth, sizeof(nth), "%d", k);
	*ret = write_str(z->nth_fd, nth);
	if (*ret == 0)
		*ret = op->run(t);
	left = fail_nth_left(z->nth_fd);
	write_str(z->nth_fd, "0");
	return left;
}

static void sweep(struct faults *z, const struct fault_op *op)
{
	char before_ref[2048], after_ref[2048], before[2048], after[2048], what[96];
	int injected = 0, failed = 0, k, r;
	bool every_point = false;
	struct tree t;

	/* The reference: the same operation on the same tree, no fault. */
	r = tree_build(z, &t, op->name, "ref");
	if (r == 0)
		r = tree_snapshot(&t, before_ref, sizeof(before_ref));
	if (r == 0)
		r = op->run(&t);
	remember_link(z, t.link_new);
	if (r == 0)
		r = tree_snapshot(&t, after_ref, sizeof(after_ref));
	snprintf(what, sizeof(what), "faults: %s: reference run", op->name);
	if (!report_check(r == 0, "%s", what)) {
		report_detail("%s", report_errno(r));
		tree_teardown(z, &t, what);
		return;
	}
	report_note("faults: %s: before [%s]", op->name, before_ref);
	report_note("faults: %s: after  [%s]", op->name, after_ref);
	tree_teardown(z, &t, what);

	for (k = 1; k <= MAX_FAULT_POINTS; k++) {
		char try[16];
		int left;

		snprintf(try, sizeof(try), "k%d", k);
		snprintf(what, sizeof(what), "faults: %s: fault at allocation %d", op->name, k);
		r = tree_build(z, &t, op->name, try);
		if (r == 0)
			r = tree_snapshot(&t, before, sizeof(before));
		if (r < 0 || strcmp(before, before_ref) != 0) {
			report_fail("%s: set-up: %s", what, r < 0 ? report_errno(r) : "not the reference's tree");
			tree_teardown(z, &t, what);
			break;
		}
		left = run_with_fault(z, op, &t, k, &r);
		remember_link(z, t.link_new);
		if (left != 0) {
			/* Fewer than k fault points: every one has been tried. */
			every_point = true;
			tree_teardown(z, &t, what);
			break;
		}
		injected++;
		if (tree_snapshot(&t, after, sizeof(after)) < 0) {
			report_fail("%s: the tree cannot be read after it (op %s; %s)", what, report_errno(r), after);
		} else if (r < 0) {
			failed++;
			if (!report_check(r == -ENOMEM && strcmp(after, before) == 0, "%s: -ENOMEM, nothing changed",
					  what))
				report_detail("got %s, tree [%s]", report_errno(r), after);
		} else if (!report_check(strcmp(after, after_ref) == 0, "%s: succeeded, the tree as without the fault",
					 what)) {
			report_detail("got [%s]", after);
			report_detail("want [%s]", after_ref);
		}
		tree_teardown(z, &t, what);
	}
	report_check(every_point, "faults: %s: every one of its %d fault points tried (%d failed with -ENOMEM, %d recovered)",
		     op->name, injected, failed, injected - failed);
}

/* -ENOENT once nothing holds the object any more (freeing may be deferred). */
static bool gone(int (*get_fd_by_id)(uint32_t), uint32_t id)
{
	for (int i = 0; i < 500; i++) {
		int fd = get_fd_by_id(id);

		if (fd < 0 && errno == ENOENT)
			return true;
		if (fd >= 0)
			close(fd);
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return false;
}

/* No reference leaked on any path: every link and program is freed. */
static void check_no_leak(struct faults *z)
{
	static const char *const progs[] = { "fA", "fB", "fD", "fE", "fF", "fW", "fX", "fY", "fZ" };
	int links_left = 0, progs_left = 0;

	for (int i = 0; i < z->nlink_ids; i++)
		if (!gone(bpf_link_get_fd_by_id, z->link_ids[i])) {
			links_left++;
			report_detail("link id %u is still there", z->link_ids[i]);
		}
	report_check(links_left == 0, "faults: all %d links of the sweeps are freed (%d left)", z->nlink_ids,
		     links_left);
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct prog *p = fixture_prog(z->f, progs[i]);
		uint32_t id = p ? p->id : 0;

		if (!p)
			continue;
		fixture_prog_unload(z->f, progs[i]);
		if (!gone(bpf_prog_get_fd_by_id, id)) {
			progs_left++;
			report_detail("prog %s (id %u) is still there", progs[i], id);
		}
	}
	report_check(progs_left == 0, "faults: every program of the sweeps is freed once unloaded (%d left)",
		     progs_left);
}

/*
 * The reproducer of patch 1: P: [fA, link L running fP]; the detach of
 * fA fails at its k-th allocation, so purge_effective_progs() leaves a
 * dummy in fA's slot; then L is updated to fQ.  Unfixed (the baseline
 * kernel), the update writes fQ into the dummy's slot and fP keeps
 * running after the link let go of it: the cgroup runs [fQ,fP].
 * Fixed: [fQ].
 */
static void link_update_after_enomem_detach(struct faults *z)
{
	int injected = 0, wrong = 0, k;
	char got[256], what[96];

	for (k = 1; k <= MAX_FAULT_POINTS; k++) {
		struct cgbpf_query q;
		struct tree t;
		int r, left;

		snprintf(what, sizeof(what), "link-update-enomem: fault at allocation %d", k);
		memset(&t, 0, sizeof(t));
		t.f = z->f;
		t.z = z;
		t.link_p = t.link_g = t.link_new = -1;
		for (int i = 0; i < N_CG; i++)
			t.cg[i] = -1;
		r = fixture_mkcg(z->f, "faults/link-update-enomem", got, sizeof(got));
		snprintf(got, sizeof(got), "faults/link-update-enomem/k%d", k);
		if (r == 0 || r == -EEXIST)
			r = fixture_mkcg(z->f, got, t.path[CG_P], sizeof(t.path[CG_P]));
		if (r == 0)
			r = t.cg[CG_P] = fixture_open_cg(t.path[CG_P]);
		memcpy(t.dir, t.path[CG_P], sizeof(t.dir));
		if (r >= 0)
			r = cgbpf_prog_attach(t.cg[CG_P], fixture_prog_fd(z->f, "fA"), EGRESS, AO(.flags = MU));
		if (r == 0)
			r = t.link_p = cgbpf_link_create(fixture_prog_fd(z->f, "fP"), t.cg[CG_P], EGRESS, NULL);
		remember_link(z, t.link_p);
		if (r < 0) {
			report_fail("%s: set-up: %s", what, report_errno(r));
			tree_teardown(z, &t, what);
			break;
		}
		left = run_with_fault(z, &(struct fault_op){ "detach", op_prog_detach, false }, &t, k, &r);
		if (left != 0) {
			tree_teardown(z, &t, what);
			break;	/* the detach has fewer than k fault points */
		}
		injected++;
		if (r == 0)
			r = bpf_link_update(t.link_p, fixture_prog_fd(z->f, "fQ"), NULL);
		cgbpf_prog_query(t.cg[CG_P], EGRESS, BPF_F_QUERY_EFFECTIVE, &q);
		fixture_names_of_ids(z->f, q.ids, q.count, got, sizeof(got));
		if (r != 0 || strcmp(got, "fQ") != 0) {
			wrong++;
			if (z->f->patched)
				report_fail("%s, then link update fP -> fQ: update %s, the cgroup runs [%s], want [fQ]",
					    what, report_errno(r), got);
			else
				report_note("%s, then link update fP -> fQ: update %s, the cgroup runs [%s]", what,
					    report_errno(r), got);
		}
		/* Closing the link recomputes the arrays: a stale fP is gone after. */
		tree_teardown(z, &t, what);
	}
	if (z->f->patched)
		report_check(injected > 0 && k <= MAX_FAULT_POINTS && wrong == 0,
			     "link-update-enomem: after a detach with a fault at each of its %d fault points, "
			     "the link update leaves [fQ] running",
			     injected);
	else
		report_check(injected > 0 && k <= MAX_FAULT_POINTS && wrong > 0,
			     "link-update-enomem: without the fix (baseline) the bug shows at %d of %d fault points: "
			     "the link's old program keeps running",
			     wrong, injected);
}

void faults_run(struct fixture *f)
{
	struct faults z = { .f = f, .nth_fd = -1 };
	char dir[PATH_MAX];
	int gfp_fd, verbose_fd;

	report_note("case faults");
	if (access(FAILSLAB_GFP, W_OK) != 0)
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	z.nth_fd = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	gfp_fd = open(FAILSLAB_GFP, O_WRONLY | O_CLOEXEC);
	verbose_fd = open(FAILSLAB_VERBOSE, O_WRONLY | O_CLOEXEC);
	if (!report_check(z.nth_fd >= 0 && gfp_fd >= 0 && verbose_fd >= 0,
			  "faults: the kernel has fail-nth and failslab (CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB, "
			  "CONFIG_FAULT_INJECTION_DEBUG_FS: kernel-patch/guest.config)"))
		goto out;
	if (!report_check(write_str(gfp_fd, "N") == 0 && write_str(verbose_fd, "0") == 0,
			  "faults: failslab: GFP_KERNEL allocations may fail, injected faults are not logged"))
		goto out;
	if (fixture_mkcg(f, "faults", dir, sizeof(dir)) < 0) {
		report_fail("faults: set-up: mkdir faults");
		goto out;
	}
	/* Every program is loaded before any fault is armed. */
	for (const char *p = "ABDEFPQWXYZ"; *p; p++)
		if (!fixture_prog(f, (char[]){ 'f', *p, '\0' }))
			goto out;
	for (size_t i = 0; i < sizeof(fault_ops) / sizeof(fault_ops[0]); i++)
		if (f->patched || !fault_ops[i].patched_only)
			sweep(&z, &fault_ops[i]);
	link_update_after_enomem_detach(&z);
	if (f->patched)
		report_check(z.spurious_enospc == 0,
			     "faults: no effective query said -ENOSPC with room for every id (patch 2; %d did)",
			     z.spurious_enospc);
	else
		report_check(z.spurious_enospc > 0,
			     "faults: without patch 2 (baseline) %d effective queries of an array ending in a dummy "
			     "said -ENOSPC with room for every id",
			     z.spurious_enospc);
	check_no_leak(&z);
out:
	if (gfp_fd >= 0) {
		write_str(gfp_fd, "Y");
		close(gfp_fd);
	}
	if (verbose_fd >= 0) {
		write_str(verbose_fd, "2");
		close(verbose_fd);
	}
	if (z.nth_fd >= 0)
		close(z.nth_fd);
}
