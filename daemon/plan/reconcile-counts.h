/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * How many reconciles the running daemon has made, by scope and result,
 * and when the last one and the last successful one ended: for the
 * metrics of `cgfilterctl status --format=prometheus`.  The daemon counts
 * every reconcile it runs (start-up, reload, retry, safety net and each
 * batch of cgroup events; a reload's attempt of a new policy too) and
 * rewrites CGF_RUNTIME_DIR/reconciles after each (runtime.h: replaced
 * whole).  A new daemon starts again from zero: a counter reset.
 *
 * The file, one record a line, fields separated by a tab:
 *
 *   cgfilterd-reconciles 1
 *   count <scope> <result> <n>        six lines, every scope and result
 *   last <µs since the epoch>         0: none yet
 *   last_success <µs since the epoch> 0: none yet
 *
 * Only numbers and fixed words: nothing a tenant names.
 */

#include <stdint.h>

#include "macro.h"

#define CGF_RECONCILE_COUNTS_FILE "reconciles"
#define CGF_RECONCILE_COUNTS_FILE_MAX 1024

enum cgf_reconcile_scope_kind {
	CGF_RECONCILE_FULL,  /* every cgroup within the policy's reach */
	CGF_RECONCILE_EVENT, /* one batch of cgroup events */
	_CGF_RECONCILE_SCOPE_MAX,
};

enum cgf_reconcile_result {
	CGF_RECONCILE_SUCCESS,    /* every list as the policy says */
	CGF_RECONCILE_INCOMPLETE, /* some lists failed or the kernel still differs: retried */
	CGF_RECONCILE_ERROR,      /* failed as a whole (nothing read, planned or applied past the error) */
	_CGF_RECONCILE_RESULT_MAX,
};

struct cgf_reconcile_counts {
	uint64_t n[_CGF_RECONCILE_SCOPE_MAX][_CGF_RECONCILE_RESULT_MAX];
	uint64_t last_usec;         /* CLOCK_REALTIME at the end of the last one; 0: none */
	uint64_t last_success_usec; /* ... of the last one with result success; 0: none */
};

const char *cgf_reconcile_scope_kind_to_string(enum cgf_reconcile_scope_kind k);
const char *cgf_reconcile_result_to_string(enum cgf_reconcile_result r);

/* Counts one reconcile that ended at now_usec. */
void cgf_reconcile_counts_add(struct cgf_reconcile_counts *c, enum cgf_reconcile_scope_kind k,
			      enum cgf_reconcile_result r, uint64_t now_usec);

/* The file's text; 0 or -ENOMEM. */
int cgf_reconcile_counts_format(const struct cgf_reconcile_counts *c, char **ret);
/* -EBADMSG when the text is not such a file (every line required, once). */
int cgf_reconcile_counts_parse(const char *text, struct cgf_reconcile_counts *ret);
