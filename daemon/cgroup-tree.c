/* SPDX-License-Identifier: GPL-2.0-only */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup-tree.h"
#include "macro.h"

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

/* Every directory of cgroupfs is a cgroup; files are its knobs.  "depth"
 * counts the levels below the root: each holds one open directory. */
static int walk(struct cgf_cgroup_tree *t, int dir_fd, const char *path, unsigned depth,
		cgf_cgroup_id_func id_of) {
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
		r = add_path(t, rel, fd, id_of);
		if (r >= 0)
			r = walk(t, fd, t->paths[t->n_paths - 1], depth + 1, id_of);
		else
			close(fd);
	}
	closedir(d);
	return r;
}

int cgf_cgroup_tree_read_with(int root_fd, cgf_cgroup_id_func id_of, struct cgf_cgroup_tree *ret) {
	struct cgf_cgroup_tree t = {};
	int fd, r;

	fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = add_path(&t, ".", fd, id_of);
	if (r < 0) {
		close(fd);
		cgf_cgroup_tree_done(&t);
		return r;
	}
	r = walk(&t, fd, ".", 0, id_of);
	if (r < 0) {
		cgf_cgroup_tree_done(&t);
		return r;
	}
	*ret = t;
	return 0;
}

int cgf_cgroup_tree_read(int root_fd, struct cgf_cgroup_tree *ret) {
	return cgf_cgroup_tree_read_with(root_fd, cgf_cgroup_id_of_fd, ret);
}
