/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "unit-firewalls.h"
#include "util.h"

static void entry_clear(struct cgf_unit_firewall *e) {
	free(e->unit);
	free(e->cgroup);
	*e = (struct cgf_unit_firewall) {};
}

void cgf_unit_firewalls_done(struct cgf_unit_firewalls *u) {
	for (size_t i = 0; i < u->n; i++)
		entry_clear(&u->units[i]);
	free(u->units);
	*u = (struct cgf_unit_firewalls) {};
}

static int entry_set(struct cgf_unit_firewall *e, const char *unit, const char *cgroup, bool active,
		     unsigned settings) {
	char *n = strdup(unit), *c = strdup(cgroup);

	if (!n || !c) {
		free(n);
		free(c);
		return -ENOMEM;
	}
	entry_clear(e);
	*e = (struct cgf_unit_firewall) { .unit = n, .cgroup = c, .active = active, .settings = settings };
	return 0;
}

int cgf_unit_firewalls_add(struct cgf_unit_firewalls *u, const char *unit, const char *cgroup, bool active,
			   unsigned settings) {
	struct cgf_unit_firewall *e = array_append((void **) &u->units, u->n, sizeof(*e));
	int r;

	if (!e)
		return -ENOMEM;
	r = entry_set(e, unit, cgroup, active, settings);
	if (r < 0)
		return r;
	u->n++;
	return 0;
}

int cgf_unit_firewalls_put(struct cgf_unit_firewalls *u, const char *unit, const char *cgroup, bool active,
			   unsigned settings) {
	for (size_t i = 0; i < u->n; i++)
		if (streq(u->units[i].unit, unit))
			return entry_set(&u->units[i], unit, cgroup, active, settings);
	return cgf_unit_firewalls_add(u, unit, cgroup, active, settings);
}

void cgf_unit_firewalls_filter(struct cgf_unit_firewalls *u, bool (*keep)(const struct cgf_unit_firewall *e,
									  void *userdata),
			       void *userdata) {
	size_t n = 0;

	for (size_t i = 0; i < u->n; i++) {
		if (!keep(&u->units[i], userdata)) {
			entry_clear(&u->units[i]);
			continue;
		}
		u->units[n++] = u->units[i];
	}
	u->n = n;
}

static bool ends_with(const char *s, const char *suffix) {
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && streq(s + n - m, suffix);
}

const char *cgf_unit_interface(const char *unit) {
	static const struct {
		const char *suffix;
		const char *interface;
	} types[] = {
		{ ".service", "org.freedesktop.systemd1.Service" },
		{ ".socket", "org.freedesktop.systemd1.Socket" },
		{ ".mount", "org.freedesktop.systemd1.Mount" },
		{ ".swap", "org.freedesktop.systemd1.Swap" },
		{ ".slice", "org.freedesktop.systemd1.Slice" },
		{ ".scope", "org.freedesktop.systemd1.Scope" },
	};

	for (size_t i = 0; i < ELEMENTSOF(types); i++)
		if (strlen(unit) > strlen(types[i].suffix) && ends_with(unit, types[i].suffix))
			return types[i].interface;
	return NULL;
}

bool cgf_unit_is_slice(const char *unit) {
	return ends_with(unit, ".slice");
}

unsigned cgf_unit_firewalls_effective(const struct cgf_unit_firewalls *t, const struct cgf_unit_firewall *u,
				      unsigned *ret_inherited) {
	unsigned inherited = 0;

	if (cgf_unit_is_slice(u->unit)) {
		if (ret_inherited)
			*ret_inherited = 0;
		return u->settings & ~CGF_SETTINGS_IP_ACCESS;
	}
	for (size_t i = 0; t && i < t->n; i++) {
		const struct cgf_unit_firewall *s = &t->units[i];

		if ((s->settings & CGF_SETTINGS_IP_ACCESS) && cgf_unit_is_slice(s->unit) &&
		    cgf_cgroup_is_below(u->cgroup, s->cgroup))
			inherited |= s->settings & CGF_SETTINGS_IP_ACCESS;
	}
	if (ret_inherited)
		*ret_inherited = inherited & ~u->settings;
	return u->settings | inherited;
}

int cgf_unit_firewalls_prune(struct cgf_unit_firewalls *t) {
	_cleanup_free_ bool *goes = calloc(t->n + 1, sizeof(*goes));
	size_t n = 0;

	if (!goes)
		return -ENOMEM;
	/* Decided on the whole table first: a slice's lists decide for the
	 * units below it, wherever they are in the table. */
	for (size_t i = 0; i < t->n; i++)
		goes[i] = cgf_unit_firewalls_effective(t, &t->units[i], NULL) == 0 &&
			  (t->units[i].settings & CGF_SETTINGS_IP_ACCESS) == 0;
	for (size_t i = 0; i < t->n; i++) {
		if (goes[i]) {
			entry_clear(&t->units[i]);
			continue;
		}
		t->units[n++] = t->units[i];
	}
	t->n = n;
	return 0;
}

