// SPDX-License-Identifier: GPL-2.0-only
/*
 * Random operations for the model test.  Mostly plausible calls (the
 * cgroup's own mode, its own entries as anchors and replace targets,
 * its current revision) so the lists grow and change, mixed with
 * invalid ones (clashing modes, bad anchors, unknown bits, stale
 * revisions) so that every error path is taken many times.
 *
 * Prog anchors include the programs of the cgroup's link entries: as
 * upstream's get_prog_list(), a prog anchor matches only a program
 * attached directly, so such an anchor is -ENOENT unless the program is
 * also attached directly, and then it is that entry.
 *
 * One thing is never generated, because the model cannot know its
 * answer: an id of the wrong kind (a link id with a prog anchor or the
 * other way round), which may name some unrelated object.
 */
#include <stdio.h>
#include <string.h>

#include "cgbpf-uapi.h"
#include "fuzz-gen.h"
#include "report.h"

void fuzz_gen_init(struct fuzz_gen *g, uint64_t seed, bool patched, int ncgroups, int nprogs, int max_links)
{
	*g = (struct fuzz_gen){
		.rng = seed,
		.patched = patched,
		.ncgroups = ncgroups,
		.nprogs = nprogs,
		.max_links = max_links < MODEL_MAX_LINKS ? max_links : MODEL_MAX_LINKS,
	};
}

