/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PID 1's units and what they make it attach (unit-query.h).
 *
 * A query: connect to the private bus; for the whole host, ListUnits and
 * the manager's Features; then, for every unit asked about, one Get per
 * property, all sent at once and answered as they come; then the table,
 * pruned to the units that attach something (unit-firewalls.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "unit-query.h"
#include "util.h"

#define SYSTEMD_SERVICE "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_UNIT_PATH "/org/freedesktop/systemd1/unit"
#define MANAGER_INTERFACE "org.freedesktop.systemd1.Manager"

/* The properties asked of each unit, on its type's interface. */
enum prop {
	PROP_CONTROL_GROUP,
	PROP_SLICE,
	PROP_IP_ADDRESS_DENY,
	PROP_IP_ADDRESS_ALLOW,
	PROP_IP_ACCOUNTING,
	PROP_IP_INGRESS_FILTER,
	PROP_IP_EGRESS_FILTER,
	PROP_BPF_PROGRAM,
	PROP_RESTRICT_INTERFACES,
	_PROP_MAX,
};

static const struct {
	const char *name;
	const char *signature;
	unsigned setting; /* for a non-empty value */
} props[_PROP_MAX] = {
	[PROP_CONTROL_GROUP] = { "ControlGroup", "s", 0 },
	[PROP_SLICE] = { "Slice", "s", 0 },
	[PROP_IP_ADDRESS_DENY] = { "IPAddressDeny", "a(iayu)", CGF_SETTING_IP_ADDRESS_DENY },
	[PROP_IP_ADDRESS_ALLOW] = { "IPAddressAllow", "a(iayu)", CGF_SETTING_IP_ADDRESS_ALLOW },
	[PROP_IP_ACCOUNTING] = { "IPAccounting", "b", CGF_SETTING_IP_ACCOUNTING },
	[PROP_IP_INGRESS_FILTER] = { "IPIngressFilterPath", "as", CGF_SETTING_IP_INGRESS_FILTER },
	[PROP_IP_EGRESS_FILTER] = { "IPEgressFilterPath", "as", CGF_SETTING_IP_EGRESS_FILTER },
	[PROP_BPF_PROGRAM] = { "BPFProgram", "a(ss)", 0 /* by its entries */ },
	[PROP_RESTRICT_INTERFACES] = { "RestrictNetworkInterfaces", "(bas)", CGF_SETTING_RESTRICT_INTERFACES },
};

struct asked_unit {
	char *name;
	char *object;
	const char *interface;
	char *control_group; /* "" when it has no cgroup now */
	char *slice;
	unsigned settings;
	bool gone;           /* PID 1 does not know it (any more) */
};

struct query;

/* One property request: what its answer fills. */
struct ask {
	struct query *q;
	size_t unit;
	enum prop prop;
};

struct query {
	sd_bus *bus;
	struct asked_unit *units;
	size_t n_units;
	struct ask *asks;
	size_t pending;
	bool restrict_interfaces; /* PID 1 attaches them (+BPF_FRAMEWORK) */
	int error;
	char *error_text;
};

static void query_done(struct query *q) {
	/* The bus first: its floating slots point into q->asks. */
	q->bus = sd_bus_flush_close_unref(q->bus);
	for (size_t i = 0; i < q->n_units; i++) {
		free(q->units[i].name);
		free(q->units[i].object);
		free(q->units[i].control_group);
		free(q->units[i].slice);
	}
	free(q->units);
	free(q->asks);
	free(q->error_text);
	*q = (struct query) {};
}

static int query_open(struct query *q, const char *socket_path, char **ret_error) {
	_cleanup_free_ char *address = NULL;
	int r;

	/* No socket: no systemd to ask (a container with another init, a
	 * build host); said apart from a socket we may not open. */
	if (access(socket_path, F_OK) < 0)
		return errno_message(ret_error, -errno, "no systemd to ask: %s", socket_path);
	if (asprintf(&address, "unix:path=%s", socket_path) < 0) {
		address = NULL; /* undefined after a failure */
		return -ENOMEM;
	}
	r = sd_bus_new(&q->bus);
	if (r >= 0)
		r = sd_bus_set_address(q->bus, address);
	if (r >= 0)
		r = sd_bus_set_method_call_timeout(q->bus, CGF_SYSTEMD_QUERY_TIMEOUT_USEC);
	if (r >= 0)
		r = sd_bus_start(q->bus);
	if (r == -EPERM)
		r = -EACCES;
	if (r < 0)
		return errno_message(ret_error, r, "connecting to systemd (%s)", socket_path);
	return 0;
}

static int add_unit(struct query *q, const char *name, const char *object) {
	const char *interface = cgf_unit_interface(name);
	struct asked_unit *u;

	if (!interface)
		return 0; /* a target, timer, path, device, automount: no cgroup */
	u = array_append((void **) &q->units, q->n_units, sizeof(*u));
	if (!u)
		return -ENOMEM;
	*u = (struct asked_unit) { .name = strdup(name), .interface = interface };
	if (object)
		u->object = strdup(object);
	else if (sd_bus_path_encode(SYSTEMD_UNIT_PATH, name, &u->object) < 0)
		u->object = NULL;
	q->n_units++;
	return u->name && u->object ? 0 : -ENOMEM;
}

/* ---- answers ------------------------------------------------------------- */

/* Is the array at the message's read position (inside the variant) empty?
 * Leaves the variant entered. */
static int array_empty(sd_bus_message *m, const char *contents) {
	int r = sd_bus_message_enter_container(m, 'a', contents);

	if (r < 0)
		return r;
	return sd_bus_message_at_end(m, false);
}

/* BPFProgram=: a(ss), (attach type, path); ingress and egress are ours. */
static int read_bpf_program(sd_bus_message *m, unsigned *settings) {
	const char *type, *path;
	int r;

	r = sd_bus_message_enter_container(m, 'a', "(ss)");
	while (r >= 0 && (r = sd_bus_message_read(m, "(ss)", &type, &path)) > 0) {
		if (streq(type, "ingress"))
			*settings |= CGF_SETTING_BPF_PROGRAM_INGRESS;
		else if (streq(type, "egress"))
			*settings |= CGF_SETTING_BPF_PROGRAM_EGRESS;
	}
	return r;
}

static int read_value(sd_bus_message *m, struct asked_unit *u, enum prop p) {
	const char *s;
	int b, r;

	r = sd_bus_message_enter_container(m, 'v', props[p].signature);
	if (r < 0)
		return r;
	switch (p) {
	case PROP_CONTROL_GROUP:
	case PROP_SLICE:
		r = sd_bus_message_read(m, "s", &s);
		if (r >= 0 && !(*(p == PROP_SLICE ? &u->slice : &u->control_group) = strdup(s)))
			r = -ENOMEM;
		return r;
	case PROP_IP_ACCOUNTING:
		r = sd_bus_message_read(m, "b", &b);
		if (r >= 0 && b)
			u->settings |= props[p].setting;
		return r;
	case PROP_BPF_PROGRAM:
		return read_bpf_program(m, &u->settings);
	case PROP_RESTRICT_INTERFACES:
		r = sd_bus_message_enter_container(m, 'r', "bas");
		if (r >= 0)
			r = sd_bus_message_read(m, "b", &b);
		if (r >= 0)
			r = array_empty(m, "s");
		break;
	default:
		r = array_empty(m, props[p].signature + 1);
		break;
	}
	if (r == 0)
		u->settings |= props[p].setting;
	return r < 0 ? r : 0;
}

/* An error answer: a unit PID 1 no longer has, or a property an older
 * systemd lacks, is an answer too; anything else fails the query. */
static void take_error(struct query *q, struct asked_unit *u, const sd_bus_error *e) {
	if (sd_bus_error_has_names(e, SD_BUS_ERROR_UNKNOWN_PROPERTY))
		return;
	if (sd_bus_error_has_names(e, SD_BUS_ERROR_UNKNOWN_OBJECT, SD_BUS_ERROR_UNKNOWN_INTERFACE,
				   "org.freedesktop.systemd1.NoSuchUnit", "org.freedesktop.systemd1.LoadFailed")) {
		u->gone = true;
		return;
	}
	if (q->error == 0) {
		q->error = -sd_bus_error_get_errno(e) ?: -EIO;
		if (asprintf(&q->error_text, "asking systemd about %s: %s", u->name, e->message ?: e->name) < 0)
			q->error_text = NULL;
	}
}

static int on_answer(sd_bus_message *m, void *userdata, sd_bus_error *ret_error _unused_) {
	struct ask *a = userdata;
	struct query *q = a->q;
	struct asked_unit *u = &q->units[a->unit];
	int r;

	q->pending--;
	if (sd_bus_message_is_method_error(m, NULL)) {
		take_error(q, u, sd_bus_message_get_error(m));
		return 0;
	}
	r = read_value(m, u, a->prop);
	if (r < 0 && q->error == 0) {
		q->error = r;
		if (asprintf(&q->error_text, "reading %s of %s: %s", props[a->prop].name, u->name, strerror(-r)) < 0)
			q->error_text = NULL;
	}
	return 0;
}

/* ---- asking -------------------------------------------------------------- */

static uint64_t now_usec(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* Sends every request, then reads the answers until none is pending. */
static int ask_all(struct query *q) {
	uint64_t deadline = now_usec() + CGF_SYSTEMD_QUERY_TIMEOUT_USEC;
	int r;

	q->asks = calloc(q->n_units * _PROP_MAX + 1, sizeof(*q->asks));
	if (!q->asks)
		return -ENOMEM;
	for (size_t i = 0; i < q->n_units; i++)
		for (enum prop p = 0; p < _PROP_MAX; p++) {
			struct ask *a = &q->asks[i * _PROP_MAX + p];

			if (p == PROP_RESTRICT_INTERFACES && !q->restrict_interfaces)
				continue;
			*a = (struct ask) { .q = q, .unit = i, .prop = p };
			r = sd_bus_call_method_async(q->bus, NULL, SYSTEMD_SERVICE, q->units[i].object,
						     "org.freedesktop.DBus.Properties", "Get", on_answer, a, "ss",
						     q->units[i].interface, props[p].name);
			if (r < 0)
				return r;
			q->pending++;
		}
	while (q->pending > 0 && q->error == 0) {
		uint64_t now;

		r = sd_bus_process(q->bus, NULL);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		now = now_usec();
		if (now >= deadline)
			return -ETIMEDOUT;
		r = sd_bus_wait(q->bus, deadline - now);
		if (r < 0)
			return r;
	}
	return q->error;
}

/* Where systemd attaches u's programs: its ControlGroup, else the
 * cgroup its slice gives it.  NULL when neither says (a unit gone). */
static int cgroup_of(const struct asked_unit *u, char **ret) {
	*ret = NULL;
	if (u->gone)
		return 0;
	if (u->control_group && *u->control_group)
		return cgf_control_group_path(u->control_group, ret);
	if (cgf_unit_is_slice(u->name))
		return cgf_slice_cgroup(u->name, ret);
	if (!u->slice || !*u->slice)
		return 0;
	return cgf_unit_cgroup(u->slice, u->name, ret);
}

/* The answers into the table; with only_cgroups, a unit only when its
 * cgroup is the one it was asked for (q->units[i] for only_cgroups[i]). */
static int put_answers(const struct query *q, char *const *only_cgroups, struct cgf_unit_firewalls *t) {
	size_t put = 0;
	int r;

	for (size_t i = 0; i < q->n_units; i++) {
		const struct asked_unit *u = &q->units[i];
		_cleanup_free_ char *cgroup = NULL;

		r = cgroup_of(u, &cgroup);
		if (r == -EINVAL || (r >= 0 && !cgroup))
			continue; /* nothing to place it by */
		if (r < 0)
			return r;
		if (only_cgroups && !streq(cgroup, only_cgroups[i]))
			continue;
		r = cgf_unit_firewalls_put(t, u->name, cgroup, u->control_group && *u->control_group, u->settings);
		if (r < 0)
			return r;
		put++;
	}
	r = cgf_unit_firewalls_prune(t);
	return r < 0 ? r : (int) put;
}

static void set_error(char **ret_error, struct query *q, int r, const char *what) {
	if (!ret_error)
		return;
	if (q->error_text) {
		free(*ret_error);
		*ret_error = TAKE_PTR(q->error_text);
	} else
		(void) errno_message(ret_error, r, "%s", what);
}

/* ListUnits: every unit PID 1 has loaded, with its object path. */
static int list_units(struct query *q) {
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	const char *name, *load, *object;
	int r;

	r = sd_bus_call_method(q->bus, SYSTEMD_SERVICE, SYSTEMD_PATH, MANAGER_INTERFACE, "ListUnits", &e, &reply, "");
	sd_bus_error_free(&e);
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(ssssssouso)", &name, NULL, &load, NULL, NULL, NULL,
						   &object, NULL, NULL, NULL)) > 0)
		/* Not loaded (not-found, masked, bad-setting): no settings to act on. */
		if (streq(load, "loaded")) {
			r = add_unit(q, name, object);
			if (r < 0)
				return r;
		}
	return r;
}

