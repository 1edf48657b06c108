/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "escape.h"
#include "macro.h"
#include "runtime.h"

static int write_file(const char *name, const char *text) {
	char path[256], tmp[256];
	_cleanup_fclose_ FILE *f = NULL;

	/* Started by hand, not by the unit: make the directory ourselves. */
	if (mkdir(CGF_RUNTIME_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", CGF_RUNTIME_DIR, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", CGF_RUNTIME_DIR, name);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	if (fputs(text, f) < 0 || fflush(f) != 0) {
		int r = -errno;

		unlink(tmp);
		return r;
	}
	if (rename(tmp, path) < 0) {
		int r = -errno;

		unlink(tmp);
		return r;
	}
	return 0;
}

static int read_line(const char *name, char **ret) {
	char path[256];
	_cleanup_fclose_ FILE *f = NULL;
	char *line = NULL;
	size_t size = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", CGF_RUNTIME_DIR, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = getline(&line, &size, f);
	if (n < 0) {
		free(line);
		return -EBADMSG;
	}
	line[strcspn(line, "\n")] = '\0';
	*ret = line;
	return 0;
}

int cgf_runtime_write_pid(void) {
	char text[32];

	snprintf(text, sizeof(text), "%d\n", (int) getpid());
	return write_file("pid", text);
}

int cgf_runtime_read_pid(pid_t *ret) {
	_cleanup_free_ char *line = NULL;
	char *end;
	long pid;
	int r;

	r = read_line("pid", &line);
	if (r < 0)
		return r;
	errno = 0;
	pid = strtol(line, &end, 10);
	if (errno != 0 || end == line || *end || pid <= 0)
		return -EBADMSG;
	*ret = (pid_t) pid;
	return 0;
}

int cgf_runtime_write_reload(unsigned n, bool ok, const char *why) {
	_cleanup_free_ char *text = NULL, *shown = NULL;

	/* One line: the message is escaped (it may name a cgroup), so that it
	 * never breaks the format, nor the line cgfilterctl prints from it. */
	if (why && !(shown = cgf_escape(why)))
		return -ENOMEM;
	if (asprintf(&text, "%u %s%s%s\n", n, ok ? "ok" : "failed", shown ? " " : "", shown ?: "") < 0) {
		text = NULL; /* undefined after a failure */
		return -ENOMEM;
	}
	return write_file("reload", text);
}

int cgf_runtime_read_reload(unsigned *ret_n, bool *ret_ok, char **ret_why) {
	_cleanup_free_ char *line = NULL;
	unsigned long n;
	char *end;
	int r;

	r = read_line("reload", &line);
	if (r < 0)
		return r;
	errno = 0;
	n = strtoul(line, &end, 10);
	if (errno != 0 || end == line || *end != ' ' || n > UINT32_MAX)
		return -EBADMSG;
	end++;
	if (strncmp(end, "ok", 2) == 0 && (end[2] == '\0' || end[2] == ' '))
		*ret_ok = true;
	else if (strncmp(end, "failed", 6) == 0 && (end[6] == '\0' || end[6] == ' '))
		*ret_ok = false;
	else
		return -EBADMSG;
	*ret_n = (unsigned) n;
	if (ret_why) {
		const char *why = strchr(end, ' ');

		*ret_why = why ? strdup(why + 1) : NULL;
	}
	return 0;
}
