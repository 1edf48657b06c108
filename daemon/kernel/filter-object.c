/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <bpf/libbpf.h>

#include "file-trust.h"
#include "filter-object.h"
#include "identity.h"

void cgf_objects_done(struct cgf_objects *o) {
	for (size_t i = 0; i < o->n; i++) {
		free(o->items[i].owned);
		free(o->items[i].section);
		free(o->items[i].program);
		free(o->items[i].identity);
	}
	free(o->items);
	*o = (struct cgf_objects) {};
}

const struct cgf_filter_object *cgf_objects_find(const struct cgf_objects *o, const char *filter) {
	for (size_t i = 0; i < o->n; i++)
		if (streq(o->items[i].filter->name, filter))
			return &o->items[i];
	return NULL;
}

int cgf_objects_identity(const struct cgf_filter *f, void *userdata, char **ret) {
	const struct cgf_filter_object *obj = cgf_objects_find(userdata, f->name);

	if (!obj || !obj->identity)
		return -ENOENT;
	*ret = strdup(obj->identity);
	return *ret ? 0 : -ENOMEM;
}

/* Objects are kilobytes; refuse what cannot be one. */
#define OBJECT_FILE_MAX (64u << 20)

static int silent_print(enum libbpf_print_level level _unused_, const char *format _unused_,
			va_list ap _unused_) {
	return 0;
}

/* Finds the program in the parsed object and checks it fits the filter. */
static int find_program(struct cgf_filter_object *o, struct cgf_diags *diags) {
	const struct cgf_filter *f = o->filter;
	const char *want = f->direction == CGF_INGRESS ? "cgroup_skb/ingress" : "cgroup_skb/egress";
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = f->name);
	libbpf_print_fn_t old_print;
	struct bpf_object *obj;
	struct bpf_program *prog, *found = NULL;
	struct cgf_pos pos = f->type == CGF_FILTER_OBJECT ? f->object_pos : f->pos;
	int r = 0;

	/* libbpf prints its own complaints about a broken file; ours name the
	 * policy line instead. */
	old_print = libbpf_set_print(silent_print);
	obj = bpf_object__open_mem(o->bytes, o->size, &opts);
	libbpf_set_print(old_print);
	if (!obj) {
		cgf_diags_add(diags, CGF_ERROR, pos, "filter '%s': '%s' is not a BPF object libbpf can open: %s",
			      f->name, f->type == CGF_FILTER_OBJECT ? f->object : "built-in", strerror(errno));
		return 0;
	}
	bpf_object__for_each_program(prog, obj) {
		if (f->type == CGF_FILTER_OBJECT ? streq(bpf_program__name(prog), f->program)
						 : streq(bpf_program__section_name(prog), want)) {
			found = prog;
			break;
		}
	}
	if (!found) {
		if (f->type == CGF_FILTER_OBJECT)
			cgf_diags_add(diags, CGF_ERROR, f->program_pos, "filter '%s': '%s' has no program '%s'",
				      f->name, f->object, f->program);
		else
			cgf_diags_add(diags, CGF_ERROR, f->pos, "filter '%s': the built-in %s object has no %s program",
				      f->name, cgf_filter_type_to_string(f->type), want);
		goto finish;
	}
	if (bpf_program__type(found) != BPF_PROG_TYPE_CGROUP_SKB) {
		cgf_diags_add(diags, CGF_ERROR, f->program_pos,
			      "filter '%s': program '%s' is in section '%s', not a cgroup_skb program",
			      f->name, bpf_program__name(found), bpf_program__section_name(found));
		goto finish;
	}
	if (!streq(bpf_program__section_name(found), want) &&
	    !streq(bpf_program__section_name(found), "cgroup/skb")) {
		cgf_diags_add(diags, CGF_ERROR, f->program_pos,
			      "filter '%s' is %s, but program '%s' is in section '%s'; use SEC(\"%s\")",
			      f->name, cgf_direction_to_string(f->direction), bpf_program__name(found),
			      bpf_program__section_name(found), want);
		cgf_diags_note(diags, f->direction_pos, "the direction is set here");
		goto finish;
	}
	o->section = strdup(bpf_program__section_name(found));
	o->program = strdup(bpf_program__name(found));
	if (!o->section || !o->program)
		r = -ENOMEM;
finish:
	bpf_object__close(obj);
	return r;
}

static int resolve_one(struct cgf_filter_object *o, struct cgf_diags *diags) {
	const struct cgf_filter *f = o->filter;
	_cleanup_free_ char *message = NULL, *bytes = NULL;
	int r;

	if (f->type == CGF_FILTER_OBJECT) {
		/* The program root loads: the object file is held to the same
		 * rule as the policy files, whoever reads the policy. */
		r = cgf_trust_read_file(f->object, CGF_TRUST_OWNER, OBJECT_FILE_MAX, &bytes, &o->size, &message);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			cgf_diags_add(diags, CGF_ERROR, f->object_pos, "filter '%s': object '%s': %s", f->name,
				      f->object, message ?: strerror(-r));
			return 0;
		}
		o->bytes = o->owned = TAKE_PTR(bytes);
	} else {
		o->bytes = cgf_builtin_object(f->type, &o->size);
		if (!o->bytes)
			return -EINVAL;
	}
	r = find_program(o, diags);
	if (r < 0 || !o->program)
		return r;
	return cgf_filter_identity_of_bytes(f, o->bytes, o->size, &o->identity);
}

int cgf_objects_resolve(const struct cgf_policy *p, struct cgf_objects *ret, struct cgf_diags *diags) {
	struct cgf_objects o = {};
	int r;

	o.items = calloc(p->n_filters + 1, sizeof(*o.items));
	if (!o.items)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_filters; i++) {
		o.items[o.n].filter = &p->filters[i];
		r = resolve_one(&o.items[o.n++], diags);
		if (r < 0) {
			cgf_objects_done(&o);
			return r;
		}
	}
	*ret = o;
	return cgf_diags_status(diags);
}