/* Does PID 1 attach RestrictNetworkInterfaces= programs?  Only when it
 * was built with its BPF framework ("+BPF_FRAMEWORK" in Features). */
static int read_features(struct query *q) {
	sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *features = NULL;
	int r;

	r = sd_bus_get_property_string(q->bus, SYSTEMD_SERVICE, SYSTEMD_PATH, MANAGER_INTERFACE, "Features", &e,
				       &features);
	sd_bus_error_free(&e);
	if (r < 0)
		return r;
	q->restrict_interfaces = strstr(features, "+BPF_FRAMEWORK") != NULL;
	return 0;
}

int cgf_systemd_read_units(struct cgf_unit_firewalls *ret, size_t *ret_asked, char **ret_error) {
	return cgf_systemd_read_units_from(CGF_SYSTEMD_PRIVATE_BUS, ret, ret_asked, ret_error);
}

int cgf_systemd_read_units_from(const char *socket_path, struct cgf_unit_firewalls *ret, size_t *ret_asked,
				char **ret_error) {
	struct query q = {};
	struct cgf_unit_firewalls t = {};
	int r;

	r = query_open(&q, socket_path, ret_error);
	if (r < 0) {
		query_done(&q);
		return r;
	}
	r = read_features(&q);
	if (r >= 0)
		r = list_units(&q);
	if (r >= 0)
		r = ask_all(&q);
	if (r >= 0)
		r = put_answers(&q, NULL, &t);
	if (r < 0) {
		set_error(ret_error, &q, r, "asking systemd about its units");
		cgf_unit_firewalls_done(&t);
		query_done(&q);
		return r;
	}
	if (ret_asked)
		*ret_asked = q.n_units;
	query_done(&q);
	cgf_unit_firewalls_done(ret);
	*ret = t;
	return 0;
}