static int compare_str(const void *a, const void *b) {
	return strcmp(*(char *const *) a, *(char *const *) b);
}

int cgf_unit_firewalls_forget_stopped(struct cgf_unit_firewalls *t, char *const *paths, size_t n_paths) {
	_cleanup_free_ char **sorted = calloc(n_paths + 1, sizeof(*sorted));
	size_t n = 0;

	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, paths, n_paths * sizeof(*sorted));
	qsort(sorted, n_paths, sizeof(*sorted), compare_str);
	for (size_t i = 0; i < t->n; i++) {
		const char *key = t->units[i].cgroup;

		if (t->units[i].active && !bsearch(&key, sorted, n_paths, sizeof(*sorted), compare_str)) {
			entry_clear(&t->units[i]);
			continue;
		}
		t->units[n++] = t->units[i];
	}
	t->n = n;
	return 0;
}

/* Each setting, as written in a unit file, and the lists it attaches to. */
static const struct {
	unsigned setting;
	const char *name;
	unsigned directions;
} settings_table[] = {
	{ CGF_SETTING_IP_ADDRESS_DENY, "IPAddressDeny=", CGF_DIRECTIONS_BOTH },
	{ CGF_SETTING_IP_ADDRESS_ALLOW, "IPAddressAllow=", CGF_DIRECTIONS_BOTH },
	{ CGF_SETTING_IP_ACCOUNTING, "IPAccounting=yes", CGF_DIRECTIONS_BOTH },
	{ CGF_SETTING_IP_INGRESS_FILTER, "IPIngressFilterPath=", CGF_DIRECTION_BIT(CGF_INGRESS) },
	{ CGF_SETTING_IP_EGRESS_FILTER, "IPEgressFilterPath=", CGF_DIRECTION_BIT(CGF_EGRESS) },
	{ CGF_SETTING_BPF_PROGRAM_INGRESS, "BPFProgram=ingress:", CGF_DIRECTION_BIT(CGF_INGRESS) },
	{ CGF_SETTING_BPF_PROGRAM_EGRESS, "BPFProgram=egress:", CGF_DIRECTION_BIT(CGF_EGRESS) },
	{ CGF_SETTING_RESTRICT_INTERFACES, "RestrictNetworkInterfaces=", CGF_DIRECTIONS_BOTH },
};

unsigned cgf_unit_settings_directions(unsigned settings) {
	unsigned d = 0;

	for (size_t i = 0; i < ELEMENTSOF(settings_table); i++)
		if (settings & settings_table[i].setting)
			d |= settings_table[i].directions;
	return d;
}

int cgf_unit_settings_format(unsigned settings, unsigned directions, char **ret) {
	_cleanup_free_ char *s = NULL;
	size_t size = 0;
	FILE *f;
	bool first = true;

	f = open_memstream(&s, &size);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < ELEMENTSOF(settings_table); i++) {
		if (!(settings & settings_table[i].setting) || !(directions & settings_table[i].directions))
			continue;
		fprintf(f, "%s%s", first ? "" : ", ", settings_table[i].name);
		first = false;
	}
	if (fclose(f) != 0 || !s)
		return -ENOMEM;
	*ret = TAKE_PTR(s);
	return 0;
}

int cgf_unit_settings_describe(unsigned settings, unsigned inherited, unsigned directions, char **ret) {
	_cleanup_free_ char *own = NULL, *above = NULL;
	int r;

	r = cgf_unit_settings_format(settings & ~inherited, directions, &own);
	if (r >= 0)
		r = cgf_unit_settings_format(settings & inherited, directions, &above);
	if (r < 0)
		return r;
	if (asprintf(ret, "%s%s%s%s", own, *own && *above ? "; " : "", above, *above ? " of a slice above" : "") < 0) {
		*ret = NULL; /* undefined after a failure */
		return -ENOMEM;
	}
	return 0;
}

const char *cgf_directions_to_string(unsigned directions) {
	switch (directions & CGF_DIRECTIONS_BOTH) {
	case CGF_DIRECTION_BIT(CGF_INGRESS):
		return "ingress";
	case CGF_DIRECTION_BIT(CGF_EGRESS):
		return "egress";
	case CGF_DIRECTIONS_BOTH:
		return "ingress and egress";
	}
	return "no direction";
}

