/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The daemon's log: one line per event on stderr.  Under systemd
 * (JOURNAL_STREAM set) each line starts with its syslog priority, "<3>",
 * which journald turns into the entry's priority; on a terminal the
 * lines are plain.  Every message is escaped as a whole (escape.h) on its
 * way out, so arguments are passed raw: a cgroup name cannot end the
 * line, choose a priority or drive a terminal.  Lines longer than 2 KiB
 * are cut into several, each with the priority.  No state: nothing to set
 * up, nothing to tear down.
 */

#include <syslog.h>

#include "macro.h"

void cgf_log(int priority, const char *format, ...) _printf_(2, 3);
/* Writes a multi-line text (rendered diagnostics, a plan), each line
 * with the priority.  It is cut at its newlines before escaping: whoever
 * composes such a text escapes what goes into each line (as
 * cgf_plan_format() and cgf_diags_render() do), or a newline in a name
 * would start a line of its own. */
void cgf_log_text(int priority, const char *text);

/* Would a message at this priority be written?  (LOG_DEBUG only with
 * CGF_DEBUG set.)  For callers that would format a costly text. */
bool cgf_log_wanted(int priority);

#define log_error(...) cgf_log(LOG_ERR, __VA_ARGS__)
#define log_warning(...) cgf_log(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) cgf_log(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) cgf_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...) cgf_log(LOG_DEBUG, __VA_ARGS__)
