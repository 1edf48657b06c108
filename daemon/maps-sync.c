/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>

#include "filter-maps.h"
#include "maps-sync.h"

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
};

static void want_done(struct want *w) {
	free(w->hosts);
	free(w->bindings);
	free(w->filters);
	*w = (struct want) {};
}

static int add_binding(struct cgf_kernel *k, struct want *w, const char *child, size_t first_filter,
		       size_t n_filters) {
	struct cgf_tenant_binding *b;
	uint64_t id;
	int r;

	r = cgf_kernel_cgroup_id(k, child, &id);
	if (r == -ENOENT || r == -ENODEV)
		return 0; /* gone: its packets are gone with it */
	if (r < 0)
		return r;
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

static bool has_tenant(const struct cgf_desired_list *l, const char *child) {
	for (size_t i = 0; i < l->n_tenants; i++)
		if (streq(l->tenants[i].cgroup, child))
			return true;
	return false;
}

static int gather(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_filter *f,
		  const struct cgf_desired *d, const struct cgf_cgroup_tree *tree, struct want *w) {
	int r;

	for (size_t i = 0; i < d->n_lists; i++) {
		const struct cgf_desired_list *l = &d->lists[i];
		struct cgf_tenant_host *h;
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

		for (size_t t = 0; t < l->n_tenants; t++) {
			const struct cgf_desired_tenant *dt = &l->tenants[t];
			size_t first = w->n_filters;

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
			r = add_binding(k, w, dt->cgroup, first, dt->n_filters);
			if (r < 0)
				return r;
		}
		/* Children that no entry matches: the host's rules only. */
		for (size_t c = 0; c < tree->n_paths; c++) {
			char parent[4096];

			if (strlen(tree->paths[c]) + 2 > sizeof(parent) ||
			    !cgf_cgroup_parent(tree->paths[c], parent, sizeof(parent)) || !streq(parent, l->cgroup) ||
			    has_tenant(l, tree->paths[c]))
				continue;
			r = add_binding(k, w, tree->paths[c], 0, 0);
			if (r < 0)
				return r;
		}
	}
	for (size_t i = 0; i < w->n_bindings; i++)
		w->bindings[i].filters = w->bindings[i].n_filters > 0
			? &w->filters[(uintptr_t) w->bindings[i].filters] : NULL;
	return 0;
}

int cgf_maps_sync(struct cgf_kernel *k, const struct cgf_policy *p, const struct cgf_objects *objects,
		  const struct cgf_desired *desired, const struct cgf_cgroup_tree *tree, cgf_maps_sync_failed_t failed,
		  void *userdata, char **ret_message) {
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
		r = fd < 0 ? fd : gather(k, p, f, desired, tree, &w);
		if (r >= 0) {
			struct cgf_filter_maps_want want = {
				.filter = f,
				.hosts = w.hosts,
				.n_hosts = w.n_hosts,
				.bindings = w.bindings,
				.n_bindings = w.n_bindings,
				.fail_closed_unknown_children = true,
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
