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
	r = cgf_watch_update(w, &t, want_all, NULL, failed);
	cgf_cgroup_tree_done(&t);
	return r;
}

static bool drained_change(struct cgf_watch *w) {
	bool changed = false, overflow = false;

	REQUIRE(cgf_watch_drain(w, &changed, &overflow) == 0);
	return changed;
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
		r = cgf_watch_update(w, &t, want_all, NULL, &failed);
		CHECK(&s, failed.n == 1 && failed.first_error == -ENAMETOOLONG && failed.first_path == too_long,
		      "the long path failed with ENAMETOOLONG, got %u, %d", failed.n, failed.first_error);
		CHECK(&s, r == 1, "b after it is watched, got %d", r);
		mk("b/x");
		CHECK(&s, drained_change(w), "b's watch works");
	}

	cgf_watch_free(w);
	close(fd);
	{
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
		REQUIRE(system(cmd) == 0);
	}
	return test_finish(&s, "test-cgroup-watch");
}
