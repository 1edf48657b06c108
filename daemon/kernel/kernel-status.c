/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `cgfilterctl status` from the kernel: for each list, what is attached
 * there, what runs (BPF_F_QUERY_EFFECTIVE, in execution order), where
 * each effective program is attached, who owns it, and our counters.
 */
#include <errno.h>
#include <sys/utsname.h>

#include "filter-maps-sync.h"
#include "kernel-status.h"

/* The list at the cgroup or its nearest ancestor that holds the program:
 * where an effective program comes from. */
static const struct cgf_actual_list *holder(const struct cgf_actual *a, const char *cgroup,
					    enum cgf_direction d, uint32_t prog_id,
					    const struct cgf_actual_entry **ret_entry) {
	_cleanup_free_ char *path = strdup(cgroup);
	_cleanup_free_ char *parent = NULL;

	if (!path || !(parent = malloc(strlen(cgroup) + 2)))
		return NULL;
	for (;;) {
		const struct cgf_actual_list *l = cgf_actual_find(a, path, d);

		for (size_t i = 0; l && i < l->n_entries; i++)
			if (l->entries[i].prog_id == prog_id) {
				*ret_entry = &l->entries[i];
				return l;
			}
		if (!cgf_cgroup_parent(path, parent, strlen(path) + 2))
			return NULL;
		strcpy(path, parent);
	}
}

static int read_counters(struct cgf_kernel *k, const struct cgf_kernel_prog *ours, uint64_t cgroup_id,
			 struct cgf_status_prog *p) {
	_cleanup_close_ int fd = cgf_kernel_map_fd(k, ours->filter, ours->identity, CGF_COUNTERS_MAP);
	struct cgf_counters c;
	int r;

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd; /* an object without counters */
	p->has_counters = true;
	r = cgf_counters_read(fd, cgroup_id, &c);
	if (r == -ENOENT)
		return 0; /* nothing counted for this cgroup yet */
	if (r < 0)
		return r;
	p->counters = (struct cgf_status_counters) {
		.pass_packets = c.pass_packets,
		.pass_bytes = c.pass_bytes,
		.drop_packets = c.drop_packets,
		.drop_bytes = c.drop_bytes,
		.would_drop_packets = c.would_drop_packets,
		.would_drop_bytes = c.would_drop_bytes,
	};
	return 0;
}

/* Whether a rules filter is audited, from its config map; anything else
 * (another type: no config map; not synced yet) stays unknown. */
static int read_enforce(struct cgf_kernel *k, const struct cgf_kernel_prog *ours, struct cgf_status_prog *p) {
	_cleanup_close_ int fd = cgf_kernel_map_fd(k, ours->filter, ours->identity, cgf_rmap_name(CGF_RMAP_CONFIG));
	int r;

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	r = cgf_filter_maps_audited(fd);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	p->enforce = r ? CGF_STATUS_AUDITED : CGF_STATUS_ENFORCED;
	return 0;
}

static int describe(struct cgf_kernel *k, const struct cgf_actual *a, const struct cgf_actual_list *own,
		    uint32_t prog_id, uint64_t cgroup_id, struct cgf_status_prog *ret) {
	const struct cgf_actual_entry *e = NULL;
	const struct cgf_actual_list *at = holder(a, own->cgroup, own->direction, prog_id, &e);
	const struct cgf_kernel_prog *ours = cgf_kernel_find_prog(k, prog_id);
	int r;

	*ret = (struct cgf_status_prog) {
		.prog_id = prog_id,
		.ours = ours,
		.filter = ours ? ours->filter : NULL,
		.identity = ours ? ours->identity : NULL,
	};
	if (at) {
		ret->link_id = e->link_id;
		ret->prog_name = e->prog_name;
		ret->attached_at = at == own ? NULL : at->cgroup;
		ret->preorder = e->preorder;
		ret->attach_flags = at->flags | (e->preorder ? CGF_ATTACH_PREORDER : 0);
	}
	if (!ours)
		return 0;
	r = read_enforce(k, ours, ret);
	if (r < 0)
		return r;
	return read_counters(k, ours, cgroup_id, ret);
}

