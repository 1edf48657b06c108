/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel edge: open, probe, read and apply (kernel.h).  Our program
 * instances and their pins are in kernel-progs.c, which this file calls
 * (and which never calls back).
 *
 * Every syscall error becomes -errno here, at the boundary; messages name
 * the object (cgroup, direction, filter, program id) and are returned to
 * the caller, who knows why it asked and logs once.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgbpf-sys.h"
#include "kernel-progs.h"
#include "kernel.h"
#include "util.h"

/* state.h keeps its own names for the uapi flags; they must agree. */
_Static_assert(CGF_ATTACH_OVERRIDE == BPF_F_ALLOW_OVERRIDE, "BPF_F_ALLOW_OVERRIDE");
_Static_assert(CGF_ATTACH_MULTI == BPF_F_ALLOW_MULTI, "BPF_F_ALLOW_MULTI");
_Static_assert(CGF_ATTACH_REPLACE == BPF_F_REPLACE, "BPF_F_REPLACE");
_Static_assert(CGF_ATTACH_BEFORE == BPF_F_BEFORE, "BPF_F_BEFORE");
_Static_assert(CGF_ATTACH_AFTER == BPF_F_AFTER, "BPF_F_AFTER");
_Static_assert(CGF_ATTACH_ID == BPF_F_ID, "BPF_F_ID");
_Static_assert(CGF_ATTACH_PREORDER == BPF_F_PREORDER, "BPF_F_PREORDER");

/* A list holds at most BPF_CGROUP_MAX_PROGS programs. */
#define LIST_MAX 64

struct cgf_kernel {
	int cgroup_fd;
	char *cgroup_root;
	char *pin_root;
	struct cgf_pin_root pin; /* its fd, and whether we hold its lock */
	struct cgf_features features;
	struct cgf_instances instances; /* ours, under pin_root */
};

const struct cgf_features *cgf_kernel_features(const struct cgf_kernel *k) {
	return &k->features;
}

int cgf_kernel_cgroup_root_fd(const struct cgf_kernel *k) {
	return k->cgroup_fd;
}

const char *cgf_kernel_cgroup_root(const struct cgf_kernel *k) {
	return k->cgroup_root;
}

struct cgf_kernel *cgf_kernel_free(struct cgf_kernel *k) {
	if (!k)
		return NULL;
	cgf_instances_done(&k->instances);
	cgf_pin_root_done(&k->pin);
	if (k->cgroup_fd >= 0)
		close(k->cgroup_fd);
	free(k->cgroup_root);
	free(k->pin_root);
	free(k);
	return NULL;
}

/*
 * What the kernel offers, without changing anything.  The flag checks
 * come before the program fd is looked up (spec: "flag mask -EINVAL →
 * prog fd"), so an attach with a flag and no program answers -EINVAL
 * where the flag is unknown and -EBADF where it is known.  The revision
 * is there when a query of the root fills it: it starts at 1.
 */
static int probe_flag(int cgroup_fd, uint32_t flag) {
	LIBBPF_OPTS(cgbpf_attach_opts, opts, .flags = flag);
	int r = cgbpf_prog_attach(cgroup_fd, -1, BPF_CGROUP_INET_INGRESS, &opts);

	if (r == -EBADF)
		return 1;
	if (r == -EINVAL)
		return 0;
	return r < 0 ? r : -EIO; /* an attach of fd -1 cannot succeed */
}

static int probe_features(struct cgf_kernel *k) {
	struct cgbpf_query_head head;
	int r;

	r = probe_flag(k->cgroup_fd, BPF_F_PREORDER);
	if (r < 0)
		return r;
	k->features.preorder = r;
	r = probe_flag(k->cgroup_fd, BPF_F_BEFORE);
	if (r < 0)
		return r;
	k->features.ordering = r;
	r = cgbpf_prog_query_buf(k->cgroup_fd, BPF_CGROUP_INET_INGRESS, 0, NULL, NULL, 0, &head);
	if (r < 0)
		return r;
	k->features.revision = head.revision != 0;
	return 0;
}