/* The unit whose own cgroup this would be: its last component, without
 * the one '_' systemd's cg_escape() may have put in front. */
static const char *unit_of_cgroup(const char *cgroup) {
	const char *name = strrchr(cgroup, '/');

	name = name ? name + 1 : cgroup;
	return name[0] == '_' ? name + 1 : name;
}

int cgf_systemd_read_cgroups(char *const *cgroups, size_t n_cgroups, struct cgf_unit_firewalls *table,
			     char **ret_error) {
	return cgf_systemd_read_cgroups_from(CGF_SYSTEMD_PRIVATE_BUS, cgroups, n_cgroups, table, ret_error);
}

int cgf_systemd_read_cgroups_from(const char *socket_path, char *const *cgroups, size_t n_cgroups,
				  struct cgf_unit_firewalls *table, char **ret_error) {
	_cleanup_free_ char **expected = calloc(n_cgroups + 1, sizeof(*expected));
	struct query q = {};
	int r;

	if (!expected)
		return -ENOMEM;
	r = query_open(&q, socket_path, ret_error);
	if (r < 0) {
		query_done(&q);
		return r;
	}
	r = read_features(&q);
	for (size_t i = 0; r >= 0 && i < n_cgroups; i++) {
		size_t before = q.n_units;

		r = add_unit(&q, unit_of_cgroup(cgroups[i]), NULL);
		if (r >= 0 && q.n_units > before)
			expected[before] = cgroups[i];
	}
	if (r >= 0)
		r = ask_all(&q);
	if (r >= 0)
		r = put_answers(&q, expected, table);
	if (r < 0)
		set_error(ret_error, &q, r, "asking systemd about the units of new cgroups");
	query_done(&q);
	return r;
}
