/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * Diagnostics with source positions, collected rather than printed, so
 * that a policy reports every error at once, and rendered nftables style:
 *
 *   policy.d/10-web.yaml:7:16: error: unknown filter 'wbe'; did you mean 'web'?
 *         filters: [wbe]
 *                   ^~~
 *
 * A source is the text of one policy file as it was read; positions point
 * into it, so the renderer shows the line the parser saw, not the file as it
 * is now.  Diagnostics keep pointers to their sources: free the diagnostics
 * first (or at the same time).
 *
 * The cost is linear in the input, whatever the input: a source indexes its
 * lines once, an excerpt shows at most CGF_EXCERPT_MAX columns around the
 * position, and the list keeps only the CGF_DIAGS_MAX diagnostics that come
 * first by position, counting the rest (rendered as "... and N more
 * errors").  A policy of one 40 KB line with 20000 errors renders 50 short
 * excerpts, not 20000 copies of the line, and holds 50 messages, not 20000.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "macro.h"

struct cgf_source {
	char *name;     /* as shown in messages: the path as given, or "<stdin>" */
	char *text;     /* the bytes read, NUL-terminated */
	size_t size;    /* without the terminating NUL */
	unsigned index; /* order in which the sources were read, from 0 */
	size_t *lines;  /* byte offset of the start of each line */
	size_t n_lines; /* the line after a final newline counts: at least 1 */
};

struct cgf_source *cgf_source_new(const char *name, const char *text, size_t size);
struct cgf_source *cgf_source_free(struct cgf_source *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_source *, cgf_source_free);

/* Line "line" (1-based) of the source, without its line break; false if
 * there is no such line.  Constant time: the lines are indexed once. */
bool cgf_source_line(const struct cgf_source *s, unsigned line, const char **ret_start, size_t *ret_len);

/* A position: 1-based line and column (in characters, as libyaml counts),
 * and the width of the thing it names in characters (0 or 1: one caret).
 * A position without a source is "no position". */
struct cgf_pos {
	const struct cgf_source *source;
	unsigned line;
	unsigned column;
	unsigned width;
};

static inline bool cgf_pos_is_set(struct cgf_pos p) {
	return p.source && p.line > 0;
}

/* Orders positions by source, then line, then column. */
int cgf_pos_compare(struct cgf_pos a, struct cgf_pos b);

enum cgf_severity {
	CGF_ERROR,
	CGF_WARNING,
	CGF_NOTE,
};

struct cgf_note {
	struct cgf_pos pos;
	char *message;
};

struct cgf_diag {
	enum cgf_severity severity;
	struct cgf_pos pos;
	char *file;             /* for a diagnostic about a whole file (pos unset) */
	char *message;
	struct cgf_note *notes;
	size_t n_notes;
	size_t seq;             /* the order of adding: keeps the sort stable */
};

/*
 * The list.  Adding never fails from the caller's point of view: when
 * memory runs out the list remembers it (oom) and cgf_diags_status()
 * returns -ENOMEM, so that reporting code stays readable.
 *
 * It holds the CGF_DIAGS_MAX diagnostics that sort first (by position,
 * then order of adding), which are the ones rendered; n_errors and
 * n_warnings count every one added.
 */
#define CGF_DIAGS_MAX 50

struct cgf_diags {
	struct cgf_diag *items; /* unsorted until cgf_diags_sort() */
	size_t n;               /* held, at most CGF_DIAGS_MAX */
	size_t n_errors;        /* added, held or not */
	size_t n_warnings;
	size_t n_added;         /* gives each its seq */
	size_t last;            /* 1 + the index of the last one added, 0 if not held */
	size_t largest;         /* when full: the index of the one that sorts last */
	bool oom;
};

#define CGF_DIAGS_INIT ((struct cgf_diags) {})

void cgf_diags_done(struct cgf_diags *d);

void cgf_diags_add(struct cgf_diags *d, enum cgf_severity severity, struct cgf_pos pos,
		   const char *format, ...) _printf_(4, 5);
void cgf_diags_addv(struct cgf_diags *d, enum cgf_severity severity, struct cgf_pos pos,
		    const char *format, va_list ap) _printf_(4, 0);
void cgf_diags_add_file(struct cgf_diags *d, enum cgf_severity severity, const char *file,
			const char *format, ...) _printf_(4, 5);
/* A note at another position, attached to the last diagnostic added (and
 * dropped with it when that one is not held). */
void cgf_diags_note(struct cgf_diags *d, struct cgf_pos pos, const char *format, ...) _printf_(3, 4);

/* Would a diagnostic at pos be held, or only counted?  For callers that
 * spend effort on a message (a "did you mean" search). */
bool cgf_diags_would_hold(const struct cgf_diags *d, struct cgf_pos pos);

/* 0, or -ENOMEM if a diagnostic could not be recorded. */
int cgf_diags_status(const struct cgf_diags *d);

/* Stable sort by position: diagnostics without one first, then by source
 * order, line and column.  n log n. */
void cgf_diags_sort(struct cgf_diags *d);

enum {
	CGF_RENDER_SOURCE = 1 << 0, /* the source line and a caret under each position */
};

#define CGF_EXCERPT_MAX 120 /* columns of a source line shown; longer ones are cut */

/* Renders the diagnostics held and their notes, then how many more errors
 * and warnings there are, and writes the text with one fwrite(); returns 0
 * or -errno of the write. */
int cgf_diags_render(const struct cgf_diags *d, FILE *f, unsigned flags);

/* Renders into a malloc()ed string (for tests and callers that log). */
int cgf_diags_render_string(const struct cgf_diags *d, unsigned flags, char **ret);
