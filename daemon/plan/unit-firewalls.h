/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * What another controller attaches to the lists cgfilterd works on:
 * systemd's units whose settings make PID 1 attach cgroup_skb programs
 * to the unit's cgroup each time it starts it, and on which lists.
 * Plain data and systemd's naming rules: the edge to systemd
 * (daemon/systemd/unit-query.c) fills it from PID 1's bus, a test by
 * hand; coexist.h judges a policy and the kernel's lists against it.
 *
 *   setting                                    lists (both: ingress and egress)
 *   IPAddressDeny=, IPAddressAllow=            both (sd_fw_ingress, sd_fw_egress)
 *   IPAccounting=yes                           both (the same programs, counting)
 *   IPIngressFilterPath= / IPEgressFilterPath= ingress / egress
 *   BPFProgram=ingress:… / BPFProgram=egress:… ingress / egress (other types are other lists)
 *   RestrictNetworkInterfaces=                 both (links; only a systemd built
 *                                              with +BPF_FRAMEWORK attaches them)
 *
 * A slice's IPAddressDeny= and IPAddressAllow= attach nothing to the
 * slice's own cgroup: systemd compiles them into the programs of every
 * unit below it (its "leaf nodes"), which get them even without access
 * lists of their own.  The table keeps what each unit says;
 * cgf_unit_firewalls_effective() gives what lands on its cgroup.
 *
 * systemd attaches with BPF_F_ALLOW_MULTI (links are multi too); below a
 * `mode: none` list the kernel refuses that (EPERM), and systemd logs it
 * and starts the unit anyway, without those programs.
 */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"
#include "policy.h"

enum cgf_unit_setting {
	CGF_SETTING_IP_ADDRESS_DENY = 1 << 0,
	CGF_SETTING_IP_ADDRESS_ALLOW = 1 << 1,
	CGF_SETTING_IP_ACCOUNTING = 1 << 2,
	CGF_SETTING_IP_INGRESS_FILTER = 1 << 3,
	CGF_SETTING_IP_EGRESS_FILTER = 1 << 4,
	CGF_SETTING_BPF_PROGRAM_INGRESS = 1 << 5,
	CGF_SETTING_BPF_PROGRAM_EGRESS = 1 << 6,
	CGF_SETTING_RESTRICT_INTERFACES = 1 << 7,
	_CGF_SETTING_ALL = (1 << 8) - 1,
};

/* Directions as a set: bit (1 << enum cgf_direction). */
#define CGF_DIRECTION_BIT(d) (1u << (d))
#define CGF_DIRECTIONS_BOTH (CGF_DIRECTION_BIT(CGF_INGRESS) | CGF_DIRECTION_BIT(CGF_EGRESS))

struct cgf_unit_firewall {
	char *unit;        /* "web.service", as systemd names it */
	char *cgroup;      /* where systemd attaches, relative to the cgroup2 mount
			    * ("." the root): the unit's ControlGroup, or for a unit
			    * without one now the cgroup its slice gives it */
	bool active;       /* cgroup is the unit's ControlGroup: it existed when asked */
	unsigned settings; /* CGF_SETTING_* */
};

struct cgf_unit_firewalls {
	struct cgf_unit_firewall *units; /* in the order added; cgf_unit_firewalls_put() keeps one per unit */
	size_t n;
};

void cgf_unit_firewalls_done(struct cgf_unit_firewalls *u);

/* Appends a unit (copies of the strings); 0 or -ENOMEM. */
int cgf_unit_firewalls_add(struct cgf_unit_firewalls *u, const char *unit, const char *cgroup, bool active,
			   unsigned settings);
/* The same, replacing an entry of that unit if there is one. */
int cgf_unit_firewalls_put(struct cgf_unit_firewalls *u, const char *unit, const char *cgroup, bool active,
			   unsigned settings);
/* Drops the entries for which keep() says false. */
void cgf_unit_firewalls_filter(struct cgf_unit_firewalls *u, bool (*keep)(const struct cgf_unit_firewall *e,
									  void *userdata),
			       void *userdata);

/*
 * Drops the units that ran when they were asked about but whose cgroup
 * is not among paths now (a full walk's cgroups): a transient unit gone,
 * a service stopped (asked again when its cgroup reappears).  Keeps the
 * table as large as what runs, not as what ever ran.  0 or -ENOMEM.
 */
int cgf_unit_firewalls_forget_stopped(struct cgf_unit_firewalls *t, char *const *paths, size_t n_paths);

/* The IP access lists: on a slice, compiled into the units below it. */
#define CGF_SETTINGS_IP_ACCESS (CGF_SETTING_IP_ADDRESS_DENY | CGF_SETTING_IP_ADDRESS_ALLOW)

/* The D-Bus interface of a unit type with a cgroup (service, socket,
 * mount, swap, slice, scope), from the unit's name; NULL for the types
 * without one (target, timer, path, device, automount) and non-units. */
const char *cgf_unit_interface(const char *unit);

/* Is the unit a slice (an inner node of systemd's tree)? */
bool cgf_unit_is_slice(const char *unit);

/*
 * The settings that make systemd attach programs to u's own cgroup: u's
 * own, without the IP access lists if u is a slice, with those of every
 * slice of t above it if it is not (*ret_inherited, optional: the bits
 * only those slices give).  u need not be one of t's entries.
 */
unsigned cgf_unit_firewalls_effective(const struct cgf_unit_firewalls *t, const struct cgf_unit_firewall *u,
				      unsigned *ret_inherited);

/* Drops the units that make systemd attach nothing (effective settings
 * 0); a slice with IP access lists stays, for the units below it.
 * 0 or -ENOMEM (then nothing is dropped). */
int cgf_unit_firewalls_prune(struct cgf_unit_firewalls *t);

/* The lists those settings make systemd attach to: CGF_DIRECTION_BIT()s. */
unsigned cgf_unit_settings_directions(unsigned settings);

/*
 * The settings that act on a set of directions, as a person writes them
 * in a unit file: "IPAddressDeny=, IPAddressAllow=".  "" for none.
 */
int cgf_unit_settings_format(unsigned settings, unsigned directions, char **ret);

/* The same with the bits a slice above gives marked so:
 * "IPAccounting=yes; IPAddressDeny= of a slice above". */
int cgf_unit_settings_describe(unsigned settings, unsigned inherited, unsigned directions, char **ret);

/* "ingress", "egress" or "ingress and egress" for a non-empty set. */
const char *cgf_directions_to_string(unsigned directions);

/*
 * systemd's naming: the cgroup of a slice ("a-b.slice" lies in
 * "a.slice/a-b.slice"; "-.slice" is the root, "."), and of a unit in a
 * slice (its name, with a '_' in front where systemd's cg_escape() puts
 * one: a name that could be a kernel file of the cgroup).  -EINVAL for a
 * name that is not a slice; 0 or -ENOMEM otherwise.
 */
int cgf_slice_cgroup(const char *slice, char **ret);
int cgf_unit_cgroup(const char *slice, const char *unit, char **ret);

/* The cgroup of systemd's ControlGroup ("/system.slice/web.service"):
 * relative to the mount, "." for "/".  -EINVAL when it is not absolute. */
int cgf_control_group_path(const char *control_group, char **ret);
