/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdarg.h>
#include <sys/stat.h>

#include <bpf/libbpf.h>

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

static bool wanted(int priority) {
	return priority < LOG_DEBUG || getenv("CGF_DEBUG") != NULL;
}

void cgf_log(int priority, const char *format, ...) {
	va_list ap;

	if (!wanted(priority))
		return;
	if (to_journal())
		fprintf(stderr, "<%d>", priority);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cgf_log_text(int priority, const char *text) {
	const char *line = text, *end;

	if (!wanted(priority))
		return;
	for (; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		if (to_journal())
			fprintf(stderr, "<%d>", priority);
		fprintf(stderr, "%.*s\n", (int) (end - line), line);
	}
}

static int libbpf_print(enum libbpf_print_level level, const char *format, va_list ap) {
	int priority = level == LIBBPF_WARN ? LOG_WARNING : LOG_DEBUG;
	_cleanup_free_ char *text = NULL;

	if (!wanted(priority) || vasprintf(&text, format, ap) < 0)
		return 0;
	/* A verifier log is one message of many lines. */
	cgf_log_text(priority, text);
	return 0;
}

void cgf_log_setup_libbpf(void) {
	libbpf_set_print(libbpf_print);
}
