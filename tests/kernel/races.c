// SPDX-License-Identifier: GPL-2.0-only
/*
 * Races (g), patched kernel: an anchor that goes away while another
 * thread attaches relative to it.
 *
 *  - anchor-link-close: a thread closes the last file descriptor of a
 *    link L while the main thread creates a link BEFORE L (BPF_F_LINK
 *    with L's id).  The kernel takes its own reference to L for the
 *    lookup, so L's release may run in either thread, after the attach
 *    has dropped cgroup_mutex or before it took it.
 *  - anchor-prog-detach: a thread detaches program B while the main
 *    thread attaches C BEFORE B (BPF_F_ID with B's id).
 *
 * Either order is correct, and nothing else is: the new entry lands
 * where the anchor was (and stays when the anchor goes), or the call
 * fails with -ENOENT and changes nothing.  Each round checks the list
 * once the anchor is gone; the debug kernel adds lockdep and KASAN,
 * and tests/vm/run reads the kernel log after.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "report.h"

#define RACE_ROUNDS 500


/* What the other thread does to the anchor, once both threads are ready. */
struct remover {
	pthread_barrier_t start;
	int cg_fd;
	int link_fd;		/* anchor-link-close: close it */
	int prog_fd;		/* anchor-prog-detach: detach it */
};

static void *remove_anchor(void *arg)
{
	struct remover *rm = arg;

	pthread_barrier_wait(&rm->start);
	if (rm->link_fd >= 0)
		close(rm->link_fd);
	else
		cgbpf_prog_detach(rm->cg_fd, rm->prog_fd, EGRESS, NULL);
	return NULL;
}

/* The cgroup's list by names, once `gone` is no longer in it (bounded). */
static int list_without(struct fixture *f, int cg_fd, const char *gone, char *buf, size_t size)
{
	for (int i = 0; i < 200; i++) {
		struct cgbpf_query q;
		int r = cgbpf_prog_query(cg_fd, EGRESS, 0, &q);

		if (r < 0)
			return r;
		fixture_names_of_ids(f, q.ids, q.count, buf, size);
		if (!strstr(buf, gone))
			return 0;
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
	}
	return -ETIMEDOUT;
}

static void race(struct fixture *f, int cg_fd, bool link_anchor)
{
	const char *name = link_anchor ? "anchor-link-close" : "anchor-prog-detach";
	int placed = 0, missed = 0, wrong = 0, base_link;

	/* The entry that stays: a link running rA. */
	base_link = cgbpf_link_create(fixture_prog_fd(f, "rA"), cg_fd, EGRESS, NULL);
	if (!report_check(base_link >= 0, "races: %s: set-up: link rA", name))
		return;
	for (int i = 0; i < RACE_ROUNDS; i++) {
		struct remover rm = { .cg_fd = cg_fd, .link_fd = -1, .prog_fd = fixture_prog_fd(f, "rB") };
		struct prog *anchor_prog = fixture_prog(f, "rB");
		char got[256];
		pthread_t th;
		uint32_t id;
		int r, new_link = -1;

		if (link_anchor) {
			rm.link_fd = cgbpf_link_create(rm.prog_fd, cg_fd, EGRESS, NULL);
			r = rm.link_fd < 0 ? rm.link_fd : 0;
			id = rm.link_fd < 0 ? 0 : fixture_link_id(rm.link_fd);
		} else {
			r = cgbpf_prog_attach(cg_fd, rm.prog_fd, EGRESS, AO(.flags = MU));
			id = anchor_prog ? anchor_prog->id : 0;
		}
		if (r < 0 || !id || pthread_barrier_init(&rm.start, NULL, 2) != 0) {
			report_fail("races: %s: round %d: set-up: %s", name, i, report_errno(r));
			if (rm.link_fd >= 0)
				close(rm.link_fd);
			break;
		}
		if (pthread_create(&th, NULL, remove_anchor, &rm) != 0) {
			report_fail("races: %s: round %d: pthread_create", name, i);
			pthread_barrier_destroy(&rm.start);
			break;
		}
		pthread_barrier_wait(&rm.start);
		if (link_anchor) {
			r = cgbpf_link_create(fixture_prog_fd(f, "rC"), cg_fd, EGRESS,
					      LO(.flags = BPF_F_BEFORE | BPF_F_LINK | BPF_F_ID, .relative = id));
			new_link = r;
		} else {
			r = cgbpf_prog_attach(cg_fd, fixture_prog_fd(f, "rC"), EGRESS,
					      AO(.flags = MU | BPF_F_BEFORE | BPF_F_ID, .relative = id));
		}
		pthread_join(th, NULL);
		pthread_barrier_destroy(&rm.start);

		/* rB is gone now or soon (a link's release may be deferred). */
		if (list_without(f, cg_fd, "rB", got, sizeof(got)) < 0) {
			wrong++;
			report_fail("races: %s: round %d: rB still attached: [%s]", name, i, got);
		} else if (r >= 0 && strcmp(got, "rA,rC") == 0) {
			placed++;
		} else if (r == -ENOENT && strcmp(got, "rA") == 0) {
			missed++;
		} else {
			wrong++;
			report_fail("races: %s: round %d: attach %s, list [%s]; want 0 and [rA,rC] or -ENOENT and [rA]",
				    name, i, report_errno(r < 0 ? r : 0), got);
		}
		if (new_link >= 0)
			close(new_link);
		else if (r == 0)
			cgbpf_prog_detach(cg_fd, fixture_prog_fd(f, "rC"), EGRESS, NULL);
		if (list_without(f, cg_fd, "rC", got, sizeof(got)) < 0 || strcmp(got, "rA") != 0) {
			report_fail("races: %s: round %d: after removing rC the list is [%s], want [rA]", name, i, got);
			break;
		}
		if (wrong > 10)
			break;
	}
	report_check(wrong == 0 && placed + missed == RACE_ROUNDS,
		     "races: %s: %d rounds, each either placed before the anchor (%d) or -ENOENT with nothing "
		     "changed (%d)",
		     name, placed + missed + wrong, placed, missed);
	close(base_link);
}

void races_run(struct fixture *f)
{
	char path[PATH_MAX];
	int cg_fd;

	report_note("case races");
	if (fixture_mkcg(f, "races", path, sizeof(path)) < 0 || (cg_fd = fixture_open_cg(path)) < 0) {
		report_fail("races: set-up: cgroup races");
		return;
	}
	if (fixture_prog(f, "rA") && fixture_prog(f, "rB") && fixture_prog(f, "rC")) {
		race(f, cg_fd, true);
		race(f, cg_fd, false);
	}
	close(cg_fd);
	fixture_rmtree(path);
}
