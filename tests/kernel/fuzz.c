// SPDX-License-Identifier: GPL-2.0-only
/*
 * (e) The randomized model test: random attach / detach / replace /
 * link operations (fuzz-gen.c) on a 4-level tree of 8 cgroups, each
 * sent to the kernel and predicted by the model (lib/cgbpf-model.c).
 * After every operation every cgroup's list (ids in order, mode,
 * per-prog flags, revision) and effective array are compared with the
 * model; from time to time a datagram shows what really runs.  The
 * first disagreement stops the test with the operation, both answers
 * and both states.
 *
 * `--seed N` replays a run exactly (the kernel's ids and fds differ, the
 * operations do not).  On the baseline kernel the generator keeps to
 * the old flags and revisions are not compared (6.1 has none).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cases.h"
#include "fuzz-gen.h"
#include "cgbpf-model.h"
#include "report.h"

#define FUZZ_CGROUPS	8
#define FUZZ_PROGS	24
#define FUZZ_LINKS	40

/* The tree: r, r/a, r/b, r/a/c, r/a/d, r/b/e, r/a/c/f, r/b/e/g. */
static const struct {
	const char *rel;
	int parent;
} fuzz_tree[FUZZ_CGROUPS] = {
	{ "fuzz/r", -1 }, { "fuzz/r/a", 0 }, { "fuzz/r/b", 0 }, { "fuzz/r/a/c", 1 },
	{ "fuzz/r/a/d", 1 }, { "fuzz/r/b/e", 2 }, { "fuzz/r/a/c/f", 3 }, { "fuzz/r/b/e/g", 5 },
};

struct fuzz {
	struct fixture *f;
	struct model m;
	struct fuzz_gen gen;
	char cg_path[FUZZ_CGROUPS][PATH_MAX];
	int cg_fd[FUZZ_CGROUPS];
	struct prog *prog[FUZZ_PROGS];
	int link_fd[MODEL_MAX_LINKS];
	uint32_t link_id[MODEL_MAX_LINKS];
	/* what happened, for the summary */
	unsigned kinds[FUZZ_KINDS];
	unsigned results[9];		/* 0, -EINVAL, -EPERM, -ENOENT, -ESTALE, -E2BIG, -EBADF, -ENOLINK, other */
	unsigned open_primary, open_alt, traffic_checks, state_checks;
	/* prog anchors on a prog that runs in the list through a link:
	 * only there (upstream: -ENOENT), or also attached directly */
	unsigned anchor_link_only, anchor_link_and_direct;
};

/* Counts the prog anchors the kernel must not find in a link's entry. */
static void count_anchor(struct fuzz *z, const struct model_attach *a)
{
	const struct model_cgroup *c = &z->m.cg[a->cgroup];
	bool linked = false, direct = false;

	if (a->link_create || a->anchor.kind != MODEL_ANCHOR_PROG || (a->flags & BPF_F_LINK))
		return;
	for (int i = 0; i < c->n; i++) {
		if (c->list[i].link >= 0)
			linked |= z->m.link[c->list[i].link].prog == a->anchor.handle;
		else
			direct |= c->list[i].prog == a->anchor.handle;
	}
	if (linked)
		direct ? z->anchor_link_and_direct++ : z->anchor_link_only++;
}

static void result_count(struct fuzz *z, int r)
{
	static const int errs[] = { 0, -EINVAL, -EPERM, -ENOENT, -ESTALE, -E2BIG, -EBADF, -ENOLINK };
	size_t k;

	for (k = 0; k < sizeof(errs) / sizeof(errs[0]); k++)
		if (errs[k] == r)
			break;
	z->results[k]++;
}

static const char *prog_name(const struct fuzz *z, int h)
{
	return h >= 0 && h < FUZZ_PROGS && z->prog[h] ? z->prog[h]->name : "?";
}

static int prog_handle_of_id(const struct fuzz *z, uint32_t id)
{
	for (int h = 0; h < FUZZ_PROGS; h++)
		if (z->prog[h] && z->prog[h]->id == id)
			return h;
	return -1;
}

static int prog_handle_of_tag(const struct fuzz *z, uint32_t tag)
{
	for (int h = 0; h < FUZZ_PROGS; h++)
		if (z->prog[h] && z->prog[h]->tag == tag)
			return h;
	return -1;
}