/* splitmix64: tiny, and a seed replays the same sequence everywhere. */
static uint64_t next(struct fuzz_gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t fuzz_gen_below(struct fuzz_gen *g, uint64_t n)
{
	return n ? next(g) % n : 0;
}

static bool chance(struct fuzz_gen *g, unsigned percent)
{
	return fuzz_gen_below(g, 100) < percent;
}

static int pick_prog(struct fuzz_gen *g)
{
	return (int)fuzz_gen_below(g, (uint64_t)g->nprogs);
}

/* Fresh (the current value), none (0), or stale (any other). */
static uint64_t pick_revision(struct fuzz_gen *g, const struct model *m, int cg)
{
	uint64_t cur = m->cg[cg].revision, stale;

	if (!g->patched || chance(g, 50))
		return 0;
	if (chance(g, 70))
		return cur;
	if (cur > 1 && chance(g, 70))
		stale = cur - 1 - fuzz_gen_below(g, cur - 1);	/* an older one, >= 1 */
	else
		stale = cur + 1 + fuzz_gen_below(g, 3);		/* from the future */
	return stale;
}

static uint32_t pick_mode(struct fuzz_gen *g, const struct model *m, int cg)
{
	unsigned r;

	if (m->cg[cg].n > 0 && chance(g, 65))
		return (uint32_t)m->cg[cg].mode;
	r = (unsigned)fuzz_gen_below(g, 100);
	if (r < 45)
		return BPF_F_ALLOW_MULTI;
	if (r < 70)
		return 0;
	if (r < 93)
		return BPF_F_ALLOW_OVERRIDE;
	return BPF_F_ALLOW_OVERRIDE | BPF_F_ALLOW_MULTI;
}

static uint32_t pick_position(struct fuzz_gen *g)
{
	unsigned r = (unsigned)fuzz_gen_below(g, 100);

	if (r < 50)
		return 0;
	if (r < 72)
		return BPF_F_BEFORE;
	if (r < 94)
		return BPF_F_AFTER;
	return BPF_F_BEFORE | BPF_F_AFTER;
}

static uint32_t pick_invalid_bit(struct fuzz_gen *g)
{
	static const uint32_t bits[] = { 1U << 7, 1U << 8, 1U << 12, 1U << 14, 1U << 31 };

	return bits[fuzz_gen_below(g, sizeof(bits) / sizeof(bits[0]))];
}

static int pick_used_link(struct fuzz_gen *g, const struct model *m)
{
	int used[MODEL_MAX_LINKS], n = 0;

	for (int i = 0; i < g->max_links; i++)
		if (m->link[i].used)
			used[n++] = i;
	return n ? used[fuzz_gen_below(g, (uint64_t)n)] : -1;
}

static int free_link(const struct fuzz_gen *g, const struct model *m)
{
	for (int i = 0; i < g->max_links; i++)
		if (!m->link[i].used)
			return i;
	return -1;
}

static struct model_anchor pick_anchor(struct fuzz_gen *g, const struct model *m, int cg, uint32_t flags)
{
	const struct model_cgroup *c = &m->cg[cg];
	bool by_id = flags & BPF_F_ID, link_flag = flags & BPF_F_LINK;
	struct model_anchor a = { MODEL_ANCHOR_NONE, 0 };
	unsigned r;

	/* Mostly an anchor when a position is asked for, rarely without one. */
	if (!(flags & (BPF_F_BEFORE | BPF_F_AFTER)) ? !chance(g, 5) : chance(g, 25))
		return a;
	r = (unsigned)fuzz_gen_below(g, 100);
	if (r < 55 && c->n > 0) {
		const struct model_entry *e = &c->list[fuzz_gen_below(g, (uint64_t)c->n)];

		if (e->link < 0)
			a = (struct model_anchor){ MODEL_ANCHOR_PROG, e->prog };
		else if (chance(g, 35))
			/* the prog of a link entry, as a prog anchor */
			a = (struct model_anchor){ MODEL_ANCHOR_PROG, m->link[e->link].prog };
		else
			a = (struct model_anchor){ MODEL_ANCHOR_LINK, e->link };
	} else if (r < 72) {
		a = (struct model_anchor){ MODEL_ANCHOR_PROG, pick_prog(g) };
	} else if (r < 82) {
		int l = pick_used_link(g, m);

		a = l >= 0 ? (struct model_anchor){ MODEL_ANCHOR_LINK, l }
			   : (struct model_anchor){ MODEL_ANCHOR_UNKNOWN, 0 };
	} else if (r < 90) {
		a.kind = MODEL_ANCHOR_UNKNOWN;
	} else if (r < 96) {
		a.kind = MODEL_ANCHOR_WRONG_KIND;
	}

	/* Keep out what the model cannot judge (see the top of the file). */
	if (by_id && (a.kind == MODEL_ANCHOR_WRONG_KIND ||
		      (a.kind == MODEL_ANCHOR_PROG && link_flag) ||
		      (a.kind == MODEL_ANCHOR_LINK && !link_flag)))
		a = (struct model_anchor){ MODEL_ANCHOR_UNKNOWN, 0 };
	if (a.kind == MODEL_ANCHOR_LINK && !m->link[a.handle].used)
		a = (struct model_anchor){ MODEL_ANCHOR_UNKNOWN, 0 };	/* its fd is gone */
	return a;
}

/* A replace target: mostly one of the cgroup's direct progs. */
static int pick_replace(struct fuzz_gen *g, const struct model *m, int cg)
{
	const struct model_cgroup *c = &m->cg[cg];

	if (c->n > 0 && chance(g, 80)) {
		const struct model_entry *e = &c->list[fuzz_gen_below(g, (uint64_t)c->n)];

		if (e->link < 0)
			return e->prog;
	}
	return pick_prog(g);
}

static void gen_attach(struct fuzz_gen *g, const struct model *m, struct fuzz_op *op, bool link_create)
{
	int cg = (int)fuzz_gen_below(g, (uint64_t)g->ncgroups);
	struct model_attach *a = &op->attach;
	uint32_t flags = 0;

	*a = (struct model_attach){ .cgroup = cg, .prog = pick_prog(g), .link_create = link_create, .replace_prog = -1 };
	if (!link_create) {
		flags = pick_mode(g, m, cg);
		if (chance(g, 15))
			flags |= BPF_F_REPLACE;
	} else if (chance(g, 4)) {
		/* not for links: the kernel adds MULTI itself */
		flags |= chance(g, 50) ? BPF_F_ALLOW_MULTI : (chance(g, 50) ? BPF_F_REPLACE : BPF_F_ALLOW_OVERRIDE);
	}
	if (g->patched) {
		if (chance(g, 25))
			flags |= BPF_F_PREORDER;
		flags |= pick_position(g);
		if (chance(g, 25))
			flags |= BPF_F_ID;
		if (link_create ? chance(g, 60) : chance(g, 4))
			flags |= BPF_F_LINK;
		if (chance(g, 2))
			flags |= pick_invalid_bit(g);
		a->anchor = pick_anchor(g, m, cg, flags);
		/* with an anchor, links mostly say so: else nearly all fail */
		if (link_create && a->anchor.kind == MODEL_ANCHOR_LINK && chance(g, 90))
			flags |= BPF_F_LINK;
		a->expected_revision = pick_revision(g, m, cg);
	} else if (chance(g, 2)) {
		flags |= pick_invalid_bit(g);
	}
	if (flags & BPF_F_REPLACE)
		a->replace_prog = pick_replace(g, m, cg);
	a->flags = flags;
	if (link_create)
		op->link = free_link(g, m);
}

static void gen_detach(struct fuzz_gen *g, const struct model *m, struct fuzz_op *op)
{
	int cg = (int)fuzz_gen_below(g, (uint64_t)g->ncgroups);
	const struct model_cgroup *c = &m->cg[cg];
	struct model_detach *d = &op->detach;
	unsigned r = (unsigned)fuzz_gen_below(g, 100);

	*d = (struct model_detach){ .cgroup = cg, .prog = pick_prog(g) };
	if (r < 70 && c->n > 0) {
		const struct model_entry *e = &c->list[fuzz_gen_below(g, (uint64_t)c->n)];

		d->prog = model_entry_prog(m, e);
	} else if (r >= 92) {
		d->prog = -1;	/* no valid prog fd */
	}
	if (chance(g, 3))
		d->flags = BPF_F_ALLOW_MULTI;
	if (g->patched && chance(g, 3))
		d->relative = 7;
	d->expected_revision = pick_revision(g, m, cg);
}

void fuzz_gen_op(struct fuzz_gen *g, const struct model *m, struct fuzz_op *op)
{
	unsigned r = (unsigned)fuzz_gen_below(g, 100);

	memset(op, 0, sizeof(*op));
	op->link = -1;
	if (r < 42) {
		op->kind = FUZZ_ATTACH;
		gen_attach(g, m, op, false);
	} else if (r < 58) {
		op->kind = FUZZ_LINK_CREATE;
		gen_attach(g, m, op, true);
		if (op->link < 0) {
			/* every handle in use: make room instead */
			op->kind = FUZZ_LINK_CLOSE;
			op->link = pick_used_link(g, m);
		}
	} else if (r < 80) {
		op->kind = FUZZ_DETACH;
		gen_detach(g, m, op);
	} else if (r < 97) {
		unsigned k = (unsigned)fuzz_gen_below(g, 100);

		op->link = pick_used_link(g, m);
		op->kind = k < 45 ? FUZZ_LINK_DETACH : k < 65 ? FUZZ_LINK_CLOSE : FUZZ_LINK_UPDATE;
		op->prog = pick_prog(g);
		if (op->link < 0) {
			op->kind = FUZZ_TRAFFIC;
			op->cgroup = (int)fuzz_gen_below(g, (uint64_t)g->ncgroups);
		}
	} else {
		op->kind = FUZZ_TRAFFIC;
		op->cgroup = (int)fuzz_gen_below(g, (uint64_t)g->ncgroups);
	}
}

const char *fuzz_kind_name(enum fuzz_kind kind)
{
	static const char *const names[FUZZ_KINDS] = {
		[FUZZ_ATTACH] = "attach",
		[FUZZ_LINK_CREATE] = "link-create",
		[FUZZ_DETACH] = "detach",
		[FUZZ_LINK_DETACH] = "link-detach",
		[FUZZ_LINK_CLOSE] = "link-close",
		[FUZZ_LINK_UPDATE] = "link-update",
		[FUZZ_TRAFFIC] = "traffic",
	};

	return kind < FUZZ_KINDS ? names[kind] : "?";
}

static void describe_anchor(const struct model_anchor *a, char *buf, size_t size)
{
	switch (a->kind) {
	case MODEL_ANCHOR_NONE:
		buf[0] = '\0';
		break;
	case MODEL_ANCHOR_PROG:
		snprintf(buf, size, " anchor=prog z%02d", a->handle);
		break;
	case MODEL_ANCHOR_LINK:
		snprintf(buf, size, " anchor=link L%d", a->handle);
		break;
	case MODEL_ANCHOR_UNKNOWN:
		snprintf(buf, size, " anchor=unknown");
		break;
	case MODEL_ANCHOR_WRONG_KIND:
		snprintf(buf, size, " anchor=map-fd");
		break;
	}
}

void fuzz_op_describe(const struct fuzz_op *op, char *buf, size_t size)
{
	char fl[128], an[48], rep[24] = "", as[16] = "", who[16];
	const struct model_attach *a = &op->attach;
	const struct model_detach *d = &op->detach;

	switch (op->kind) {
	case FUZZ_ATTACH:
	case FUZZ_LINK_CREATE:
		describe_anchor(&a->anchor, an, sizeof(an));
		if (a->flags & BPF_F_REPLACE)
			snprintf(rep, sizeof(rep), " replace=z%02d", a->replace_prog);
		if (op->kind == FUZZ_LINK_CREATE)
			snprintf(as, sizeof(as), " as L%d", op->link);
		snprintf(buf, size, "%s z%02d to #%d [%s%s%s rev=%llu]%s",
			 op->kind == FUZZ_ATTACH ? "attach" : "link-create", a->prog, a->cgroup,
			 report_flags_str(a->flags, fl, sizeof(fl)), an, rep,
			 (unsigned long long)a->expected_revision, as);
		break;
	case FUZZ_DETACH:
		if (d->prog < 0)
			snprintf(who, sizeof(who), "(no prog)");
		else
			snprintf(who, sizeof(who), "z%02d", d->prog);
		snprintf(buf, size, "detach %s from #%d [%s rel=%u rev=%llu]", who, d->cgroup,
			 report_flags_str(d->flags, fl, sizeof(fl)), d->relative,
			 (unsigned long long)d->expected_revision);
		break;
	case FUZZ_LINK_DETACH:
	case FUZZ_LINK_CLOSE:
		snprintf(buf, size, "%s L%d", fuzz_kind_name(op->kind), op->link);
		break;
	case FUZZ_LINK_UPDATE:
		snprintf(buf, size, "link-update L%d to z%02d", op->link, op->prog);
		break;
	case FUZZ_TRAFFIC:
	default:
		snprintf(buf, size, "traffic from #%d", op->cgroup);
		break;
	}
}
