// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reference model of cgroup-bpf attachment; see cgbpf-model.h.  Each rule
 * names where it comes from: "spec" is docs/cgroup-bpf-uapi.md,
 * "6.1" is Debian's kernel/bpf/cgroup.c and syscall.c as shipped (the
 * behaviour the series must keep), "upstream" the 6.17 code the spec
 * was read from.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "cgbpf-uapi.h"
#include "cgbpf-model.h"

#define MODE_BITS		(BPF_F_ALLOW_OVERRIDE | BPF_F_ALLOW_MULTI)
#define POSITION_BITS		(BPF_F_BEFORE | BPF_F_AFTER)
/* spec: PROG_ATTACH flags must be a subset of these */
#define ATTACH_MASK_PATCHED	(BPF_F_ALLOW_OVERRIDE | BPF_F_ALLOW_MULTI | BPF_F_REPLACE | \
				 BPF_F_PREORDER | BPF_F_BEFORE | BPF_F_AFTER | BPF_F_ID | BPF_F_LINK)
/* 6.1: BPF_F_ATTACH_MASK */
#define ATTACH_MASK_BASELINE	(BPF_F_ALLOW_OVERRIDE | BPF_F_ALLOW_MULTI | BPF_F_REPLACE)
/* spec: LINK_CREATE flags must be a subset of these; 6.1 takes none */
#define LINK_MASK_PATCHED	(BPF_F_ID | BPF_F_BEFORE | BPF_F_AFTER | BPF_F_PREORDER | BPF_F_LINK)

/* How a successful attach changes the list. */
enum plan_kind {
	PLAN_INSERT,		/* a new entry at `pos` */
	PLAN_REPLACE,		/* entry `pos` gets the new prog and PREORDER bit */
};

struct plan {
	struct model_prediction pred;
	enum plan_kind kind;
	int pos;
};

static struct model_prediction predict(int err)
{
	return (struct model_prediction){ .err = err, .alt = err, .why = NULL };
}

void model_init(struct model *m, enum model_kernel kernel)
{
	memset(m, 0, sizeof(*m));
	m->kernel = kernel;
}

int model_add_cgroup(struct model *m, int parent)
{
	for (int i = 0; i < MODEL_MAX_CGROUPS; i++) {
		if (m->cg[i].used)
			continue;
		m->cg[i] = (struct model_cgroup){
			.used = true,
			.parent = parent,
			.revision = 1,	/* spec: starting at 1 */
		};
		return i;
	}
	return -ENOSPC;
}

int model_entry_prog(const struct model *m, const struct model_entry *e)
{
	return e->link >= 0 ? m->link[e->link].prog : e->prog;
}

uint32_t model_query_flags(const struct model *m, int cg)
{
	/* 6.1: the flags are reset to 0 when the last prog is detached */
	return m->cg[cg].n > 0 ? (uint32_t)m->cg[cg].mode : 0;
}

static bool is_multi(const struct model *m, int cg)
{
	return m->cg[cg].n > 0 && m->cg[cg].mode == MODEL_MODE_MULTI;
}

bool model_hierarchy_allows(const struct model *m, int cg)
{
	/* 6.1 hierarchy_allows_attach(): the nearest ancestor with progs decides. */
	for (int p = m->cg[cg].parent; p >= 0; p = m->cg[p].parent) {
		if (is_multi(m, p))
			return true;
		if (m->cg[p].n == 1)
			return m->cg[p].mode == MODEL_MODE_OVERRIDE;
	}
	return true;
}

int model_effective(const struct model *m, int cg, int *out)
{
	int levels[MODEL_MAX_CGROUPS], nlevels = 0, cnt = 0, n = 0;

	/* spec: walking to the root, a level counts if it is the first level
	 * with progs or its mode is ALLOW_MULTI. */
	for (int p = cg; p >= 0; p = m->cg[p].parent) {
		if (cnt == 0 || is_multi(m, p)) {
			levels[nlevels++] = p;
			cnt += m->cg[p].n;
		}
	}
	/* spec: PREORDER progs root-first, each level in list order ... */
	for (int l = nlevels - 1; l >= 0; l--) {
		const struct model_cgroup *c = &m->cg[levels[l]];

		for (int i = 0; i < c->n; i++)
			if (c->list[i].preorder)
				out[n++] = model_entry_prog(m, &c->list[i]);
	}
	/* ... then the others child-first, each level in list order. */
	for (int l = 0; l < nlevels; l++) {
		const struct model_cgroup *c = &m->cg[levels[l]];

		for (int i = 0; i < c->n; i++)
			if (!c->list[i].preorder)
				out[n++] = model_entry_prog(m, &c->list[i]);
	}
	return n;
}

