/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>

#include "cgroup-watch.h"
#include "macro.h"

/* mkdir and rmdir of cgroups go through the VFS, so their parent sees
 * IN_CREATE / IN_DELETE; cgroupfs has no renames of cgroups, but a move
 * costs nothing to watch. */
#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR | IN_EXCL_UNLINK)

struct watch {
	int wd;
	char *path;
	bool seen; /* in the last tree */
};

struct cgf_watch {
	int fd;
	int root_fd;
	struct watch *watches;
	size_t n_watches;
};

struct cgf_watch *cgf_watch_free(struct cgf_watch *w) {
	if (!w)
		return NULL;
	for (size_t i = 0; i < w->n_watches; i++)
		free(w->watches[i].path);
	free(w->watches);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
	return NULL;
}

int cgf_watch_new(int cgroup_root_fd, struct cgf_watch **ret) {
	struct cgf_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->root_fd = cgroup_root_fd;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		int r = -errno;

		free(w);
		return r;
	}
	*ret = w;
	return 0;
}

int cgf_watch_fd(const struct cgf_watch *w) {
	return w->fd;
}

unsigned cgf_watch_count(const struct cgf_watch *w) {
	return (unsigned) w->n_watches;
}

static struct watch *find_path(struct cgf_watch *w, const char *path) {
	for (size_t i = 0; i < w->n_watches; i++)
		if (streq(w->watches[i].path, path))
			return &w->watches[i];
	return NULL;
}

static void forget(struct cgf_watch *w, size_t i) {
	free(w->watches[i].path);
	w->watches[i] = w->watches[--w->n_watches];
}

/* inotify wants a path; the cgroup root is reached through /proc/self/fd
 * so that a relative cgroup path never depends on our working directory. */
static int add_watch(struct cgf_watch *w, const char *path) {
	char p[4096 + 64];
	int n;

	n = snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", w->root_fd, path);
	if (n < 0 || (size_t) n >= sizeof(p))
		return -ENAMETOOLONG;
	n = inotify_add_watch(w->fd, p, WATCH_MASK);
	return n < 0 ? -errno : n;
}

int cgf_watch_update(struct cgf_watch *w, const struct cgf_cgroup_tree *tree,
		     bool (*wanted)(const char *path, void *userdata), void *userdata) {
	int added = 0;

	for (size_t i = 0; i < w->n_watches; i++)
		w->watches[i].seen = false;
	for (size_t i = 0; i < tree->n_paths; i++) {
		const char *path = tree->paths[i];
		struct watch *x = find_path(w, path);
		int wd;

		if (!wanted(path, userdata))
			continue;
		if (x) {
			x->seen = true;
			continue;
		}
		wd = add_watch(w, path);
		if (wd == -ENOENT || wd == -ENODEV)
			continue; /* gone since the snapshot: its parent's event says so */
		if (wd < 0)
			return wd;
		x = array_append((void **) &w->watches, w->n_watches, sizeof(*w->watches));
		if (!x)
			return -ENOMEM;
		*x = (struct watch) { .wd = wd, .path = strdup(path), .seen = true };
		if (!x->path)
			return -ENOMEM;
		w->n_watches++;
		added++;
	}
	/* Directories no longer wanted, or gone (the kernel dropped those
	 * watches already: removing them again fails harmlessly). */
	for (size_t i = 0; i < w->n_watches;)
		if (!w->watches[i].seen) {
			(void) inotify_rm_watch(w->fd, w->watches[i].wd);
			forget(w, i);
		} else
			i++;
	return added;
}

int cgf_watch_drain(struct cgf_watch *w, bool *ret_changed, bool *ret_overflow) {
	_Alignas(struct inotify_event) char buf[16384];
	bool changed = false, overflow = false;

	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *) p;

			if (e->mask & IN_Q_OVERFLOW)
				overflow = true;
			if (e->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
				changed = true;
			p += sizeof(*e) + e->len;
		}
	}
	*ret_changed = changed || overflow;
	*ret_overflow = overflow;
	return 0;
}
