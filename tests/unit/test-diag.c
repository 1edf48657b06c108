/* SPDX-License-Identifier: GPL-2.0-only */
/* Diagnostics: recording, sorting and the nftables-style rendering. */
#include "diag.h"
#include "tests.h"

static struct cgf_pos at(const struct cgf_source *s, unsigned line, unsigned column, unsigned width) {
	return (struct cgf_pos) { .source = s, .line = line, .column = column, .width = width };
}

static void test_render(struct test_state *t) {
	_cleanup_(cgf_source_freep) struct cgf_source *a = NULL, *b = NULL;
	struct cgf_diags d = CGF_DIAGS_INIT;
	_cleanup_free_ char *out = NULL, *brief = NULL;
	static const char text_a[] =
		"version: 1\r\n"
		"filters:\n"
		"\tweb: {type: rules}\n"   /* a tab before the column */
		"  caf\xc3\xa9: x\n"       /* UTF-8: é is one column */
		"  evil: \"\x1b[31m\"\n";  /* a control character */
	static const char text_b[] = "version: 1\nattachments: []";

	a = cgf_source_new("a.yaml", text_a, sizeof(text_a) - 1);
	b = cgf_source_new("b.yaml", text_b, sizeof(text_b) - 1);
	REQUIRE(a && b);
	a->index = 0;
	b->index = 1;

	/* Added out of order on purpose: rendering follows the sort. */
	cgf_diags_add(&d, CGF_ERROR, at(b, 2, 14, 2), "in the second file, on the last line without newline");
	cgf_diags_add(&d, CGF_WARNING, at(a, 3, 8, 5), "after a tab");
	cgf_diags_note(&d, at(a, 1, 1, 7), "a note, with %s", "formatting");
	cgf_diags_add(&d, CGF_ERROR, at(a, 4, 8, 1), "after a two-byte character");
	cgf_diags_add(&d, CGF_ERROR, at(a, 5, 9, 1), "a control \x1b character in the message");
	cgf_diags_add(&d, CGF_ERROR, at(a, 9, 1, 1), "a line that does not exist");
	cgf_diags_add_file(&d, CGF_ERROR, "c.yaml", "about the whole file");
	cgf_diags_add(&d, CGF_ERROR, at(a, 1, 12, 1), "past the end of the line");
	REQUIRE(cgf_diags_status(&d) == 0);
	CHECK(t, d.n == 7 && d.n_errors == 6 && d.n_warnings == 1, "counts %zu %zu %zu", d.n, d.n_errors,
	      d.n_warnings);

	cgf_diags_sort(&d);
	REQUIRE(cgf_diags_render_string(&d, CGF_RENDER_SOURCE, &out) == 0);
	CHECK_STREQ(t, out,
		    "c.yaml: error: about the whole file\n"
		    "a.yaml:1:12: error: past the end of the line\n"
		    "version: 1\n"
		    "           ^\n"
		    "a.yaml:3:8: warning: after a tab\n"
		    "\tweb: {type: rules}\n"
		    "\t      ^~~~~\n"
		    "a.yaml:1:1: note: a note, with formatting\n"
		    "version: 1\n"
		    "^~~~~~~\n"
		    "a.yaml:4:8: error: after a two-byte character\n"
		    "  caf\xc3\xa9: x\n"
		    "       ^\n"
		    "a.yaml:5:9: error: a control \\x1b character in the message\n"
		    "  evil: \"\\x1b[31m\"\n"
		    "        ^\n"
		    "a.yaml:9:1: error: a line that does not exist\n"
		    "b.yaml:2:14: error: in the second file, on the last line without newline\n"
		    "attachments: []\n"
		    "             ^~\n",
		    "rendered with source");

	REQUIRE(cgf_diags_render_string(&d, 0, &brief) == 0);
	CHECK_STREQ(t, brief,
		    "c.yaml: error: about the whole file\n"
		    "a.yaml:1:12: error: past the end of the line\n"
		    "a.yaml:3:8: warning: after a tab\n"
		    "a.yaml:1:1: note: a note, with formatting\n"
		    "a.yaml:4:8: error: after a two-byte character\n"
		    "a.yaml:5:9: error: a control \\x1b character in the message\n"
		    "a.yaml:9:1: error: a line that does not exist\n"
		    "b.yaml:2:14: error: in the second file, on the last line without newline\n",
		    "rendered without source");
	cgf_diags_done(&d);
	CHECK(t, d.n == 0 && !d.items, "done resets");
	cgf_diags_done(&d); /* twice is fine */
}

