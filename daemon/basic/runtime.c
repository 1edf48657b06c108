/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "escape.h"
#include "macro.h"
#include "runtime.h"
#include "util.h"

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

int cgf_runtime_write_file(const char *name, const char *text) {
	return write_file(name, text);
}

int cgf_runtime_remove_file(const char *name) {
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", CGF_RUNTIME_DIR, name);
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int cgf_runtime_read_file(const char *name, size_t max, char **ret) {
	char path[256];
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	size_t size;
	char *text;
	int r;

	snprintf(path, sizeof(path), "%s/%s", CGF_RUNTIME_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	r = read_fd_full(fd, max, &buf, &size);
	if (r < 0)
		return r;
	text = strndup_nul(buf, size);
	if (!text)
		return -ENOMEM;
	*ret = text;
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

/* glibc 2.36 (Debian 12) has no wrappers for these. */
static int pidfd_open_(pid_t pid) {
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int) fd;
}

static int pidfd_send_signal_(int pidfd, int sig) {
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}

/* Control bytes of a process's name are shown as '?': it is chosen by
 * whoever runs that process. */
static void sanitize(char *s) {
	for (; *s; s++)
		if ((unsigned char) *s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* What runs as pid: its comm and the path of its executable (each
 * malloc()ed; the executable is NULL when it cannot be read). */
static int process_identity(pid_t pid, char **ret_comm, char **ret_exe) {
	char path[64], exe[PATH_MAX];
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *comm = NULL;
	size_t size = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	if (getline(&comm, &size, f) < 0)
		return -ESRCH; /* a zombie, or gone since */
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/exe", (int) pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n >= 0) {
		exe[n] = '\0';
		*ret_exe = strdup(exe);
		if (!*ret_exe)
			return -ENOMEM;
	} else
		*ret_exe = NULL;
	*ret_comm = TAKE_PTR(comm);
	return 0;
}

static bool is_named(const char *comm, const char *exe, const char *name) {
	const char *base;
	size_t len;

	/* comm is the first 15 bytes of the executable's name. */
	if (strncmp(comm, name, 15) != 0)
		return false;
	if (!exe)
		return false;
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	len = strlen(name);
	/* A binary replaced on disk (an upgrade) reads "... (deleted)". */
	return strncmp(base, name, len) == 0 && (base[len] == '\0' || streq(base + len, " (deleted)"));
}

int cgf_runtime_signal(pid_t pid, const char *name, int sig, char **ret_message) {
	_cleanup_close_ int pidfd = -EBADF;
	_cleanup_free_ char *comm = NULL, *exe = NULL;
	int r;

	/* Pin the process first: whatever the check below sees, the signal
	 * goes to this process or nowhere, never to a recycled pid. */
	pidfd = pidfd_open_(pid);
	if (pidfd < 0)
		return errno_message(ret_message, pidfd, "pid %d", (int) pid);
	r = process_identity(pid, &comm, &exe);
	if (r < 0)
		return errno_message(ret_message, r, "pid %d: reading /proc/%d", (int) pid, (int) pid);
	if (!is_named(comm, exe, name)) {
		sanitize(comm);
		if (exe)
			sanitize(exe);
		return plain_message(ret_message, -ESTALE, "pid %d is '%s' (%s), not %s", (int) pid, comm,
				     exe ?: "executable unreadable", name);
	}
	/* The process may have died since pidfd_open(): then the check above
	 * may have read another process that got its pid, and this fails. */
	r = pidfd_send_signal_(pidfd, sig);
	if (r < 0)
		return errno_message(ret_message, r, "pid %d (%s)", (int) pid, name);
	return 0;
}
