/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The status record (status.h) as metrics, in the Prometheus text
 * exposition format (version 0.0.4): `cgfilterctl status
 * --format=prometheus`, for node_exporter's textfile collector or any
 * scraper.  The third renderer of the one record, pure like the other two:
 * it writes to its FILE and nothing else.
 *
 *   # HELP cgfilterd_packets_total ...
 *   # TYPE cgfilterd_packets_total counter
 *   cgfilterd_packets_total{cgroup="web.slice",direction="egress",filter="web",verdict="pass"} 1234567
 *   cgfilterd_packets_total{cgroup="web.slice",direction="egress",filter="web",verdict="drop"} 3
 *   cgfilterd_packets_total{cgroup="web.slice",direction="egress",filter="web",verdict="would_drop"} 0
 *
 * Families, each with its HELP and TYPE once, before its samples:
 *
 *   cgfilterd_kernel_info{release,preorder,ordering,revision}   gauge, 1
 *   cgfilterd_packets_total{cgroup,direction,filter,verdict}    counter
 *   cgfilterd_bytes_total{cgroup,direction,filter,verdict}      counter
 *   cgfilterd_daemon_report                                      gauge, 1|0
 *   and with the daemon's report (pending.h), when there is one:
 *   cgfilterd_failed_lists                                       gauge
 *   cgfilterd_failed_list_attempts{cgroup,direction,error}       gauge
 *   cgfilterd_unreachable_cgroups                                gauge
 *   with its reconcile counts (reconcile-counts.h):
 *   cgfilterd_reconciles_total{scope,result}                     counter
 *   cgfilterd_last_reconcile_timestamp_seconds                   gauge
 *   cgfilterd_last_successful_reconcile_timestamp_seconds        gauge (none before the first)
 *   with its reload line (runtime.h):
 *   cgfilterd_reloads_total                                      counter
 *   cgfilterd_last_reload_successful                             gauge, 1|0
 *
 * Packets and bytes: per list (cgroup, direction), for each of our
 * filters that runs there (effective, or in the cgroup's own list), what
 * its counters map holds for that cgroup's sockets, verdict "pass",
 * "drop" and "would_drop" (passed only because the rules that would drop
 * it are audited: enforce: false); each packet under one verdict, so the
 * sum over verdict is every packet the filter judged.  A filter loaded as two objects at once (two identities, while
 * one replaces the other) is their sum; one object attached at two levels
 * shares one map and is counted once.  Foreign programs have no counters.
 *
 * Label values: tenants name cgroups, so a value is written as itself
 * (with \\, \" and \n as the format requires) only when that shows every
 * character of it as itself: printable valid UTF-8, newlines allowed
 * (escape.h decides what is printable).  Otherwise the whole value is
 * written in escape.h's \xNN form with its backslashes as \x5c too, and
 * a second label <name>_escaped="true" says so; no control byte is ever
 * written raw, and two different names never make the same series.  The
 * daemon's report holds names already escaped and cut (pending.h): those
 * are shown as the report has them, and of two failed lists that it
 * shows alike, the first.
 *
 * Nothing is capped here: cgfilterd_failed_lists and
 * cgfilterd_unreachable_cgroups count every list and cgroup, also those
 * beyond the daemon report's first ones.
 */

#include <stdio.h>

#include "status.h"

/* Returns 0 or the -errno of the write. */
int cgf_status_render_prometheus(const struct cgf_status *s, FILE *f);