int cgf_kernel_open(const char *cgroup_root, const char *pin_root, enum cgf_kernel_mode mode,
		    struct cgf_kernel **ret, char **ret_message) {
	_cleanup_(cgf_kernel_freep) struct cgf_kernel *k = NULL;
	int r;

	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->cgroup_fd = -EBADF;
	k->pin.fd = -EBADF;
	k->cgroup_root = strdup(cgroup_root ?: CGF_CGROUP_ROOT);
	k->pin_root = strdup(pin_root ?: CGF_PIN_ROOT);
	if (!k->cgroup_root || !k->pin_root)
		return -ENOMEM;
	k->cgroup_fd = open(k->cgroup_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (k->cgroup_fd < 0)
		return errno_message(ret_message, -errno, "opening %s", k->cgroup_root);
	r = probe_features(k);
	if (r < 0)
		return errno_message(ret_message, r, "probing the kernel's cgroup-BPF attach flags");
	/* Trusted and, to apply, ours alone: before anything pinned there is
	 * believed. */
	r = cgf_pin_root_open(k->pin_root, mode == CGF_KERNEL_APPLY ? CGF_PIN_ROOT_APPLY : CGF_PIN_ROOT_READ, 0,
			      &k->pin, NULL, ret_message);
	if (r < 0)
		return r;
	k->instances = (struct cgf_instances) { .pin_root = k->pin_root, .pin = &k->pin };
	if (k->pin.mode_fixed) {
		cgf_instances_warn(&k->instances, "pin directory %s had mode %04o: changed to 0700", k->pin_root,
				   (unsigned) k->pin.old_mode);
		if (k->instances.n_warnings == 0)
			return -ENOMEM;
	}
	r = cgf_instances_scan(&k->instances);
	if (r < 0)
		return errno_message(ret_message, r, "reading the pins under %s", k->pin_root);
	*ret = TAKE_PTR(k);
	return 0;
}

bool cgf_kernel_can_apply(const struct cgf_kernel *k) {
	return k->pin.locked;
}

const struct cgf_kernel_prog *cgf_kernel_find_prog(const struct cgf_kernel *k, uint32_t prog_id) {
	return cgf_instances_find(&k->instances, prog_id);
}

int cgf_kernel_gc(struct cgf_kernel *k, const struct cgf_actual *actual, const struct cgf_cgroup_tree *tree) {
	return cgf_instances_gc(&k->instances, actual, tree);
}

int cgf_kernel_map_fd(struct cgf_kernel *k, const char *filter, const char *identity, const char *map_name) {
	return cgf_instances_map_fd(&k->instances, filter, identity, map_name);
}

size_t cgf_kernel_warnings(const struct cgf_kernel *k, const char *const **ret) {
	*ret = (const char *const *) k->instances.warnings;
	return k->instances.n_warnings;
}

static int open_cgroup(struct cgf_kernel *k, const char *cgroup) {
	int fd = openat(k->cgroup_fd, cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int cgf_kernel_cgroup_id(struct cgf_kernel *k, const char *cgroup, uint64_t *ret) {
	_cleanup_close_ int fd = open_cgroup(k, cgroup);

	if (fd < 0)
		return fd;
	return cgf_cgroup_id_of_fd(fd, ret);
}

/* ---- reading ------------------------------------------------------------ */

/* A prog's name, and the cgroup links of the kernel, gathered once per
 * read: a tree of a thousand cgroups asks about the same few programs. */
struct name_cache {
	uint32_t *ids;
	char (*names)[BPF_OBJ_NAME_LEN];
	size_t n;
};

struct link_key {
	uint64_t cgroup_id;
	uint32_t attach_type;
	uint32_t prog_id;
	uint32_t link_id;
};

struct reader {
	struct cgf_kernel *k;
	struct name_cache names;
	struct link_key *links;
	size_t n_links;
};

static void reader_done(struct reader *rd) {
	free(rd->names.ids);
	free(rd->names.names);
	free(rd->links);
}

/* ours_fd: our pinned fd of the program, or -1 (a foreign one: opening
 * it by id needs CAP_SYS_ADMIN; without, it goes unnamed). */
static int prog_name(struct reader *rd, uint32_t id, int ours_fd, const char **ret) {
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	_cleanup_close_ int fd = -EBADF;
	size_t n = rd->names.n;

	for (size_t i = 0; i < n; i++)
		if (rd->names.ids[i] == id) {
			*ret = rd->names.names[i];
			return 0;
		}
	if (ours_fd < 0)
		fd = bpf_prog_get_fd_by_id(id);
	if ((ours_fd >= 0 || fd >= 0) && bpf_obj_get_info_by_fd(ours_fd >= 0 ? ours_fd : fd, &info, &len) < 0)
		info.name[0] = '\0';
	/* A program that went away between query and lookup has no name. */
	if (!array_append((void **) &rd->names.ids, n, sizeof(*rd->names.ids)) ||
	    !array_append((void **) &rd->names.names, n, sizeof(*rd->names.names)))
		return -ENOMEM;
	rd->names.ids[n] = id;
	memcpy(rd->names.names[n], info.name, sizeof(info.name));
	rd->names.names[n][BPF_OBJ_NAME_LEN - 1] = '\0';
	rd->names.n++;
	*ret = rd->names.names[n];
	return 0;
}

static int read_links(struct reader *rd) {
	uint32_t id = 0;

	for (;;) {
		struct bpf_link_info info = {};
		uint32_t len = sizeof(info);
		_cleanup_close_ int fd = -EBADF;
		struct link_key *l;

		/* ENOENT: the last one.  EPERM: enumerating needs CAP_SYS_ADMIN,
		 * which a hardened daemon lacks; link ids are for display only. */
		if (bpf_link_get_next_id(id, &id) < 0)
			return errno == ENOENT || errno == EPERM ? 0 : -errno;
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* gone since */
			return -errno;
		}
		if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			return -errno;
		if (info.type != BPF_LINK_TYPE_CGROUP)
			continue;
		l = array_append((void **) &rd->links, rd->n_links, sizeof(*rd->links));
		if (!l)
			return -ENOMEM;
		*l = (struct link_key) {
			.cgroup_id = info.cgroup.cgroup_id,
			.attach_type = info.cgroup.attach_type,
			.prog_id = info.prog_id,
			.link_id = info.id,
		};
		rd->n_links++;
	}
}

static uint32_t link_of(const struct reader *rd, uint64_t cgroup_id, uint32_t type, uint32_t prog_id) {
	for (size_t i = 0; i < rd->n_links; i++)
		if (rd->links[i].cgroup_id == cgroup_id && rd->links[i].attach_type == type &&
		    rd->links[i].prog_id == prog_id)
			return rd->links[i].link_id;
	return 0;
}

static int read_list(struct reader *rd, struct cgf_actual *a, const char *cgroup, int fd, uint64_t cgroup_id,
		     enum cgf_direction d) {
	uint32_t ids[LIST_MAX], flags[LIST_MAX], type = cgf_direction_attach_type(d);
	struct cgbpf_query_head head;
	struct cgf_actual_list *l;
	int r;

	r = cgbpf_prog_query_buf(fd, type, 0, ids, flags, LIST_MAX, &head);
	if (r < 0)
		return r;
	r = cgf_actual_add_list(a, cgroup, d, head.count > 0 ? head.attach_flags & CGF_ATTACH_MODE_MASK : 0,
				head.revision, &l);
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < head.count; i++) {
		const struct cgf_kernel_prog *ours = cgf_kernel_find_prog(rd->k, ids[i]);
		struct cgf_actual_entry e = {
			.prog_id = ids[i],
			.link_id = link_of(rd, cgroup_id, type, ids[i]),
			.ours = ours,
			.filter = ours ? ours->filter : NULL,
			.identity = ours ? ours->identity : NULL,
			/* No query reports PREORDER per entry (upstream and
			 * our series fill prog_attach_flags with the mode), so
			 * for ours the pin says which class it is. */
			.preorder = (flags[i] & BPF_F_PREORDER) || (ours && ours->preorder),
		};
		const char *name;

		r = prog_name(rd, ids[i], ours ? ours->fd : -1, &name);
		if (r < 0)
			return r;
		e.prog_name = (char *) name;
		r = cgf_actual_list_insert(l, l->n_entries, &e);
		if (r < 0)
			return r;
	}
	return 0;
}

int cgf_kernel_read(struct cgf_kernel *k, const struct cgf_cgroup_tree *tree, struct cgf_actual **ret) {
	_cleanup_(cgf_actual_freep) struct cgf_actual *a = NULL;
	struct reader rd = { .k = k };
	int r;

	a = cgf_actual_new();
	if (!a)
		return -ENOMEM;
	r = read_links(&rd);
	for (size_t i = 0; r >= 0 && i < tree->n_paths; i++) {
		_cleanup_close_ int fd = open_cgroup(k, tree->paths[i]);
		size_t n_lists = a->n_lists;
		uint64_t id;

		if (fd == -ENOENT || fd == -ENODEV)
			continue; /* removed since the snapshot */
		if (fd < 0) {
			r = fd;
			break;
		}
		r = cgf_cgroup_id_of_fd(fd, &id);
		if (r == -ENOENT || r == -ESTALE) {
			r = 0; /* removed since the snapshot */
			continue;
		}
		for (enum cgf_direction d = 0; r >= 0 && d < _CGF_DIRECTION_MAX; d++)
			r = read_list(&rd, a, tree->paths[i], fd, id, d);
		if (r == -ENOENT) {
			/* Removed after the open: the query finds no live cgroup
			 * behind the fd (css_tryget_online_from_dir()).  Like one
			 * removed before: not in what we read, not an error. */
			cgf_actual_truncate(a, n_lists);
			r = 0;
		}
	}
	reader_done(&rd);
	if (r < 0)
		return r;
	cgf_actual_sort(a);
	*ret = TAKE_PTR(a);
	return 0;
}

int cgf_kernel_effective(struct cgf_kernel *k, const char *cgroup, enum cgf_direction direction,
			 uint32_t **ret_ids, size_t *ret_n) {
	_cleanup_close_ int fd = open_cgroup(k, cgroup);
	uint32_t type = cgf_direction_attach_type(direction);
	struct cgbpf_query_head head;
	int r;

	if (fd < 0)
		return fd;
	/* The count can grow between the two queries: ask again then. */
	for (unsigned tries = 0; tries < 8; tries++) {
		_cleanup_free_ uint32_t *ids = NULL;
		uint32_t capacity;

		r = cgbpf_prog_query_buf(fd, type, BPF_F_QUERY_EFFECTIVE, NULL, NULL, 0, &head);
		if (r < 0)
			return r;
		capacity = head.count + 8;
		ids = calloc(capacity, sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		r = cgbpf_prog_query_buf(fd, type, BPF_F_QUERY_EFFECTIVE, ids, NULL, capacity, &head);
		/*
		 * -ENOSPC with a count that fits is not a shortage: a kernel
		 * without the series' patch 2 says so whenever the array ends
		 * in a dummy left by a low-memory detach, and all ids are there.
		 */
		if (r == -ENOSPC && head.count <= capacity)
			r = 0;
		if (r == -ENOSPC)
			continue;
		if (r < 0)
			return r;
		*ret_ids = TAKE_PTR(ids);
		*ret_n = head.count;
		return 0;
	}
	return -EAGAIN;
}

/* ---- applying ----------------------------------------------------------- */

/* What one list holds while a plan runs: the ids in it now. */
struct track {
	const char *cgroup;
	enum cgf_direction direction;
	uint32_t ids[LIST_MAX + 1];
	size_t n;
	int fd;
	size_t last;    /* the list's last action: its cgroup is closed after it */
	bool read;      /* ids hold what the read saw, with the actions so far */
	bool skip;      /* its cgroup went, or another controller changed it: no more actions */
};

struct applier {
	struct cgf_kernel *k;
	const struct cgf_objects *objects;
	const struct cgf_plan *plan;
	const struct cgf_kernel_prog **chosen; /* per attach action: the instance */
	bool *ran;                             /* per action: it took effect */
	size_t *track_index;                   /* per action: its list's index in tracks */
	struct track *tracks;                  /* one per list the plan touches */
	size_t n_tracks;
	char *message;
};

/* What cgf_kernel_load() chose, for cgf_kernel_attach(). */
struct cgf_kernel_apply {
	struct applier applier;
};

/* Forget what the tracks hold and close their cgroups; the lists stay. */
static void applier_done(struct applier *ap) {
	for (size_t i = 0; i < ap->n_tracks; i++) {
		struct track *t = &ap->tracks[i];

		if (t->fd >= 0)
			close(t->fd);
		t->fd = -EBADF;
		t->n = 0;
		t->read = t->skip = false;
	}
}

/* An action's list, for sorting the actions by list. */
struct action_key {
	const char *cgroup;
	enum cgf_direction direction;
	size_t action;
};

static int compare_action_keys(const void *a, const void *b) {
	const struct action_key *x = a, *y = b;
	int c = strcmp(x->cgroup, y->cgroup);

	if (c)
		return c;
	if (x->direction != y->direction)
		return x->direction < y->direction ? -1 : 1;
	/* Each list's actions stay in plan order. */
	return x->action < y->action ? -1 : x->action > y->action;
}

/*
 * Which list each action works on, once per plan: a plan for 10,000
 * cgroups has 20,000 lists, and finding each action's list by comparing
 * it with every list seen so far made a cold start quadratic.  Sorting
 * the actions by list makes it n log n.
 */
static int index_tracks(struct applier *ap) {
	size_t n = ap->plan->n_actions;
	_cleanup_free_ struct action_key *keys = NULL;

	ap->track_index = calloc(n + 1, sizeof(*ap->track_index));
	keys = calloc(n + 1, sizeof(*keys));
	ap->tracks = calloc(n + 1, sizeof(*ap->tracks));
	if (!ap->track_index || !keys || !ap->tracks)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		keys[i] = (struct action_key) {
			.cgroup = ap->plan->actions[i].cgroup,
			.direction = ap->plan->actions[i].direction,
			.action = i,
		};
	qsort(keys, n, sizeof(*keys), compare_action_keys);
	for (size_t k = 0; k < n; k++) {
		struct track *t = ap->n_tracks ? &ap->tracks[ap->n_tracks - 1] : NULL;

		if (!t || t->direction != keys[k].direction || !streq(t->cgroup, keys[k].cgroup)) {
			t = &ap->tracks[ap->n_tracks++];
			*t = (struct track) { .cgroup = keys[k].cgroup, .direction = keys[k].direction, .fd = -EBADF };
		}
		ap->track_index[keys[k].action] = ap->n_tracks - 1;
		t->last = keys[k].action; /* sorted: the list's last action comes last */
	}
	return 0;
}

static void track_remove(struct track *t, uint32_t id) {
	for (size_t i = 0; i < t->n; i++)
		if (t->ids[i] == id) {
			t->ids[i] = t->ids[--t->n];
			return;
		}
}

static void track_add(struct track *t, uint32_t id) {
	if (t->n < ELEMENTSOF(t->ids))
		t->ids[t->n++] = id;
}

/* Action i's list, its ids as the read saw them (empty for a list not read). */
static struct track *track_of(struct applier *ap, const struct cgf_actual *actual, size_t i) {
	struct track *t = &ap->tracks[ap->track_index[i]];
	const struct cgf_actual_list *l;

	if (t->read)
		return t;
	l = actual ? cgf_actual_find(actual, t->cgroup, t->direction) : NULL;
	for (size_t j = 0; l && j < l->n_entries; j++)
		track_add(t, l->entries[j].prog_id);
	t->read = true;
	return t;
}

/* The effect of one successful action on its list. */
static void track_apply(struct track *t, const struct cgf_action *a, uint32_t attached_id) {
	if (a->kind == CGF_ACTION_DETACH) {
		track_remove(t, a->prog_id);
		return;
	}
	/* REPLACE and the single-slot swap take the old program out. */
	if (a->prog_id)
		track_remove(t, a->prog_id);
	track_add(t, attached_id);
}

/*
 * Phase one: which instance every attach uses, loading what is missing.
 * An instance may appear once in a list, so a move (the filter's program
 * is in the list and must be attached again elsewhere) takes another
 * instance; otherwise the lowest-numbered free one, so that lists share
 * programs.
 */
static int choose_instances(struct applier *ap, const struct cgf_actual *actual) {
	int r;

	for (size_t i = 0; i < ap->plan->n_actions; i++) {
		const struct cgf_action *a = &ap->plan->actions[i];
		const struct cgf_filter_object *obj;
		bool preorder = a->flags & CGF_ATTACH_PREORDER;
		const struct cgf_kernel_prog *p;
		struct track *t = track_of(ap, actual, i);

		if (a->kind == CGF_ACTION_DETACH) {
			track_apply(t, a, 0);
			continue;
		}
		obj = cgf_objects_find(ap->objects, a->filter);
		if (!obj || !streq_ptr(obj->identity, a->identity))
			return errno_message(&ap->message, -EINVAL,
					     "action #%zu: filter '%s' with identity %s is not in the policy read",
					     i, a->filter, a->identity);
		p = cgf_instances_find_free(&ap->k->instances, a->filter, a->identity, a->direction, preorder,
					    t->ids, t->n);
		if (!p) {
			r = cgf_instances_load(&ap->k->instances, obj, preorder, &p, &ap->message);
			if (r < 0)
				return r;
		}
		ap->chosen[i] = p;
		track_apply(t, a, p->prog_id);
	}
	return 0;
}

static int run_attach(struct applier *ap, size_t i, struct track *t) {
	const struct cgf_action *a = &ap->plan->actions[i];
	const struct cgf_kernel_prog *p = ap->chosen[i];
	LIBBPF_OPTS(cgbpf_attach_opts, opts, .flags = a->flags, .replace_fd = -EBADF);
	int r;

	if (ap->k->features.revision)
		opts.expected_revision = a->expected_revision;
	if (a->anchor_action != CGF_NO_ACTION) {
		opts.relative = ap->chosen[a->anchor_action]->prog_id;
		opts.flags |= BPF_F_ID;
	} else if (a->anchor_prog_id) {
		opts.relative = a->anchor_prog_id;
		opts.flags |= BPF_F_ID;
	}
	if (a->flags & CGF_ATTACH_REPLACE) {
		const struct cgf_kernel_prog *old = cgf_kernel_find_prog(ap->k, a->prog_id);

		/* Only ours is ever replaced, and its fd is at hand. */
		if (!old)
			return errno_message(&ap->message, -EPERM, "%s %s: replace prog %" PRIu32 ": not ours", a->cgroup,
				    cgf_direction_to_string(a->direction), a->prog_id);
		opts.replace_fd = old->fd;
	}
	r = cgbpf_prog_attach(t->fd, p->fd, cgf_direction_attach_type(a->direction), &opts);
	if (r < 0)
		return errno_message(&ap->message, r, "attach filter '%s' (prog %" PRIu32 ") to %s %s",
				     a->filter, p->prog_id, a->cgroup, cgf_direction_to_string(a->direction));
	track_apply(t, a, p->prog_id);
	return 0;
}

static int run_detach(struct applier *ap, struct track *t, const struct cgf_action *a) {
	const struct cgf_kernel_prog *ours = cgf_kernel_find_prog(ap->k, a->prog_id);
	LIBBPF_OPTS(cgbpf_detach_opts, opts);
	_cleanup_close_ int fd = -EBADF;
	int r;

	if (!ours)
		/* The planner never detaches foreign programs; if it asks,
		 * something is badly wrong: refuse rather than obey. */
		return errno_message(&ap->message, -EPERM, "detach prog %" PRIu32 " from %s %s: not ours",
				     a->prog_id, a->cgroup, cgf_direction_to_string(a->direction));
	if (a->link_id) {
		fd = bpf_link_get_fd_by_id(a->link_id);
		r = fd < 0 ? -errno : bpf_link_detach(fd);
		if (r < 0 && fd >= 0)
			r = -errno;
	} else {
		if (ap->k->features.revision)
			opts.expected_revision = a->expected_revision;
		r = cgbpf_prog_detach(t->fd, ours->fd, cgf_direction_attach_type(a->direction), &opts);
	}
	if (r < 0)
		return errno_message(&ap->message, r, "detach filter '%s' (prog %" PRIu32 ") from %s %s",
				     ours->filter, a->prog_id, a->cgroup, cgf_direction_to_string(a->direction));
	track_apply(t, a, 0);
	return 0;
}

/*
 * Did the cgroup of the list go since we opened it?  -ENOENT from an
 * attach or detach also means "no such anchor" or "no such program", so
 * the path is asked again: gone, or now another cgroup (a new id).
 */
static bool cgroup_gone(struct applier *ap, const struct track *t) {
	_cleanup_close_ int fd = open_cgroup(ap->k, t->cgroup);
	uint64_t was, now;

	if (fd == -ENOENT || fd == -ENODEV)
		return true;
	if (fd < 0 || cgf_cgroup_id_of_fd(fd, &now) < 0)
		return false;
	if (t->fd < 0 || cgf_cgroup_id_of_fd(t->fd, &was) < 0)
		return false;
	return was != now;
}

/*
 * Action i on its list t: 1 done, 0 not for this list any more (skipped,
 * or its cgroup went), or the -errno that fails the list (ap->message
 * says why).
 */
static int run_action(struct applier *ap, size_t i, struct track *t, const struct cgf_list_failures *failures) {
	const struct cgf_action *a = &ap->plan->actions[i];
	int r;

	if (t->skip || cgf_list_failures_find(failures, a->cgroup, a->direction))
		return 0;
	/* Placed next to a program that an earlier action did not attach:
	 * that action's list is this one, so it is skipped already; never
	 * attach without the anchor. */
	if (a->anchor_action != CGF_NO_ACTION && !ap->ran[a->anchor_action])
		return 0;
	if (t->fd < 0) {
		t->fd = open_cgroup(ap->k, a->cgroup);
		if (t->fd == -ENOENT || t->fd == -ENODEV) {
			t->skip = true;
			return 0;
		}
		if (t->fd < 0)
			return errno_message(&ap->message, t->fd, "cgroup %s: opening it", a->cgroup);
	}
	r = a->kind == CGF_ACTION_ATTACH ? run_attach(ap, i, t) : run_detach(ap, t, a);
	if (r >= 0) {
		ap->ran[i] = true;
		return 1;
	}
	if ((r == -ENOENT || r == -ENODEV) && cgroup_gone(ap, t)) {
		t->skip = true;
		return 0;
	}
	return r;
}

/*
 * The actions, each list on its own: an action that fails marks its
 * list failed (with the message that names it) and the list's remaining
 * actions are skipped; the other lists go on.  A list whose cgroup went
 * is done, not failed: its packets went with it.  -ESTALE (someone else
 * changed the list) stops that list too, and is returned once every
 * other list had its turn, so that the caller reads and plans again.
 * Only what concerns every list (out of memory) stops the whole run.
 */
static int run_actions(struct applier *ap, const struct cgf_actual *actual, struct cgf_list_failures *failures,
		       size_t *ret_done) {
	bool stale = false;
	int r;

	applier_done(ap);
	*ret_done = 0;
	for (size_t i = 0; i < ap->plan->n_actions; i++) {
		const struct cgf_action *a = &ap->plan->actions[i];
		struct track *t = track_of(ap, actual, i);

		r = run_action(ap, i, t, failures);
		/* One cgroup open at a time per list, not one per list of the
		 * plan: 10,000 cgroups would be 20,000 open files. */
		if (i == t->last && t->fd >= 0) {
			close(t->fd);
			t->fd = -EBADF;
		}
		if (r > 0)
			(*ret_done)++;
		if (r >= 0)
			continue;
		if (r == -ENOMEM)
			return r;
		if (r == -ESTALE) {
			t->skip = true;
			stale = true;
		}
		r = cgf_list_failures_add(failures, a->cgroup, a->direction, r, ap->message);
		if (r < 0)
			return r;
	}
	return stale ? -ESTALE : 0;
}

struct cgf_kernel_apply *cgf_kernel_apply_free(struct cgf_kernel_apply *ap) {
	if (!ap)
		return NULL;
	applier_done(&ap->applier);
	free(ap->applier.tracks);
	free(ap->applier.track_index);
	free(ap->applier.chosen);
	free(ap->applier.ran);
	free(ap->applier.message);
	free(ap);
	return NULL;
}

int cgf_kernel_load(struct cgf_kernel *k, const struct cgf_objects *objects, const struct cgf_plan *plan,
		    const struct cgf_actual *actual, struct cgf_kernel_apply **ret, char **ret_message) {
	_cleanup_(cgf_kernel_apply_freep) struct cgf_kernel_apply *ap = NULL;
	int r;

	if (!cgf_kernel_can_apply(k))
		/* Opened read-only: another cgfilterd may be applying. */
		return errno_message(ret_message, -EROFS, "not applying: %s is not locked by this process",
				     k->pin_root);

	ap = calloc(1, sizeof(*ap));
	if (!ap)
		return -ENOMEM;
	ap->applier = (struct applier) { .k = k, .objects = objects, .plan = plan };
	ap->applier.chosen = calloc(plan->n_actions + 1, sizeof(*ap->applier.chosen));
	ap->applier.ran = calloc(plan->n_actions + 1, sizeof(*ap->applier.ran));
	if (!ap->applier.chosen || !ap->applier.ran)
		return -ENOMEM;
	r = index_tracks(&ap->applier);
	if (r < 0)
		return r;
	r = choose_instances(&ap->applier, actual);
	if (r < 0) {
		if (ret_message)
			*ret_message = TAKE_PTR(ap->applier.message);
		return r;
	}
	*ret = TAKE_PTR(ap);
	return 0;
}

int cgf_kernel_attach(struct cgf_kernel_apply *ap, const struct cgf_actual *actual,
		      struct cgf_list_failures *failures, bool *ret_ran, size_t *ret_done, char **ret_message) {
	size_t done = 0;
	int r;

	r = run_actions(&ap->applier, actual, failures, &done);
	applier_done(&ap->applier);
	if (ret_ran)
		memcpy(ret_ran, ap->applier.ran, ap->applier.plan->n_actions * sizeof(*ap->applier.ran));
	*ret_done = done;
	if (ret_message && ap->applier.message) {
		/* The latest message is the one that says why. */
		free(*ret_message);
		*ret_message = TAKE_PTR(ap->applier.message);
	}
	return r;
}
