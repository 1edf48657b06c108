/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The cgroup tree snapshot, over a plain directory tree that stands in
 * for cgroupfs (the walk only sees directories: what cgroupfs keeps in
 * files are the knobs): every directory once, parents before children,
 * files and symlinks ignored, the root as ".".
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cgroup-tree.h"
#include "reach.h"
#include "macro.h"
#include "tests.h"

static void make(const char *base, const char *rel, bool dir) {
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	if (dir)
		REQUIRE(mkdir(path, 0755) == 0);
	else {
		int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

		REQUIRE(fd >= 0);
		close(fd);
	}
}

/* Plain directories have no cgroup ids: the inode stands in. */
static int ino_of(int fd, uint64_t *ret) {
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*ret = (uint64_t) st.st_ino;
	return 0;
}

static bool has(const struct cgf_cgroup_tree *t, const char *path, size_t *ret_index) {
	for (size_t i = 0; i < t->n_paths; i++)
		if (streq(t->paths[i], path)) {
			*ret_index = i;
			return true;
		}
	return false;
}

int main(void) {
	struct test_state s = {};
	char base[] = "/tmp/cgf-test-tree.XXXXXX";
	struct cgf_cgroup_tree t = {};
	const char *dirs[] = { "a", "a/b", "a/b/c", "d", "d/e" };
	size_t ia, ib, ic, id, ie, iroot;
	char path[4096];
	int fd;

	REQUIRE(mkdtemp(base));
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
		make(base, dirs[i], true);
	make(base, "cgroup.procs", false);
	make(base, "a/cgroup.procs", false);
	make(base, "a/b/memory.max", false);
	snprintf(path, sizeof(path), "%s/a", base);
	snprintf(path + 2048, 2048, "%s/link", base);
	REQUIRE(symlink(path, path + 2048) == 0);

	fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	/* Outside cgroupfs there is no cgroup id: an error, not an inode. */
	{
		uint64_t id = 0;
		int r = cgf_cgroup_id_of_fd(fd, &id);

		CHECK(&s, r == -EMEDIUMTYPE || r == -EOPNOTSUPP, "cgroup id of a plain directory: %d", r);
		r = cgf_cgroup_tree_read(fd, &t);
		CHECK(&s, (r == -EMEDIUMTYPE || r == -EOPNOTSUPP) && t.n_paths == 0,
		      "a plain directory tree read for cgroup ids fails: %d", r);
		cgf_cgroup_tree_done(&t);
	}
	CHECK(&s, cgf_cgroup_tree_read_with(fd, ino_of, &t) == 0, "read");
	CHECK(&s, t.n_paths == 6, "root and five directories, got %zu", t.n_paths);
	CHECK(&s, has(&t, ".", &iroot) && iroot == 0, "the root first, as '.'");
	CHECK(&s, has(&t, "a", &ia) && has(&t, "a/b", &ib) && has(&t, "a/b/c", &ic), "a, a/b, a/b/c");
	CHECK(&s, has(&t, "d", &id) && has(&t, "d/e", &ie), "d, d/e");
	CHECK(&s, ia < ib && ib < ic && id < ie, "parents before children");
	CHECK(&s, !has(&t, "link", &ia) && !has(&t, "cgroup.procs", &ia), "no files, no symlinks");
	/* Made after the walk, in directories just watched: a full walk's
	 * tree (walk order, not sorted) tells them from the ones it has. */
	{
		char *const watched[] = { (char *) ".", (char *) "a", (char *) "d/e" };
		char **unseen = NULL;
		size_t n_unseen = 0;

		make(base, "fresh", true);
		make(base, "a/new", true);
		CHECK(&s, cgf_cgroup_tree_unseen_children(fd, &t, watched, ELEMENTSOF(watched), &unseen, &n_unseen) == 0,
		      "unseen children");
		CHECK(&s, n_unseen == 2 && streq(unseen[0], "fresh") && streq(unseen[1], "a/new"),
		      "exactly the two made after the walk: %zu", n_unseen);
		for (size_t i = 0; i < n_unseen; i++)
			free(unseen[i]);
		free(unseen);
		snprintf(path, sizeof(path), "%s/fresh", base);
		REQUIRE(rmdir(path) == 0);
		snprintf(path, sizeof(path), "%s/a/new", base);
		REQUIRE(rmdir(path) == 0);
	}
	cgf_cgroup_tree_done(&t);
	CHECK(&s, t.n_paths == 0 && !t.paths, "done clears");

	/* An event's partial tree: the cgroups asked about, their ancestors
	 * and what is below them; nothing beside them (d stays unread). */
	{
		const char *scope[] = { "a/b", "a/b/c", "gone", "a/b/c/none" };
		size_t i;

		CHECK(&s, cgf_cgroup_tree_read_scope(fd, scope, ELEMENTSOF(scope), ino_of, &t) == 0, "read a scope");
		CHECK(&s, t.n_paths == 4, "root, a, a/b, a/b/c: got %zu", t.n_paths);
		CHECK(&s, streq(t.paths[0], ".") && streq(t.paths[1], "a") && streq(t.paths[2], "a/b") &&
			  streq(t.paths[3], "a/b/c"), "sorted, the root first, each once");
		CHECK(&s, !has(&t, "d", &i) && !has(&t, "d/e", &i), "no sibling read");
		CHECK(&s, cgf_cgroup_tree_find_sorted(&t, "a/b") == 2 && cgf_cgroup_tree_find_sorted(&t, "d") == -1,
		      "find_sorted");
		CHECK(&s, has(&t, "a", &ia) && has(&t, "a/b/c", &ic) && t.ids[ia] != t.ids[ic] && t.ids[ia] != 0,
		      "ids travel with their paths");
		{
			struct cgf_cgroup_tree full = {};
			size_t j;

			REQUIRE(cgf_cgroup_tree_read_with(fd, ino_of, &full) == 0);
			for (i = 0; i < t.n_paths; i++)
				CHECK(&s, has(&full, t.paths[i], &j) && full.ids[j] == t.ids[i], "%s: the full walk's id",
				      t.paths[i]);
			cgf_cgroup_tree_done(&full);
		}
		cgf_cgroup_tree_done(&t);
		CHECK(&s, cgf_cgroup_tree_read_scope(fd, NULL, 0, ino_of, &t) == 0 && t.n_paths == 1,
		      "an empty scope: the root only");
		cgf_cgroup_tree_done(&t);
		{
			const char *bad[] = { "a/../d" };

			CHECK(&s, cgf_cgroup_tree_read_scope(fd, bad, 1, ino_of, &t) == -EINVAL,
			      "'..' in a scope path is refused");
		}
	}

	/* A tree that is only a root. */
	snprintf(path, sizeof(path), "%s/a/cgroup.procs", base);
	REQUIRE(unlink(path) == 0);
	snprintf(path, sizeof(path), "%s/a/b/memory.max", base);
	REQUIRE(unlink(path) == 0);
	snprintf(path, sizeof(path), "%s/link", base);
	REQUIRE(unlink(path) == 0);
	for (size_t i = ELEMENTSOF(dirs); i-- > 0;) {
		snprintf(path, sizeof(path), "%s/%s", base, dirs[i]);
		REQUIRE(rmdir(path) == 0);
	}
	CHECK(&s, cgf_cgroup_tree_read_with(fd, ino_of, &t) == 0, "read an empty tree");
	CHECK(&s, t.n_paths == 1 && streq(t.paths[0], "."), "only the root");
	cgf_cgroup_tree_done(&t);

	/* What a user with a delegated cgroup can build below it: 17 levels
	 * of 250-byte names (a path longer than PATH_MAX) and a chain 1,100
	 * levels deep, with an open-file limit well below that depth.  The
	 * walk skips into neither past its bounds, keeps every path usable,
	 * and sees the sibling next to them. */
	{
		struct rlimit low, old;
		size_t i_ok, longest = 0, skipped_long = 0, skipped_deep = 0;
		int dfd;

		REQUIRE(getrlimit(RLIMIT_NOFILE, &old) == 0);
		low = (struct rlimit) { 100, old.rlim_max };
		dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		REQUIRE(dfd >= 0);
		REQUIRE(mkdirat(dfd, "long", 0755) == 0);
		for (int i = 0, next; i < 17; i++) {
			char name[251];

			next = openat(dfd, i == 0 ? "long" : name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			memset(name, 'a' + i, 250);
			name[250] = '\0';
			REQUIRE(next >= 0 && mkdirat(next, name, 0755) == 0);
			close(dfd);
			dfd = next;
		}
		close(dfd);
		dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		REQUIRE(mkdirat(dfd, "deep", 0755) == 0);
		for (int i = 0, next; i < 1100; i++) {
			next = openat(dfd, i == 0 ? "deep" : "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			REQUIRE(next >= 0 && mkdirat(next, "d", 0755) == 0);
			close(dfd);
			dfd = next;
		}
		close(dfd);
		make(base, "ok", true);

		REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
		CHECK(&s, cgf_cgroup_tree_read_with(fd, ino_of, &t) == 0, "read a hostile tree with 100 fds");
		REQUIRE(setrlimit(RLIMIT_NOFILE, &old) == 0);
		CHECK(&s, has(&t, "ok", &i_ok), "the sibling is in it");
		for (size_t i = 0; i < t.n_paths; i++)
			if (strlen(t.paths[i]) > longest)
				longest = strlen(t.paths[i]);
		CHECK(&s, longest <= CGF_CGROUP_TREE_PATH_MAX, "no path longer than %d, got %zu",
		      CGF_CGROUP_TREE_PATH_MAX, longest);
		for (size_t i = 0; i < t.n_skipped && i < CGF_CGROUP_TREE_SKIPPED_KEPT; i++) {
			skipped_long += t.skipped[i].error == -ENAMETOOLONG && strncmp(t.skipped[i].path, "long/", 5) == 0;
			skipped_deep += t.skipped[i].error == -ELOOP && strncmp(t.skipped[i].path, "deep/", 5) == 0;
		}
		CHECK(&s, t.n_skipped == 2 && skipped_long == 1 && skipped_deep == 1,
		      "one skip each for too long and too deep, got %zu (%zu, %zu)", t.n_skipped, skipped_long,
		      skipped_deep);
		CHECK(&s, t.n_paths == 1 + 1 + 16 + CGF_CGROUP_TREE_DEPTH_MAX + 1,
		      "root, ok, 16 levels of long, %d of deep: got %zu", CGF_CGROUP_TREE_DEPTH_MAX, t.n_paths);
		cgf_cgroup_tree_done(&t);

		/* A walk within a reach enters neither: nothing skipped, no
		 * cost for what is outside; below a match, all of it. */
		{
			struct cgf_reach reach = {};
			size_t i;

			REQUIRE(cgf_reach_add(&reach, "ok") == 0);
			CHECK(&s, cgf_cgroup_tree_read_within(fd, ino_of, cgf_reach_enters, &reach, &t) == 0,
			      "read within the reach 'ok'");
			CHECK(&s, t.n_paths == 2 && has(&t, ".", &i) && has(&t, "ok", &i) && t.n_skipped == 0,
			      "the root and ok, nothing skipped: %zu paths, %zu skipped", t.n_paths, t.n_skipped);
			cgf_cgroup_tree_done(&t);
			cgf_reach_done(&reach);
			REQUIRE(cgf_reach_add(&reach, "deep/*/d") == 0);
			CHECK(&s, cgf_cgroup_tree_read_within(fd, ino_of, cgf_reach_enters, &reach, &t) == 0,
			      "read within the reach 'deep/*/d'");
			CHECK(&s, t.n_paths == 1 + CGF_CGROUP_TREE_DEPTH_MAX && t.n_skipped == 1 && !has(&t, "ok", &i) &&
				  !has(&t, "long", &i),
			      "the chain below a match, to the depth bound, and nothing beside: %zu paths, %zu skipped",
			      t.n_paths, t.n_skipped);
			cgf_cgroup_tree_done(&t);
			cgf_reach_done(&reach);
		}
		close(fd);
		snprintf(path, sizeof(path), "rm -rf %s", base);
		REQUIRE(system(path) == 0);
	}
	return test_finish(&s, "test-cgroup-tree");
}
