/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Safe names in output: the escaping function itself, and every renderer a
 * hostile name reaches (the log line, the plan text, the status table and
 * its JSON, diagnostics), fed a cgroup named with a newline, "<0>", CR,
 * ESC, a C1 CSI, a bidi override and bytes that are not UTF-8.  What each
 * must give: no byte a terminal or journald acts on, one line per record,
 * and in the log one entry per message at the message's priority.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "diag.h"
#include "escape.h"
#include "json.h"
#include "log.h"
#include "plan.h"
#include "state.h"
#include "status.h"
#include "tests.h"

/* Everything an attacker with a delegated cgroup could put in a name. */
#define HOSTILE "x\n<0>forged\r\x1b[31m\xc2\x9b" "2J\xe2\x80\xae" "evil\xff\xc3"
#define HOSTILE_SHOWN "x\\x0a<0>forged\\x0d\\x1b[31m\\xc2\\x9b2J\\xe2\\x80\\xaeevil\\xff\\xc3"

/* Does s hold a byte that a terminal or journald would act on?  Newline
 * only where allow_newline, tab only where allow_tab; C1 controls and
 * bytes that are not UTF-8 count too. */
static bool has_control(const char *s, size_t n, bool allow_newline, bool allow_tab) {
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = cgf_utf8_length(s + i, n - i);

		if (len == 0)
			return true;
		if (len == 2 && c == 0xc2 && (unsigned char) s[i + 1] <= 0x9f)
			return true;
		if (len == 1 && (c < 0x20 || c == 0x7f) && !(c == '\n' && allow_newline) && !(c == '\t' && allow_tab))
			return true;
		i += len;
	}
	return false;
}

