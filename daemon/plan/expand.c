/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * expand: policy × cgroup snapshot → desired state (see expand.h).
 *
 * Every (existing cgroup, attachment entry) pair that matches becomes a
 * node; nodes are sorted by (cgroup, direction, attachment, index in its
 * list), so that each run of equal (cgroup, direction) is one desired
 * list, and within a run the array order is the order of the files.  A
 * run's order is the stable topological order of its edges: the order of
 * each list, and before: / after:.
 */
#include <errno.h>
#include <fnmatch.h>

#include "cgroup-pattern.h"
#include "expand.h"
#include "util.h"

struct node {
	size_t cgroup;     /* index into the sorted, unique paths */
	enum cgf_direction direction;
	size_t attachment; /* index in p->attachments */
	size_t index;      /* in its filters: list */
	const struct cgf_filter *filter;
};

struct expander {
	const struct cgf_policy *p;
	const char **paths; /* sorted, unique, "." for the root */
	size_t n_paths;
	cgf_identity_func_t identity;
	void *userdata;
	char **identities; /* per p->filters index, computed on first use */
	struct node *nodes;
	size_t n_nodes;
};

static const char *identity_of(struct expander *e, const struct cgf_filter *f, int *ret_error) {
	size_t i = (size_t) (f - e->p->filters);
	int r;

	if (!e->identities[i]) {
		r = e->identity(f, e->userdata, &e->identities[i]);
		if (r < 0) {
			*ret_error = r;
			return NULL;
		}
	}
	return e->identities[i];
}

