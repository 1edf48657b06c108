/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TAP-ish reporting shared by the kernel tests and the model's unit
 * test: one "ok - what" or "not ok - what" line per check, "# " notes,
 * and a final "N passed, M failed" line that tests/vm/run sums.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPORT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Prints "ok - ..." or "not ok - ..." and counts it; returns `cond`. */
bool report_check(bool cond, const char *fmt, ...) REPORT_PRINTF(2, 3);
void report_ok(const char *fmt, ...) REPORT_PRINTF(1, 2);
void report_fail(const char *fmt, ...) REPORT_PRINTF(1, 2);
/* Prints "# ..." (context for a person; not counted). */
void report_note(const char *fmt, ...) REPORT_PRINTF(1, 2);
/* Prints an indented detail line under the previous check. */
void report_detail(const char *fmt, ...) REPORT_PRINTF(1, 2);

unsigned report_failed(void);
/* Prints the totals; returns the exit status (0: all passed and at least one ran). */
int report_finish(void);

/* "MULTI|PREORDER|BEFORE" for attach flags, "0" for none, unknown bits as unknown(0x..). */
const char *report_flags_str(uint32_t flags, char *buf, size_t size);

/* "-EPERM" for -EPERM, "0" for 0, a number for anything unknown. */
const char *report_errno(int err);