static size_t count_lines(const char *s) {
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ---- the function -------------------------------------------------------- */

static void check_escape(struct test_state *t, const char *in, size_t n, const char *want, const char *what) {
	_cleanup_free_ char *got = cgf_escape_mem(in, n), *again = NULL, *written = NULL;
	size_t size = 0;
	FILE *f;

	REQUIRE(got);
	CHECK_STREQ(t, got, want, what);
	/* Idempotent: what it shows has nothing left to escape. */
	again = cgf_escape(got);
	REQUIRE(again);
	CHECK_STREQ(t, again, got, what);
	/* The writer shows the same. */
	f = open_memstream(&written, &size);
	REQUIRE(f);
	cgf_escape_write(f, in, n);
	REQUIRE(fclose(f) == 0);
	CHECK_STREQ(t, written, want, what);
}

/* A literal, NUL included when it holds one. */
#define CHECK_ESCAPE(t, literal, want, what) check_escape(t, literal, sizeof(literal) - 1, want, what)

static void test_function(struct test_state *t) {
	/* The checker below can fail: raw, the name is full of controls. */
	CHECK(t, has_control(HOSTILE, strlen(HOSTILE), true, true), "the hostile name has controls");
	CHECK(t, has_control("\xc2\x9b", 2, true, true) && has_control("a\tb", 3, true, false) &&
	      has_control("\xff", 1, true, true) && !has_control("caf\xc3\xa9\n", 6, true, false),
	      "the checker sees C1, tab, non-UTF-8; passes UTF-8 and newline");

	CHECK_ESCAPE(t, "", "", "empty");
	CHECK_ESCAPE(t, "web.slice/c1", "web.slice/c1", "plain ASCII passes");
	CHECK_ESCAPE(t, "x\n<0>forged", "x\\x0a<0>forged", "newline; <0> itself is printable");
	CHECK_ESCAPE(t, "a\rb\tc\x1b[31md\x7f", "a\\x0db\\x09c\\x1b[31md\\x7f", "CR, tab, ESC, DEL");
	CHECK_ESCAPE(t, "a\0b", "a\\x00b", "NUL, with an explicit length");
	CHECK_ESCAPE(t, "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x90\xa7", "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x90\xa7",
		     "valid UTF-8 (2, 3, 4 bytes) passes");
	CHECK_ESCAPE(t, "\xc2\x85\xc2\x9b\xc2\xa0", "\\xc2\\x85\\xc2\\x9b\xc2\xa0",
		     "C1 controls (NEL, CSI) escaped, U+00A0 kept");
	CHECK_ESCAPE(t, "a\xe2\x80\xae" "b\xe2\x81\xa6" "c\xe2\x80\xa8" "d\xe2\x80\xaf",
		     "a\\xe2\\x80\\xaeb\\xe2\\x81\\xa6c\\xe2\\x80\\xa8d\xe2\x80\xaf",
		     "RLO, LRI, LINE SEPARATOR escaped; U+202F kept");
	CHECK_ESCAPE(t, "\xff\xfe", "\\xff\\xfe", "bytes never in UTF-8");
	CHECK_ESCAPE(t, "\xc3", "\\xc3", "a sequence cut short at the end");
	CHECK_ESCAPE(t, "\xc3(", "\\xc3(", "a lead byte without its continuation");
	CHECK_ESCAPE(t, "\x80z", "\\x80z", "a lone continuation byte");
	CHECK_ESCAPE(t, "\xc0\xaf", "\\xc0\\xaf", "overlong '/'");
	CHECK_ESCAPE(t, "\xe0\x80\xaf", "\\xe0\\x80\\xaf", "overlong, 3 bytes");
	CHECK_ESCAPE(t, "\xed\xa0\x80", "\\xed\\xa0\\x80", "a UTF-16 surrogate");
	CHECK_ESCAPE(t, "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "beyond U+10FFFF");
	CHECK_ESCAPE(t, "system-systemd\\x2dfsck.slice", "system-systemd\\x2dfsck.slice",
		     "systemd's own escapes in a cgroup name pass unchanged");
	CHECK_ESCAPE(t, "'q' \"dq\" \\", "'q' \"dq\" \\", "quotes and backslash pass");
	check_escape(t, HOSTILE, strlen(HOSTILE), HOSTILE_SHOWN, "all at once");

	/* Columns, for the caret under a source line. */
	{
		char shown[CGF_ESCAPE_CHAR_MAX];
		size_t columns;

		CHECK(t, cgf_escape_char("\x1b", 1, shown, &columns) == 1 && columns == 4, "ESC: 1 byte, 4 columns");
		CHECK(t, cgf_escape_char("\xc3\xa9", 2, shown, &columns) == 2 && columns == 1, "e-acute: 2 bytes, 1 column");
		CHECK(t, cgf_escape_char("\xe2\x80\xae", 3, shown, &columns) == 3 && columns == 12,
		      "RLO: 3 bytes, 12 columns");
		CHECK(t, cgf_escape_char("\xf0\x9f\x90\xa7", 2, shown, &columns) == 1 && columns == 4,
		      "a 4-byte sequence cut at 2: one byte escaped");
	}
}

/* ---- the log ------------------------------------------------------------- */

struct entry {
	int priority;
	char text[4096];
};

/* Reads a stream the way journald does with level prefixes: one entry per
 * line, its priority from a leading "<N>", else the default (info). */
static size_t parse_journal(const char *out, struct entry *entries, size_t max) {
	size_t n = 0;

	for (const char *line = out, *end; *line; line = end + 1) {
		const char *p = line;

		end = strchrnul(line, '\n');
		REQUIRE(n < max && *end == '\n');
		entries[n].priority = LOG_INFO;
		if (p[0] == '<' && p[1] >= '0' && p[1] <= '7' && p[2] == '>') {
			entries[n].priority = p[1] - '0';
			p += 3;
		}
		REQUIRE((size_t) (end - p) < sizeof(entries[n].text));
		memcpy(entries[n].text, p, end - p);
		entries[n].text[end - p] = 0;
		n++;
	}
	return n;
}

/* Runs f() with stderr on a temporary file, connected "to the journal"
 * (JOURNAL_STREAM names that file) when journal; returns what it wrote. */
static char *capture_stderr(bool journal, void (*f)(void)) {
	_cleanup_close_ int fd = -EBADF, saved = -EBADF;
	char *buf = NULL;
	size_t size = 0;
	struct stat st;
	char stream[64];

	fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(fstat(fd, &st) == 0);
	snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
	saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	REQUIRE(saved >= 0 && dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	REQUIRE(setenv("JOURNAL_STREAM", journal ? stream : "0:0", 1) == 0);
	f();
	REQUIRE(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
	REQUIRE(unsetenv("JOURNAL_STREAM") == 0);
	REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	REQUIRE(read_fd_full(fd, 1 << 20, &buf, &size) == 0);
	buf = realloc(buf, size + 1);
	REQUIRE(buf);
	buf[size] = 0;
	return buf;
}

static void log_hostile_warning(void) {
	log_warning("cgroup '%s' appeared", HOSTILE);
}

static void log_hostile_text(void) {
	/* A text of two lines whose composer forgot to escape a name: the
	 * newline in it starts a third line, but at the text's priority. */
	cgf_log_text(LOG_ERR, "first line about " HOSTILE "\nsecond line\n");
}

static char long_message[3 * 2048 + 100];

static void log_long(void) {
	log_notice("%s", long_message);
}

static void log_debug_hostile(void) {
	log_debug("%s", HOSTILE);
}

static void test_log(struct test_state *t) {
	_cleanup_free_ char *out = NULL, *plain = NULL, *text = NULL, *lng = NULL, *dbg = NULL, *want = NULL;
	static struct entry e[16];
	size_t n, total = 0;

	REQUIRE(unsetenv("CGF_DEBUG") == 0);

	out = capture_stderr(true, log_hostile_warning);
	CHECK(t, !has_control(out, strlen(out), true, false), "a log line without control bytes: %s", out);
	n = parse_journal(out, e, ELEMENTSOF(e));
	CHECK(t, n == 1, "one journal entry, not %zu", n);
	CHECK(t, e[0].priority == LOG_WARNING, "at the message's priority (4), not %d", e[0].priority);
	CHECK_STREQ(t, e[0].text, "cgroup '" HOSTILE_SHOWN "' appeared", "the entry, escaped");

	plain = capture_stderr(false, log_hostile_warning);
	CHECK_STREQ(t, plain, "cgroup '" HOSTILE_SHOWN "' appeared\n", "on a terminal: no prefix, escaped too");

	text = capture_stderr(true, log_hostile_text);
	n = parse_journal(text, e, ELEMENTSOF(e));
	CHECK(t, n == 3 && e[0].priority == LOG_ERR && e[1].priority == LOG_ERR && e[2].priority == LOG_ERR,
	      "a text: one entry per line, each at the text's priority (%zu entries)", n);
	CHECK_STREQ(t, e[1].text, "<0>forged\\x0d\\x1b[31m\\xc2\\x9b2J\\xe2\\x80\\xaeevil\\xff\\xc3",
		    "a text's line escaped; its \"<0>\" is text, not a priority");
	CHECK(t, !has_control(text, strlen(text), true, false), "a text without control bytes");

	/* A line longer than journald's cut (LineMax=) could place "<0>" at
	 * the cut; we cut first, each piece with our prefix. */
	for (size_t i = 0; i + 1 < sizeof(long_message); i++)
		long_message[i] = "\n<0>"[i % 4];
	lng = capture_stderr(true, log_long);
	n = parse_journal(lng, e, ELEMENTSOF(e));
	want = cgf_escape(long_message);
	REQUIRE(want);
	CHECK(t, n >= (strlen(want) + 2047) / 2048 && n > 1, "%zu bytes shown in %zu pieces", strlen(want), n);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(e[i].text);

		CHECK(t, e[i].priority == LOG_NOTICE, "piece %zu at priority %d", i, e[i].priority);
		/* Cut at a character's boundary: full but for its last character. */
		CHECK(t, len <= 2048 && (i + 1 == n || len > 2048 - CGF_ESCAPE_CHAR_MAX), "piece %zu: %zu bytes", i, len);
		CHECK(t, !strncmp(e[i].text, want + total, strlen(e[i].text)), "piece %zu continues the message", i);
		total += strlen(e[i].text);
	}
	CHECK(t, total == strlen(want), "the pieces make the whole message (%zu of %zu)", total, strlen(want));

	dbg = capture_stderr(true, log_debug_hostile);
	CHECK_STREQ(t, dbg, "", "debug only with CGF_DEBUG");
}

/* ---- the plan text ------------------------------------------------------- */

static void test_plan_text(struct test_state *t) {
	_cleanup_(cgf_desired_freep) struct cgf_desired *d = cgf_desired_new();
	_cleanup_(cgf_actual_freep) struct cgf_actual *a = cgf_actual_new();
	_cleanup_(cgf_plan_freep) struct cgf_plan *p = NULL;
	_cleanup_free_ char *text = NULL;
	struct cgf_desired_list *dl;
	struct cgf_actual_list *al;
	struct cgf_features f = CGF_FEATURES_PATCHED;

	REQUIRE(d && a);
	REQUIRE(cgf_desired_add_list(d, HOSTILE, CGF_EGRESS, CGF_MODE_MULTI, &dl) == 0);
	REQUIRE(cgf_desired_list_add_entry(dl, "web", "id1", false, (struct cgf_pos) {}) == 0);
	REQUIRE(cgf_actual_add_list(a, HOSTILE, CGF_EGRESS, CGF_ATTACH_MULTI, 3, &al) == 0);
	/* A foreign program (reported), one of ours the policy dropped (detached). */
	REQUIRE(cgf_actual_list_insert(al, 0, &(struct cgf_actual_entry) { .prog_id = 7, .prog_name = "evil\x1b]0;t\a" }) == 0);
	REQUIRE(cgf_actual_list_insert(al, 1, &(struct cgf_actual_entry) {
		.prog_id = 8, .prog_name = "cgf_old\n<0>x", .ours = true, .filter = "old", .identity = "i" }) == 0);
	cgf_desired_sort(d);
	cgf_actual_sort(a);
	REQUIRE(cgf_plan(d, a, &f, &p) == 0);
	CHECK(t, p->n_actions == 2 && p->n_reports >= 1, "attach, detach and a report (%zu, %zu)", p->n_actions,
	      p->n_reports);
	REQUIRE(cgf_plan_format(p, &text) == 0);
	CHECK(t, !has_control(text, strlen(text), true, false), "plan text without control bytes:\n%s", text);
	CHECK(t, count_lines(text) == p->n_actions + p->n_reports, "one line per action and report:\n%s", text);
	CHECK(t, strstr(text, "#0 attach " HOSTILE_SHOWN " egress web@id1"), "the attach names the cgroup escaped:\n%s",
	      text);
	CHECK(t, strstr(text, "'cgf_old\\x0a<0>x'"), "the detach names the program escaped:\n%s", text);
	CHECK(t, strstr(text, "evil\\x1b]0;t\\x07"), "the report quotes the foreign program escaped:\n%s", text);
}

/* ---- the status table and JSON ------------------------------------------- */

static void test_status(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = cgf_status_new();
	_cleanup_free_ char *table = NULL, *json = NULL;
	struct cgf_features f = CGF_FEATURES_PATCHED;
	struct cgf_status_list *l;
	size_t size = 0;
	FILE *out;

	REQUIRE(s);
	REQUIRE(cgf_status_set_kernel(s, "6.1.0\x1b[2J", &f) == 0);
	REQUIRE(cgf_status_add_list(s, HOSTILE, CGF_INGRESS, CGF_ATTACH_MULTI, 2, &l) == 0);
	REQUIRE(cgf_status_list_add_attached(l, &(struct cgf_status_prog) {
		.prog_id = 10, .prog_name = "cgf_web", .ours = true, .filter = "web\r", .identity = "i" }, NULL) == 0);
	REQUIRE(cgf_status_list_add_attached(l, &(struct cgf_status_prog) {
		.prog_id = 11, .prog_name = "evil\n<0>", .attached_at = HOSTILE "/child\x1b" }, NULL) == 0);
	REQUIRE(cgf_status_list_add_note(l, "foreign program 11 '%s' below %s", "evil\n<0>", HOSTILE) == 0);

	out = open_memstream(&table, &size);
	REQUIRE(out);
	CHECK(t, cgf_status_render_table(s, out) == 0, "table rendered");
	REQUIRE(fclose(out) == 0);
	CHECK(t, !has_control(table, size, true, false), "status table without control bytes:\n%s", table);
	/* kernel, blank, header, the list's line, two programs, the note. */
	CHECK(t, count_lines(table) == 7, "7 lines, not %zu:\n%s", count_lines(table), table);
	CHECK(t, strstr(table, "\n" HOSTILE_SHOWN "  ingress"), "the list's cgroup escaped:\n%s", table);
	CHECK(t, strstr(table, "evil\\x0a<0>"), "the program name escaped:\n%s", table);
	CHECK(t, strstr(table, "ours: web\\x0d"), "the filter escaped:\n%s", table);
	CHECK(t, strstr(table, "kernel 6.1.0\\x1b[2J:"), "the release escaped:\n%s", table);

	size = 0;
	out = open_memstream(&json, &size);
	REQUIRE(out);
	{
		_cleanup_(cgf_json_freep) struct cgf_json *j = NULL;

		REQUIRE(cgf_json_new(out, CGF_JSON_PRETTY, &j) == 0);
		cgf_status_render_json(s, j);
		CHECK(t, cgf_json_finish(j) == 0, "JSON rendered");
	}
	REQUIRE(fclose(out) == 0);
	CHECK(t, !has_control(json, size, true, false), "status JSON without control bytes:\n%s", json);
	CHECK(t, strstr(json, "\"cgroup\": \"x\\n<0>forged\\r\\u001b[31m\\u009b2J\xe2\x80\xae" "evil\\ufffd\\ufffd\""),
	      "JSON escapes per JSON: \\n, \\r, \\u001b, \\u009b, \\ufffd:\n%s", json);
	CHECK(t, strstr(json, "\"release\": \"6.1.0\\u001b[2J\""), "the release in JSON:\n%s", json);
}

/* ---- diagnostics --------------------------------------------------------- */

static void test_diag(struct test_state *t) {
	_cleanup_(cgf_source_freep) struct cgf_source *src = NULL;
	struct cgf_diags d = CGF_DIAGS_INIT;
	_cleanup_free_ char *out = NULL;
	/* Column 20 is the 'b' of "bad": after ESC, a C1, an RLO, a tab and
	 * a byte that is not UTF-8, each shown wider than it is. */
	static const char text[] = "cgroup: \"\x1b[1m\xc2\x9b\xe2\x80\xae\t\xff\" bad\n";

	src = cgf_source_new("p\n<0>.yaml", text, sizeof(text) - 1);
	REQUIRE(src);
	cgf_diags_add(&d, CGF_ERROR, (struct cgf_pos) { .source = src, .line = 1, .column = 20, .width = 3 },
		      "unknown key '%s'", HOSTILE);
	REQUIRE(cgf_diags_render_string(&d, CGF_RENDER_SOURCE, &out) == 0);
	cgf_diags_done(&d);
	CHECK(t, !has_control(out, strlen(out), true, true), "diagnostics without control bytes:\n%s", out);
	CHECK_STREQ(t, out,
		    "p\\x0a<0>.yaml:1:20: error: unknown key '" HOSTILE_SHOWN "'\n"
		    "cgroup: \"\\x1b[1m\\xc2\\x9b\\xe2\\x80\\xae\t\\xff\" bad\n"
		    /* 9 for 'cgroup: "', 4 + 3 for ESC[1m, 8, 12, the tab, 4, 2 for '" '. */
		    "         " "       " "        " "            " "\t" "    " "  " "^~~\n",
		    "source line escaped, the caret under what is shown");
}

int main(void) {
	struct test_state t = {};

	test_function(&t);
	test_log(&t);
	test_plan_text(&t);
	test_status(&t);
	test_diag(&t);
	return test_finish(&t, "test-escape");
}
