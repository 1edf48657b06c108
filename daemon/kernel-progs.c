/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Our program instances and their pins (layout in kernel.h): adopting
 * them at start-up, loading more, and removing those no list holds.
 *
 * A filter's object is opened and loaded by libbpf, which also creates
 * (or, from their pins, reuses) its maps.  A built-in program is then
 * loaded once more from libbpf's relocated instructions under the name
 * "cgf_<filter>", so that bpftool and `cgfilterctl status` show which
 * filter it is; libbpf's own copy goes away with the object.  An
 * operator's object keeps the names it gives its programs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel-internal.h"

#define PIN_PROG "prog-"
#define PIN_PROG_PRE "prog-pre-"
#define PIN_MAP "map-"

static struct cgf_kernel_prog *prog_free(struct cgf_kernel_prog *p) {
	if (!p)
		return NULL;
	if (p->fd >= 0)
		close(p->fd);
	free(p->filter);
	free(p->identity);
	free(p->pin);
	free(p);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_kernel_prog *, prog_free);

void cgf_kernel_progs_done(struct cgf_kernel *k) {
	for (size_t i = 0; i < k->n_progs; i++)
		prog_free(k->progs[i]);
	free(k->progs);
	k->progs = NULL;
	k->n_progs = 0;
}

static int add_prog(struct cgf_kernel *k, struct cgf_kernel_prog *p) {
	struct cgf_kernel_prog **slot = array_append((void **) &k->progs, k->n_progs, sizeof(*k->progs));

	if (!slot)
		return -ENOMEM;
	*slot = p;
	k->n_progs++;
	return 0;
}

static int prog_id_of(int fd, uint32_t *ret) {
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	*ret = info.id;
	return 0;
}

/* "prog-3" or "prog-pre-3": the instance number and class. */
static bool parse_prog_pin(const char *name, bool *ret_preorder, unsigned *ret_instance) {
	const char *num;
	char *end;
	unsigned long n;

	if (strncmp(name, PIN_PROG_PRE, strlen(PIN_PROG_PRE)) == 0) {
		*ret_preorder = true;
		num = name + strlen(PIN_PROG_PRE);
	} else if (strncmp(name, PIN_PROG, strlen(PIN_PROG)) == 0) {
		*ret_preorder = false;
		num = name + strlen(PIN_PROG);
	} else
		return false;
	errno = 0;
	n = strtoul(num, &end, 10);
	if (errno != 0 || end == num || *end || n > 1000000)
		return false;
	*ret_instance = (unsigned) n;
	return true;
}

static int scan_dir(struct cgf_kernel *k, const char *dir_name) {
	_cleanup_free_ char *dir = NULL;
	const char *at = strchr(dir_name, '@');
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (!at || at == dir_name || !at[1])
		return 0; /* not ours: we never made it */
	if (asprintf(&dir, "%s/%s", k->pin_root, dir_name) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d)
		return errno == ENOTDIR ? 0 : -errno;
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_(prog_freep) struct cgf_kernel_prog *p = NULL;
		bool preorder;
		unsigned n;

		if (!parse_prog_pin(de->d_name, &preorder, &n))
			continue;
		p = calloc(1, sizeof(*p));
		if (!p) {
			r = -ENOMEM;
			break;
		}
		p->fd = -EBADF;
		p->preorder = preorder;
		p->instance = n;
		p->filter = strndup(dir_name, (size_t) (at - dir_name));
		p->identity = strdup(at + 1);
		if (!p->filter || !p->identity || asprintf(&p->pin, "%s/%s", dir, de->d_name) < 0) {
			p->pin = NULL;
			r = -ENOMEM;
			break;
		}
		p->fd = bpf_obj_get(p->pin);
		if (p->fd < 0 || prog_id_of(p->fd, &p->prog_id) < 0)
			continue; /* not a program: not one of our pins */
		r = add_prog(k, p);
		if (r >= 0)
			p = NULL;
	}
	closedir(d);
	return r;
}

int cgf_kernel_progs_scan(struct cgf_kernel *k) {
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = opendir(k->pin_root);
	if (!d)
		return -errno;
	while (r >= 0 && (de = readdir(d)))
		if (de->d_name[0] != '.')
			r = scan_dir(k, de->d_name);
	closedir(d);
	return r;
}

