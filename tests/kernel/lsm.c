// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF_LSM_CGROUP cases (h), patched kernel with BTF and the BPF LSM (the
 * debug kernel): the new flags on the attach type whose list is chosen
 * by the program's hook rather than by the attach type alone.
 *
 *  - positions: BEFORE / AFTER a program anchor (by fd and by id),
 *  - revision: -ESTALE for a stale expected_revision, as on cgroup_skb
 *    (a new cgroup's lists start at 1);
 *    the query reports revision 0, since BPF_LSM_CGROUP spans one list
 *    per hook (upstream's __cgroup_bpf_query()),
 *  - the query's prog_attach_flags: the list's mode, never PREORDER,
 *  - PREORDER: the parent's program runs before the child's,
 *  - link anchors (BPF_F_LINK) through BPF_LINK_CREATE.
 *
 * What ran is seen as the tests see cgroup_skb programs run: a child
 * process inside the cgroup binds a socket, and the socket_bind copies
 * of lsm-recorder.bpf.c write their tags down in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cases.h"
#include "lsm-recorder.skel.h"
#include "report.h"

#define LSM BPF_LSM_CGROUP
#define LSM_MAX_PROGS 16
#define LSM_RECORD_MAX 64	/* RECORD_MAX in lsm-recorder.bpf.c */


struct lsm_record {
	uint32_t count;
	uint32_t tags[LSM_RECORD_MAX];
};

struct lsm_prog {
	char name[8];
	struct cgf_lsm_recorder *skel;
	int fd;
	uint32_t id;
};

struct lsm {
	struct fixture *f;
	char dir[PATH_MAX];
	int record_fd;
	int nprogs;
	struct lsm_prog progs[LSM_MAX_PROGS];
};

/* Loads copy number nprogs + 1 (its tag) of the recorder. */
static struct lsm_prog *lsm_load(struct lsm *l, const char *name)
{
	struct lsm_prog *p = &l->progs[l->nprogs];
	int r;

	if (l->nprogs >= LSM_MAX_PROGS)
		return NULL;
	p->skel = cgf_lsm_recorder__open();
	if (!p->skel)
		return NULL;
	p->skel->rodata->tag = (uint32_t)l->nprogs + 1;
	r = l->record_fd >= 0 ? bpf_map__reuse_fd(p->skel->maps.cgf_lsm_record, l->record_fd) : 0;
	if (r == 0)
		r = cgf_lsm_recorder__load(p->skel);
	if (r == 0 && l->record_fd < 0) {
		l->record_fd = fcntl(bpf_map__fd(p->skel->maps.cgf_lsm_record), F_DUPFD_CLOEXEC, 3);
		r = l->record_fd < 0 ? -errno : 0;
	}
	if (r < 0) {
		report_fail("lsm: load the socket_bind recorder '%s': %s", name, report_errno(r));
		cgf_lsm_recorder__destroy(p->skel);
		p->skel = NULL;
		return NULL;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->fd = bpf_program__fd(p->skel->progs.cgf_lsm_bind);
	p->id = fixture_prog_id(p->fd);
	l->nprogs++;
	return p;
}

static const char *name_of_tag(const struct lsm *l, uint32_t tag)
{
	return tag >= 1 && tag <= (uint32_t)l->nprogs ? l->progs[tag - 1].name : "?";
}

static const char *name_of_id(const struct lsm *l, uint32_t id)
{
	for (int i = 0; i < l->nprogs; i++)
		if (l->progs[i].id == id)
			return l->progs[i].name;
	return "?";
}

/* In a child inside the cgroup: bind a UDP socket to 127.0.0.1:0. */
static int bind_from(struct lsm *l, const char *path, char *ran, size_t size)
{
	static const struct lsm_record zero;
	struct lsm_record rec;
	uint32_t key = 0;
	size_t off = 0;
	int status;
	pid_t pid;

	if (bpf_map_update_elem(l->record_fd, &key, &zero, BPF_ANY) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		char procs[PATH_MAX + 16];
		int fd;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(2);
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		_exit(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : 3);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	if (bpf_map_lookup_elem(l->record_fd, &key, &rec) < 0)
		return -errno;
	ran[0] = '\0';
	for (uint32_t i = 0; i < rec.count && i < LSM_RECORD_MAX && off < size; i++)
		off += (size_t)snprintf(ran + off, size - off, "%s%s", i ? "," : "", name_of_tag(l, rec.tags[i]));
	return 0;
}

static int mkcg(struct lsm *l, const char *rel, char *path, size_t size)
{
	char sub[128];
	int r;

	snprintf(sub, sizeof(sub), "lsm/%s", rel);
	r = fixture_mkcg(l->f, sub, path, size);
	return r < 0 ? r : fixture_open_cg(path);
}

/* The cgroup's BPF_LSM_CGROUP list: names, and whether each entry's flags are `flags`. */
static void expect_lsm_list(struct lsm *l, const char *what, int cg, const char *want, uint32_t flags)
{
	struct cgbpf_query q;
	char got[256];
	size_t off = 0;
	bool flags_ok = true;
	int r = cgbpf_prog_query(cg, LSM, 0, &q);

	got[0] = '\0';
	for (uint32_t i = 0; r == 0 && i < q.count && off < sizeof(got); i++) {
		off += (size_t)snprintf(got + off, sizeof(got) - off, "%s%s", i ? "," : "", name_of_id(l, q.ids[i]));
		flags_ok = flags_ok && q.prog_flags[i] == flags;
	}
	if (!report_check(r == 0 && strcmp(got, want) == 0 && flags_ok && q.revision == 0,
			  "%s: list [%s], each entry's prog_attach_flags %#x, query revision 0", what, want, flags))
		report_detail("query %s: [%s], revision %llu%s", report_errno(r), got, (unsigned long long)q.revision,
			      flags_ok ? "" : ", other prog_attach_flags");
}

static void expect_bind_runs(struct lsm *l, const char *what, const char *path, const char *want)
{
	char ran[256] = "";
	int r = bind_from(l, path, ran, sizeof(ran));

	if (!report_check(r == 0 && strcmp(ran, want) == 0, "%s: a bind inside runs [%s]", what, want))
		report_detail("bind %s: ran [%s]", report_errno(r), ran);
}

/* An attach that must succeed, with the errno when it does not. */
static void expect_attach_ok(const char *what, int cg, struct lsm_prog *p, const struct cgbpf_attach_opts *o)
{
	int r = cgbpf_prog_attach(cg, p->fd, LSM, o);

	if (!report_check(r == 0, "%s -> 0", what))
		report_detail("got %s", report_errno(r));
}

static void lsm_positions(struct lsm *l)
{
	struct lsm_prog *a = lsm_load(l, "L1"), *b = lsm_load(l, "L2"), *c = lsm_load(l, "L3"), *d = lsm_load(l, "L4");
	char path[PATH_MAX];
	int cg = mkcg(l, "order", path, sizeof(path)), r;

	if (!a || !b || !c || !d || cg < 0) {
		report_fail("lsm-order: set-up");
		return;
	}
	expect_attach_ok("lsm-order: attach L1", cg, a, AO(.flags = MU));
	expect_attach_ok("lsm-order: attach L2 BEFORE L1 (fd)", cg, b,
			 AO(.flags = MU | BPF_F_BEFORE, .relative = (uint32_t)a->fd));
	expect_attach_ok("lsm-order: attach L3 AFTER L1 (id)", cg, c,
			 AO(.flags = MU | BPF_F_AFTER | BPF_F_ID, .relative = a->id));
	expect_lsm_list(l, "lsm-order", cg, "L2,L1,L3", MU);
	expect_bind_runs(l, "lsm-order", path, "L2,L1,L3");

	/* A cgroup's lists start at revision 1; three attaches: 4. */
	r = cgbpf_prog_attach(cg, d->fd, LSM, AO(.flags = MU, .expected_revision = 3));
	if (!report_check(r == -ESTALE, "lsm-revision: attach L4 with expected_revision 3 (the list is at 4) -> -ESTALE"))
		report_detail("got %s", report_errno(r));
	expect_lsm_list(l, "lsm-revision: after -ESTALE", cg, "L2,L1,L3", MU);
	expect_attach_ok("lsm-revision: attach L4 BEFORE L2 with expected_revision 4", cg, d,
			 AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = b->id, .expected_revision = 4));
	expect_bind_runs(l, "lsm-revision", path, "L4,L2,L1,L3");
	/* The same program twice in one list: -EINVAL, as upstream. */
	r = cgbpf_prog_attach(cg, a->fd, LSM, AO(.flags = MU));
	if (!report_check(r == -EINVAL, "lsm-order: attaching L1 again -> -EINVAL"))
		report_detail("got %s", report_errno(r));

	cgbpf_prog_detach(cg, a->fd, LSM, NULL);
	cgbpf_prog_detach(cg, b->fd, LSM, NULL);
	cgbpf_prog_detach(cg, c->fd, LSM, NULL);
	cgbpf_prog_detach(cg, d->fd, LSM, NULL);
	expect_lsm_list(l, "lsm-order: after detaching all", cg, "", MU);
	close(cg);
}

static void lsm_preorder(struct lsm *l)
{
	struct lsm_prog *p = lsm_load(l, "Lp"), *q = lsm_load(l, "Lq"), *c = lsm_load(l, "Lc");
	char parent[PATH_MAX], child[PATH_MAX];
	int pcg = mkcg(l, "pre", parent, sizeof(parent));
	int ccg = pcg < 0 ? -1 : mkcg(l, "pre/c", child, sizeof(child));

	if (!p || !q || !c || pcg < 0 || ccg < 0) {
		report_fail("lsm-preorder: set-up");
		return;
	}
	expect_attach_ok("lsm-preorder: attach Lp PREORDER to the parent", pcg, p, AO(.flags = MU | BPF_F_PREORDER));
	expect_attach_ok("lsm-preorder: attach Lq to the parent", pcg, q, AO(.flags = MU));
	expect_attach_ok("lsm-preorder: attach Lc to the child", ccg, c, AO(.flags = MU));
	/* Upstream reports the mode in prog_attach_flags, not PREORDER. */
	expect_lsm_list(l, "lsm-preorder: parent", pcg, "Lp,Lq", MU);
	expect_bind_runs(l, "lsm-preorder: child", child, "Lp,Lc,Lq");
	cgbpf_prog_detach(ccg, c->fd, LSM, NULL);
	cgbpf_prog_detach(pcg, p->fd, LSM, NULL);
	cgbpf_prog_detach(pcg, q->fd, LSM, NULL);
	close(ccg);
	close(pcg);
}

static void lsm_links(struct lsm *l)
{
	struct lsm_prog *a = lsm_load(l, "Lk1"), *b = lsm_load(l, "Lk2");
	char path[PATH_MAX];
	int cg = mkcg(l, "link", path, sizeof(path)), l1 = -1, l2 = -1;

	if (!a || !b || cg < 0) {
		report_fail("lsm-link: set-up");
		return;
	}
	l1 = cgbpf_link_create(a->fd, cg, LSM, NULL);
	if (!report_check(l1 >= 0, "lsm-link: link Lk1"))
		report_detail("got %s", report_errno(l1));
	if (l1 >= 0)
		l2 = cgbpf_link_create(b->fd, cg, LSM, LO(.flags = BPF_F_BEFORE | BPF_F_LINK, .relative = (uint32_t)l1));
	if (!report_check(l2 >= 0, "lsm-link: link Lk2 BEFORE link Lk1"))
		report_detail("got %s", report_errno(l2));
	expect_lsm_list(l, "lsm-link", cg, "Lk2,Lk1", MU);
	expect_bind_runs(l, "lsm-link", path, "Lk2,Lk1");
	if (l2 >= 0)
		close(l2);
	if (l1 >= 0)
		close(l1);
	close(cg);
}

void lsm_run(struct fixture *f)
{
	struct lsm l = { .f = f, .record_fd = -1 };

	report_note("case lsm-cgroup");
	if (!report_check(access("/sys/kernel/btf/vmlinux", R_OK) == 0,
			  "lsm: the kernel has BTF (/sys/kernel/btf/vmlinux), which lsm_cgroup programs need"))
		return;
	if (fixture_mkcg(f, "lsm", l.dir, sizeof(l.dir)) < 0) {
		report_fail("lsm: set-up: mkdir lsm");
		return;
	}
	lsm_positions(&l);
	lsm_preorder(&l);
	lsm_links(&l);
	for (int i = 0; i < l.nprogs; i++)
		cgf_lsm_recorder__destroy(l.progs[i].skel);
	if (l.record_fd >= 0)
		close(l.record_fd);
	fixture_rmtree(l.dir);
}
