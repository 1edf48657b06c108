/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdarg.h>

#include "diag.h"
#include "escape.h"

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
	return s;
}

struct cgf_source *cgf_source_free(struct cgf_source *s) {
	if (!s)
		return NULL;
	free(s->name);
	free(s->text);
	free(s);
	return NULL;
}

bool cgf_source_line(const struct cgf_source *s, unsigned line, const char **ret_start, size_t *ret_len) {
	const char *p, *end, *eol;

	if (!s || line == 0)
		return false;

	p = s->text;
	end = s->text + s->size;
	for (unsigned l = 1; l < line; l++) {
		p = memchr(p, '\n', end - p);
		if (!p)
			return false;
		p++;
	}
	/* A position on the line after a final newline still names a line:
	 * libyaml puts end-of-stream errors there. */
	eol = memchr(p, '\n', end - p) ?: end;
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

static struct cgf_diag *diags_append(struct cgf_diags *d, enum cgf_severity severity,
				     const char *format, va_list ap) {
	struct cgf_diag *g;
	char *message;

	if (vasprintf(&message, format, ap) < 0) {
		d->oom = true;
		return NULL;
	}
	g = array_append((void **) &d->items, d->n, sizeof(*d->items));
	if (!g) {
		free(message);
		d->oom = true;
		return NULL;
	}
	g->severity = severity;
	g->message = message;
	d->n++;
	if (severity == CGF_ERROR)
		d->n_errors++;
	else if (severity == CGF_WARNING)
		d->n_warnings++;
	return g;
}

void cgf_diags_addv(struct cgf_diags *d, enum cgf_severity severity, struct cgf_pos pos,
		    const char *format, va_list ap) {
	struct cgf_diag *g;

	g = diags_append(d, severity, format, ap);
	if (g)
		g->pos = pos;
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
	g = diags_append(d, severity, format, ap);
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

	if (d->n == 0)
		return;
	g = &d->items[d->n - 1];

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

void cgf_diags_sort(struct cgf_diags *d) {
	/* Insertion sort: stable, and the lists are short and mostly sorted. */
	for (size_t i = 1; i < d->n; i++) {
		struct cgf_diag g = d->items[i];
		size_t j = i;

		while (j > 0 && cgf_pos_compare(d->items[j - 1].pos, g.pos) > 0) {
			d->items[j] = d->items[j - 1];
			j--;
		}
		d->items[j] = g;
	}
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

	if (!(flags & CGF_RENDER_SOURCE) || !cgf_pos_is_set(pos) ||
	    !cgf_source_line(pos.source, pos.line, &line, &len))
		return;

	put_sanitized(f, line, len, true);
	fputc('\n', f);

	/* The caret goes under the column-th character: keep tabs so that the
	 * terminal expands them the same way in both lines, and count UTF-8
	 * sequences as one character, as libyaml does. */
	unsigned col = 1;
	for (size_t i = 0; i < len && col < pos.column; col++) {
		char shown[CGF_ESCAPE_CHAR_MAX];
		size_t columns;

		if (line[i] == '\t') {
			fputc('\t', f);
			i++;
			continue;
		}
		/* As wide as the character is shown: "\x1b" takes four. */
		i += cgf_escape_char(line + i, len - i, shown, &columns);
		fprintf(f, "%*s", (int) columns, "");
	}
	for (; col < pos.column; col++)
		fputc(' ', f);
	fputc('^', f);
	for (unsigned w = 1; w < pos.width; w++)
		fputc('~', f);
	fputc('\n', f);
}

int cgf_diags_render(const struct cgf_diags *d, FILE *f, unsigned flags) {
	for (size_t i = 0; i < d->n; i++) {
		const struct cgf_diag *g = &d->items[i];

		render_one(f, g->severity, g->pos, g->file, g->message, flags);
		for (size_t j = 0; j < g->n_notes; j++)
			render_one(f, CGF_NOTE, g->notes[j].pos, NULL, g->notes[j].message, flags);
	}
	if (fflush(f) != 0 || ferror(f))
		return errno > 0 ? -errno : -EIO;
	return 0;
}

int cgf_diags_render_string(const struct cgf_diags *d, unsigned flags, char **ret) {
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	FILE *f;
	int r;

	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	r = cgf_diags_render(d, f, flags);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0)
		return r;
	*ret = TAKE_PTR(buf);
	return 0;
}