/* The number the kernel gets as relative_fd / relative_id. */
static uint32_t anchor_value(const struct fuzz *z, const struct model_anchor *a, uint32_t flags)
{
	bool by_id = flags & BPF_F_ID;

	switch (a->kind) {
	case MODEL_ANCHOR_PROG:
		return by_id ? z->prog[a->handle]->id : (uint32_t)z->prog[a->handle]->fd;
	case MODEL_ANCHOR_LINK:
		return by_id ? z->link_id[a->handle] : (uint32_t)z->link_fd[a->handle];
	case MODEL_ANCHOR_UNKNOWN:
		return by_id ? FIXTURE_UNKNOWN_ID : FIXTURE_CLOSED_FD;
	case MODEL_ANCHOR_WRONG_KIND:
		return (uint32_t)z->f->record_fd;
	case MODEL_ANCHOR_NONE:
	default:
		return 0;
	}
}

static int send_attach(struct fuzz *z, const struct model_attach *a)
{
	uint32_t relative = anchor_value(z, &a->anchor, a->flags);
	int cg_fd = z->cg_fd[a->cgroup], prog_fd = z->prog[a->prog]->fd;

	if (a->link_create)
		return cgbpf_link_create(prog_fd, cg_fd, EGRESS, &(struct cgbpf_link_opts){
			.sz = sizeof(struct cgbpf_link_opts),
			.flags = a->flags,
			.relative = relative,
			.expected_revision = a->expected_revision,
		});
	return cgbpf_prog_attach(cg_fd, prog_fd, EGRESS, &(struct cgbpf_attach_opts){
		.sz = sizeof(struct cgbpf_attach_opts),
		.flags = a->flags,
		.replace_fd = a->replace_prog >= 0 ? z->prog[a->replace_prog]->fd : 0,
		.relative = relative,
		.expected_revision = a->expected_revision,
	});
}

static int send_detach(struct fuzz *z, const struct model_detach *d)
{
	return cgbpf_prog_detach(z->cg_fd[d->cgroup], d->prog >= 0 ? z->prog[d->prog]->fd : -1, EGRESS,
				 &(struct cgbpf_detach_opts){
					 .sz = sizeof(struct cgbpf_detach_opts),
					 .flags = d->flags,
					 .relative = d->relative,
					 .expected_revision = d->expected_revision,
				 });
}

/* Prints the model's and the kernel's view of every cgroup. */
static void dump_state(struct fuzz *z)
{
	for (int cg = 0; cg < FUZZ_CGROUPS; cg++) {
		const struct model_cgroup *c = &z->m.cg[cg];
		struct cgbpf_query q;
		char line[2048], tmp[32];
		size_t off;
		int r;

		off = (size_t)snprintf(line, sizeof(line), "#%d %s model: mode %u rev %llu [", cg,
				       fuzz_tree[cg].rel + 5, model_query_flags(&z->m, cg),
				       (unsigned long long)c->revision);
		for (int i = 0; i < c->n && off < sizeof(line); i++) {
			const struct model_entry *e = &c->list[i];

			if (e->link >= 0)
				off += (size_t)snprintf(line + off, sizeof(line) - off, "%sL%d(%s)%s", i ? " " : "",
							e->link, prog_name(z, model_entry_prog(&z->m, e)),
							e->preorder ? "P" : "");
			else
				off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s%s", i ? " " : "",
							prog_name(z, e->prog), e->preorder ? "P" : "");
		}
		r = cgbpf_prog_query(z->cg_fd[cg], EGRESS, 0, &q);
		if (off < sizeof(line))
			off += (size_t)snprintf(line + off, sizeof(line) - off, "]; kernel (%s): mode %u rev %llu [",
						report_errno(r), q.attach_flags, (unsigned long long)q.revision);
		for (uint32_t i = 0; i < q.count && i < CGBPF_MAX_QUERY && off < sizeof(line); i++)
			off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s", i ? " " : "",
						fixture_name_of_id(z->f, q.ids[i], tmp, sizeof(tmp)));
		if (off < sizeof(line))
			snprintf(line + off, sizeof(line) - off, "]");
		report_detail("%s", line);
	}
}

static void names_of_handles(const struct fuzz *z, const int *h, int n, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? "," : "", prog_name(z, h[i]));
}