static void test_lines(struct test_state *t) {
	_cleanup_(cgf_source_freep) struct cgf_source *s = NULL, *empty = NULL;
	const char *line;
	size_t len;

	s = cgf_source_new("x", "one\ntwo\r\n\nfour", strlen("one\ntwo\r\n\nfour"));
	REQUIRE(s);
	CHECK(t, cgf_source_line(s, 1, &line, &len) && len == 3 && !strncmp(line, "one", 3), "line 1");
	CHECK(t, cgf_source_line(s, 2, &line, &len) && len == 3 && !strncmp(line, "two", 3), "line 2, CR LF");
	CHECK(t, cgf_source_line(s, 3, &line, &len) && len == 0, "line 3 empty");
	CHECK(t, cgf_source_line(s, 4, &line, &len) && len == 4 && !strncmp(line, "four", 4), "line 4");
	CHECK(t, !cgf_source_line(s, 5, &line, &len), "no line 5");
	CHECK(t, !cgf_source_line(s, 0, &line, &len), "no line 0");

	empty = cgf_source_new("e", NULL, 0);
	REQUIRE(empty);
	CHECK(t, cgf_source_line(empty, 1, &line, &len) && len == 0, "an empty file has an empty line 1");
	CHECK(t, cgf_source_free(NULL) == NULL, "NULL-safe destructor");
}

static void test_note_without_diag(struct test_state *t) {
	struct cgf_diags d = CGF_DIAGS_INIT;

	cgf_diags_note(&d, (struct cgf_pos) {}, "dropped: nothing to attach to");
	CHECK(t, d.n == 0 && cgf_diags_status(&d) == 0, "a note needs a diagnostic");
	cgf_diags_done(&d);
}

/* The list holds the CGF_DIAGS_MAX that sort first, with their notes, and
 * counts the rest; the rendering says how many it left out. */
static void test_cap(struct test_state *t) {
	_cleanup_(cgf_source_freep) struct cgf_source *s = NULL;
	_cleanup_free_ char *text = NULL, *out = NULL, *want = NULL;
	struct cgf_diags d = CGF_DIAGS_INIT;
	size_t size = 0, n_lines = 0;
	FILE *f;

	f = open_memstream(&text, &size);
	REQUIRE(f);
	for (unsigned i = 1; i <= 200; i++)
		fprintf(f, "line %u\n", i);
	REQUIRE(fclose(f) == 0);
	s = cgf_source_new("big.yaml", text, size);
	REQUIRE(s);

	/* Backwards, so that each one added sorts before all held: every
	 * add replaces the last; then some that sort after and are only
	 * counted, and their notes dropped with them. */
	for (unsigned i = 120; i >= 1; i--) {
		cgf_diags_add(&d, CGF_ERROR, at(s, i, 1, 4), "error on line %u", i);
		cgf_diags_note(&d, at(s, i + 1, 1, 1), "note of line %u", i);
	}
	for (unsigned i = 130; i < 133; i++) {
		cgf_diags_add(&d, CGF_WARNING, at(s, i, 1, 1), "warning on line %u", i);
		cgf_diags_note(&d, at(s, i, 1, 1), "a note that is dropped");
	}
	cgf_diags_add(&d, CGF_ERROR, at(s, 50, 1, 1), "a second one on line 50, added last");
	REQUIRE(cgf_diags_status(&d) == 0);
	CHECK(t, d.n == CGF_DIAGS_MAX && d.n_errors == 121 && d.n_warnings == 3, "held %zu, counted %zu %zu", d.n,
	      d.n_errors, d.n_warnings);

	cgf_diags_sort(&d);
	REQUIRE(cgf_diags_render_string(&d, 0, &out) == 0);
	f = open_memstream(&want, &size);
	REQUIRE(f);
	for (unsigned i = 1; i <= 49; i++)
		fprintf(f, "big.yaml:%u:1: error: error on line %u\nbig.yaml:%u:1: note: note of line %u\n", i, i,
			i + 1, i);
	fprintf(f, "big.yaml:50:1: error: error on line 50\nbig.yaml:51:1: note: note of line 50\n");
	fprintf(f, "... and 71 more errors and 3 more warnings\n");
	REQUIRE(fclose(f) == 0);
	CHECK_STREQ(t, out, want, "the first 50 by position, then the count");

	/* A note after the sort still goes to the last one added. */
	cgf_diags_note(&d, at(s, 1, 1, 1), "late note");
	free(out);
	REQUIRE(cgf_diags_render_string(&d, 0, &out) == 0);
	for (const char *p = out; (p = strchr(p, '\n')); p++)
		n_lines++;
	CHECK(t, strstr(out, "big.yaml:50:1: error: a second one on line 50") == NULL,
	      "the one added last sorts after the 50 held");
	CHECK(t, n_lines == 101, "late note dropped with its diagnostic: %zu lines", n_lines);
	cgf_diags_done(&d);

	/* Exactly one error and one warning more: singular. */
	for (unsigned i = 1; i <= CGF_DIAGS_MAX + 1; i++)
		cgf_diags_add(&d, CGF_ERROR, at(s, i, 1, 1), "e");
	cgf_diags_add(&d, CGF_WARNING, at(s, 199, 1, 1), "w");
	free(out);
	REQUIRE(cgf_diags_render_string(&d, 0, &out) == 0);
	CHECK(t, strstr(out, "\n... and 1 more error and 1 more warning\n"), "singular: %s", strrchr(out, '.'));
	cgf_diags_done(&d);

	/* Equal positions keep the order of adding, past the cap too. */
	for (unsigned i = 0; i < 2 * CGF_DIAGS_MAX; i++)
		cgf_diags_add(&d, CGF_ERROR, at(s, 7, 1, 1), "same place %u", i);
	cgf_diags_sort(&d);
	CHECK(t, streq(d.items[0].message, "same place 0") && streq(d.items[CGF_DIAGS_MAX - 1].message, "same place 49"),
	      "stable: %s .. %s", d.items[0].message, d.items[CGF_DIAGS_MAX - 1].message);
	cgf_diags_done(&d);
}

