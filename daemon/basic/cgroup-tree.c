/* SPDX-License-Identifier: GPL-2.0-only */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup-tree.h"
#include "macro.h"
#include "util.h"

void cgf_cgroup_tree_done(struct cgf_cgroup_tree *t) {
	for (size_t i = 0; i < t->n_paths; i++)
		free(t->paths[i]);
	free(t->paths);
	free(t->ids);
	for (size_t i = 0; i < t->n_skipped && i < CGF_CGROUP_TREE_SKIPPED_KEPT; i++)
		free(t->skipped[i].path);
	*t = (struct cgf_cgroup_tree) {};
}

bool cgf_cgroup_tree_has_id(const struct cgf_cgroup_tree *t, uint64_t id) {
	for (size_t i = 0; i < t->n_paths; i++)
		if (t->ids[i] == id)
			return true;
	return false;
}

/* Not in the uapi: include/linux/exportfs.h. */
#define FILEID_KERNFS 0xfe

int cgf_cgroup_id_of_fd(int fd, uint64_t *ret) {
	union {
		struct file_handle handle;
		uint8_t space[offsetof(struct file_handle, f_handle) + sizeof(uint64_t)];
	} fh = { .handle.handle_bytes = sizeof(uint64_t) };
	uint64_t id;
	int mnt_id;

	if (name_to_handle_at(fd, "", &fh.handle, &mnt_id, AT_EMPTY_PATH) < 0)
		/* EOVERFLOW: a handle longer than a cgroup's, so not cgroupfs. */
		return errno == EOVERFLOW ? -EMEDIUMTYPE : -errno;
	if (fh.handle.handle_type != FILEID_KERNFS || fh.handle.handle_bytes != sizeof(uint64_t))
		return -EMEDIUMTYPE;
	memcpy(&id, fh.handle.f_handle, sizeof(id));
	*ret = id;
	return 0;
}

static int add_path(struct cgf_cgroup_tree *t, const char *path, int fd, cgf_cgroup_id_func id_of) {
	uint64_t *id = array_append((void **) &t->ids, t->n_paths, sizeof(*t->ids));
	char **slot = array_append((void **) &t->paths, t->n_paths, sizeof(*t->paths));
	int r;

	if (!id || !slot)
		return -ENOMEM;
	r = id_of(fd, id);
	if (r < 0)
		return r;
	if (!(*slot = strdup(path)))
		return -ENOMEM;
	t->n_paths++;
	return 0;
}

static int skip(struct cgf_cgroup_tree *t, const char *path, int error) {
	if (t->n_skipped < CGF_CGROUP_TREE_SKIPPED_KEPT) {
		struct cgf_cgroup_skipped *s = &t->skipped[t->n_skipped];

		s->path = strdup(path);
		if (!s->path)
			return -ENOMEM;
		s->error = error;
	}
	t->n_skipped++;
	return 0;
}

/* How a walk reads a cgroup's id, and which directories it enters (NULL:
 * every one). */
struct walk_how {
	cgf_cgroup_id_func id_of;
	cgf_cgroup_enter_func enter;
	void *userdata;
};

/* Every directory of cgroupfs is a cgroup; files are its knobs.  "depth"
 * counts the levels below the root: each holds one open directory. */
