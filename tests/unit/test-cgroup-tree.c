/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The cgroup tree snapshot, over a plain directory tree that stands in
 * for cgroupfs (the walk only sees directories: what cgroupfs keeps in
 * files are the knobs): every directory once, parents before children,
 * files and symlinks ignored, the root as ".".
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "cgroup-tree.h"
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
	cgf_cgroup_tree_done(&t);
	CHECK(&s, t.n_paths == 0 && !t.paths, "done clears");

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
	close(fd);

	snprintf(path, sizeof(path), "%s/cgroup.procs", base);
	unlink(path);
	rmdir(base);
	return test_finish(&s, "test-cgroup-tree");
}