/* ---- systemd's names ----------------------------------------------------- */

/* Is name (n bytes) one of the cgroup controllers systemd knows?  A unit
 * named like one ("cpu.service") would collide with the controller's
 * files, so cg_escape() prefixes it. */
static bool is_controller(const char *name, size_t n) {
	static const char *const controllers[] = {
		"cpu", "cpuacct", "cpuset", "io", "blkio", "memory", "devices", "pids", "bpf-firewall",
		"bpf-devices", "bpf-foreign", "bpf-socket-bind", "bpf-restrict-network-interfaces",
	};

	for (size_t i = 0; i < ELEMENTSOF(controllers); i++)
		if (strlen(controllers[i]) == n && memcmp(controllers[i], name, n) == 0)
			return true;
	return false;
}

/* systemd's cg_escape(): the cgroup name of a unit name. */
static int cg_escape(const char *name, size_t n, FILE *f) {
	const char *dot = memrchr(name, '.', n);
	bool prefix = n == 0 || name[0] == '_' || name[0] == '.' || (n > 7 && strncmp(name, "cgroup.", 7) == 0) ||
		      (dot && is_controller(name, dot - name));

	for (size_t i = 0; !prefix && i < 3; i++) {
		static const char *const kernel_files[] = { "notify_on_release", "release_agent", "tasks" };

		prefix = strlen(kernel_files[i]) == n && memcmp(kernel_files[i], name, n) == 0;
	}
	if (prefix)
		fputc('_', f);
	fwrite(name, 1, n, f);
	return 0;
}

/* Writes the slice's path, without a trailing '/'; nothing for the root. */
static int write_slice(const char *slice, FILE *f) {
	size_t prefix_len;
	const char *dash;

	if (streq(slice, "-.slice"))
		return 0;
	if (!ends_with(slice, ".slice") || strchr(slice, '/'))
		return -EINVAL;
	prefix_len = strlen(slice) - strlen(".slice");
	if (prefix_len == 0 || slice[0] == '-' || slice[prefix_len - 1] == '-')
		return -EINVAL;
	/* Each dash closes a parent: "a-b-c.slice" is in a.slice/a-b.slice/. */
	for (dash = memchr(slice, '-', prefix_len); dash; dash = memchr(dash + 1, '-', slice + prefix_len - dash - 1)) {
		_cleanup_free_ char *parent = NULL;

		if (dash[1] == '-')
			return -EINVAL;
		if (asprintf(&parent, "%.*s.slice", (int) (dash - slice), slice) < 0) {
			parent = NULL; /* undefined after a failure */
			return -ENOMEM;
		}
		cg_escape(parent, strlen(parent), f);
		fputc('/', f);
	}
	return cg_escape(slice, strlen(slice), f);
}

static int finish_path(FILE *f, char **s, char **ret) {
	if (fclose(f) != 0 || !*s)
		return -ENOMEM;
	*ret = TAKE_PTR(*s);
	return 0;
}

int cgf_slice_cgroup(const char *slice, char **ret) {
	_cleanup_free_ char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);
	int r;

	if (!f)
		return -ENOMEM;
	r = write_slice(slice, f);
	if (r >= 0 && streq(slice, "-.slice"))
		fputc('.', f);
	if (r < 0) {
		fclose(f);
		return r;
	}
	return finish_path(f, &s, ret);
}

int cgf_unit_cgroup(const char *slice, const char *unit, char **ret) {
	_cleanup_free_ char *s = NULL;
	size_t size = 0;
	FILE *f;
	int r;

	if (!*unit || strchr(unit, '/'))
		return -EINVAL;
	f = open_memstream(&s, &size);
	if (!f)
		return -ENOMEM;
	r = write_slice(slice, f);
	if (r >= 0 && !streq(slice, "-.slice"))
		fputc('/', f);
	if (r >= 0)
		r = cg_escape(unit, strlen(unit), f);
	if (r < 0) {
		fclose(f);
		return r;
	}
	return finish_path(f, &s, ret);
}

int cgf_control_group_path(const char *control_group, char **ret) {
	const char *p = control_group;
	char *s;

	if (p[0] != '/')
		return -EINVAL;
	while (*p == '/')
		p++;
	s = strdup(*p ? p : ".");
	if (!s)
		return -ENOMEM;
	/* A trailing '/' is not systemd's, but costs nothing to drop. */
	for (size_t n = strlen(s); n > 1 && s[n - 1] == '/'; n--)
		s[n - 1] = '\0';
	*ret = s;
	return 0;
}
