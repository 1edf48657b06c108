/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * What `cgfilterctl status` shows: per cgroup and direction, the kernel's
 * own list and the effective programs (what runs for a packet of that
 * cgroup), who owns each, where it is attached, its flags and counters;
 * and the kernel's features.  Plain data: the kernel edge fills it from
 * bpf() queries (or a test by hand), and two renderers show the one
 * record, as a table for a person and as JSON for a program.  Neither
 * does anything but write to its output.
 *
 * The builders copy what they are given (strings included), so a caller
 * may pass pointers into its own buffers.  Lists are kept sorted by
 * cgroup, then direction (cgf_list_key_compare()), whatever order they
 * are added in.
 *
 * Table (cgfilterctl status):
 *
 *   kernel 6.1.0-cgf: preorder yes, ordering yes, revision yes
 *
 *     #  ID  NAME      OWNER       ATTACHED AT  FLAGS           PASS          DROP    WOULD DROP
 *   .          egress   mode multi  rev 3
 *     0  10  cgf_base  ours: base  .            multi           100/6.2K      2/128B  0/0B
 *
 *   web.slice  egress   mode multi  rev 7
 *     0  42  acme_fw   foreign     web.slice    multi|preorder  -             -       -
 *     1  10  cgf_base  ours: base  .            multi           100/6.2K      2/128B  0/0B
 *     2  51  cgf_web   ours: web (audit)  web.slice  multi       1234567/1.5K  0/0B    7/448B
 *     note: foreign program 42 runs before ours: preorder
 *
 *   - only lists with a program (own or effective) or a note;
 *   - the effective programs in execution order (#), then any program of
 *     the cgroup's own list that is not among them ("-" for #);
 *   - OWNER says "(audit)" after an audited rules filter's name;
 *   - FLAGS are the attach flags, "preorder" added when the record says
 *     preorder (no kernel reports the bit in a query; the kernel edge
 *     knows it for ours from the pin name), unknown bits as unknown(0x...);
 *   - PASS, DROP and WOULD DROP are packets/bytes, bytes in K, M, G...
 *     (1024, one decimal, rounded down), "-" without counters; WOULD DROP
 *     is what the filter let pass only because the rules that would drop
 *     it are audited (enforce: false), not counted in PASS;
 *   - columns aligned over the whole output, control characters in names
 *     and paths shown as \xNN.
 *
 * JSON (cgfilterctl status --json), every key always there:
 *
 *   { "kernel": { "release": "6.1.0-cgf" | null,
 *                 "preorder": bool | null, "ordering": ..., "revision": ... },
 *     "lists": [ { "cgroup", "direction", "mode" ("none" | "override" | "multi"),
 *                  "revision" (null when unknown), "attached": [PROG...],
 *                  "effective": [PROG...], "notes": [string...] }, ... ] }
 *   PROG: { "id", "link_id" (null: none), "name", "owner" ("ours" | "foreign"),
 *           "filter", "identity" (null: unknown or foreign), "attached_at",
 *           "attach_flags" (names), "attach_flags_raw", "preorder",
 *           "enforce" (false: audited; null: unknown or not a rules filter),
 *           "counters": { "pass_packets", "pass_bytes", "drop_packets",
 *                         "drop_bytes", "would_drop_packets",
 *                         "would_drop_bytes" } | null }
 *
 * Unlike the table, the JSON has every list of the record, empty ones
 * included (its revision is information), and exact counter values.
 *
 * After the lists, both show the daemon's report when there is one
 * (pending.h): its failed lists and the cgroups its walk skipped; the
 * JSON as "daemon": {...} (null without a report), the table only what
 * is not empty.  Then the units the daemon found running without the
 * programs they asked systemd for, below a none of ours
 * (missing-firewalls.h): the JSON as "missing_firewalls": {...} (null
 * without the daemon's file), the table only when there is one.
 *
 * A third renderer, status-prometheus.h, shows the counters, the report
 * and the daemon's reconcile and reload counts as Prometheus metrics.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "kernel-features.h"
#include "macro.h"
#include "missing-firewalls.h"
#include "pending.h"
#include "policy.h"
#include "reconcile-counts.h"

/* Each packet the filter judged once: passed, dropped, or passed but
 * counted as would-drop (audited rules, the filter's enforce: false). */
struct cgf_status_counters {
	uint64_t pass_packets;
	uint64_t pass_bytes;
	uint64_t drop_packets;
	uint64_t drop_bytes;
	uint64_t would_drop_packets;
	uint64_t would_drop_bytes;
};

/* Whether a rules filter's verdicts are applied (its host rule set; a
 * tenant filter says its own in the entries of its children). */
enum cgf_status_enforce {
	CGF_STATUS_ENFORCE_UNKNOWN, /* foreign, not a rules filter, not synced, unreadable */
	CGF_STATUS_ENFORCED,
	CGF_STATUS_AUDITED,         /* enforce: false: its drops are counted as would-drop */
};

/* One program of a list, attached or effective. */
struct cgf_status_prog {
	uint32_t prog_id;
	uint32_t link_id;       /* 0: attached with BPF_PROG_ATTACH; else through this link */
	char *prog_name;        /* as the kernel reports it; NULL or "" when it has none */
	bool ours;
	char *filter;           /* ours: the filter it was loaded for (pin metadata); NULL if unknown */
	char *identity;         /* ours: its identity (pin metadata); NULL if unknown */
	char *attached_at;      /* the cgroup whose list holds it: for effective entries an
				 * ancestor's path, or NULL for the list's own cgroup */
	uint32_t attach_flags;  /* CGF_ATTACH_*, as the list at attached_at has it */
	bool preorder;          /* runs in the preorder pass (from the flags or pin metadata) */
	bool has_counters;      /* counters below were read (ours, from the filter's map) */
	struct cgf_status_counters counters;
	enum cgf_status_enforce enforce; /* ours, rules: what its config map says */
};

struct cgf_status_list {
	char *cgroup;
	enum cgf_direction direction;
	uint32_t mode_flags;    /* the own list's mode: 0, CGF_ATTACH_OVERRIDE or CGF_ATTACH_MULTI */
	uint64_t revision;      /* 0: unknown */
	struct cgf_status_prog *attached; /* this cgroup's own list, in list order */
	size_t n_attached;
	struct cgf_status_prog *effective; /* what runs for a packet of this cgroup, in
					    * execution order (BPF_F_QUERY_EFFECTIVE) */
	size_t n_effective;
	char **notes;           /* sentences for the operator, e.g. "foreign program 42 below
				 * our none on ingress overrides ours here" */
	size_t n_notes;
};

struct cgf_status {
	struct cgf_features features;
	bool features_known;    /* false: the features were not probed */
	char *kernel_release;   /* uname -r; NULL if unknown */
	struct cgf_status_list *lists; /* sorted by cgroup, then direction */
	size_t n_lists;
	struct cgf_pending *daemon; /* owned: what the running daemon has not done
				     * (pending.h); NULL: no daemon report */
	struct cgf_missing_firewalls *missing_firewalls; /* owned: units below our nones without
							  * their programs; NULL: no daemon file */
	/* The running daemon's counts, for the metrics only (status-prometheus.h):
	 * a person asks the journal how often it reconciled. */
	bool has_reconciles;    /* false: no reconcile counts (no daemon) */
	struct cgf_reconcile_counts reconciles;
	bool has_reload;        /* false: no reload line (runtime.h) */
	unsigned reloads;       /* SIGHUPs the daemon answered */
	bool reload_ok;         /* the last one (or the start) put its policy in force */
};

struct cgf_status *cgf_status_new(void);
struct cgf_status *cgf_status_free(struct cgf_status *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_status *, cgf_status_free);

/* features NULL: unknown; release NULL: unknown. */
int cgf_status_set_kernel(struct cgf_status *s, const char *release, const struct cgf_features *features);

/*
 * Adds the list for (cgroup, direction) at its sorted place; -EEXIST if
 * there is one already.  *ret (optional) points into s->lists: it is
 * valid until the next cgf_status_add_list().
 */
int cgf_status_add_list(struct cgf_status *s, const char *cgroup, enum cgf_direction direction,
			uint32_t mode_flags, uint64_t revision, struct cgf_status_list **ret);
/* NULL when there is no such list. */
struct cgf_status_list *cgf_status_find(struct cgf_status *s, const char *cgroup, enum cgf_direction direction);

/* Append a copy of p (its strings duplicated) to the own or the effective
 * list; *ret (optional) is valid until the next append to the same array. */
int cgf_status_list_add_attached(struct cgf_status_list *l, const struct cgf_status_prog *p,
				 struct cgf_status_prog **ret);
int cgf_status_list_add_effective(struct cgf_status_list *l, const struct cgf_status_prog *p,
				  struct cgf_status_prog **ret);
int cgf_status_list_add_note(struct cgf_status_list *l, const char *format, ...) _printf_(2, 3);

/* Returns 0 or the -errno of the write. */
int cgf_status_render_table(const struct cgf_status *s, FILE *f);
/* Writes one value at the writer's current place; returns cgf_json_status(j). */
int cgf_status_render_json(const struct cgf_status *s, struct cgf_json *j);