static bool has_id(const uint32_t *ids, size_t n, uint32_t id) {
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

const struct cgf_kernel_prog *cgf_kernel_free_instance(const struct cgf_kernel *k, const char *filter,
							const char *identity, bool preorder,
							const uint32_t *ids, size_t n) {
	const struct cgf_kernel_prog *best = NULL;

	for (size_t i = 0; i < k->n_progs; i++) {
		const struct cgf_kernel_prog *p = k->progs[i];

		if (p->preorder != preorder || !streq(p->filter, filter) || !streq(p->identity, identity) ||
		    has_id(ids, n, p->prog_id))
			continue;
		if (!best || p->instance < best->instance)
			best = p;
	}
	return best;
}

static unsigned next_instance(const struct cgf_kernel *k, const char *filter, const char *identity,
			      bool preorder) {
	unsigned next = 0;

	for (size_t i = 0; i < k->n_progs; i++) {
		const struct cgf_kernel_prog *p = k->progs[i];

		if (p->preorder == preorder && streq(p->filter, filter) && streq(p->identity, identity) &&
		    p->instance >= next)
			next = p->instance + 1;
	}
	return next;
}

/* Opens the object with its maps pinned in dir, loading only the one
 * program; returns it loaded. */
static int load_object(const struct cgf_filter_object *obj, const char *dir, struct bpf_object **ret_obj,
		       struct bpf_program **ret_prog) {
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = obj->filter->name);
	struct bpf_object *o;
	struct bpf_program *prog, *found = NULL;
	struct bpf_map *map;
	int r;

	o = bpf_object__open_mem(obj->bytes, obj->size, &opts);
	if (!o)
		return -errno;
	bpf_object__for_each_program(prog, o) {
		bool it = streq(bpf_program__name(prog), obj->program);

		if (it)
			found = prog;
		r = bpf_program__set_autoload(prog, it);
		if (r < 0)
			goto fail;
	}
	r = -ENOENT;
	if (!found)
		goto fail;
	/* The object's own maps are shared by its instances and outlive a
	 * restart (counters, rules); .rodata and friends are per load. */
	bpf_object__for_each_map(map, o) {
		_cleanup_free_ char *pin = NULL;

		if (bpf_map__is_internal(map))
			continue;
		if (asprintf(&pin, "%s/" PIN_MAP "%s", dir, bpf_map__name(map)) < 0) {
			r = -ENOMEM;
			goto fail;
		}
		r = bpf_map__set_pin_path(map, pin);
		if (r < 0)
			goto fail;
	}
	r = bpf_object__load(o);
	if (r < 0)
		goto fail;
	*ret_obj = o;
	*ret_prog = found;
	return 0;
fail:
	bpf_object__close(o);
	return r;
}

int cgf_kernel_load_instance(struct cgf_kernel *k, const struct cgf_filter_object *obj, bool preorder,
			     const struct cgf_kernel_prog **ret, char **ret_message) {
	const struct cgf_filter *f = obj->filter;
	_cleanup_(prog_freep) struct cgf_kernel_prog *p = NULL;
	_cleanup_free_ char *dir = NULL;
	struct bpf_program *prog = NULL;
	struct bpf_object *o = NULL;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fd = -EBADF;
	p->preorder = preorder;
	p->filter = strdup(f->name);
	p->identity = strdup(obj->identity);
	if (!p->filter || !p->identity || asprintf(&dir, "%s/%s@%s", k->pin_root, f->name, obj->identity) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return errno_message(ret_message, -errno, "filter '%s': creating %s", f->name, dir);
	p->instance = next_instance(k, f->name, obj->identity, preorder);
	if (asprintf(&p->pin, "%s/%s%u", dir, preorder ? PIN_PROG_PRE : PIN_PROG, p->instance) < 0) {
		p->pin = NULL;
		return -ENOMEM;
	}

	r = load_object(obj, dir, &o, &prog);
	if (r < 0)
		return errno_message(ret_message, r, "filter '%s': loading program '%s'%s%s", f->name,
				   obj->program, f->type == CGF_FILTER_OBJECT ? " of " : "",
				   f->type == CGF_FILTER_OBJECT ? f->object : "");
	if (f->type == CGF_FILTER_OBJECT)
		p->fd = fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 3);
	else {
		char name[CGF_PROG_NAME_MAX + 1];
		LIBBPF_OPTS(bpf_prog_load_opts, opts,
			    .expected_attach_type = cgf_direction_attach_type(f->direction));

		cgf_filter_prog_name(f->name, name);
		p->fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, name, "GPL", bpf_program__insns(prog),
				      bpf_program__insn_cnt(prog), &opts);
	}
	r = p->fd < 0 ? -errno : 0;
	bpf_object__close(o);
	if (r < 0)
		return errno_message(ret_message, r, "filter '%s': loading program '%s'", f->name, obj->program);
	r = prog_id_of(p->fd, &p->prog_id);
	if (r < 0)
		return errno_message(ret_message, r, "filter '%s': reading the loaded program", f->name);
	if (bpf_obj_pin(p->fd, p->pin) < 0)
		return errno_message(ret_message, -errno, "filter '%s': pinning at %s", f->name, p->pin);
	r = add_prog(k, p);
	if (r < 0) {
		unlink(p->pin);
		return r;
	}
	*ret = TAKE_PTR(p);
	return 0;
}

