/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The watch edge over a plain directory tree that stands in for
 * cgroupfs (inotify works the same on both): a new directory raises an
 * event, a watched directory removed and created again under the same
 * name is watched again (its children raise events), the kernel's
 * IN_IGNORED forgets a watch, and a directory that cannot be watched
 * does not cost the others theirs.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "cgroup-tree.h"
#include "cgroup-watch.h"
#include "macro.h"
#include "tests.h"

static char base[] = "/tmp/cgf-test-watch.XXXXXX";

static void mk(const char *rel) {
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	REQUIRE(mkdir(path, 0755) == 0);
}

static void rm(const char *rel) {
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	REQUIRE(rmdir(path) == 0);
}

/* Plain directories have no cgroup ids: the inode stands in. */
static int ino_of(int fd, uint64_t *ret) {
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*ret = (uint64_t) st.st_ino;
	return 0;
}

static bool want_all(const char *path _unused_, void *userdata _unused_) {
	return true;
}

/* Reads the tree and updates the watches over it. */
static int update(struct cgf_watch *w, int root_fd, struct cgf_watch_failures *failed) {
	struct cgf_cgroup_tree t = {};
	int r;

	REQUIRE(cgf_cgroup_tree_read_with(root_fd, ino_of, &t) == 0);
	r = cgf_watch_update(w, &t, want_all, NULL, failed, NULL, NULL);
	cgf_cgroup_tree_done(&t);
	return r;
}

static bool drained_change(struct cgf_watch *w) {
	struct cgf_watch_changes c;
	bool changed;

	REQUIRE(cgf_watch_drain(w, &c) == 0);
	changed = !cgf_watch_changes_empty(&c);
	cgf_watch_changes_done(&c);
	return changed;
}

static uint64_t ino_at(const char *rel) {
	char path[8192];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	REQUIRE(stat(path, &st) == 0);
	return (uint64_t) st.st_ino;
}

static bool has_path(const struct cgf_watch_changes *c, const char *path) {
	for (size_t i = 0; i < c->n_created; i++)
		if (streq(c->created[i], path))
			return true;
	return false;
}

static bool has_id(const struct cgf_watch_changes *c, uint64_t id) {
	for (size_t i = 0; i < c->n_removed; i++)
		if (c->removed[i] == id)
			return true;
	return false;
}

/* What the event path of the daemon relies on: events name the created
 * cgroups and the ids of removed watched ones; a partial tree adds
 * watches without forgetting the others; a flood is an overflow. */
static void test_changes(struct test_state *s, int root_fd) {
	struct cgf_watch *w = NULL;
	struct cgf_watch_changes c;
	struct cgf_cgroup_tree t = {};
	char **added = NULL;
	size_t n_added = 0;
	uint64_t id_q;
	int r;

	mk("h");
	mk("h/q");
	REQUIRE(cgf_watch_new(root_fd, &w) == 0);
	REQUIRE(update(w, root_fd, NULL) > 0);
	id_q = ino_at("h/q");

	mk("h/n1");
	mk("h/n2");
	rm("h/q");
	REQUIRE(cgf_watch_drain(w, &c) == 0);
	CHECK(s, c.n_created == 2 && has_path(&c, "h/n1") && has_path(&c, "h/n2"),
	      "created: h/n1 and h/n2, got %zu", c.n_created);
	CHECK(s, c.n_removed == 1 && has_id(&c, id_q), "removed: the id of h/q, got %zu", c.n_removed);
	CHECK(s, !c.overflow, "no overflow");
	cgf_watch_changes_done(&c);

	/* The partial tree of the event: h/n1 and h/n2 and their ancestors. */
	{
		const char *scope[] = { "h/n1", "h/n2" };
		unsigned before = cgf_watch_count(w);

		mk("h/n1/deep");
		REQUIRE(cgf_cgroup_tree_read_scope(root_fd, scope, 2, ino_of, &t) == 0);
		r = cgf_watch_add_scope(w, &t, want_all, NULL, NULL, &added, &n_added);
		CHECK(s, r == 3 && n_added == 3, "three new watches (h/n1, h/n1/deep, h/n2), got %d", r);
		CHECK(s, cgf_watch_count(w) == before + 3, "nothing forgotten: %u watches, was %u",
		      cgf_watch_count(w), before);
		cgf_strv_free(added, n_added);
		r = cgf_watch_add_scope(w, &t, want_all, NULL, NULL, NULL, NULL);
		CHECK(s, r == 0, "the same tree again adds nothing, got %d", r);
		cgf_cgroup_tree_done(&t);
	}
	REQUIRE(cgf_watch_drain(w, &c) == 0); /* h/n1/deep's mkdir, before its parent's watch: maybe */
	cgf_watch_changes_done(&c);
	mk("h/n1/deep/x");
	REQUIRE(cgf_watch_drain(w, &c) == 0);
	CHECK(s, c.n_created == 1 && has_path(&c, "h/n1/deep/x"), "a watch added from a partial tree reports, got %zu",
	      c.n_created);
	cgf_watch_changes_done(&c);

	/* More than CGF_WATCH_CHANGES_MAX creations: an overflow, bounded. */
	for (unsigned i = 0; i < CGF_WATCH_CHANGES_MAX + 5; i++) {
		char name[64];

		snprintf(name, sizeof(name), "h/n2/f%u", i);
		mk(name);
	}
	REQUIRE(cgf_watch_drain(w, &c) == 0);
	CHECK(s, c.overflow && c.n_created <= CGF_WATCH_CHANGES_MAX,
	      "a flood is an overflow with at most %d paths kept, got %d, %zu", CGF_WATCH_CHANGES_MAX, c.overflow,
	      c.n_created);
	cgf_watch_changes_done(&c);
	cgf_watch_free(w);
}