static int walk(struct cgf_cgroup_tree *t, int dir_fd, const char *path, unsigned depth, const struct walk_how *how) {
	DIR *d;
	struct dirent *de;
	int r = 0;

	d = fdopendir(dir_fd);
	if (!d) {
		r = -errno;
		close(dir_fd);
		return r;
	}
	while (r >= 0) {
		_cleanup_free_ char *child = NULL;
		const char *rel;
		int fd;

		errno = 0;
		de = readdir(d);
		if (!de) {
			/* A directory that vanished under us ends its walk, not
			 * ours; nor does one we cannot list to the end. */
			if (errno != 0 && errno != ENOENT && errno != ENODEV)
				r = skip(t, path, -errno);
			break;
		}
		if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (asprintf(&child, "%s/%s", path, de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		rel = streq(path, ".") ? de->d_name : child;
		/* Outside what the caller asks about: not read, not skipped. */
		if (how->enter && !how->enter(rel, how->userdata))
			continue;
		if (depth + 1 > CGF_CGROUP_TREE_DEPTH_MAX) {
			r = skip(t, rel, -ELOOP);
			continue;
		}
		if (strlen(rel) > CGF_CGROUP_TREE_PATH_MAX) {
			r = skip(t, rel, -ENAMETOOLONG);
			continue;
		}
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			if (errno == ENOENT || errno == ENODEV)
				continue;
			r = errno == ENOMEM ? -ENOMEM : skip(t, rel, -errno);
			continue;
		}
		r = add_path(t, rel, fd, how->id_of);
		if (r >= 0)
			r = walk(t, fd, t->paths[t->n_paths - 1], depth + 1, how);
		else
			close(fd);
	}
	closedir(d);
	return r;
}

/* The root as the tree's first path, "."; returns an fd of it, or -errno. */
static int add_root(struct cgf_cgroup_tree *t, int root_fd, cgf_cgroup_id_func id_of) {
	int fd, r;

	fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = add_path(t, ".", fd, id_of);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int cgf_cgroup_tree_read_within(int root_fd, cgf_cgroup_id_func id_of, cgf_cgroup_enter_func enter, void *userdata,
				struct cgf_cgroup_tree *ret) {
	const struct walk_how how = { .id_of = id_of, .enter = enter, .userdata = userdata };
	struct cgf_cgroup_tree t = {};
	int fd, r;

	fd = add_root(&t, root_fd, id_of);
	if (fd < 0) {
		cgf_cgroup_tree_done(&t);
		return fd;
	}
	r = walk(&t, fd, ".", 0, &how);
	if (r < 0) {
		cgf_cgroup_tree_done(&t);
		return r;
	}
	*ret = t;
	return 0;
}

int cgf_cgroup_tree_read_with(int root_fd, cgf_cgroup_id_func id_of, struct cgf_cgroup_tree *ret) {
	return cgf_cgroup_tree_read_within(root_fd, id_of, NULL, NULL, ret);
}

int cgf_cgroup_tree_read(int root_fd, struct cgf_cgroup_tree *ret) {
	return cgf_cgroup_tree_read_with(root_fd, cgf_cgroup_id_of_fd, ret);
}

/* Tree order for a partial snapshot: the root first, then by path (a
 * parent sorts before its children: it is a prefix of theirs). */
static int compare_tree_path(const char *a, const char *b) {
	if (streq(a, "."))
		return streq(b, ".") ? 0 : -1;
	if (streq(b, "."))
		return 1;
	return strcmp(a, b);
}

static int compare_tree_path_p(const void *a, const void *b) {
	return compare_tree_path(*(const char *const *) a, *(const char *const *) b);
}

struct path_id {
	char *path;
	uint64_t id;
};

static int compare_path_id(const void *a, const void *b) {
	return compare_tree_path(((const struct path_id *) a)->path, ((const struct path_id *) b)->path);
}

/* Is a (a cgroup path) b or an ancestor of b? */
static bool covers(const char *a, const char *b) {
	size_t n = strlen(a);

	if (streq(a, "."))
		return true;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

/* Sorts t's paths (ids along) and drops duplicates. */
static int sort_unique(struct cgf_cgroup_tree *t) {
	_cleanup_free_ struct path_id *v = NULL;
	size_t n = 0;

	if (t->n_paths == 0)
		return 0;
	v = malloc(t->n_paths * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_paths; i++)
		v[i] = (struct path_id) { t->paths[i], t->ids[i] };
	qsort_safe(v, t->n_paths, sizeof(*v), compare_path_id);
	for (size_t i = 0; i < t->n_paths; i++) {
		if (n > 0 && streq(t->paths[n - 1], v[i].path)) {
			free(v[i].path);
			continue;
		}
		t->paths[n] = v[i].path;
		t->ids[n++] = v[i].id;
	}
	t->n_paths = n;
	return 0;
}

ssize_t cgf_cgroup_tree_find_sorted(const struct cgf_cgroup_tree *t, const char *path) {
	size_t lo = 0, hi = t->n_paths;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = compare_tree_path(t->paths[mid], path);

		if (c == 0)
			return (ssize_t) mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * One given cgroup: its ancestors one openat() at a time from the root
 * (O_NOFOLLOW: cgroupfs has no symlinks, and a path never leaves it),
 * then its subtree.  A component that is gone ends it quietly.
 */
static int read_one(struct cgf_cgroup_tree *t, int root_fd, const char *path, cgf_cgroup_id_func id_of) {
	_cleanup_free_ char *copy = strdup(path), *prefix = NULL;
	_cleanup_close_ int dir = -EBADF;
	unsigned depth = 0;
	size_t len = 0;
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	if (strlen(path) > CGF_CGROUP_TREE_PATH_MAX)
		return skip(t, path, -ENAMETOOLONG);
	prefix = calloc(1, strlen(path) + 1);
	if (!prefix)
		return -ENOMEM;
	dir = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int fd, r;

		if (streq(c, ".") || streq(c, ".."))
			return -EINVAL;
		if (++depth > CGF_CGROUP_TREE_DEPTH_MAX)
			return skip(t, path, -ELOOP);
		if (len > 0)
			prefix[len++] = '/';
		strcpy(prefix + len, c);
		len += strlen(c);
		fd = openat(dir, c, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return errno == ENOENT || errno == ENODEV || errno == ENOTDIR ? 0
			       : errno == ENOMEM ? -ENOMEM : skip(t, prefix, -errno);
		close(dir);
		dir = fd;
		r = add_path(t, prefix, dir, id_of);
		if (r == -ENOENT || r == -ESTALE)
			return 0; /* removed meanwhile */
		if (r < 0)
			return r;
	}
	if (depth == 0)
		return 0; /* the root: it is there already, and not walked */
	/* walk() owns the fd it is given. */
	return walk(t, TAKE_FD(dir), t->paths[t->n_paths - 1], depth, &(const struct walk_how) { .id_of = id_of });
}

int cgf_cgroup_tree_read_scope(int root_fd, const char *const *paths, size_t n_paths, cgf_cgroup_id_func id_of,
			       struct cgf_cgroup_tree *ret) {
	_cleanup_free_ const char **sorted = NULL;
	struct cgf_cgroup_tree t = {};
	int fd, r;

	r = fd = add_root(&t, root_fd, id_of);
	if (r < 0)
		goto fail;
	close(fd);
	if (n_paths > 0) {
		sorted = malloc(n_paths * sizeof(*sorted));
		r = -ENOMEM;
		if (!sorted)
			goto fail;
		memcpy(sorted, paths, n_paths * sizeof(*sorted));
		qsort_safe(sorted, n_paths, sizeof(*sorted), compare_tree_path_p);
	}
	for (size_t i = 0, last = SIZE_MAX; i < n_paths; i++) {
		/* Below one walked already: its subtree has it. */
		if (last != SIZE_MAX && covers(sorted[last], sorted[i]))
			continue;
		if (streq(sorted[i], ".") || streq(sorted[i], ""))
			continue; /* the root alone: no walk of the whole host here */
		r = read_one(&t, root_fd, sorted[i], id_of);
		if (r < 0)
			goto fail;
		last = i;
	}
	r = sort_unique(&t);
	if (r < 0)
		goto fail;
	*ret = t;
	return 0;
fail:
	cgf_cgroup_tree_done(&t);
	return r;
}

int cgf_cgroup_tree_unseen_children(int root_fd, const struct cgf_cgroup_tree *t, char *const *dirs, size_t n_dirs,
				    char ***ret, size_t *ret_n) {
	_cleanup_free_ const char **sorted = NULL;
	char **out = NULL;
	size_t n_out = 0;
	int r = 0;

	/* A full walk's tree is in walk order: look paths up in a sorted
	 * copy of its pointers. */
	sorted = malloc((t->n_paths + 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, t->paths, t->n_paths * sizeof(*sorted));
	qsort_safe(sorted, t->n_paths, sizeof(*sorted), compare_tree_path_p);

	for (size_t i = 0; r >= 0 && i < n_dirs; i++) {
		int fd = openat(root_fd, dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		struct dirent *de;
		DIR *d;

		if (fd < 0)
			continue; /* gone, or not ours to read: the walk said so already */
		d = fdopendir(fd);
		if (!d) {
			close(fd);
			continue;
		}
		while (r >= 0 && (de = readdir(d))) {
			char *child, **slot;

			if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
				continue;
			if (streq(dirs[i], ".") ? !(child = strdup(de->d_name))
						 : asprintf(&child, "%s/%s", dirs[i], de->d_name) < 0) {
				r = -ENOMEM;
				break;
			}
			if (bsearch(&child, sorted, t->n_paths, sizeof(*sorted), compare_tree_path_p)) {
				free(child);
				continue;
			}
			slot = array_append((void **) &out, n_out, sizeof(*out));
			if (!slot) {
				free(child);
				r = -ENOMEM;
				break;
			}
			*slot = child;
			n_out++;
		}
		closedir(d);
	}
	if (r < 0) {
		for (size_t i = 0; i < n_out; i++)
			free(out[i]);
		free(out);
		return r;
	}
	*ret = out;
	*ret_n = n_out;
	return 0;
}