int cgf_kernel_map_fd(struct cgf_kernel *k, const char *filter, const char *identity, const char *map_name) {
	_cleanup_free_ char *pin = NULL;
	int fd;

	if (asprintf(&pin, "%s/%s@%s/" PIN_MAP "%s", k->pin_root, filter, identity, map_name) < 0)
		return -ENOMEM;
	fd = bpf_obj_get(pin);
	return fd < 0 ? -errno : fd;
}

static bool attached_anywhere(const struct cgf_actual *a, uint32_t id) {
	for (size_t i = 0; i < a->n_lists; i++)
		for (size_t j = 0; j < a->lists[i].n_entries; j++)
			if (a->lists[i].entries[j].prog_id == id)
				return true;
	return false;
}

/* Removes a directory of ours once it holds no program: its maps go
 * with it (nothing else reads them). */
static int remove_if_unused(const char *dir) {
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		bool pre;
		unsigned n;

		if (parse_prog_pin(de->d_name, &pre, &n)) {
			closedir(d);
			return 0;
		}
	}
	rewinddir(d);
	while ((de = readdir(d)))
		if (strncmp(de->d_name, PIN_MAP, strlen(PIN_MAP)) == 0 && unlinkat(dirfd(d), de->d_name, 0) < 0)
			r = -errno;
	closedir(d);
	if (r >= 0 && rmdir(dir) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/* Directories of ours without a program: left by a load that failed,
 * or by a daemon that died between loading and pinning. */
static int sweep(struct cgf_kernel *k) {
	struct dirent *de;
	DIR *d;
	int r = 0, q;

	d = opendir(k->pin_root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		_cleanup_free_ char *dir = NULL;

		if (de->d_name[0] == '.' || !strchr(de->d_name, '@'))
			continue;
		if (asprintf(&dir, "%s/%s", k->pin_root, de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		q = remove_if_unused(dir);
		if (q < 0 && q != -ENOTDIR && r >= 0)
			r = q;
	}
	closedir(d);
	return r;
}

/* Counters of cgroups that are gone: the programs add entries and never
 * remove them, and a full map counts nothing new. */
static int prune_counters(const char *dir, const struct cgf_cgroup_tree *tree) {
	_cleanup_free_ char *pin = NULL;
	_cleanup_free_ uint64_t *gone = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t n_gone = 0;
	uint64_t key, *prev = NULL;

	if (asprintf(&pin, "%s/" PIN_MAP "counters", dir) < 0)
		return -ENOMEM;
	fd = bpf_obj_get(pin);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* Collect first: deleting while walking would restart the walk. */
	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		if (!cgf_cgroup_tree_has_id(tree, key)) {
			uint64_t *slot = array_append((void **) &gone, n_gone, sizeof(*gone));

			if (!slot)
				return -ENOMEM;
			*slot = key;
			n_gone++;
		}
		prev = &key;
	}
	for (size_t i = 0; i < n_gone; i++)
		if (bpf_map_delete_elem(fd, &gone[i]) < 0 && errno != ENOENT)
			return -errno;
	return 0;
}

int cgf_kernel_gc(struct cgf_kernel *k, const struct cgf_actual *actual, const struct cgf_cgroup_tree *tree) {
	int removed = 0, r = 0, q;

	for (size_t i = 0; i < k->n_progs;) {
		struct cgf_kernel_prog *p = k->progs[i];

		if (attached_anywhere(actual, p->prog_id)) {
			i++;
			continue;
		}
		if (unlink(p->pin) < 0 && errno != ENOENT) {
			r = -errno;
			i++;
			continue;
		}
		k->progs[i] = k->progs[--k->n_progs];
		prog_free(p);
		removed++;
	}
	q = sweep(k);
	if (q < 0 && r >= 0)
		r = q;
	for (size_t i = 0; i < k->n_progs; i++) {
		const char *pin = k->progs[i]->pin;
		_cleanup_free_ char *dir = strndup(pin, (size_t) (strrchr(pin, '/') - pin));
		bool done = false;

		if (!dir)
			return -ENOMEM;
		/* Once per object, not per instance. */
		for (size_t j = 0; j < i && !done; j++)
			done = strncmp(k->progs[j]->pin, dir, strlen(dir)) == 0 && k->progs[j]->pin[strlen(dir)] == '/';
		q = done ? 0 : prune_counters(dir, tree);
		if (q < 0 && r >= 0)
			r = q;
	}
	return r < 0 ? r : removed;
}
