/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>

#include "filter-maps-sync.h"
#include "maps-sync.h"
#include "util.h"

/* The map fds of one object, opened from their pins once per sync. */
struct map_fds {
	struct cgf_kernel *k;
	const char *filter, *identity;
	const char *names[8];
	int fds[8];
	size_t n;
};

static int map_fd(const char *name, void *userdata) {
	struct map_fds *m = userdata;
	int fd;

	for (size_t i = 0; i < m->n; i++)
		if (streq(m->names[i], name))
			return m->fds[i];
	if (m->n >= ELEMENTSOF(m->fds))
		return -E2BIG;
	fd = cgf_kernel_map_fd(m->k, m->filter, m->identity, name);
	if (fd < 0)
		return fd;
	m->names[m->n] = name;
	m->fds[m->n++] = fd;
	return fd;
}

static void map_fds_done(struct map_fds *m) {
	for (size_t i = 0; i < m->n; i++)
		close(m->fds[i]);
	m->n = 0;
}

/* What one rules filter's object must say, gathered from the desired
 * lists that use it as the carrier of their tenants. */
struct want {
	struct cgf_tenant_host *hosts;
	size_t n_hosts;
	struct cgf_tenant_binding *bindings;
	size_t n_bindings;
	const struct cgf_filter **filters; /* backing store of the bindings' lists */
	size_t n_filters;
	uint64_t *scope_ids; /* partial: the entries it speaks for */
	size_t n_scope_ids;
};

static void want_done(struct want *w) {
	free(w->hosts);
	free(w->bindings);
	free(w->filters);
	free(w->scope_ids);
	*w = (struct want) {};
}

static int add_binding(struct want *w, uint64_t id, const char *child, size_t first_filter, size_t n_filters) {
	struct cgf_tenant_binding *b;

	b = array_append((void **) &w->bindings, w->n_bindings, sizeof(*w->bindings));
	if (!b)
		return -ENOMEM;
	/* The filters pointer is set once the backing array stops growing. */
	*b = (struct cgf_tenant_binding) {
		.cgroup_id = id,
		.level = cgf_cgroup_depth(child),
		.filters = (const struct cgf_filter *const *) (uintptr_t) first_filter,
		.n_filters = n_filters,
	};
	w->n_bindings++;
	return 0;
}

static int compare_tenant_path(const void *key, const void *elem) {
	return strcmp(key, ((const struct cgf_desired_tenant *) elem)->cgroup);
}

/* l->tenants come in path order (expand.h): one lookup per child. */
static const struct cgf_desired_tenant *find_tenant(const struct cgf_desired_list *l, const char *child) {
	return l->n_tenants > 0 ? bsearch(child, l->tenants, l->n_tenants, sizeof(*l->tenants), compare_tenant_path)
				: NULL;
}

static int add_filters(const struct cgf_policy *p, const struct cgf_desired_tenant *dt, struct want *w) {
	for (size_t j = 0; j < dt->n_filters; j++) {
		const struct cgf_filter **slot;

		slot = array_append((void **) &w->filters, w->n_filters, sizeof(*w->filters));
		if (!slot)
			return -ENOMEM;
		*slot = cgf_policy_find_filter(p, dt->filters[j]);
		if (!*slot)
			return -EINVAL;
		w->n_filters++;
	}
	return 0;
}