/* The seed's rule, seen from below: a program attached below a
 * non-overridable one of ours ran first and still overrides it here. */
static int add_notes(const struct cgf_kernel *k, const struct cgf_actual *a, const struct cgf_actual_list *own,
		     struct cgf_status_list *sl) {
	_cleanup_free_ char *path = strdup(own->cgroup), *parent = NULL;
	int r;

	if (!path || !(parent = malloc(strlen(own->cgroup) + 2)))
		return -ENOMEM;
	while (cgf_cgroup_parent(path, parent, strlen(path) + 2)) {
		const struct cgf_actual_list *up = cgf_actual_find(a, parent, own->direction);

		strcpy(path, parent);
		if (!up || up->n_entries == 0)
			continue;
		if (up->flags != 0 || !up->entries[0].ours)
			return 0;
		for (size_t i = 0; i < own->n_entries; i++)
			if (!cgf_kernel_find_prog(k, own->entries[i].prog_id)) {
				r = cgf_status_list_add_note(sl,
					"foreign program %u below our non-overridable '%s' on %s at '%s' "
					"overrides it here; it cannot be changed, only detached",
					own->entries[i].prog_id, up->entries[0].filter ?: "?",
					cgf_direction_to_string(own->direction), up->cgroup);
				if (r < 0)
					return r;
			}
		return 0;
	}
	return 0;
}

static bool wanted(const struct cgf_actual_list *l, size_t n_effective, char *const *only, size_t n_only,
		   bool all) {
	if (n_only > 0) {
		for (size_t i = 0; i < n_only; i++)
			if (streq(only[i], l->cgroup))
				return true;
		return false;
	}
	return l->n_entries > 0 || (all && n_effective > 0);
}

int cgf_kernel_status(struct cgf_kernel *k, const struct cgf_actual *a, char *const *only, size_t n_only,
		      bool all, struct cgf_status **ret) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = cgf_status_new();
	struct utsname u;
	int r;

	if (!s)
		return -ENOMEM;
	r = cgf_status_set_kernel(s, uname(&u) >= 0 ? u.release : NULL, cgf_kernel_features(k));
	if (r < 0)
		return r;
	for (size_t i = 0; i < a->n_lists; i++) {
		const struct cgf_actual_list *l = &a->lists[i];
		_cleanup_free_ uint32_t *eff = NULL;
		struct cgf_status_list *sl;
		uint64_t cgroup_id;
		size_t n_eff = 0;

		r = cgf_kernel_effective(k, l->cgroup, l->direction, &eff, &n_eff);
		if (r == -ENOENT || r == -ENODEV)
			continue; /* gone since the read */
		if (r < 0)
			return r;
		if (!wanted(l, n_eff, only, n_only, all))
			continue;
		r = cgf_kernel_cgroup_id(k, l->cgroup, &cgroup_id);
		if (r < 0)
			return r;
		r = cgf_status_add_list(s, l->cgroup, l->direction, l->flags, l->revision, &sl);
		if (r < 0)
			return r;
		for (size_t j = 0; j < l->n_entries; j++) {
			struct cgf_status_prog p;

			r = describe(k, a, l, l->entries[j].prog_id, cgroup_id, &p);
			if (r >= 0)
				r = cgf_status_list_add_attached(sl, &p, NULL);
			if (r < 0)
				return r;
		}
		for (size_t j = 0; j < n_eff; j++) {
			struct cgf_status_prog p;

			r = describe(k, a, l, eff[j], cgroup_id, &p);
			if (r >= 0)
				r = cgf_status_list_add_effective(sl, &p, NULL);
			if (r < 0)
				return r;
		}
		r = add_notes(k, a, l, sl);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}
