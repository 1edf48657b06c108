/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The randomized model test's operation generator: pure (an rng and
 * the model's current state in, one operation out), so the host unit
 * test can drive it through the model under ASan without a kernel.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cgbpf-model.h"

enum fuzz_kind {
	FUZZ_ATTACH,		/* BPF_PROG_ATTACH, incl. REPLACE */
	FUZZ_LINK_CREATE,	/* BPF_LINK_CREATE */
	FUZZ_DETACH,		/* BPF_PROG_DETACH */
	FUZZ_LINK_DETACH,	/* BPF_LINK_DETACH */
	FUZZ_LINK_CLOSE,	/* close() of the link's only fd */
	FUZZ_LINK_UPDATE,	/* BPF_LINK_UPDATE */
	FUZZ_TRAFFIC,		/* a datagram from inside a cgroup */
	FUZZ_KINDS,
};

struct fuzz_op {
	enum fuzz_kind kind;
	struct model_attach attach;	/* ATTACH, LINK_CREATE */
	struct model_detach detach;	/* DETACH */
	int link;			/* LINK_*: the link; LINK_CREATE: the new handle */
	int prog;			/* LINK_UPDATE: the new prog */
	int cgroup;			/* TRAFFIC */
};

struct fuzz_gen {
	uint64_t rng;
	bool patched;		/* false: old flags only, no revisions, no anchors */
	int ncgroups;		/* model cgroups 0 .. ncgroups-1 */
	int nprogs;		/* prog handles 0 .. nprogs-1 */
	int max_links;		/* link handles 0 .. max_links-1 */
};

void fuzz_gen_init(struct fuzz_gen *g, uint64_t seed, bool patched, int ncgroups, int nprogs, int max_links);
void fuzz_gen_op(struct fuzz_gen *g, const struct model *m, struct fuzz_op *op);
uint64_t fuzz_gen_below(struct fuzz_gen *g, uint64_t n);

/* One line: "attach z03 to #2 [MULTI|AFTER anchor=prog z01 rev=4]". */
void fuzz_op_describe(const struct fuzz_op *op, char *buf, size_t size);
const char *fuzz_kind_name(enum fuzz_kind kind);