static int compare_strings(const void *a, const void *b) {
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* The snapshot, sorted, without duplicates, the root spelled ".". */
static int index_paths(struct expander *e, const char *const *cgroups, size_t n) {
	e->paths = calloc(n + 1, sizeof(*e->paths));
	if (!e->paths)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		e->paths[i] = streq(cgroups[i], "") ? "." : cgroups[i];
	qsort_safe(e->paths, n, sizeof(*e->paths), compare_strings);
	e->n_paths = 0;
	for (size_t i = 0; i < n; i++)
		if (e->n_paths == 0 || !streq(e->paths[e->n_paths - 1], e->paths[i]))
			e->paths[e->n_paths++] = e->paths[i];
	return 0;
}

static int compare_nodes(const void *a, const void *b) {
	const struct node *x = a, *y = b;

	if (x->cgroup != y->cgroup)
		return x->cgroup < y->cgroup ? -1 : 1;
	if (x->direction != y->direction)
		return x->direction < y->direction ? -1 : 1;
	if (x->attachment != y->attachment)
		return x->attachment < y->attachment ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int collect_nodes(struct expander *e) {
	const struct cgf_policy *p = e->p;

	for (size_t ai = 0; ai < p->n_attachments; ai++) {
		const struct cgf_attachment *a = &p->attachments[ai];

		if (!a->cgroup)
			return -EINVAL;
		for (size_t ci = 0; ci < e->n_paths; ci++) {
			if (!cgf_cgroup_pattern_match(a->cgroup, e->paths[ci]))
				continue;
			for (size_t i = 0; i < a->n_filters; i++) {
				const struct cgf_filter *f = cgf_policy_find_filter(p, a->filters[i].filter);
				struct node *n;

				if (!f)
					return -EINVAL;
				n = array_append((void **) &e->nodes, e->n_nodes, sizeof(*n));
				if (!n)
					return -ENOMEM;
				*n = (struct node) {
					.cgroup = ci, .direction = f->direction, .attachment = ai, .index = i, .filter = f,
				};
				e->n_nodes++;
			}
		}
	}
	qsort_safe(e->nodes, e->n_nodes, sizeof(*e->nodes), compare_nodes);
	return 0;
}

/* The run's order: Kahn's algorithm, always taking the earliest ready
 * node, so that without edges between them attachments keep file order. */
static int order_run(const struct expander *e, const struct node *run, size_t n, size_t *order) {
	_cleanup_free_ bool *edge = NULL; /* n × n: edge[i*n+j] means i runs before j */
	_cleanup_free_ size_t *indegree = NULL;
	_cleanup_free_ bool *done = NULL;

	edge = calloc(n * n + 1, sizeof(*edge));
	indegree = calloc(n + 1, sizeof(*indegree));
	done = calloc(n + 1, sizeof(*done));
	if (!edge || !indegree || !done)
		return -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		const struct cgf_attachment *a = &e->p->attachments[run[i].attachment];
		const struct cgf_filter_ref *ref = &a->filters[run[i].index];

		for (size_t j = 0; j < i; j++)
			if (run[j].filter == run[i].filter)
				return -EINVAL; /* the same filter twice on one list */

		/* The list's own order (entries of other directions are in
		 * other runs). */
		if (i > 0 && run[i - 1].attachment == run[i].attachment)
			edge[(i - 1) * n + i] = true;

		if (ref->anchor == CGF_ANCHOR_NONE)
			continue;
		for (size_t j = 0; j < n; j++) {
			const struct cgf_attachment *b = &e->p->attachments[run[j].attachment];

			if (j == i || !streq(run[j].filter->name, ref->anchor_filter) || !streq(a->cgroup, b->cgroup))
				continue;
			if (ref->anchor == CGF_ANCHOR_BEFORE)
				edge[i * n + j] = true;
			else
				edge[j * n + i] = true;
		}
	}

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			indegree[j] += edge[i * n + j];

	for (size_t k = 0; k < n; k++) {
		size_t next = n;

		for (size_t i = 0; i < n && next == n; i++)
			if (!done[i] && indegree[i] == 0)
				next = i;
		if (next == n)
			return -EINVAL; /* a cycle */
		done[next] = true;
		order[k] = next;
		for (size_t j = 0; j < n; j++)
			if (edge[next * n + j])
				indegree[j]--;
	}
	return 0;
}

static const char *last_component(const char *path) {
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool is_child(const char *path, const char *parent) {
	return cgf_cgroup_is_below(path, parent) && cgf_cgroup_depth(path) == cgf_cgroup_depth(parent) + 1;
}

/* The attachment's tenants for the children of the run's cgroup. */
static int add_tenants(const struct expander *e, const struct cgf_attachment *a, enum cgf_direction d,
		       struct cgf_desired_list *l) {
	const struct cgf_filter *carrier = NULL;
	int r;

	for (size_t i = 0; i < a->n_filters && !carrier; i++) {
		const struct cgf_filter *f = cgf_policy_find_filter(e->p, a->filters[i].filter);

		if (f && f->type == CGF_FILTER_RULES && f->direction == d)
			carrier = f;
	}
	if (!carrier)
		return 0; /* nothing applies tenant rules in this direction */
	if (!l->tenant_carrier && !(l->tenant_carrier = strdup(carrier->name)))
		return -ENOMEM;

	for (size_t ci = 0; ci < e->n_paths; ci++) {
		const char *child = e->paths[ci];
		const struct cgf_tenant *t = NULL;
		struct cgf_desired_tenant *dt;

		if (!is_child(child, l->cgroup))
			continue;
		/* The first matching entry wins. */
		for (size_t ti = 0; ti < a->n_tenants && !t; ti++)
			if (fnmatch(a->tenants[ti].pattern, last_component(child), FNM_PATHNAME | FNM_NOESCAPE) == 0)
				t = &a->tenants[ti];
		if (!t)
			continue;

		r = cgf_desired_list_add_tenant(l, child, carrier->name, t->pos, &dt);
		if (r < 0)
			return r;
		for (size_t i = 0; i < t->n_filters; i++) {
			const struct cgf_filter *f = cgf_policy_find_filter(e->p, t->filters[i].filter);

			if (!f)
				return -EINVAL;
			if (f->direction != d)
				continue;
			r = cgf_desired_tenant_add_filter(dt, f->name);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int expand_run(struct expander *e, const struct node *run, size_t n, struct cgf_desired *d) {
	const struct cgf_attachment *first = &e->p->attachments[run[0].attachment];
	_cleanup_free_ size_t *order = NULL;
	struct cgf_desired_list *l;
	int r;

	for (size_t i = 1; i < n; i++)
		if (e->p->attachments[run[i].attachment].mode != first->mode)
			return -EINVAL; /* modes disagree */

	order = calloc(n + 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	r = order_run(e, run, n, order);
	if (r < 0)
		return r;

	r = cgf_desired_add_list(d, e->paths[run[0].cgroup], run[0].direction, first->mode, &l);
	if (r < 0)
		return r;
	l->pos = first->cgroup_pos;
	l->mode_pos = first->mode_pos;

	for (size_t k = 0; k < n; k++) {
		const struct node *node = &run[order[k]];
		const struct cgf_attachment *a = &e->p->attachments[node->attachment];
		const char *id = identity_of(e, node->filter, &r);

		if (!id)
			return r;
		r = cgf_desired_list_add_entry(l, node->filter->name, id, a->preorder, a->filters[node->index].pos);
		if (r < 0)
			return r;
	}

	/* Once per attachment of the run (its nodes are adjacent). */
	for (size_t i = 0; i < n; i++) {
		const struct cgf_attachment *a = &e->p->attachments[run[i].attachment];

		if (i > 0 && run[i - 1].attachment == run[i].attachment)
			continue;
		if (a->n_tenants == 0)
			continue;
		r = add_tenants(e, a, run[i].direction, l);
		if (r < 0)
			return r;
	}
	return 0;
}

int cgf_expand(const struct cgf_policy *p, const char *const *cgroups, size_t n_cgroups,
	       cgf_identity_func_t identity, void *userdata, struct cgf_desired **ret) {
	_cleanup_(cgf_desired_freep) struct cgf_desired *d = NULL;
	struct expander e = {
		.p = p,
		.identity = identity ?: cgf_filter_identity,
		.userdata = userdata,
	};
	int r;

	d = cgf_desired_new();
	e.identities = calloc(p->n_filters + 1, sizeof(*e.identities));
	if (!d || !e.identities) {
		r = -ENOMEM;
		goto finish;
	}
	r = index_paths(&e, cgroups, n_cgroups);
	if (r < 0)
		goto finish;
	r = collect_nodes(&e);
	if (r < 0)
		goto finish;

	for (size_t i = 0, j; i < e.n_nodes; i = j) {
		for (j = i + 1; j < e.n_nodes; j++)
			if (e.nodes[j].cgroup != e.nodes[i].cgroup || e.nodes[j].direction != e.nodes[i].direction)
				break;
		r = expand_run(&e, e.nodes + i, j - i, d);
		if (r < 0)
			goto finish;
	}

	/* Runs come in (path, direction) order already; sorting keeps the
	 * promise if that ever changes. */
	cgf_desired_sort(d);
	*ret = TAKE_PTR(d);
	r = 0;

finish:
	for (size_t i = 0; e.identities && i < p->n_filters; i++)
		free(e.identities[i]);
	free(e.identities);
	free(e.paths);
	free(e.nodes);
	return r;
}
