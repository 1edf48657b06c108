/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>

#include "state.h"
#include "util.h"

/* ---- paths --------------------------------------------------------------- */

static bool is_root(const char *path) {
	return streq(path, ".") || streq(path, "");
}

unsigned cgf_cgroup_depth(const char *path) {
	unsigned depth = 1;

	if (is_root(path))
		return 0;
	for (const char *p = path; *p; p++)
		depth += *p == '/';
	return depth;
}

bool cgf_cgroup_is_below(const char *path, const char *ancestor) {
	size_t n = strlen(ancestor);

	if (is_root(path))
		return false;
	if (is_root(ancestor))
		return true;
	return strncmp(path, ancestor, n) == 0 && path[n] == '/';
}

bool cgf_cgroup_parent(const char *path, char *buf, size_t size) {
	const char *slash;
	size_t n;

	if (is_root(path))
		return false;
	slash = strrchr(path, '/');
	if (!slash) {
		snprintf(buf, size, ".");
		return true;
	}
	n = (size_t) (slash - path);
	if (n + 1 > size)
		n = size - 1;
	memcpy(buf, path, n);
	buf[n] = 0;
	return true;
}

int cgf_list_key_compare(const char *cgroup_a, enum cgf_direction dir_a, const char *cgroup_b,
			 enum cgf_direction dir_b) {
	int r = strcmp(cgroup_a, cgroup_b);

	if (r != 0)
		return r;
	return dir_a < dir_b ? -1 : dir_a > dir_b;
}

/* ---- desired ------------------------------------------------------------- */

struct cgf_desired *cgf_desired_new(void) {
	return calloc(1, sizeof(struct cgf_desired));
}

static void desired_tenant_clear(struct cgf_desired_tenant *t) {
	free(t->cgroup);
	free(t->carrier);
	for (size_t i = 0; i < t->n_filters; i++)
		free(t->filters[i]);
	free(t->filters);
}

static void desired_list_clear(struct cgf_desired_list *l) {
	free(l->cgroup);
	for (size_t i = 0; i < l->n_entries; i++) {
		free(l->entries[i].filter);
		free(l->entries[i].identity);
	}
	free(l->entries);
	for (size_t i = 0; i < l->n_tenants; i++)
		desired_tenant_clear(&l->tenants[i]);
	free(l->tenants);
	free(l->tenant_carrier);
}

struct cgf_desired *cgf_desired_free(struct cgf_desired *d) {
	if (!d)
		return NULL;
	for (size_t i = 0; i < d->n_lists; i++)
		desired_list_clear(&d->lists[i]);
	free(d->lists);
	free(d);
	return NULL;
}

int cgf_desired_add_list(struct cgf_desired *d, const char *cgroup, enum cgf_direction direction,
			 enum cgf_mode mode, struct cgf_desired_list **ret) {
	_cleanup_free_ char *c = NULL;
	struct cgf_desired_list *l;

	c = strdup(cgroup);
	if (!c)
		return -ENOMEM;
	l = array_append((void **) &d->lists, d->n_lists, sizeof(*l));
	if (!l)
		return -ENOMEM;
	*l = (struct cgf_desired_list) { .cgroup = TAKE_PTR(c), .direction = direction, .mode = mode };
	d->n_lists++;
	if (ret)
		*ret = l;
	return 0;
}

int cgf_desired_list_add_entry(struct cgf_desired_list *l, const char *filter, const char *identity,
			       bool preorder, struct cgf_pos pos) {
	_cleanup_free_ char *f = NULL, *id = NULL;
	struct cgf_desired_entry *e;

	f = strdup(filter);
	id = strdup(identity);
	if (!f || !id)
		return -ENOMEM;
	e = array_append((void **) &l->entries, l->n_entries, sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct cgf_desired_entry) {
		.filter = TAKE_PTR(f), .identity = TAKE_PTR(id), .preorder = preorder, .pos = pos,
	};
	l->n_entries++;
	return 0;
}

int cgf_desired_list_add_tenant(struct cgf_desired_list *l, const char *cgroup, const char *carrier,
				struct cgf_pos pos, struct cgf_desired_tenant **ret) {
	_cleanup_free_ char *c = NULL, *k = NULL;
	struct cgf_desired_tenant *t;

	c = strdup(cgroup);
	k = strdup(carrier);
	if (!c || !k)
		return -ENOMEM;
	t = array_append((void **) &l->tenants, l->n_tenants, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct cgf_desired_tenant) { .cgroup = TAKE_PTR(c), .carrier = TAKE_PTR(k), .pos = pos };
	l->n_tenants++;
	if (ret)
		*ret = t;
	return 0;
}