static int find_direct(const struct model_cgroup *c, int prog)
{
	for (int i = 0; i < c->n; i++)
		if (c->list[i].link < 0 && c->list[i].prog == prog)
			return i;
	return -1;
}

static int find_link(const struct model_cgroup *c, int link)
{
	for (int i = 0; i < c->n; i++)
		if (c->list[i].link == link)
			return i;
	return -1;
}

/*
 * Resolves the relative value to an anchor object, as the kernel does
 * before it looks at the list: returns 0 and the list index through
 * ret_pos (-1: no anchor), or -errno.
 */
static int resolve_anchor(const struct model *m, const struct model_cgroup *c,
			  const struct model_attach *a, int *ret_pos)
{
	bool is_link = a->flags & BPF_F_LINK, is_id = a->flags & BPF_F_ID;
	const struct model_anchor *an = &a->anchor;

	*ret_pos = -1;
	if (is_link) {
		switch (an->kind) {
		case MODEL_ANCHOR_NONE:
			/* id 0 is nobody's id; fd 0 (stdin) is not a link */
			return is_id ? -ENOENT : -EINVAL;
		case MODEL_ANCHOR_UNKNOWN:
			return is_id ? -ENOENT : -EBADF;
		case MODEL_ANCHOR_WRONG_KIND:
		case MODEL_ANCHOR_PROG:	/* a prog fd is not a link fd */
			return -EINVAL;
		case MODEL_ANCHOR_LINK:
			if (!m->link[an->handle].used)
				return is_id ? -ENOENT : -EBADF;
			*ret_pos = find_link(c, an->handle);
			break;
		}
	} else if (is_id || an->kind != MODEL_ANCHOR_NONE) {
		switch (an->kind) {
		case MODEL_ANCHOR_NONE:
			return -ENOENT;	/* only reachable with BPF_F_ID: id 0 */
		case MODEL_ANCHOR_UNKNOWN:
			return is_id ? -ENOENT : -EBADF;
		case MODEL_ANCHOR_WRONG_KIND:
		case MODEL_ANCHOR_LINK:	/* a link fd is not a prog fd */
			return -EINVAL;
		case MODEL_ANCHOR_PROG:
			/* upstream: a prog anchor matches a directly attached prog */
			*ret_pos = find_direct(c, an->handle);
			break;
		}
	} else {
		return 0;	/* no anchor at all */
	}
	if (*ret_pos < 0)
		return -ENOENT;	/* spec: anchor not in this cgroup's list */
	if (c->list[*ret_pos].preorder != !!(a->flags & BPF_F_PREORDER))
		return -EINVAL;	/* spec: anchor's PREORDER bit differs */
	return 0;
}

/* spec "Ordering": where a new entry goes, or -errno; the anchor checks. */
static int insert_position(const struct model *m, const struct model_cgroup *c,
			   const struct model_attach *a, int *ret_pos)
{
	bool is_link = a->flags & BPF_F_LINK, is_id = a->flags & BPF_F_ID;
	bool before = a->flags & BPF_F_BEFORE, after = a->flags & BPF_F_AFTER;
	int anchor, r;

	if (is_link || is_id || a->anchor.kind != MODEL_ANCHOR_NONE) {
		/* exactly one of BEFORE / AFTER */
		if (before == after)
			return -EINVAL;
		/* PROG_ATTACH anchors are progs, LINK_CREATE anchors are links */
		if (is_link != a->link_create)
			return -EINVAL;
	} else if (c->n > 0 && before && after) {
		return -EINVAL;	/* BEFORE|AFTER only on an empty list */
	}
	r = resolve_anchor(m, c, a, &anchor);
	if (r < 0)
		return r;
	if (anchor < 0)
		*ret_pos = before ? 0 : c->n;	/* BEFORE: head; else append */
	else
		*ret_pos = before ? anchor : anchor + 1;
	return 0;
}

