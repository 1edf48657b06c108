// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgcount: what is attached to the cgroups below a directory, counted
 * with BPF_PROG_QUERY alone (no BTF, no program info), so that a
 * benchmark can check in one process that two ways of attaching left
 * the kernel in the same state (bench/parts/4-reconcile).
 *
 *   cgcount DIR
 *
 * For every cgroup below DIR (DIR itself not included) it reads the
 * egress and ingress lists (not the effective ones) and prints one line
 *
 *   cgroups N both B multi M egress_attached E ingress_attached I
 *     egress_progs PE ingress_progs PI
 *
 * B: cgroups with exactly one program on each direction; M: cgroups
 * whose both lists carry BPF_F_ALLOW_MULTI; E, I: programs attached,
 * summed over the cgroups; PE, PI: distinct program ids seen per
 * direction (one filter shared by every cgroup gives 1).  Exit status 0
 * when every list was read, 1 when a query failed (the reason on
 * stderr), 2 on wrong usage.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgbpf-sys.h"

/* Distinct ids are only a sanity figure: past this many, say "many". */
#define MAX_DISTINCT 1024

struct direction {
	enum bpf_attach_type type;
	unsigned long attached;
	uint32_t distinct[MAX_DISTINCT];
	unsigned n_distinct;
	int overflow;
};

static struct direction egress = { .type = BPF_CGROUP_INET_EGRESS };
static struct direction ingress = { .type = BPF_CGROUP_INET_INGRESS };
static unsigned long cgroups, both, multi;
static int failed;

static void note_id(struct direction *d, uint32_t id) {
	for (unsigned i = 0; i < d->n_distinct; i++)
		if (d->distinct[i] == id)
			return;
	if (d->n_distinct == MAX_DISTINCT) {
		d->overflow = 1;
		return;
	}
	d->distinct[d->n_distinct++] = id;
}

/* One list: its count and flags; its ids go to the distinct set. */
static int query(int fd, const char *path, struct direction *d, struct cgbpf_query *q) {
	int r = cgbpf_prog_query(fd, d->type, 0, q);

	if (r < 0) {
		fprintf(stderr, "cgcount: %s: BPF_PROG_QUERY %s: %s\n", path,
			d->type == BPF_CGROUP_INET_EGRESS ? "egress" : "ingress", strerror(-r));
		return r;
	}
	d->attached += q->count;
	for (uint32_t i = 0; i < q->count && i < CGBPF_MAX_QUERY; i++)
		note_id(d, q->ids[i]);
	return 0;
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
	struct cgbpf_query qe, qi;
	int fd;

	(void)st;
	if (flag != FTW_D || ftw->level == 0)
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		/* A cgroup removed while we walk is no longer ours to count. */
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "cgcount: %s: %s\n", path, strerror(errno));
		failed = 1;
		return 0;
	}
	cgroups++;
	if (query(fd, path, &egress, &qe) < 0 || query(fd, path, &ingress, &qi) < 0) {
		failed = 1;
	} else {
		if (qe.count == 1 && qi.count == 1)
			both++;
		if ((qe.attach_flags & BPF_F_ALLOW_MULTI) && (qi.attach_flags & BPF_F_ALLOW_MULTI))
			multi++;
	}
	close(fd);
	return 0;
}

static void print_distinct(const char *name, const struct direction *d) {
	if (d->overflow)
		printf(" %s many", name);
	else
		printf(" %s %u", name, d->n_distinct);
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fputs("usage: cgcount DIR\n", stderr);
		return 2;
	}
	/* FTW_PHYS: cgroupfs has no links, and a link is nothing to count. */
	if (nftw(argv[1], visit, 64, FTW_PHYS) != 0) {
		fprintf(stderr, "cgcount: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("cgroups %lu both %lu multi %lu egress_attached %lu ingress_attached %lu",
	       cgroups, both, multi, egress.attached, ingress.attached);
	print_distinct("egress_progs", &egress);
	print_distinct("ingress_progs", &ingress);
	putchar('\n');
	return failed;
}