/* The caret line of an excerpt: the column of '^' in characters. */
static void split_excerpt(const char *out, const char **ret_line, size_t *ret_len, size_t *ret_caret,
			  size_t *ret_tildes) {
	const char *line = strchr(out, '\n') + 1, *caret = strchr(line, '\n') + 1;
	const char *hat = strchr(caret, '^');

	*ret_line = line;
	*ret_len = strchr(line, '\n') - line;
	*ret_caret = hat - caret;
	*ret_tildes = strspn(hat + 1, "~");
}

static void test_excerpt_width(struct test_state *t) {
	_cleanup_(cgf_source_freep) struct cgf_source *s = NULL;
	_cleanup_free_ char *text = NULL;
	struct {
		unsigned column, width;
		bool cut_left, cut_right;
		char at; /* the character under the caret */
	} cases[] = {
		{ 3, 2, false, true, 'c' },       /* near the start */
		{ 2000, 5, true, true, 'x' },     /* the middle: a window around it */
		{ 2000, 500, true, true, 'x' },   /* a span longer than the window */
		{ 3999, 1, true, false, 'z' },    /* near the end */
		{ 4001, 1, true, false, 0 },      /* past the end */
	};
	size_t n = 4000;

	/* 4000 columns: "abcd" then 'y' with a UTF-8 'é' (two bytes, one
	 * column) every 10 columns, 'x' at 2000, 'z' at 3999. */
	text = malloc(2 * n + 1);
	REQUIRE(text);
	size_t len = 0;
	for (unsigned col = 1; col <= n; col++) {
		if (col <= 4)
			text[len++] = "abcd"[col - 1];
		else if (col == 2000)
			text[len++] = 'x';
		else if (col == 3999)
			text[len++] = 'z';
		else if (col % 10 == 0) {
			text[len++] = (char) 0xc3;
			text[len++] = (char) 0xa9;
		} else
			text[len++] = 'y';
	}
	s = cgf_source_new("long.yaml", text, len);
	REQUIRE(s);

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct cgf_diags d = CGF_DIAGS_INIT;
		_cleanup_free_ char *out = NULL;
		const char *line;
		size_t line_len, caret, tildes, cols = 0, byte = 0;

		cgf_diags_add(&d, CGF_ERROR, at(s, 1, cases[i].column, cases[i].width), "here");
		REQUIRE(cgf_diags_render_string(&d, CGF_RENDER_SOURCE, &out) == 0);
		split_excerpt(out, &line, &line_len, &caret, &tildes);

		for (size_t b = 0; b < line_len; b++)
			cols += ((unsigned char) line[b] & 0xc0) != 0x80;
		CHECK(t, cols <= CGF_EXCERPT_MAX + 6, "case %zu: %zu columns shown", i, cols);
		CHECK(t, (strncmp(line, "...", 3) == 0) == cases[i].cut_left, "case %zu: cut on the left", i);
		CHECK(t, (line_len >= 3 && strncmp(line + line_len - 3, "...", 3) == 0) == cases[i].cut_right,
		      "case %zu: cut on the right", i);
		/* The character above the caret, counted in columns. */
		for (size_t c = 0; c < caret && byte < line_len; c++)
			for (byte++; byte < line_len && ((unsigned char) line[byte] & 0xc0) == 0x80; byte++)
				;
		if (cases[i].at)
			CHECK(t, byte < line_len && line[byte] == cases[i].at, "case %zu: caret under '%c', not '%.1s'",
			      i, cases[i].at, line + byte);
		else
			CHECK(t, byte == line_len, "case %zu: caret past the end", i);
		CHECK(t, caret + 1 + tildes <= cols + 1, "case %zu: span of %zu stays in the excerpt", i, tildes);
		CHECK(t, tildes + 1 == cases[i].width || cases[i].width > CGF_EXCERPT_MAX, "case %zu: span %zu", i,
		      tildes + 1);
		cgf_diags_done(&d);
	}
}

