/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The units running without the programs they asked systemd for
 * (unit-firewalls.h), because a none of ours lies above them and the
 * kernel refused systemd's attach (coexist.h: cgf_coexist_missing()).
 * The daemon keeps them, logs each once when it finds it, writes them to
 * CGF_RUNTIME_DIR/missing-firewalls (runtime.h: replaced whole) when
 * they change, and `cgfilterctl status` shows them, as a table, in its
 * JSON and as metrics.
 *
 * The file, one record a line, fields separated by a tab:
 *
 *   cgfilterd-missing-firewalls 1
 *   units <total>
 *   unit <directions> <unit> <cgroup> <settings>
 *   ...
 *
 * <directions> is "ingress", "egress" or "ingress,egress"; <settings>
 * the unit's settings for them as unit-firewalls.h writes them.  Unit
 * and cgroup names are chosen by whoever may create units and cgroups:
 * every text field is escaped (escape.h) and cut to
 * CGF_MISSING_FIREWALLS_TEXT_MAX bytes before escaping; at most
 * CGF_MISSING_FIREWALLS_KEPT units are written, the total counts them
 * all.  The strings read back are the escaped forms: for showing.
 */

#include <stddef.h>
#include <stdio.h>

#include "json.h"
#include "macro.h"

#define CGF_MISSING_FIREWALLS_FILE "missing-firewalls"
#define CGF_MISSING_FIREWALLS_KEPT 32
#define CGF_MISSING_FIREWALLS_TEXT_MAX 512
#define CGF_MISSING_FIREWALLS_FILE_MAX \
	((CGF_MISSING_FIREWALLS_KEPT + 4) * (3 * 4 * (CGF_MISSING_FIREWALLS_TEXT_MAX + 3) + 64))

struct cgf_missing_firewall {
	char *unit;
	char *cgroup;
	unsigned directions; /* CGF_DIRECTION_BIT()s (unit-firewalls.h) the unit runs without */
	char *settings;      /* "IPAddressDeny=, IPAddressAllow=" */
};

struct cgf_missing_firewalls {
	struct cgf_missing_firewall *items;
	size_t n;
	size_t n_total; /* read from a file: every one the daemon had; in memory: n */
};

void cgf_missing_firewalls_done(struct cgf_missing_firewalls *m);
struct cgf_missing_firewalls *cgf_missing_firewalls_free(struct cgf_missing_firewalls *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_missing_firewalls *, cgf_missing_firewalls_free);

/* Appends copies; 0 or -ENOMEM. */
int cgf_missing_firewalls_add(struct cgf_missing_firewalls *m, const char *unit, const char *cgroup,
			      unsigned directions, const char *settings);
/* The entry of that unit and cgroup, or NULL. */
const struct cgf_missing_firewall *cgf_missing_firewalls_find(const struct cgf_missing_firewalls *m,
								const char *unit, const char *cgroup);
/* Moves the entries of from into m, replacing m's of the same unit and cgroup. */
int cgf_missing_firewalls_merge(struct cgf_missing_firewalls *m, struct cgf_missing_firewalls *from);

int cgf_missing_firewalls_format(const struct cgf_missing_firewalls *m, char **ret);
/* -EBADMSG when the text is not such a file, -EFBIG when it is too big. */
int cgf_missing_firewalls_parse(const char *text, struct cgf_missing_firewalls **ret);

/*
 * The table, after the daemon's report in `cgfilterctl status`; nothing
 * when no unit misses its firewall:
 *
 *   units without their firewall: 1 (systemd's attach refused below a none of ours)
 *     UNIT         CGROUP                    MISSING             SETTINGS
 *     web.service  system.slice/web.service  ingress and egress  IPAddressDeny=
 */
int cgf_missing_firewalls_render_table(const struct cgf_missing_firewalls *m, FILE *f);

/*
 * { "count": N, "units": [ { "unit", "cgroup", "directions": ["ingress", ...],
 *                            "settings": "IPAddressDeny=, ..." } ] }
 */
void cgf_missing_firewalls_render_json(const struct cgf_missing_firewalls *m, struct cgf_json *j);
