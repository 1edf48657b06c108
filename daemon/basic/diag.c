/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdarg.h>

#include "diag.h"
#include "escape.h"
#include "util.h"

/* One pass over the text: where each line starts. */
static int source_index_lines(struct cgf_source *s) {
	size_t n = 1;

	for (const char *p = s->text, *end = s->text + s->size; (p = memchr(p, '\n', end - p)); p++)
		n++;
	s->lines = calloc(n, sizeof(*s->lines));
	if (!s->lines)
		return -ENOMEM;
	s->n_lines = 1;
	for (const char *p = s->text, *end = s->text + s->size; (p = memchr(p, '\n', end - p)); p++)
		s->lines[s->n_lines++] = (size_t) (p + 1 - s->text);
	return 0;
}

struct cgf_source *cgf_source_new(const char *name, const char *text, size_t size) {
	struct cgf_source *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->name = strdup(name);
	s->text = strndup_nul(text ?: "", text ? size : 0);
	if (!s->name || !s->text)
		return cgf_source_free(s);
	s->size = text ? size : 0;
	if (source_index_lines(s) < 0)
		return cgf_source_free(s);
	return s;
}

struct cgf_source *cgf_source_free(struct cgf_source *s) {
	if (!s)
		return NULL;
	free(s->name);
	free(s->text);
	free(s->lines);
	free(s);
	return NULL;
}

bool cgf_source_line(const struct cgf_source *s, unsigned line, const char **ret_start, size_t *ret_len) {
	const char *p, *eol;

	if (!s || line == 0 || line > s->n_lines)
		return false;

	/* A position on the line after a final newline still names a line:
	 * libyaml puts end-of-stream errors there. */
	p = s->text + s->lines[line - 1];
	eol = line < s->n_lines ? s->text + s->lines[line] - 1 : s->text + s->size;
	if (eol > p && eol[-1] == '\r')
		eol--;
	*ret_start = p;
	*ret_len = eol - p;
	return true;
}

int cgf_pos_compare(struct cgf_pos a, struct cgf_pos b) {
	bool as = cgf_pos_is_set(a), bs = cgf_pos_is_set(b);

	if (as != bs)
		return as ? 1 : -1;
	if (!as)
		return 0;
	if (a.source->index != b.source->index)
		return a.source->index < b.source->index ? -1 : 1;
	if (a.line != b.line)
		return a.line < b.line ? -1 : 1;
	if (a.column != b.column)
		return a.column < b.column ? -1 : 1;
	return 0;
}

static void diag_clear(struct cgf_diag *g) {
	free(g->file);
	free(g->message);
	for (size_t i = 0; i < g->n_notes; i++)
		free(g->notes[i].message);
	free(g->notes);
}

void cgf_diags_done(struct cgf_diags *d) {
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		diag_clear(&d->items[i]);
	free(d->items);
	*d = CGF_DIAGS_INIT;
}

static int compare_diag_key(struct cgf_pos pos, size_t seq, const struct cgf_diag *g) {
	int r = cgf_pos_compare(pos, g->pos);

	if (r != 0)
		return r;
	return seq < g->seq ? -1 : seq > g->seq;
}

static void diags_count(struct cgf_diags *d, enum cgf_severity severity) {
	if (severity == CGF_ERROR)
		d->n_errors++;
	else if (severity == CGF_WARNING)
		d->n_warnings++;
}

/* When the list is full, a diagnostic that sorts after all it holds is
 * only counted; one that sorts before takes the place of the last. */
static struct cgf_diag *diags_append(struct cgf_diags *d, enum cgf_severity severity, struct cgf_pos pos,
				     const char *format, va_list ap) {
	size_t seq = d->n_added++, slot;
	struct cgf_diag *g;
	char *message;

	d->last = 0;
	if (d->n == CGF_DIAGS_MAX && compare_diag_key(pos, seq, &d->items[d->largest]) > 0) {
		diags_count(d, severity);
		return NULL;
	}

	if (vasprintf(&message, format, ap) < 0) {
		d->oom = true;
		return NULL;
	}
	if (d->n == CGF_DIAGS_MAX) {
		slot = d->largest;
		diag_clear(&d->items[slot]);
		g = &d->items[slot];
		*g = (struct cgf_diag) {};
	} else {
		g = array_append((void **) &d->items, d->n, sizeof(*d->items));
		if (!g) {
			free(message);
			d->oom = true;
			return NULL;
		}
		slot = d->n++;
	}
	g->severity = severity;
	g->pos = pos;
	g->message = message;
	g->seq = seq;
	diags_count(d, severity);
	d->last = slot + 1;

	if (d->n == CGF_DIAGS_MAX) {
		/* Linear in CGF_DIAGS_MAX, and only when one was taken in. */
		d->largest = 0;
		for (size_t i = 1; i < d->n; i++)
			if (compare_diag_key(d->items[i].pos, d->items[i].seq, &d->items[d->largest]) > 0)
				d->largest = i;
	}
	return g;
}