/* The checks 6.1 makes before its own: which bytes and flags it accepts. */
static int baseline_attr_check(const struct model_attach *a)
{
	if (a->link_create)
		/* 6.1 cgroup_bpf_link_attach(): flags must be 0; the bytes of
		 * the new cgroup member lie inside the union and go unread. */
		return a->flags ? -EINVAL : 0;
	/* CHECK_ATTR: nothing after replace_bpf_fd */
	if (a->anchor.kind != MODEL_ANCHOR_NONE || a->expected_revision)
		return -EINVAL;
	if (a->flags & ~ATTACH_MASK_BASELINE)
		return -EINVAL;
	return 0;
}

static struct plan plan_attach(const struct model *m, const struct model_attach *a)
{
	const struct model_cgroup *c = &m->cg[a->cgroup];
	bool patched = m->kernel == MODEL_KERNEL_PATCHED;
	uint32_t flags = a->flags;
	struct plan p = { .pred = predict(0) };
	int r;

	/* flag mask */
	if (!patched) {
		r = baseline_attr_check(a);
		if (r < 0)
			return (struct plan){ .pred = predict(r) };
	} else if (flags & ~(a->link_create ? LINK_MASK_PATCHED : ATTACH_MASK_PATCHED)) {
		return (struct plan){ .pred = predict(-EINVAL) };
	}
	if (a->link_create)
		flags |= BPF_F_ALLOW_MULTI;	/* a cgroup link is always MULTI */

	/* invalid combinations */
	if ((flags & BPF_F_ALLOW_OVERRIDE) && (flags & BPF_F_ALLOW_MULTI))
		return (struct plan){ .pred = predict(-EINVAL) };
	if ((flags & BPF_F_REPLACE) && !(flags & BPF_F_ALLOW_MULTI))
		return (struct plan){ .pred = predict(-EINVAL) };
	if ((flags & BPF_F_REPLACE) && (flags & POSITION_BITS))
		return (struct plan){ .pred = predict(-EINVAL) };

	/* revision, right after the attach-type lookup */
	if (patched && a->expected_revision && a->expected_revision != c->revision)
		return (struct plan){ .pred = predict(-ESTALE) };

	/* hierarchy, then mode mismatch within this cgroup */
	if (!model_hierarchy_allows(m, a->cgroup))
		return (struct plan){ .pred = predict(-EPERM) };
	if (c->n > 0 && (uint32_t)c->mode != (flags & MODE_BITS))
		return (struct plan){ .pred = predict(-EPERM) };

	if (c->n >= MODEL_MAX_LIST)
		return (struct plan){ .pred = predict(-E2BIG) };

	if (!(flags & BPF_F_ALLOW_MULTI)) {
		if (c->n == 0)
			goto insert;
		/* single slot: the prog is replaced; upstream never looks at
		 * positional flags or the anchor here (find_attach_entry()
		 * returns the slot, get_prog_list() is not called) */
		p.kind = PLAN_REPLACE;
		p.pos = 0;
		return p;
	}

	/* same prog twice (6.1: only among directly attached progs) */
	if (!a->link_create) {
		int dup = find_direct(c, a->prog);

		if (dup >= 0 && !((flags & BPF_F_REPLACE) && a->replace_prog == a->prog))
			return (struct plan){ .pred = predict(-EINVAL) };
	}
	if (flags & BPF_F_REPLACE) {
		p.kind = PLAN_REPLACE;
		p.pos = find_direct(c, a->replace_prog);
		if (p.pos < 0)
			return (struct plan){ .pred = predict(-ENOENT) };
		/* upstream ignores ID/LINK/relative with REPLACE: the entry is
		 * found, get_prog_list() is not called */
		return p;
	}

insert:
	p.kind = PLAN_INSERT;
	if (!patched) {
		p.pos = c->n;	/* 6.1 always appends */
		return p;
	}
	r = insert_position(m, c, a, &p.pos);
	if (r < 0)
		return (struct plan){ .pred = predict(r) };
	return p;
}

