/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The edge to systemd: which of PID 1's units make it attach cgroup_skb
 * programs, and where (unit-firewalls.h), asked over PID 1's private bus.
 *
 * The private bus (/run/systemd/private) is PID 1's own socket: there
 * from PID 1's start, before dbus-daemon, so the daemon can ask at early
 * boot (it starts before sysinit.target); root only (the socket is
 * root's, mode 0600 or stricter by its directory), which the daemon and
 * `cgfilterctl plan` are.  Inside the unit's sandbox a connect() to it is
 * all that is needed: AF_UNIX, a socket file on the read-only /run.
 *
 * A query is one connection, closed at its end: no state between queries,
 * nothing to reconnect after `systemctl daemon-reexec`.  Every property
 * request of a query is sent before the first answer is read (sd-bus
 * pipelines them), so its cost is a few bytes per property and unit,
 * not a round trip each.  Only the few properties named in
 * unit-firewalls.h are asked (GetAll would make PID 1 read every unit's
 * cgroup counters).  A query ends within CGF_SYSTEMD_QUERY_TIMEOUT_USEC.
 *
 * Errors: -ENOENT when there is no private bus (not a systemd host, or
 * PID 1 not up: nothing to ask), -EACCES when it may not be opened (not
 * root); any -errno with *ret_error (optional) saying what failed.
 */

#include <stddef.h>
#include <stdint.h>

#include "unit-firewalls.h"

#define CGF_SYSTEMD_PRIVATE_BUS "/run/systemd/private"
#define CGF_SYSTEMD_QUERY_TIMEOUT_USEC (20 * 1000 * 1000ULL)

/*
 * Every unit PID 1 has loaded, running or not (its cgroup from its slice
 * when it has none now), that makes it attach programs: the unit files'
 * settings, drop-ins and transient units included.  Not covered: a unit
 * PID 1 has not loaded (nothing pulled it in yet: its settings are only
 * in a file), a template without an instance, the units of a user's
 * service manager (unprivileged: it cannot attach programs).  *ret is
 * replaced; *ret_asked (optional): how many units were asked about.
 */
int cgf_systemd_read_units(struct cgf_unit_firewalls *ret, size_t *ret_asked, char **ret_error);

/*
 * The units whose own cgroups these are (the paths of new cgroups,
 * relative to the cgroup2 mount): each is put into *table (replacing
 * that unit's entry), then the table is pruned.  A cgroup whose name is
 * no unit's, or whose unit has another cgroup, is left out.  Returns the
 * number of units put.
 */
int cgf_systemd_read_cgroups(char *const *cgroups, size_t n_cgroups, struct cgf_unit_firewalls *table,
			     char **ret_error);

/* The same over another socket than PID 1's: for the tests, whose PID 1
 * is a stand-in speaking systemd's D-Bus API. */
int cgf_systemd_read_units_from(const char *socket_path, struct cgf_unit_firewalls *ret, size_t *ret_asked,
				char **ret_error);
int cgf_systemd_read_cgroups_from(const char *socket_path, char *const *cgroups, size_t n_cgroups,
				  struct cgf_unit_firewalls *table, char **ret_error);