bool cgf_diags_would_hold(const struct cgf_diags *d, struct cgf_pos pos) {
	return d->n < CGF_DIAGS_MAX || compare_diag_key(pos, d->n_added, &d->items[d->largest]) < 0;
}

void cgf_diags_addv(struct cgf_diags *d, enum cgf_severity severity, struct cgf_pos pos,
		    const char *format, va_list ap) {
	(void) diags_append(d, severity, pos, format, ap);
}

void cgf_diags_add(struct cgf_diags *d, enum cgf_severity severity, struct cgf_pos pos,
		   const char *format, ...) {
	va_list ap;

	va_start(ap, format);
	cgf_diags_addv(d, severity, pos, format, ap);
	va_end(ap);
}

void cgf_diags_add_file(struct cgf_diags *d, enum cgf_severity severity, const char *file,
			const char *format, ...) {
	struct cgf_diag *g;
	va_list ap;

	va_start(ap, format);
	g = diags_append(d, severity, (struct cgf_pos) {}, format, ap);
	va_end(ap);
	if (!g)
		return;
	if (file) {
		g->file = strdup(file);
		if (!g->file)
			d->oom = true;
	}
}

void cgf_diags_note(struct cgf_diags *d, struct cgf_pos pos, const char *format, ...) {
	struct cgf_diag *g;
	struct cgf_note *n;
	char *message;
	va_list ap;
	int r;

	if (d->last == 0)
		return; /* nothing added, or not held */
	g = &d->items[d->last - 1];

	va_start(ap, format);
	r = vasprintf(&message, format, ap);
	va_end(ap);
	if (r < 0) {
		d->oom = true;
		return;
	}
	n = array_append((void **) &g->notes, g->n_notes, sizeof(*g->notes));
	if (!n) {
		free(message);
		d->oom = true;
		return;
	}
	n->pos = pos;
	n->message = message;
	g->n_notes++;
}

int cgf_diags_status(const struct cgf_diags *d) {
	return d->oom ? -ENOMEM : 0;
}

