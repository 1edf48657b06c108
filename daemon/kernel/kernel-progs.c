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
 *
 * A pin alone does not make a program ours: anything root pins under the
 * pin root would be adopted, detached and reused.  So beside every pin we
 * record what we loaded, as a symbolic link (bpffs holds no regular
 * files; a link is created whole or not at all):
 *
 *   identity-prog-<n> -> "cgf-v1 id=<prog id> tag=<tag> attach=<ingress|egress> name=<name>"
 *
 * (bpffs refuses names with a dot, -EPERM: the record's name is a prefix.)
 *
 * and adopt a pinned program only when the kernel's bpf_prog_info agrees:
 * type cgroup_skb, the recorded id (unique while the program lives, so
 * another program pinned there later cannot match) and tag (its code),
 * and the name we load it under (cgf_<filter> for the built-ins, the
 * object's for an operator's object).  Anything else under the pin root
 * is foreign: never adopted, detached, reused or unpinned, and reported.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel-progs.h"
#include "util.h"

#define PIN_PROG "prog-"
#define PIN_PROG_PRE "prog-pre-"
#define PIN_MAP "map-"
#define PIN_RECORD "identity-"
#define RECORD_VERSION "cgf-v1"

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

void cgf_instances_done(struct cgf_instances *in) {
	for (size_t i = 0; i < in->n_progs; i++)
		prog_free(in->progs[i]);
	free(in->progs);
	in->progs = NULL;
	in->n_progs = 0;
	for (size_t i = 0; i < in->n_warnings; i++)
		free(in->warnings[i]);
	free(in->warnings);
	in->warnings = NULL;
	in->n_warnings = 0;
}

static int add_prog(struct cgf_instances *in, struct cgf_kernel_prog *p) {
	struct cgf_kernel_prog **slot = array_append((void **) &in->progs, in->n_progs, sizeof(*in->progs));

	if (!slot)
		return -ENOMEM;
	*slot = p;
	in->n_progs++;
	return 0;
}

static int prog_info_of(int fd, struct bpf_prog_info *ret) {
	uint32_t len = sizeof(*ret);

	*ret = (struct bpf_prog_info) {};
	if (bpf_obj_get_info_by_fd(fd, ret, &len) < 0)
		return -errno;
	return 0;
}

/* A pinned object may be a map or a link: the fd's anon inode says. */
static bool fd_is_prog(int fd) {
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return streq(target, "anon_inode:bpf-prog");
}

static void tag_to_hex(const uint8_t tag[static BPF_TAG_SIZE], char ret[static 2 * BPF_TAG_SIZE + 1]) {
	for (size_t i = 0; i < BPF_TAG_SIZE; i++)
		sprintf(ret + 2 * i, "%02x", tag[i]);
}

/* The name the kernel keeps for what we load as (filter, identity). */
static bool expected_name(const char *filter, const char *identity, const char *recorded, const char *name) {
	char builtin[CGF_PROG_NAME_MAX + 1];

	/* An operator's object names its own programs (its identity starts
	 * with the filter type, "object:"): the recorded name stands. */
	if (strncmp(identity, "object:", strlen("object:")) == 0)
		return streq(name, recorded);
	cgf_filter_prog_name(filter, builtin);
	return streq(name, builtin) && streq(recorded, builtin);
}

static int record_target(const struct bpf_prog_info *info, unsigned attach_type, char **ret) {
	char tag[2 * BPF_TAG_SIZE + 1];

	tag_to_hex(info->tag, tag);
	if (asprintf(ret, RECORD_VERSION " id=%" PRIu32 " tag=%s attach=%s name=%s", info->id, tag,
		     attach_type == BPF_CGROUP_INET_INGRESS ? "ingress" : "egress", info->name) < 0)
		return -ENOMEM;
	return 0;
}

/* Adds a line to what the caller is to log about the pins. */
void cgf_instances_warn(struct cgf_instances *in, const char *format, ...) {
	char **slot = array_append((void **) &in->warnings, in->n_warnings, sizeof(*in->warnings));
	va_list va;

	if (!slot)
		return;
	va_start(va, format);
	if (vasprintf(slot, format, va) >= 0)
		in->n_warnings++;
	va_end(va);
}

static void why(char **ret, const char *format, ...) _printf_(2, 3);
static void why(char **ret, const char *format, ...) {
	va_list va;

	va_start(va, format);
	if (vasprintf(ret, format, va) < 0)
		*ret = NULL;
	va_end(va);
}

/*
 * Is the program pinned at p->pin (its fd open) the one we loaded?  Says
 * why not in *ret_why.  Fills p->prog_id and p->direction when it is.
 */
static bool verify_pin(struct cgf_kernel_prog *p, const char *dir, const char *pin_name, char **ret_why) {
	_cleanup_free_ char *record_path = NULL;
	char record[256], tag[2 * BPF_TAG_SIZE + 1], r_tag[2 * BPF_TAG_SIZE + 1], r_attach[16],
		r_name[BPF_OBJ_NAME_LEN + 1];
	struct bpf_prog_info info;
	unsigned r_id;
	ssize_t n;

	if (!fd_is_prog(p->fd)) {
		why(ret_why, "not a program");
		return false;
	}
	if (prog_info_of(p->fd, &info) < 0) {
		why(ret_why, "reading its info: %s", strerror(errno));
		return false;
	}
	p->prog_id = info.id;
	info.name[BPF_OBJ_NAME_LEN - 1] = '\0';
	if (info.type != BPF_PROG_TYPE_CGROUP_SKB) {
		why(ret_why, "program type %u, not cgroup_skb", info.type);
		return false;
	}
	if (asprintf(&record_path, "%s/" PIN_RECORD "%s", dir, pin_name) < 0) {
		why(ret_why, "out of memory");
		return false;
	}
	n = readlink(record_path, record, sizeof(record) - 1);
	if (n < 0) {
		why(ret_why, "no identity record " PIN_RECORD "%s (%s)", pin_name, strerror(errno));
		return false;
	}
	record[n] = '\0';
	if (sscanf(record, RECORD_VERSION " id=%u tag=%16[0-9a-f] attach=%15s name=%16s", &r_id, r_tag, r_attach,
		   r_name) != 4) {
		why(ret_why, "its identity record is not one of ours");
		return false;
	}
	tag_to_hex(info.tag, tag);
	if (r_id != info.id) {
		why(ret_why, "program id %u, but the record says %u", info.id, r_id);
		return false;
	}
	if (!streq(r_tag, tag)) {
		why(ret_why, "tag %s, but the record says %s", tag, r_tag);
		return false;
	}
	if (streq(r_attach, "ingress"))
		p->direction = CGF_INGRESS;
	else if (streq(r_attach, "egress"))
		p->direction = CGF_EGRESS;
	else {
		why(ret_why, "attach type '%.15s' is not cgroup_skb's", r_attach);
		return false;
	}
	if (!expected_name(p->filter, p->identity, r_name, info.name)) {
		why(ret_why, "name '%s' is not the one filter '%.64s' loads under", info.name, p->filter);
		return false;
	}
	return true;
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

static int scan_dir(struct cgf_instances *in, const char *dir_name) {
	_cleanup_free_ char *dir = NULL;
	const char *at = strchr(dir_name, '@');
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (!at || at == dir_name || !at[1])
		return 0; /* not ours: we never made it */
	if (asprintf(&dir, "%s/%s", in->pin_root, dir_name) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d)
		return errno == ENOTDIR ? 0 : -errno;
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_(prog_freep) struct cgf_kernel_prog *p = NULL;
		_cleanup_free_ char *reason = NULL;
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
		if (p->fd < 0) {
			cgf_instances_warn(in, "pin %s: not adopted (foreign): cannot open it: %s", p->pin,
					   strerror(errno));
			continue;
		}
		if (!verify_pin(p, dir, de->d_name, &reason)) {
			if (p->prog_id)
				cgf_instances_warn(in, "pin %s (prog %" PRIu32 "): not adopted, treated as foreign: %s",
						   p->pin, p->prog_id, reason ?: "?");
			else
				cgf_instances_warn(in, "pin %s: not adopted, treated as foreign: %s", p->pin,
						   reason ?: "?");
			continue;
		}
		r = add_prog(in, p);
		if (r >= 0)
			p = NULL;
	}
	closedir(d);
	return r;
}

const struct cgf_kernel_prog *cgf_instances_find(const struct cgf_instances *in, uint32_t prog_id) {
	for (size_t i = 0; i < in->n_progs; i++)
		if (in->progs[i]->prog_id == prog_id)
			return in->progs[i];
	return NULL;
}

int cgf_instances_scan(struct cgf_instances *in) {
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (in->pin->fd < 0)
		return 0; /* read-only, and nothing was ever pinned */
	d = opendir(in->pin_root);
	if (!d)
		return -errno;
	while (r >= 0 && (de = readdir(d)))
		if (de->d_name[0] != '.')
			r = scan_dir(in, de->d_name);
	closedir(d);
	return r;
}

static bool has_id(const uint32_t *ids, size_t n, uint32_t id) {
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

const struct cgf_kernel_prog *cgf_instances_find_free(const struct cgf_instances *in, const char *filter,
						      const char *identity, enum cgf_direction direction,
						      bool preorder, const uint32_t *ids, size_t n) {
	const struct cgf_kernel_prog *best = NULL;

	for (size_t i = 0; i < in->n_progs; i++) {
		const struct cgf_kernel_prog *p = in->progs[i];

		if (p->preorder != preorder || p->direction != direction || !streq(p->filter, filter) ||
		    !streq(p->identity, identity) || has_id(ids, n, p->prog_id))
			continue;
		if (!best || p->instance < best->instance)
			best = p;
	}
	return best;
}

static unsigned next_instance(const struct cgf_instances *in, const char *filter, const char *identity,
			      bool preorder) {
	unsigned next = 0;

	for (size_t i = 0; i < in->n_progs; i++) {
		const struct cgf_kernel_prog *p = in->progs[i];

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

int cgf_instances_load(struct cgf_instances *in, const struct cgf_filter_object *obj, bool preorder,
		       const struct cgf_kernel_prog **ret, char **ret_message) {
	const struct cgf_filter *f = obj->filter;
	_cleanup_(prog_freep) struct cgf_kernel_prog *p = NULL;
	_cleanup_free_ char *dir = NULL, *record = NULL, *target = NULL;
	struct bpf_prog_info info;
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
	if (!p->filter || !p->identity || asprintf(&dir, "%s/%s@%s", in->pin_root, f->name, obj->identity) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return errno_message(ret_message, -errno, "filter '%s': creating %s", f->name, dir);
	p->direction = f->direction;
	/* The next number after ours; one taken by a foreign pin is skipped. */
	for (p->instance = next_instance(in, f->name, obj->identity, preorder);; p->instance++) {
		free(p->pin);
		if (asprintf(&p->pin, "%s/%s%u", dir, preorder ? PIN_PROG_PRE : PIN_PROG, p->instance) < 0) {
			p->pin = NULL;
			return -ENOMEM;
		}
		if (access(p->pin, F_OK) < 0 && errno == ENOENT)
			break;
		if (p->instance > 1000000)
			return errno_message(ret_message, -EEXIST, "filter '%s': no free pin name in %s", f->name, dir);
	}
	if (asprintf(&record, "%s/" PIN_RECORD "%s", dir, strrchr(p->pin, '/') + 1) < 0)
		return -ENOMEM;

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
	r = prog_info_of(p->fd, &info);
	if (r < 0)
		return errno_message(ret_message, r, "filter '%s': reading the loaded program", f->name);
	p->prog_id = info.id;
	r = record_target(&info, cgf_direction_attach_type(f->direction), &target);
	if (r < 0)
		return r;
	/* The record first: a pin without one would be foreign after a
	 * crash right here.  A leftover record of a pin that is gone (a crash
	 * between the two) is replaced. */
	if ((unlink(record) < 0 && errno != ENOENT) || symlink(target, record) < 0)
		return errno_message(ret_message, -errno, "filter '%s': recording its identity at %s", f->name,
				     record);
	if (bpf_obj_pin(p->fd, p->pin) < 0) {
		r = -errno;
		(void) unlink(record);
		return errno_message(ret_message, r, "filter '%s': pinning at %s", f->name, p->pin);
	}
	r = add_prog(in, p);
	if (r < 0) {
		unlink(p->pin);
		unlink(record);
		return r;
	}
	*ret = TAKE_PTR(p);
	return 0;
}

int cgf_instances_map_fd(struct cgf_instances *in, const char *filter, const char *identity, const char *map_name) {
	_cleanup_free_ char *pin = NULL;
	int fd;

	if (asprintf(&pin, "%s/%s@%s/" PIN_MAP "%s", in->pin_root, filter, identity, map_name) < 0)
		return -ENOMEM;
	fd = bpf_obj_get(pin);
	return fd < 0 ? -errno : fd;
}

static int unlink_record(const char *pin) {
	_cleanup_free_ char *record = NULL;

	const char *base = strrchr(pin, '/');

	if (!base || asprintf(&record, "%.*s/" PIN_RECORD "%s", (int) (base - pin), pin, base + 1) < 0)
		return -ENOMEM;
	return unlink(record) < 0 && errno != ENOENT ? -errno : 0;
}

static bool is_record(const char *name) {
	return strncmp(name, PIN_RECORD PIN_PROG, strlen(PIN_RECORD PIN_PROG)) == 0;
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
	/* Maps, and the records of pins that are gone. */
	while ((de = readdir(d)))
		if ((strncmp(de->d_name, PIN_MAP, strlen(PIN_MAP)) == 0 || is_record(de->d_name)) &&
		    unlinkat(dirfd(d), de->d_name, 0) < 0)
			r = -errno;
	closedir(d);
	if (r >= 0 && rmdir(dir) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/* Directories of ours without a program: left by a load that failed,
 * or by a daemon that died between loading and pinning. */
static int sweep(struct cgf_instances *in) {
	struct dirent *de;
	DIR *d;
	int r = 0, q;

	d = opendir(in->pin_root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		_cleanup_free_ char *dir = NULL;

		if (de->d_name[0] == '.' || !strchr(de->d_name, '@'))
			continue;
		if (asprintf(&dir, "%s/%s", in->pin_root, de->d_name) < 0) {
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

int cgf_instances_gc(struct cgf_instances *in, const struct cgf_actual *actual, const struct cgf_cgroup_tree *tree) {
	int removed = 0, r = 0, q;

	if (!in->pin->locked) /* opened read-only: another cgfilterd may apply */
		return -EROFS;

	for (size_t i = 0; i < in->n_progs;) {
		struct cgf_kernel_prog *p = in->progs[i];

		if (attached_anywhere(actual, p->prog_id)) {
			i++;
			continue;
		}
		if (unlink(p->pin) < 0 && errno != ENOENT) {
			r = -errno;
			i++;
			continue;
		}
		q = unlink_record(p->pin);
		if (q < 0 && r >= 0)
			r = q;
		in->progs[i] = in->progs[--in->n_progs];
		prog_free(p);
		removed++;
	}
	q = sweep(in);
	if (q < 0 && r >= 0)
		r = q;
	for (size_t i = 0; i < in->n_progs; i++) {
		const char *pin = in->progs[i]->pin;
		_cleanup_free_ char *dir = strndup(pin, (size_t) (strrchr(pin, '/') - pin));
		bool done = false;

		if (!dir)
			return -ENOMEM;
		/* Once per object, not per instance. */
		for (size_t j = 0; j < i && !done; j++)
			done = strncmp(in->progs[j]->pin, dir, strlen(dir)) == 0 &&
			       in->progs[j]->pin[strlen(dir)] == '/';
		q = done ? 0 : prune_counters(dir, tree);
		if (q < 0 && r >= 0)
			r = q;
	}
	return r < 0 ? r : removed;
}
