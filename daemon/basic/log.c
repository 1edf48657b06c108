/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdarg.h>
#include <sys/stat.h>

#include "escape.h"
#include "log.h"

/* systemd sets JOURNAL_STREAM to the device and inode of the stream it
 * connected stderr to; a child whose stderr went elsewhere inherits the
 * variable, so compare (as systemd's own log code does). */
static bool to_journal(void) {
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

bool cgf_log_wanted(int priority) {
	return priority < LOG_DEBUG || getenv("CGF_DEBUG") != NULL;
}

/*
 * Longest line written, escaped.  journald cuts a longer line at LineMax=
 * (48K by default) and reads a priority prefix at the start of each piece:
 * a cgroup name placed at the cut would choose the priority of the rest.
 * So we cut first, at a character boundary, and each piece gets our
 * prefix (safe as long as LineMax= is not set below 2 KiB).
 */
#define LOG_LINE_MAX 2048

static void put_line(int priority, bool journal, const char *line, size_t len) {
	/* One fprintf(): one write() on the unbuffered stderr, so that lines
	 * of several processes sharing it do not interleave. */
	if (journal)
		fprintf(stderr, "<%d>%.*s\n", priority, (int) len, line);
	else
		fprintf(stderr, "%.*s\n", (int) len, line);
}

/*
 * Every line of the log passes here, escaped (escape.h) as a whole: a
 * newline or "<0>" inside a cgroup name can neither end the entry nor
 * choose a priority, and no call site has to remember to escape its
 * arguments.  Text escaped already (the plan's lines, rendered
 * diagnostics) passes unchanged, as escaping is idempotent.
 */
static void write_escaped(int priority, const char *s, size_t n) {
	char line[LOG_LINE_MAX + CGF_ESCAPE_CHAR_MAX];
	bool journal = to_journal();
	size_t len = 0;

	for (size_t i = 0; i < n;) {
		char shown[CGF_ESCAPE_CHAR_MAX];
		size_t k;

		i += cgf_escape_char(s + i, n - i, shown, NULL);
		k = strlen(shown);
		if (len + k > LOG_LINE_MAX) {
			put_line(priority, journal, line, len);
			len = 0;
		}
		memcpy(line + len, shown, k);
		len += k;
	}
	put_line(priority, journal, line, len);
}

void cgf_log(int priority, const char *format, ...) {
	_cleanup_free_ char *message = NULL;
	va_list ap;
	int k;

	if (!cgf_log_wanted(priority))
		return;
	va_start(ap, format);
	k = vasprintf(&message, format, ap);
	va_end(ap);
	if (k < 0) {
		static const char oom[] = "(out of memory formatting a log message)";

		message = NULL; /* undefined after a failure */
		write_escaped(priority, oom, sizeof(oom) - 1);
		return;
	}
	write_escaped(priority, message, (size_t) k);
}

void cgf_log_text(int priority, const char *text) {
	const char *line = text, *end;

	if (!cgf_log_wanted(priority))
		return;
	for (; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		write_escaped(priority, line, (size_t) (end - line));
	}
}