static int compare_diags(const void *a, const void *b) {
	const struct cgf_diag *x = a, *y = b;
	int r = cgf_pos_compare(x->pos, y->pos);

	if (r != 0)
		return r;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void cgf_diags_sort(struct cgf_diags *d) {
	qsort_safe(d->items, d->n, sizeof(*d->items), compare_diags);
	/* The indexes into the list moved with its elements. */
	d->largest = d->n > 0 ? d->n - 1 : 0;
	if (d->last > 0)
		for (size_t i = 0; i < d->n; i++)
			if (d->items[i].seq + 1 == d->n_added)
				d->last = i + 1;
}

static const char *severity_name(enum cgf_severity s) {
	switch (s) {
	case CGF_ERROR:
		return "error";
	case CGF_WARNING:
		return "warning";
	case CGF_NOTE:
		return "note";
	}
	return "unknown";
}

/* Writes s escaped (escape.h): a policy file, possibly untrusted, must not
 * drive the terminal or break a line of the log.  With keep_tab, tabs stay
 * tabs, for the caret line to repeat them. */
static void put_sanitized(FILE *f, const char *s, size_t n, bool keep_tab) {
	const char *tab;

	while (keep_tab && (tab = memchr(s, '\t', n))) {
		cgf_escape_write(f, s, tab - s);
		fputc('\t', f);
		n -= tab + 1 - s;
		s = tab + 1;
	}
	cgf_escape_write(f, s, n);
}

/* Columns count characters, as libyaml does: a UTF-8 sequence is one. */
static bool is_continuation(unsigned char c) {
	return (c & 0xc0) == 0x80;
}

/* The byte offset of column col (1-based) in line, or len past its end. */
static size_t column_offset(const char *line, size_t len, unsigned col) {
	size_t i = 0;

	for (unsigned c = 1; c < col && i < len; c++)
		for (i++; i < len && is_continuation(line[i]); i++)
			;
	return i;
}

static unsigned count_columns(const char *s, size_t n) {
	unsigned cols = 0;

	for (size_t i = 0; i < n; i++)
		cols += !is_continuation(s[i]);
	return cols;
}

/*
 * The line, or on a line longer than CGF_EXCERPT_MAX columns a window of
 * that many around the position with "..." where it was cut, and a caret
 * under the position.  Tabs are kept in both lines so that the terminal
 * expands them the same way.
 */
static void render_excerpt(FILE *f, struct cgf_pos pos, const char *line, size_t len) {
	unsigned first = 1, last, width = pos.width ?: 1;
	size_t from = 0, to = len;

	if (len > CGF_EXCERPT_MAX) {
		size_t back = len;

		/* A third of the window before the position, the rest after;
		 * near the end of the line, the last CGF_EXCERPT_MAX columns.
		 * Only the bytes up to the window are walked. */
		if (pos.column > CGF_EXCERPT_MAX / 3)
			first = pos.column - CGF_EXCERPT_MAX / 3;
		from = column_offset(line, len, first);
		to = from + column_offset(line + from, len - from, CGF_EXCERPT_MAX + 1);
		if (to == len) {
			for (unsigned n = 0; back > 0 && n < CGF_EXCERPT_MAX;)
				n += !is_continuation(line[--back]);
			if (back < from) {
				first -= count_columns(line + back, from - back);
				from = back;
			}
		}
	}
	last = first + count_columns(line + from, to - from); /* one past the columns shown */

	if (from > 0)
		fputs("...", f);
	put_sanitized(f, line + from, to - from, true);
	if (to < len)
		fputs("...", f);
	fputc('\n', f);

	if (from > 0)
		fputs("   ", f);
	/* Under each character as wide as it is shown ("\x1b" takes four);
	 * tabs stay tabs, for the terminal to expand them alike. */
	unsigned col = first;
	for (size_t i = from; i < to && col < pos.column; col++) {
		char shown[CGF_ESCAPE_CHAR_MAX];
		size_t columns;

		if (line[i] == '\t') {
			fputc('\t', f);
			i++;
			continue;
		}
		i += cgf_escape_char(line + i, to - i, shown, &columns);
		fprintf(f, "%*s", (int) columns, "");
	}
	for (; col < pos.column; col++)
		fputc(' ', f);
	fputc('^', f);
	/* The span stops where the excerpt does. */
	if (to < len && pos.column < last && width > last - pos.column)
		width = last - pos.column;
	for (unsigned w = 1; w < width; w++)
		fputc('~', f);
	fputc('\n', f);
}

static void render_one(FILE *f, enum cgf_severity severity, struct cgf_pos pos, const char *file,
		       const char *message, unsigned flags) {
	const char *line;
	size_t len;

	if (cgf_pos_is_set(pos)) {
		put_sanitized(f, pos.source->name, strlen(pos.source->name), false);
		fprintf(f, ":%u:%u: ", pos.line, pos.column);
	} else if (file) {
		put_sanitized(f, file, strlen(file), false);
		fputs(": ", f);
	}
	fprintf(f, "%s: ", severity_name(severity));
	put_sanitized(f, message, strlen(message), false);
	fputc('\n', f);

	if ((flags & CGF_RENDER_SOURCE) && cgf_pos_is_set(pos) && cgf_source_line(pos.source, pos.line, &line, &len))
		render_excerpt(f, pos, line, len);
}

/* What the list counted but does not hold. */
static void render_rest(FILE *f, const struct cgf_diags *d) {
	size_t errors = d->n_errors, warnings = d->n_warnings;

	for (size_t i = 0; i < d->n; i++) {
		errors -= d->items[i].severity == CGF_ERROR;
		warnings -= d->items[i].severity == CGF_WARNING;
	}
	if (errors == 0 && warnings == 0)
		return;
	fputs("... and ", f);
	if (errors > 0)
		fprintf(f, "%zu more error%s", errors, errors == 1 ? "" : "s");
	if (errors > 0 && warnings > 0)
		fputs(" and ", f);
	if (warnings > 0)
		fprintf(f, "%zu more warning%s", warnings, warnings == 1 ? "" : "s");
	fputc('\n', f);
}

int cgf_diags_render_string(const struct cgf_diags *d, unsigned flags, char **ret) {
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	FILE *f;

	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++) {
		const struct cgf_diag *g = &d->items[i];

		render_one(f, g->severity, g->pos, g->file, g->message, flags);
		for (size_t j = 0; j < g->n_notes; j++)
			render_one(f, CGF_NOTE, g->notes[j].pos, NULL, g->notes[j].message, flags);
	}
	render_rest(f, d);
	if (fclose(f) != 0 || !buf)
		return -ENOMEM;
	*ret = TAKE_PTR(buf);
	return 0;
}

int cgf_diags_render(const struct cgf_diags *d, FILE *f, unsigned flags) {
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	/* Built first, written at once: stderr is unbuffered, and a write()
	 * per character made a long report take seconds. */
	r = cgf_diags_render_string(d, flags, &text);
	if (r < 0)
		return r;
	len = strlen(text);
	if ((len > 0 && fwrite(text, 1, len, f) != len) || fflush(f) != 0 || ferror(f))
		return errno > 0 ? -errno : -EIO;
	return 0;
}