static int compare_u64(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static int add_scope_id(struct want *w, uint64_t id) {
	uint64_t *slot = array_append((void **) &w->scope_ids, w->n_scope_ids, sizeof(*w->scope_ids));

	if (!slot)
		return -ENOMEM;
	*slot = id;
	w->n_scope_ids++;
	return 0;
}

/* Every child of each host in the tree is bound: to its tenant entry's
 * filters, or (no entry matches it) to none, the host's rules only.  The
 * ids are the tree's: a cgroup re-created since has another id and an
 * event of its own. */
static int gather(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_filter *f,
		  const struct cgf_desired *d, const struct cgf_cgroup_tree *tree, const struct cgf_maps_scope *scope,
		  struct want *w) {
	int r;

	for (size_t i = 0; i < d->n_lists; i++) {
		const struct cgf_desired_list *l = &d->lists[i];
		struct cgf_tenant_host *h;
		size_t depth;
		uint64_t id;

		if (!streq_ptr(l->tenant_carrier, f->name))
			continue;
		r = cgf_kernel_cgroup_id(k, l->cgroup, &id);
		if (r == -ENOENT || r == -ENODEV)
			continue;
		if (r < 0)
			return r;
		h = array_append((void **) &w->hosts, w->n_hosts, sizeof(*w->hosts));
		if (!h)
			return -ENOMEM;
		*h = (struct cgf_tenant_host) { .cgroup_id = id, .level = cgf_cgroup_depth(l->cgroup) };
		w->n_hosts++;
		if (scope && (r = add_scope_id(w, id)) < 0)
			return r;

		depth = cgf_cgroup_depth(l->cgroup);
		for (size_t c = 0; c < tree->n_paths; c++) {
			const char *child = tree->paths[c];
			const struct cgf_desired_tenant *dt;
			size_t first = w->n_filters;

			if (!cgf_cgroup_is_below(child, l->cgroup) || cgf_cgroup_depth(child) != depth + 1)
				continue;
			dt = find_tenant(l, child);
			if (dt && (r = add_filters(p, dt, w)) < 0)
				return r;
			r = add_binding(w, tree->ids[c], child, first, dt ? dt->n_filters : 0);
			if (r >= 0 && scope)
				r = add_scope_id(w, tree->ids[c]);
			if (r < 0)
				return r;
		}
	}
	for (size_t i = 0; i < w->n_bindings; i++)
		w->bindings[i].filters = w->bindings[i].n_filters > 0
			? &w->filters[(uintptr_t) w->bindings[i].filters] : NULL;
	if (scope) {
		size_t n = 0;

		for (size_t i = 0; i < scope->n_removed; i++)
			if ((r = add_scope_id(w, scope->removed[i])) < 0)
				return r;
		qsort_safe(w->scope_ids, w->n_scope_ids, sizeof(*w->scope_ids), compare_u64);
		for (size_t i = 0; i < w->n_scope_ids; i++)
			if (n == 0 || w->scope_ids[n - 1] != w->scope_ids[i])
				w->scope_ids[n++] = w->scope_ids[i];
		w->n_scope_ids = n;
	}
	return 0;
}

/* Does any attachment apply tenants through f?  Only such a filter's
 * maps hold tenant entries. */
static bool is_tenant_carrier(const struct cgf_policy *p, const struct cgf_filter *f) {
	for (size_t i = 0; i < p->n_attachments; i++) {
		const struct cgf_attachment *a = &p->attachments[i];

		if (a->n_tenants == 0)
			continue;
		/* The carrier: the attachment's first rules filter of a direction. */
		for (size_t j = 0; j < a->n_filters; j++) {
			const struct cgf_filter *x = cgf_policy_find_filter(p, a->filters[j].filter);

			if (x && x->type == CGF_FILTER_RULES && x->direction == f->direction) {
				if (x == f)
					return true;
				break;
			}
		}
	}
	return false;
}

/* A partial sync can pass over a filter whose maps were written already
 * when none of its tenant entries is in the event's scope: its rules do
 * not change between full syncs. */
static bool partial_skips(const struct cgf_policy *p, const struct cgf_filter *f, const struct cgf_maps_scope *scope,
			  const struct want *w, int config_fd) {
	if (w->n_hosts > 0)
		return false;
	if (scope->n_removed > 0 && is_tenant_carrier(p, f))
		return false;
	return cgf_filter_maps_synced(config_fd) == 1;
}

int cgf_maps_sync(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_objects *objects,
		  const struct cgf_desired *desired, const struct cgf_cgroup_tree *tree,
		  const struct cgf_maps_scope *scope, cgf_maps_sync_failed_t failed, void *userdata,
		  char **ret_message) {
	int r = 0;

	for (size_t i = 0; r >= 0 && i < p->n_filters; i++) {
		const struct cgf_filter *f = &p->filters[i];
		const struct cgf_filter_object *o = cgf_objects_find(objects, f->name);
		struct map_fds fds = { .k = k, .filter = f->name };
		struct want w = {};
		int fd;

		if (f->type != CGF_FILTER_RULES || !o || !o->identity)
			continue;
		fds.identity = o->identity;
		/* Not loaded: nothing runs it, and its maps are filled right
		 * after it is, before its first attach. */
		fd = map_fd(cgf_rmap_name(CGF_RMAP_CONFIG), &fds);
		if (fd == -ENOENT)
			continue;
		r = fd < 0 ? fd : gather(k, p, f, desired, tree, scope, &w);
		if (r >= 0 && scope && partial_skips(p, f, scope, &w, fd)) {
			want_done(&w);
			map_fds_done(&fds);
			continue;
		}
		if (r >= 0) {
			struct cgf_filter_maps_want want = {
				.filter = f,
				.hosts = w.hosts,
				.n_hosts = w.n_hosts,
				.bindings = w.bindings,
				.n_bindings = w.n_bindings,
				.fail_closed_unknown_children = true,
				.audit_all = cgf_filter_audits_all(p, f),
				.partial = scope != NULL,
				.scope_ids = w.scope_ids,
				.n_scope_ids = w.n_scope_ids,
			};

			r = cgf_filter_maps_sync_want(&want, map_fd, &fds, NULL);
		}
		if (r < 0 && failed) {
			_cleanup_free_ char *message = NULL;

			/* This filter's lists fail; the others' maps are theirs. */
			errno_message(&message, r, "filter '%s': writing its rules into the maps of %s@%s",
				      f->name, f->name, o->identity);
			failed(userdata, f->name, r, message);
			r = 0;
		} else if (r < 0 && ret_message)
			errno_message(ret_message, r, "filter '%s': writing its rules into the maps of %s@%s",
				      f->name, f->name, o->identity);
		want_done(&w);
		map_fds_done(&fds);
	}
	return r;
}