/* One cgroup's list and effective array against the model; NULL when equal. */
static const char *compare_cgroup(struct fuzz *z, int cg, char *why, size_t size)
{
	const struct model_cgroup *c = &z->m.cg[cg];
	int eff[MODEL_MAX_EFFECTIVE], neff = model_effective(&z->m, cg, eff);
	bool patched = z->f->patched;
	struct cgbpf_query q;
	int r;

	r = cgbpf_prog_query(z->cg_fd[cg], EGRESS, 0, &q);
	if (r < 0)
		return snprintf(why, size, "#%d: query: %s", cg, report_errno(r)), why;
	if (q.count != (uint32_t)c->n)
		return snprintf(why, size, "#%d: %u progs attached, model %d", cg, q.count, c->n), why;
	if (q.attach_flags != model_query_flags(&z->m, cg))
		return snprintf(why, size, "#%d: attach_flags %u, model %u", cg, q.attach_flags,
				model_query_flags(&z->m, cg)), why;
	if (patched && q.revision != c->revision)
		return snprintf(why, size, "#%d: revision %llu, model %llu", cg, (unsigned long long)q.revision,
				(unsigned long long)c->revision), why;
	for (int i = 0; i < c->n; i++) {
		const struct model_entry *e = &c->list[i];
		int h = model_entry_prog(&z->m, e);
		uint32_t pf = q.prog_flags[i];

		if (q.ids[i] != z->prog[h]->id)
			return snprintf(why, size, "#%d: entry %d is %s, model %s", cg, i,
					prog_name(z, prog_handle_of_id(z, q.ids[i])), prog_name(z, h)), why;
		/* upstream's __cgroup_bpf_query(): the cgroup's mode for every
		 * entry, BPF_F_PREORDER ones included */
		if (pf != q.attach_flags)
			return snprintf(why, size, "#%d: entry %d%s: prog_attach_flags 0x%x, mode 0x%x", cg, i,
					e->preorder ? " (PREORDER)" : "", pf, q.attach_flags), why;
	}

	r = cgbpf_prog_query(z->cg_fd[cg], EGRESS, BPF_F_QUERY_EFFECTIVE, &q);
	if (r < 0)
		return snprintf(why, size, "#%d: effective query: %s", cg, report_errno(r)), why;
	if (q.attach_flags != 0 || (patched && q.revision != 0))
		return snprintf(why, size, "#%d: effective query: attach_flags %u revision %llu, want 0 0", cg,
				q.attach_flags, (unsigned long long)q.revision), why;
	if (q.count != (uint32_t)neff)
		goto effective_differs;
	for (int i = 0; i < neff; i++)
		if (q.ids[i] != z->prog[eff[i]]->id)
			goto effective_differs;
	return NULL;

effective_differs: {
	char want[1024], got[1024], tmp[32];
	size_t off = 0;

	names_of_handles(z, eff, neff, want, sizeof(want));
	got[0] = '\0';
	for (uint32_t i = 0; i < q.count && i < CGBPF_MAX_QUERY && off < sizeof(got); i++)
		off += (size_t)snprintf(got + off, sizeof(got) - off, "%s%s", i ? "," : "",
					fixture_name_of_id(z->f, q.ids[i], tmp, sizeof(tmp)));
	/* a diagnostic: cut, not overflowed, when the arrays are long */
	snprintf(why, size, "#%d: effective [%.480s], model [%.480s]", cg, got, want);
	return why;
}
}

static const char *compare_all(struct fuzz *z, char *why, size_t size)
{
	z->state_checks++;
	for (int cg = 0; cg < FUZZ_CGROUPS; cg++)
		if (compare_cgroup(z, cg, why, size))
			return why;
	return NULL;
}