struct model_prediction model_predict_attach(const struct model *m, const struct model_attach *a)
{
	return plan_attach(m, a).pred;
}

void model_apply_attach(struct model *m, const struct model_attach *a, int link)
{
	struct model_cgroup *c = &m->cg[a->cgroup];
	struct plan p = plan_attach(m, a);
	bool preorder = a->flags & BPF_F_PREORDER;
	struct model_entry e = {
		.prog = a->link_create ? -1 : a->prog,
		.link = a->link_create ? link : -1,
		.preorder = preorder,
	};

	if (p.pred.err < 0)
		return;
	if (p.kind == PLAN_REPLACE) {
		/* spec (reading): the new attach's PREORDER bit */
		c->list[p.pos] = e;
	} else {
		memmove(&c->list[p.pos + 1], &c->list[p.pos],
			(size_t)(c->n - p.pos) * sizeof(c->list[0]));
		c->list[p.pos] = e;
		c->n++;
	}
	c->mode = (enum model_mode)((a->link_create ? BPF_F_ALLOW_MULTI : a->flags) & MODE_BITS);
	c->revision++;
	if (a->link_create)
		m->link[link] = (struct model_link){
			.used = true,
			.prog = a->prog,
			.cgroup = a->cgroup,
			.preorder = preorder,
		};
}

/* Which entry a detach removes, or -errno. */
static int plan_detach(const struct model *m, const struct model_detach *d, int *ret_pos)
{
	const struct model_cgroup *c = &m->cg[d->cgroup];

	if (m->kernel == MODEL_KERNEL_BASELINE) {
		/* 6.1 CHECK_ATTR: nothing after attach_type */
		if (d->flags || d->relative || d->expected_revision)
			return -EINVAL;
	} else {
		/* spec: non-zero attach_flags or relative_fd */
		if (d->flags || d->relative)
			return -EINVAL;
		if (d->expected_revision && d->expected_revision != c->revision)
			return -ESTALE;
	}
	if (!is_multi(m, d->cgroup)) {
		/* 6.1: none/override detach whatever is attached, any fd */
		if (c->n == 0)
			return -ENOENT;
		*ret_pos = 0;
		return 0;
	}
	if (d->prog < 0)
		return -EINVAL;	/* 6.1: MULTI needs the prog's fd */
	*ret_pos = find_direct(c, d->prog);
	return *ret_pos < 0 ? -ENOENT : 0;
}

struct model_prediction model_predict_detach(const struct model *m, const struct model_detach *d)
{
	int pos;

	return predict(plan_detach(m, d, &pos));
}

static void remove_entry(struct model *m, int cg, int pos)
{
	struct model_cgroup *c = &m->cg[cg];

	memmove(&c->list[pos], &c->list[pos + 1], (size_t)(c->n - pos - 1) * sizeof(c->list[0]));
	c->n--;
	if (c->n == 0)
		c->mode = MODEL_MODE_NONE;
	c->revision++;
}

void model_apply_detach(struct model *m, const struct model_detach *d)
{
	int pos;

	if (plan_detach(m, d, &pos) < 0)
		return;
	remove_entry(m, d->cgroup, pos);
}

int model_link_detach(struct model *m, int link)
{
	struct model_link *l = &m->link[link];

	/* 6.1: detaching a defunct link succeeds and changes nothing */
	if (l->cgroup >= 0) {
		remove_entry(m, l->cgroup, find_link(&m->cg[l->cgroup], link));
		l->cgroup = -1;
	}
	return 0;
}

void model_link_close(struct model *m, int link)
{
	model_link_detach(m, link);
	m->link[link].used = false;
}

int model_link_update(struct model *m, int link, int new_prog)
{
	struct model_link *l = &m->link[link];

	if (l->cgroup < 0)
		return -ENOLINK;	/* 6.1 cgroup_bpf_replace() */
	/* spec: the link keeps its flags; the revision moves */
	l->prog = new_prog;
	m->cg[l->cgroup].revision++;
	return 0;
}
