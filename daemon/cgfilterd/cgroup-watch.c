/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>

#include "cgroup-watch.h"
#include "macro.h"
#include "util.h"

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

/* wd → path, for events: sorted by wd, the path owned by its watch. */
struct wd_entry {
	int wd;
	const char *path;
};

struct cgf_watch {
	int fd;
	int root_fd;
	struct watch *watches; /* sorted by path, except inside cgf_watch_update() */
	size_t n_watches;
	struct wd_entry *by_wd;
	size_t n_by_wd;
};

struct cgf_watch *cgf_watch_free(struct cgf_watch *w) {
	if (!w)
		return NULL;
	for (size_t i = 0; i < w->n_watches; i++)
		free(w->watches[i].path);
	free(w->watches);
	free(w->by_wd);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
	return NULL;
}

void cgf_strv_free(char **v, size_t n) {
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void cgf_watch_changes_done(struct cgf_watch_changes *c) {
	cgf_strv_free(c->created, c->n_created);
	free(c->removed);
	*c = (struct cgf_watch_changes) {};
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

/* The first index of by_wd whose wd is not below wd. */
static size_t wd_lower_bound(const struct cgf_watch *w, int wd) {
	size_t lo = 0, hi = w->n_by_wd;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->by_wd[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const char *wd_path(const struct cgf_watch *w, int wd) {
	size_t i = wd_lower_bound(w, wd);

	return i < w->n_by_wd && w->by_wd[i].wd == wd ? w->by_wd[i].path : NULL;
}

static int wd_insert(struct cgf_watch *w, int wd, const char *path) {
	size_t i = wd_lower_bound(w, wd);

	if (i < w->n_by_wd && w->by_wd[i].wd == wd) {
		/* inotify gives one wd per inode: a second add of the same
		 * directory (two paths cannot name it in cgroupfs) */
		w->by_wd[i].path = path;
		return 0;
	}
	if (!array_append((void **) &w->by_wd, w->n_by_wd, sizeof(*w->by_wd)))
		return -ENOMEM;
	memmove(&w->by_wd[i + 1], &w->by_wd[i], (w->n_by_wd - i) * sizeof(*w->by_wd));
	w->by_wd[i] = (struct wd_entry) { wd, path };
	w->n_by_wd++;
	return 0;
}

static void wd_remove(struct cgf_watch *w, int wd) {
	size_t i = wd_lower_bound(w, wd);

	if (i >= w->n_by_wd || w->by_wd[i].wd != wd)
		return;
	memmove(&w->by_wd[i], &w->by_wd[i + 1], (w->n_by_wd - i - 1) * sizeof(*w->by_wd));
	w->n_by_wd--;
}

static int compare_path(const void *a, const void *b) {
	return strcmp(((const struct watch *) a)->path, ((const struct watch *) b)->path);
}

/* The first index among the first n (sorted) watches whose path is not
 * below path. */
static size_t path_lower_bound_n(const struct cgf_watch *w, size_t n, const char *path) {
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(w->watches[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t path_lower_bound(const struct cgf_watch *w, const char *path) {
	return path_lower_bound_n(w, w->n_watches, path);
}

/* The watch of path among the first n (sorted) watches, or NULL. */
static struct watch *find_path(struct cgf_watch *w, size_t n, const char *path) {
	size_t i = path_lower_bound_n(w, n, path);

	return i < n && streq(w->watches[i].path, path) ? &w->watches[i] : NULL;
}

/* Keeps the order: the watches stay sorted by path. */
static void forget(struct cgf_watch *w, size_t i) {
	wd_remove(w, w->watches[i].wd);
	free(w->watches[i].path);
	memmove(&w->watches[i], &w->watches[i + 1], (w->n_watches - i - 1) * sizeof(*w->watches));
	w->n_watches--;
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

/* Watches the directory at tree index i: a new entry at index "at" of
 * the watches (SIZE_MAX: appended), or (x set) the entry of a directory
 * that was re-created under the same name.  Returns 1 when a watch was
 * added, 0 when the directory is gone, or -errno. */
static int watch_directory(struct cgf_watch *w, const struct cgf_cgroup_tree *tree, size_t i, struct watch *x,
			   size_t at) {
	int wd = add_watch(w, tree->paths[i]);
	char *path;

	if (wd == -ENOENT || wd == -ENODEV)
		return 0; /* gone since the snapshot: its parent's event says so */
	if (wd < 0)
		return wd;
	if (wd_path(w, wd) && !streq(wd_path(w, wd), tree->paths[i])) {
		/* A renamed cgroup (cgroup2 renames within a parent): inotify
		 * gave its watch again.  The entry of its old name must not
		 * remove it any more; it goes at the next full update. */
		for (size_t j = 0; j < w->n_watches; j++)
			if (w->watches[j].wd == wd)
				w->watches[j].wd = -1;
		wd_remove(w, wd);
	}
	if (x) {
		/* The old inode's watch ended with it (its IN_IGNORED may still
		 * be queued: drain() looks watches up by wd, so it finds none). */
		wd_remove(w, x->wd);
		x->wd = wd;
		x->id = tree->ids[i];
		x->seen = true;
		if (wd_insert(w, wd, x->path) < 0)
			goto fail;
		return 1;
	}
	path = strdup(tree->paths[i]);
	if (!path || !array_append((void **) &w->watches, w->n_watches, sizeof(*w->watches))) {
		free(path);
		goto fail;
	}
	if (at == SIZE_MAX || at > w->n_watches)
		at = w->n_watches;
	memmove(&w->watches[at + 1], &w->watches[at], (w->n_watches - at) * sizeof(*w->watches));
	w->watches[at] = (struct watch) { .wd = wd, .id = tree->ids[i], .path = path, .seen = true };
	w->n_watches++;
	if (wd_insert(w, wd, path) < 0) {
		forget(w, at);
		goto fail;
	}
	return 1;
fail:
	(void) inotify_rm_watch(w->fd, wd);
	return -ENOMEM;
}

/* Remembers the path of a directory watched only now, for the caller. */
static int note_added(const char *path, char ***added, size_t *n_added) {
	char **slot;

	if (!added)
		return 0;
	slot = array_append((void **) added, *n_added, sizeof(**added));
	if (!slot || !(*slot = strdup(path)))
		return -ENOMEM;
	(*n_added)++;
	return 0;
}

int cgf_watch_update(struct cgf_watch *w, const struct cgf_cgroup_tree *tree,
		     bool (*wanted)(const char *path, void *userdata), void *userdata,
		     struct cgf_watch_failures *ret_failures, char ***ret_added, size_t *ret_n_added) {
	struct cgf_watch_failures failures = {};
	size_t n_old = w->n_watches, n_added_paths = 0;
	char **added_paths = NULL;
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
		r = watch_directory(w, tree, i, x, SIZE_MAX);
		if (r > 0 && note_added(tree->paths[i], ret_added ? &added_paths : NULL, &n_added_paths) < 0)
			r = -ENOMEM;
		if (r == -ENOMEM) {
			/* The watches stay as they are; sorted again below. */
			cgf_strv_free(added_paths, n_added_paths);
			qsort_safe(w->watches, w->n_watches, sizeof(*w->watches), compare_path);
			return r;
		}
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
	if (ret_added) {
		*ret_added = added_paths;
		*ret_n_added = n_added_paths;
	}
	return added;
}

int cgf_watch_add_scope(struct cgf_watch *w, const struct cgf_cgroup_tree *tree,
			bool (*wanted)(const char *path, void *userdata), void *userdata,
			struct cgf_watch_failures *ret_failures, char ***ret_added, size_t *ret_n_added) {
	struct cgf_watch_failures failures = {};
	char **added_paths = NULL;
	size_t n_added_paths = 0;
	int added = 0, r = 0;

	for (size_t i = 0; i < tree->n_paths; i++) {
		size_t at;
		struct watch *x;

		if (!wanted(tree->paths[i], userdata))
			continue;
		at = path_lower_bound(w, tree->paths[i]);
		x = at < w->n_watches && streq(w->watches[at].path, tree->paths[i]) ? &w->watches[at] : NULL;
		if (x && x->id == tree->ids[i])
			continue;
		r = watch_directory(w, tree, i, x, at);
		if (r == -ENOMEM)
			goto fail;
		if (r < 0) {
			if (failures.n++ == 0) {
				failures.first_error = r;
				failures.first_path = tree->paths[i];
			}
			r = 0;
			continue;
		}
		added += r;
		if (r > 0) {
			r = note_added(tree->paths[i], ret_added ? &added_paths : NULL, &n_added_paths);
			if (r < 0)
				goto fail;
		}
	}
	if (ret_failures)
		*ret_failures = failures;
	if (ret_added) {
		*ret_added = added_paths;
		*ret_n_added = n_added_paths;
	}
	return added;
fail:
	cgf_strv_free(added_paths, n_added_paths);
	return r;
}

/* The path of a directory an event names: "name" in the watched wd. */
static char *event_path(const struct cgf_watch *w, const struct inotify_event *e) {
	const char *dir = wd_path(w, e->wd);
	char *p;

	if (!dir || e->len == 0 || e->name[0] == '\0')
		return NULL;
	if (streq(dir, "."))
		return strdup(e->name);
	return asprintf(&p, "%s/%s", dir, e->name) < 0 ? NULL : p;
}

static int note_created(const struct cgf_watch *w, const struct inotify_event *e, struct cgf_watch_changes *c) {
	char **slot, *p;

	if (c->overflow)
		return 0;
	if (!wd_path(w, e->wd))
		return 0; /* a watch we ended: its events are stale */
	if (c->n_created >= CGF_WATCH_CHANGES_MAX) {
		c->overflow = true;
		return 0;
	}
	p = event_path(w, e);
	if (!p)
		return -ENOMEM;
	slot = array_append((void **) &c->created, c->n_created, sizeof(*c->created));
	if (!slot) {
		free(p);
		return -ENOMEM;
	}
	*slot = p;
	c->n_created++;
	return 0;
}

/* A watch the kernel ended (IN_IGNORED): its directory is gone.  Its
 * cgroup id is what the caller can still clean up by; the watch goes. */
static int note_ended(struct cgf_watch *w, int wd, struct cgf_watch_changes *c) {
	const char *path = wd_path(w, wd);
	size_t i;

	if (!path)
		return 0; /* ended by us (no longer wanted, or re-watched) */
	i = path_lower_bound(w, path);
	if (i >= w->n_watches || w->watches[i].wd != wd)
		return 0;
	if (!c->overflow) {
		if (c->n_removed >= CGF_WATCH_CHANGES_MAX)
			c->overflow = true;
		else {
			uint64_t *slot = array_append((void **) &c->removed, c->n_removed, sizeof(*c->removed));

			if (!slot)
				return -ENOMEM;
			*slot = w->watches[i].id;
			c->n_removed++;
		}
	}
	forget(w, i);
	return 0;
}

/* A watched directory removed (or moved away) from a watched parent:
 * its id is reported and its watch forgotten (and ended: the kernel may
 * keep a dying cgroup's inode a while). */
static int note_removed(struct cgf_watch *w, const struct inotify_event *e, struct cgf_watch_changes *c) {
	_cleanup_free_ char *path = NULL;
	size_t i;
	int wd;

	if (!wd_path(w, e->wd))
		return 0;
	path = event_path(w, e);
	if (!path)
		return -ENOMEM;
	i = path_lower_bound(w, path);
	if (i >= w->n_watches || !streq(w->watches[i].path, path))
		return 0;
	wd = w->watches[i].wd;
	if (wd < 0) {
		forget(w, i); /* an old name of a renamed cgroup: no id to report */
		return 0;
	}
	if (note_ended(w, wd, c) < 0)
		return -ENOMEM;
	(void) inotify_rm_watch(w->fd, wd);
	return 0;
}

int cgf_watch_drain(struct cgf_watch *w, struct cgf_watch_changes *ret) {
	_Alignas(struct inotify_event) char buf[16384];
	int r;

	*ret = (struct cgf_watch_changes) {};
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

			r = 0;
			if (e->mask & IN_Q_OVERFLOW)
				ret->overflow = true;
			else if ((e->mask & (IN_CREATE | IN_MOVED_TO)) && (e->mask & IN_ISDIR))
				r = note_created(w, e, ret);
			else if ((e->mask & (IN_DELETE | IN_MOVED_FROM)) && (e->mask & IN_ISDIR))
				/* The parent says it at once; the directory's own
				 * IN_IGNORED comes when cgroupfs lets the inode go,
				 * which for a dying cgroup can be much later.  An
				 * unwatched one took its lists with it, and nothing
				 * of ours names it. */
				r = note_removed(w, e, ret);
			else if (e->mask & IN_IGNORED)
				r = note_ended(w, e->wd, ret);
			if (r < 0)
				return r;
			p += sizeof(*e) + e->len;
		}
	}
	return 0;
}