int main(void) {
	struct test_state s = {};
	struct cgf_watch_failures failed;
	struct cgf_watch *w = NULL;
	int fd, r;

	REQUIRE(mkdtemp(base));
	mk("a");
	mk("a/p");
	fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	REQUIRE(cgf_watch_new(fd, &w) == 0);

	r = update(w, fd, &failed);
	CHECK(&s, r == 3, "the root, a and a/p are watched, got %d", r);
	CHECK(&s, failed.n == 0, "no failures, got %u", failed.n);
	r = update(w, fd, NULL);
	CHECK(&s, r == 0, "an unchanged tree adds no watch, got %d", r);

	mk("a/p/c1");
	CHECK(&s, drained_change(w), "mkdir a/p/c1 raises an event");
	CHECK(&s, update(w, fd, NULL) == 1, "a/p/c1 is watched");

	/* A container restart: its directory goes and comes back under the
	 * same name.  The old watch ended with the old directory; the
	 * events say so, and the next update watches the new one. */
	rm("a/p/c1");
	rm("a/p");
	mk("a/p");
	CHECK(&s, drained_change(w), "the removals and the mkdir were events");
	r = update(w, fd, NULL);
	CHECK(&s, r == 1, "the re-created a/p is watched again, got %d", r);
	CHECK(&s, cgf_watch_count(w) == 3, "root, a, a/p watched, got %u", cgf_watch_count(w));
	mk("a/p/c2");
	CHECK(&s, drained_change(w), "a child of the re-created a/p raises an event");
	CHECK(&s, update(w, fd, NULL) == 1, "a/p/c2 is watched");
	rm("a/p/c2");
	CHECK(&s, drained_change(w), "rmdir a/p/c2 raises an event");

	/* The same with the tree read before the events (a reload between
	 * the rmdir and the read): on cgroupfs the new directory has another
	 * cgroup id, so the update alone re-watches it; a file system that
	 * reuses the inode number leaves it to IN_IGNORED.  Either way the
	 * new directory is watched once both were seen. */
	rm("a/p");
	mk("a/p");
	(void) update(w, fd, NULL);
	CHECK(&s, drained_change(w), "the removal and the mkdir were events");
	(void) update(w, fd, NULL);
	CHECK(&s, cgf_watch_count(w) == 3, "root, a, a/p watched, got %u", cgf_watch_count(w));
	mk("a/p/c3");
	CHECK(&s, drained_change(w), "a child of the re-created a/p raises an event");
	CHECK(&s, update(w, fd, NULL) == 1, "a/p/c3 is watched");

	/* IN_IGNORED alone forgets the watch: no tree needed. */
	rm("a/p/c3");
	CHECK(&s, drained_change(w), "rmdir a/p/c3 raises an event");
	CHECK(&s, cgf_watch_count(w) == 3, "its watch is forgotten at IN_IGNORED, got %u", cgf_watch_count(w));

	/* A directory that cannot be watched (here a path longer than
	 * inotify takes; on a host, ENOSPC from max_user_watches) is counted
	 * as failed, and the directories after it are still watched. */
	{
		static char too_long[5000];
		char *paths[] = { ".", "a", "a/p", too_long, "b" };
		uint64_t ids[ELEMENTSOF(paths)] = {};
		struct cgf_cgroup_tree t = { .paths = paths, .ids = ids, .n_paths = ELEMENTSOF(paths) };
		struct cgf_cgroup_tree real = {};

		memset(too_long, 'x', sizeof(too_long) - 1);
		mk("b");
		REQUIRE(cgf_cgroup_tree_read_with(fd, ino_of, &real) == 0);
		for (size_t i = 0; i < real.n_paths; i++)
			for (size_t j = 0; j < t.n_paths; j++)
				if (streq(real.paths[i], paths[j]))
					ids[j] = real.ids[i];
		cgf_cgroup_tree_done(&real);
		r = cgf_watch_update(w, &t, want_all, NULL, &failed, NULL, NULL);
		CHECK(&s, failed.n == 1 && failed.first_error == -ENAMETOOLONG && failed.first_path == too_long,
		      "the long path failed with ENAMETOOLONG, got %u, %d", failed.n, failed.first_error);
		CHECK(&s, r == 1, "b after it is watched, got %d", r);
		mk("b/x");
		CHECK(&s, drained_change(w), "b's watch works");
	}

	cgf_watch_free(w);
	test_changes(&s, fd);
	close(fd);
	{
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
		REQUIRE(system(cmd) == 0);
	}
	return test_finish(&s, "test-cgroup-watch");
}
