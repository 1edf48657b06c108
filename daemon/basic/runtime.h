/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * What the running daemon tells its tools through /run/cgfilterd (the
 * unit's RuntimeDirectory): its pid, and the outcome of each reload as
 * one line "<n> ok" or "<n> failed <why>", n counting the SIGHUPs it has
 * answered.  `cgfilterctl reload` sends SIGHUP and waits for n to grow,
 * so that `systemctl reload cgfilterd` fails when the new policy did not
 * take.  Each file is replaced whole (write, then rename), never seen
 * half written.
 */

#include <stdbool.h>
#include <sys/types.h>

#define CGF_RUNTIME_DIR "/run/cgfilterd"

int cgf_runtime_write_pid(void);
int cgf_runtime_read_pid(pid_t *ret);

/*
 * Sends sig to pid only if that process is the program "name": its
 * /proc/PID/comm and the file name of /proc/PID/exe (" (deleted)" after
 * an upgrade allowed) say so.  The process is held by a pidfd from before
 * the check until the signal, so a pid that was recycled in between gets
 * nothing.  -ESTALE: pid is another program (a stale pid file);
 * -ESRCH: no such process; *ret_message says which.
 */
int cgf_runtime_signal(pid_t pid, const char *name, int sig, char **ret_message);

int cgf_runtime_write_reload(unsigned n, bool ok, const char *why);

/* Any other file of CGF_RUNTIME_DIR, replaced whole; read back whole, at
 * most max bytes (-EFBIG beyond), NUL-terminated. */
int cgf_runtime_write_file(const char *name, const char *text);
int cgf_runtime_read_file(const char *name, size_t max, char **ret);
/* Gone already is done. */
int cgf_runtime_remove_file(const char *name);
/* -ENOENT before the daemon's first report. */
int cgf_runtime_read_reload(unsigned *ret_n, bool *ret_ok, char **ret_why);