/* Many lines: each found at once, the last one too. */
static void test_many_lines(struct test_state *t) {
	_cleanup_(cgf_source_freep) struct cgf_source *s = NULL;
	_cleanup_free_ char *text = NULL;
	const char *line;
	size_t size = 0, len;
	FILE *f;

	f = open_memstream(&text, &size);
	REQUIRE(f);
	for (unsigned i = 1; i <= 100000; i++)
		fprintf(f, "%u\n", i);
	REQUIRE(fclose(f) == 0);
	s = cgf_source_new("lines", text, size);
	REQUIRE(s);
	CHECK(t, s->n_lines == 100001, "%zu lines", s->n_lines);
	CHECK(t, cgf_source_line(s, 99999, &line, &len) && len == 5 && !strncmp(line, "99999", 5), "line 99999");
	CHECK(t, cgf_source_line(s, 100001, &line, &len) && len == 0, "after the final newline");
	CHECK(t, !cgf_source_line(s, 100002, &line, &len), "no line 100002");
}

/* A FILE that counts the write() calls it gets, as unbuffered stderr would. */
static ssize_t count_write(void *cookie, const char *buf, size_t size) {
	(void) buf;
	(*(unsigned *) cookie)++;
	return (ssize_t) size;
}

static void test_one_write(struct test_state *t) {
	_cleanup_(cgf_source_freep) struct cgf_source *s = NULL;
	struct cgf_diags d = CGF_DIAGS_INIT;
	unsigned writes = 0;
	FILE *f;

	s = cgf_source_new("w.yaml", "filters: [a, b, c]\n", 19);
	REQUIRE(s);
	for (unsigned c = 11; c <= 17; c += 3)
		cgf_diags_add(&d, CGF_ERROR, at(s, 1, c, 1), "unknown filter");
	f = fopencookie(&writes, "w", (cookie_io_functions_t) { .write = count_write });
	REQUIRE(f);
	REQUIRE(setvbuf(f, NULL, _IONBF, 0) == 0);
	CHECK(t, cgf_diags_render(&d, f, CGF_RENDER_SOURCE) == 0, "rendered");
	CHECK(t, writes == 1, "%u writes to an unbuffered stream", writes);
	fclose(f);
	cgf_diags_done(&d);
}

int main(void) {
	struct test_state t = {};

	test_render(&t);
	test_lines(&t);
	test_note_without_diag(&t);
	test_cap(&t);
	test_excerpt_width(&t);
	test_many_lines(&t);
	test_one_write(&t);
	return test_finish(&t, "diag");
}
