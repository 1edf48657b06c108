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

int main(void) {
	struct test_state t = {};

	test_render(&t);
	test_lines(&t);
	test_note_without_diag(&t);
	return test_finish(&t, "diag");
}