static const char *check_traffic(struct fuzz *z, int cg, char *why, size_t size)
{
	int eff[MODEL_MAX_EFFECTIVE], neff = model_effective(&z->m, cg, eff), r;
	struct traffic tr;
	bool same;

	r = fixture_traffic(z->f, z->cg_path[cg], &tr);
	same = r == 0 && tr.n == neff && tr.delivered;
	for (int i = 0; same && i < neff; i++)
		same = prog_handle_of_tag(z, tr.tags[i]) == eff[i];
	z->traffic_checks++;
	if (same)
		return NULL;
	{
		char want[1024], got[1024], tmp[32];
		size_t off = 0;

		names_of_handles(z, eff, neff, want, sizeof(want));
		got[0] = '\0';
		for (int i = 0; i < tr.n && off < sizeof(got); i++)
			off += (size_t)snprintf(got + off, sizeof(got) - off, "%s%s", i ? "," : "",
						fixture_name_of_tag(z->f, tr.tags[i], tmp, sizeof(tmp)));
		snprintf(why, size, "#%d: traffic %s ran [%.450s]%s, model [%.450s]", cg, report_errno(r), got,
			 tr.delivered ? "" : " (not delivered)", want);
	}
	return why;
}

/*
 * Runs one op on the kernel and the model.  Returns NULL when they
 * agree, else what differs.
 */
static const char *step(struct fuzz *z, const struct fuzz_op *op, char *why, size_t size)
{
	struct model_prediction p = { 0, 0, NULL };
	int r = 0, want;

	switch (op->kind) {
	case FUZZ_ATTACH:
	case FUZZ_LINK_CREATE:
		p = model_predict_attach(&z->m, &op->attach);
		count_anchor(z, &op->attach);
		r = send_attach(z, &op->attach);
		if (op->kind == FUZZ_LINK_CREATE && r >= 0) {
			z->link_fd[op->link] = r;
			z->link_id[op->link] = fixture_link_id(r);
			r = 0;
		}
		if (r != p.err && r != p.alt)
			break;
		if (p.why)
			r == p.err ? z->open_primary++ : z->open_alt++;
		if (r == 0)
			model_apply_attach(&z->m, &op->attach, op->link);
		break;
	case FUZZ_DETACH:
		p = model_predict_detach(&z->m, &op->detach);
		r = send_detach(z, &op->detach);
		if (r == 0 && p.err == 0)
			model_apply_detach(&z->m, &op->detach);
		break;
	case FUZZ_LINK_DETACH:
		p.err = p.alt = model_link_detach(&z->m, op->link);
		r = bpf_link_detach(z->link_fd[op->link]);
		r = r < 0 ? -errno : 0;
		break;
	case FUZZ_LINK_CLOSE:
		model_link_close(&z->m, op->link);
		r = close(z->link_fd[op->link]) < 0 ? -errno : 0;
		z->link_fd[op->link] = -1;
		break;
	case FUZZ_LINK_UPDATE:
		p.err = p.alt = model_link_update(&z->m, op->link, op->prog);
		r = bpf_link_update(z->link_fd[op->link], z->prog[op->prog]->fd, NULL);
		r = r < 0 ? -errno : 0;
		break;
	case FUZZ_TRAFFIC:
	default:
		return check_traffic(z, op->cgroup, why, size);
	}
	result_count(z, r);
	want = p.err;
	if (r != p.err && r != p.alt) {
		if (p.why)
			snprintf(why, size, "kernel %s, model %s or %s (%s)", report_errno(r), report_errno(want),
				 report_errno(p.alt), p.why);
		else
			snprintf(why, size, "kernel %s, model %s", report_errno(r), report_errno(want));
		return why;
	}
	return compare_all(z, why, size);
}

static bool fuzz_setup(struct fuzz *z)
{
	char name[8];
	int r;

	for (int i = 0; i < MODEL_MAX_LINKS; i++)
		z->link_fd[i] = -1;
	model_init(&z->m, z->f->patched ? MODEL_KERNEL_PATCHED : MODEL_KERNEL_BASELINE);
	r = fixture_mkcg(z->f, "fuzz", z->cg_path[0], sizeof(z->cg_path[0]));
	if (r < 0) {
		report_fail("random: set-up: mkdir %s: %s", z->cg_path[0], strerror(-r));
		return false;
	}
	for (int cg = 0; cg < FUZZ_CGROUPS; cg++) {
		r = fixture_mkcg(z->f, fuzz_tree[cg].rel, z->cg_path[cg], sizeof(z->cg_path[cg]));
		if (r >= 0)
			r = z->cg_fd[cg] = fixture_open_cg(z->cg_path[cg]);
		if (r < 0) {
			report_fail("random: set-up: cgroup %s: %s", fuzz_tree[cg].rel, strerror(-r));
			return false;
		}
		if (model_add_cgroup(&z->m, fuzz_tree[cg].parent) != cg)
			return false;
	}
	for (int h = 0; h < FUZZ_PROGS; h++) {
		snprintf(name, sizeof(name), "z%02d", h);
		z->prog[h] = fixture_prog(z->f, name);
		if (!z->prog[h])
			return false;
	}
	return true;
}