int cgf_desired_tenant_add_filter(struct cgf_desired_tenant *t, const char *filter) {
	_cleanup_free_ char *f = NULL;
	char **slot;

	f = strdup(filter);
	if (!f)
		return -ENOMEM;
	slot = array_append((void **) &t->filters, t->n_filters, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = TAKE_PTR(f);
	t->n_filters++;
	return 0;
}

static int compare_desired_lists(const void *a, const void *b) {
	const struct cgf_desired_list *x = a, *y = b;

	return cgf_list_key_compare(x->cgroup, x->direction, y->cgroup, y->direction);
}

void cgf_desired_sort(struct cgf_desired *d) {
	qsort_safe(d->lists, d->n_lists, sizeof(*d->lists), compare_desired_lists);
}

const struct cgf_desired_list *cgf_desired_find(const struct cgf_desired *d, const char *cgroup,
						enum cgf_direction direction) {
	struct cgf_desired_list key = { .cgroup = (char *) cgroup, .direction = direction };

	if (!d || d->n_lists == 0)
		return NULL;
	return bsearch(&key, d->lists, d->n_lists, sizeof(*d->lists), compare_desired_lists);
}

/* ---- actual -------------------------------------------------------------- */

struct cgf_actual *cgf_actual_new(void) {
	return calloc(1, sizeof(struct cgf_actual));
}

void cgf_actual_entry_clear(struct cgf_actual_entry *e) {
	if (!e)
		return;
	free(e->prog_name);
	free(e->filter);
	free(e->identity);
	*e = (struct cgf_actual_entry) {};
}

static void actual_list_clear(struct cgf_actual_list *l) {
	free(l->cgroup);
	for (size_t i = 0; i < l->n_entries; i++)
		cgf_actual_entry_clear(&l->entries[i]);
	free(l->entries);
}

struct cgf_actual *cgf_actual_free(struct cgf_actual *a) {
	if (!a)
		return NULL;
	for (size_t i = 0; i < a->n_lists; i++)
		actual_list_clear(&a->lists[i]);
	free(a->lists);
	free(a);
	return NULL;
}

void cgf_actual_truncate(struct cgf_actual *a, size_t n) {
	while (a->n_lists > n)
		actual_list_clear(&a->lists[--a->n_lists]);
}

int cgf_actual_add_list(struct cgf_actual *a, const char *cgroup, enum cgf_direction direction,
			uint32_t flags, uint64_t revision, struct cgf_actual_list **ret) {
	_cleanup_free_ char *c = NULL;
	struct cgf_actual_list *l;

	c = strdup(cgroup);
	if (!c)
		return -ENOMEM;
	l = array_append((void **) &a->lists, a->n_lists, sizeof(*l));
	if (!l)
		return -ENOMEM;
	*l = (struct cgf_actual_list) {
		.cgroup = TAKE_PTR(c), .direction = direction, .flags = flags, .revision = revision,
	};
	a->n_lists++;
	if (ret)
		*ret = l;
	return 0;
}

static char *strdup_null(const char *s, bool *oom) {
	char *p;

	if (!s)
		return NULL;
	p = strdup(s);
	if (!p)
		*oom = true;
	return p;
}

static int entry_copy(const struct cgf_actual_entry *from, struct cgf_actual_entry *to) {
	bool oom = false;

	*to = (struct cgf_actual_entry) {
		.prog_id = from->prog_id,
		.link_id = from->link_id,
		.prog_name = strdup_null(from->prog_name, &oom),
		.ours = from->ours,
		.filter = strdup_null(from->filter, &oom),
		.identity = strdup_null(from->identity, &oom),
		.preorder = from->preorder,
	};
	if (oom) {
		cgf_actual_entry_clear(to);
		return -ENOMEM;
	}
	return 0;
}

int cgf_actual_list_insert(struct cgf_actual_list *l, size_t at, const struct cgf_actual_entry *e) {
	struct cgf_actual_entry copy, *slot;
	int r;

	if (at > l->n_entries)
		return -EINVAL;
	r = entry_copy(e, &copy);
	if (r < 0)
		return r;
	slot = array_append((void **) &l->entries, l->n_entries, sizeof(*slot));
	if (!slot) {
		cgf_actual_entry_clear(&copy);
		return -ENOMEM;
	}
	memmove(&l->entries[at + 1], &l->entries[at], (l->n_entries - at) * sizeof(*slot));
	l->entries[at] = copy;
	l->n_entries++;
	return 0;
}

void cgf_actual_list_remove(struct cgf_actual_list *l, size_t at) {
	if (at >= l->n_entries)
		return;
	cgf_actual_entry_clear(&l->entries[at]);
	memmove(&l->entries[at], &l->entries[at + 1], (l->n_entries - at - 1) * sizeof(l->entries[0]));
	l->n_entries--;
}

int cgf_actual_copy(const struct cgf_actual *a, struct cgf_actual **ret) {
	_cleanup_(cgf_actual_freep) struct cgf_actual *c = NULL;
	int r;

	c = cgf_actual_new();
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; a && i < a->n_lists; i++) {
		const struct cgf_actual_list *from = &a->lists[i];
		struct cgf_actual_list *to;

		r = cgf_actual_add_list(c, from->cgroup, from->direction, from->flags, from->revision, &to);
		if (r < 0)
			return r;
		for (size_t j = 0; j < from->n_entries; j++) {
			r = cgf_actual_list_insert(to, to->n_entries, &from->entries[j]);
			if (r < 0)
				return r;
		}
	}
	*ret = TAKE_PTR(c);
	return 0;
}

static int compare_actual_lists(const void *a, const void *b) {
	const struct cgf_actual_list *x = a, *y = b;

	return cgf_list_key_compare(x->cgroup, x->direction, y->cgroup, y->direction);
}

void cgf_actual_sort(struct cgf_actual *a) {
	qsort_safe(a->lists, a->n_lists, sizeof(*a->lists), compare_actual_lists);
}

struct cgf_actual_list *cgf_actual_find_mutable(struct cgf_actual *a, const char *cgroup,
						enum cgf_direction direction) {
	struct cgf_actual_list key = { .cgroup = (char *) cgroup, .direction = direction };

	if (!a || a->n_lists == 0)
		return NULL;
	return bsearch(&key, a->lists, a->n_lists, sizeof(*a->lists), compare_actual_lists);
}

const struct cgf_actual_list *cgf_actual_find(const struct cgf_actual *a, const char *cgroup,
					      enum cgf_direction direction) {
	return cgf_actual_find_mutable((struct cgf_actual *) a, cgroup, direction);
}
