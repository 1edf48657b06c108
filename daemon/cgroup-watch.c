/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>

#include "cgroup-watch.h"
#include "macro.h"

/* mkdir and rmdir of cgroups go through the VFS, so their parent sees
 * IN_CREATE / IN_DELETE; cgroupfs has no renames of cgroups, but a move
 * costs nothing to watch.  IN_IGNORED needs no bit: the kernel always
 * sends it when a watch ends. */
#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR | IN_EXCL_UNLINK)

/*
 * One watched directory.  A watch belongs to an inode, not to a name:
 * when the directory is removed the kernel ends the watch (IN_IGNORED),
 * and a directory created again under the same name is another inode
 * that nobody watches yet.  So each watch remembers the cgroup id (the
 * inode) it was added for, and a tree that shows another id at its path
 * gets a new watch.
 */
struct watch {
	int wd;
	uint64_t id;
	char *path;
	bool seen; /* in the last tree */
};

struct cgf_watch {
	int fd;
	int root_fd;
	struct watch *watches; /* sorted by path between updates */
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

static int compare_path(const void *a, const void *b) {
	return strcmp(((const struct watch *) a)->path, ((const struct watch *) b)->path);
}

/* The watch of path among the first n (sorted) watches, or NULL. */
static struct watch *find_path(struct cgf_watch *w, size_t n, const char *path) {
	struct watch key = { .path = (char *) path };

	return n > 0 ? bsearch(&key, w->watches, n, sizeof(*w->watches), compare_path) : NULL;
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

/* Watches the directory at tree index i: a new entry, or (x set) the
 * entry of a directory that was re-created under the same name.  Returns
 * 1 when a watch was added, 0 when the directory is gone, or -errno. */
static int watch_directory(struct cgf_watch *w, const struct cgf_cgroup_tree *tree, size_t i, struct watch *x) {
	int wd = add_watch(w, tree->paths[i]);

	if (wd == -ENOENT || wd == -ENODEV)
		return 0; /* gone since the snapshot: its parent's event says so */
	if (wd < 0)
		return wd;
	if (x) {
		/* The old inode's watch ended with it (its IN_IGNORED may still
		 * be queued: drain() looks watches up by wd, so it finds none). */
		x->wd = wd;
		x->id = tree->ids[i];
		return 1;
	}
	x = array_append((void **) &w->watches, w->n_watches, sizeof(*w->watches));
	if (!x)
		goto fail;
	*x = (struct watch) { .wd = wd, .id = tree->ids[i], .path = strdup(tree->paths[i]), .seen = true };
	if (!x->path)
		goto fail;
	w->n_watches++;
	return 1;
fail:
	(void) inotify_rm_watch(w->fd, wd);
	return -ENOMEM;
}

int cgf_watch_update(struct cgf_watch *w, const struct cgf_cgroup_tree *tree,
		     bool (*wanted)(const char *path, void *userdata), void *userdata,
		     struct cgf_watch_failures *ret_failures) {
	struct cgf_watch_failures failures = {};
	size_t n_old = w->n_watches;
	int added = 0;

	for (size_t i = 0; i < n_old; i++)
		w->watches[i].seen = false;
	for (size_t i = 0; i < tree->n_paths; i++) {
		struct watch *x;
		int r;

		if (!wanted(tree->paths[i], userdata))
			continue;
		/* Only the old entries are sorted; new ones are appended
		 * after them, and a tree names each path once. */
		x = find_path(w, n_old, tree->paths[i]);
		if (x) {
			x->seen = true;
			if (x->id == tree->ids[i])
				continue;
		}
		r = watch_directory(w, tree, i, x);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			/* One directory we cannot watch (ENOSPC: the user's
			 * max_user_watches) must not cost the others theirs. */
			if (failures.n++ == 0) {
				failures.first_error = r;
				failures.first_path = tree->paths[i];
			}
			continue;
		}
		added += r;
	}
	/* Directories no longer wanted, or gone (the kernel dropped those
	 * watches already: removing them again fails harmlessly). */
	for (size_t i = 0; i < w->n_watches;)
		if (!w->watches[i].seen) {
			(void) inotify_rm_watch(w->fd, w->watches[i].wd);
			forget(w, i);
		} else
			i++;
	qsort_safe(w->watches, w->n_watches, sizeof(*w->watches), compare_path);
	if (ret_failures)
		*ret_failures = failures;
	return added;
}

static int compare_int(const void *a, const void *b) {
	int x = *(const int *) a, y = *(const int *) b;

	return (x > y) - (x < y);
}

/* Forgets the watches the kernel ended (their directory was removed):
 * their wd means nothing any more. */
static void forget_ended(struct cgf_watch *w, int *wds, size_t n_wds) {
	if (n_wds == 0)
		return;
	qsort_safe(wds, n_wds, sizeof(*wds), compare_int);
	for (size_t i = 0; i < w->n_watches;)
		if (bsearch(&w->watches[i].wd, wds, n_wds, sizeof(*wds), compare_int))
			forget(w, i);
		else
			i++;
	qsort_safe(w->watches, w->n_watches, sizeof(*w->watches), compare_path);
}

int cgf_watch_drain(struct cgf_watch *w, bool *ret_changed, bool *ret_overflow) {
	_Alignas(struct inotify_event) char buf[16384];
	_cleanup_free_ int *ended = NULL;
	size_t n_ended = 0;
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
			if (e->mask & IN_IGNORED) {
				int *slot = array_append((void **) &ended, n_ended, sizeof(*ended));

				if (!slot)
					return -ENOMEM;
				*slot = e->wd;
				n_ended++;
				/* A watched directory went away: its parent may be
				 * unwatched, so this may be the only event for it. */
				changed = true;
			}
			p += sizeof(*e) + e->len;
		}
	}
	forget_ended(w, ended, n_ended);
	*ret_changed = changed || overflow;
	*ret_overflow = overflow;
	return 0;
}