static void fuzz_teardown(struct fuzz *z)
{
	char path[PATH_MAX];
	int r;

	for (int i = 0; i < MODEL_MAX_LINKS; i++)
		if (z->link_fd[i] >= 0)
			close(z->link_fd[i]);
	for (int cg = 0; cg < FUZZ_CGROUPS; cg++)
		if (z->cg_fd[cg] > 0)
			close(z->cg_fd[cg]);
	if (snprintf(path, sizeof(path), "%s/fuzz", z->f->base) >= (int)sizeof(path))
		return;
	r = fixture_rmtree(path);
	if (r < 0)
		report_note("random: could not remove %s: %s", path, strerror(-r));
}

static void summary(const struct fuzz *z)
{
	static const char *const res[] = { "0", "-EINVAL", "-EPERM", "-ENOENT", "-ESTALE", "-E2BIG", "-EBADF",
					   "-ENOLINK", "other" };
	char line[512];
	size_t off = 0;

	for (int k = 0; k < FUZZ_KINDS; k++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s %u", k ? ", " : "",
					fuzz_kind_name((enum fuzz_kind)k), z->kinds[k]);
	report_note("random: ops by kind: %s", line);
	off = 0;
	for (size_t k = 0; k < sizeof(res) / sizeof(res[0]); k++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s %u", k ? ", " : "", res[k], z->results[k]);
	report_note("random: results: %s", line);
	report_note("random: %u state comparisons (8 cgroups each), %u traffic checks", z->state_checks,
		    z->traffic_checks);
	report_note("random: prog anchors on a prog linked in the list: %u only through a link, "
		    "%u also attached directly", z->anchor_link_only, z->anchor_link_and_direct);
	if (z->open_primary || z->open_alt)
		report_note("random: spec-open cases: the kernel took the upstream reading %u times, "
			    "the strict one %u times", z->open_primary, z->open_alt);
}

void fuzz_run(struct fixture *f, uint64_t seed, unsigned ops)
{
	static struct fuzz z;	/* large: keep it off the stack */
	char why[1024], line[512];
	struct timespec t0, t1;
	unsigned done = 0;
	bool agree = true;

	memset(&z, 0, sizeof(z));
	z.f = f;
	report_note("random: seed %llu, %u ops, %s kernel%s", (unsigned long long)seed, ops,
		    f->patched ? "patched" : "baseline",
		    f->patched ? "" : " (old flags only, revisions not compared)");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!fuzz_setup(&z)) {
		report_fail("random: set-up failed");
		fuzz_teardown(&z);
		return;
	}
	fuzz_gen_init(&z.gen, seed, f->patched, FUZZ_CGROUPS, FUZZ_PROGS, FUZZ_LINKS);
	for (done = 0; done < ops && agree; done++) {
		struct fuzz_op op;

		fuzz_gen_op(&z.gen, &z.m, &op);
		z.kinds[op.kind]++;
		if (step(&z, &op, why, sizeof(why))) {
			fuzz_op_describe(&op, line, sizeof(line));
			report_fail("random: op %u: %s: %s", done + 1, line, why);
			report_detail("replay: --seed %llu", (unsigned long long)seed);
			dump_state(&z);
			agree = false;
		}
		/* Every 500 ops, real traffic from every cgroup. */
		if (agree && (done + 1) % 500 == 0) {
			for (int cg = 0; cg < FUZZ_CGROUPS && agree; cg++) {
				if (!check_traffic(&z, cg, why, sizeof(why)))
					continue;
				report_fail("random: after op %u: %s", done + 1, why);
				dump_state(&z);
				agree = false;
			}
		}
		if ((done + 1) % 2000 == 0)
			report_note("random: %u/%u ops", done + 1, ops);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (agree)
		report_ok("random: %u ops agree with the model (seed %llu)", done, (unsigned long long)seed);
	summary(&z);
	report_note("random: seed %llu, %u of %u ops done in %.1f s", (unsigned long long)seed, done, ops,
		    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	fuzz_teardown(&z);
}
