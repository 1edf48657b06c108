/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "file-trust.h"
#include "macro.h"
#include "util.h"

/* Replaces *ret with the message and returns r (-ENOMEM when the message
 * itself could not be made). */
static int _printf_(3, 4) fail(char **ret, int r, const char *format, ...) {
	va_list ap;

	va_start(ap, format);
	free(*ret);
	if (vasprintf(ret, format, ap) < 0) {
		*ret = NULL;
		r = -ENOMEM;
	}
	va_end(ap);
	return r;
}

/* Root, or the user we run as: a file of our own we could write anyway. */
static bool trusted_owner(uid_t uid) {
	return uid == 0 || uid == geteuid();
}

static const char *type_name(mode_t mode) {
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "directory";
	case S_IFIFO:
		return "FIFO";
	case S_IFSOCK:
		return "socket";
	case S_IFCHR:
		return "character device";
	case S_IFBLK:
		return "block device";
	case S_IFLNK:
		return "symbolic link";
	default:
		return "file of unknown type";
	}
}

static bool is_link_at(int dir_fd, const char *name) {
	struct stat st;

	return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISLNK(st.st_mode);
}

/* "link": the link on the way (NULL: the file itself); "target": the path
 * being read, whose real path is the fix. */
static int fail_link(char **ret, const char *link, const char *target) {
	_cleanup_free_ char *real = realpath(target, NULL);
	const char *sep = real ? ", " : "";

	if (!real && errno == ENOMEM)
		return -ENOMEM;
	if (!real)
		real = strdup("");
	if (!real)
		return -ENOMEM;
	if (!link)
		return fail(ret, -EPERM,
			    "refusing: a symbolic link (links are not followed); replace it with the file it points to%s%s",
			    sep, real);
	return fail(ret, -EPERM, "refusing: %s is a symbolic link (links are not followed); name the real path%s%s",
		    link, sep, real);
}

/* Owner and mode of a file, or of a directory on the way to one. */
static int check_owner_mode(const struct stat *st, const char *what, const char *path, bool allow_sticky,
			    char **ret_message) {
	bool owner_ok = trusted_owner(st->st_uid);
	bool mode_ok = (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
	unsigned mode = st->st_mode & 07777;

	/* /tmp: only the owner of an entry or of the directory (root) may
	 * rename or remove it, and the next component is checked in turn. */
	if (!mode_ok && allow_sticky && owner_ok && (st->st_mode & S_ISVTX))
		mode_ok = true;
	if (owner_ok && mode_ok)
		return 0;
	if (!owner_ok && !mode_ok)
		return fail(ret_message, -EPERM,
			    "refusing: %sowned by uid %u, not by root, and writable by group or others (mode %04o); "
			    "run: chown root %s && chmod go-w %s",
			    what, (unsigned) st->st_uid, mode, path, path);
	if (!owner_ok)
		return fail(ret_message, -EPERM, "refusing: %sowned by uid %u, not by root; run: chown root %s", what,
			    (unsigned) st->st_uid, path);
	return fail(ret_message, -EPERM, "refusing: %swritable by group or others (mode %04o); run: chmod go-w %s",
		    what, mode, path);
}

static int check_dir(int fd, const char *path, bool listed, char **ret_message) {
	_cleanup_free_ char *what = NULL;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return fail(ret_message, -errno, "cannot stat directory %s: %s", path, strerror(errno));
	if (asprintf(&what, "directory %s is ", path) < 0)
		return -ENOMEM;
	return check_owner_mode(&st, what, path, !listed, ret_message);
}

/*
 * The directory "dir" as the daemon may trust it: from / down, each
 * component opened with O_NOFOLLOW relative to the one before and checked
 * on its fd.  "listed": dir is the directory we list (opened O_RDONLY, no
 * sticky exception); otherwise an O_PATH fd to openat() the file in.
 */
static int open_dir_owner(const char *dir, bool listed, const char *target, char **ret_message) {
	_cleanup_free_ char *abs = NULL, *sofar = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t len = 1;
	const char *p;
	int r;

	if (dir[0] == '/')
		abs = strdup(dir);
	else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);

		if (!cwd)
			return errno == ENOMEM ? -ENOMEM
					       : fail(ret_message, -errno, "cannot find the working directory: %s",
						      strerror(errno));
		if (asprintf(&abs, "%s/%s", cwd, dir) < 0)
			abs = NULL;
	}
	if (!abs)
		return -ENOMEM;
	sofar = calloc(strlen(abs) + 2, 1);
	if (!sofar)
		return -ENOMEM;
	sofar[0] = '/';

	p = abs + strspn(abs, "/");
	fd = open("/", (*p || !listed ? O_PATH : O_RDONLY) | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail(ret_message, -errno, "cannot open directory /: %s", strerror(errno));
	r = check_dir(fd, "/", listed && !*p, ret_message);
	if (r < 0)
		return r;

	while (*p) {
		size_t n = strcspn(p, "/");
		bool last = p[n + strspn(p + n, "/")] == 0;
		_cleanup_free_ char *name = strndup(p, n);
		int next;

		if (!name)
			return -ENOMEM;
		if (len > 1)
			sofar[len++] = '/';
		memcpy(sofar + len, p, n);
		len += n;
		sofar[len] = 0;

		next = openat(fd, name, (last && listed ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int e = errno;

			if ((e == ELOOP || e == ENOTDIR) && is_link_at(fd, name))
				return fail_link(ret_message, sofar, target);
			if (e == ENOENT || last)
				return fail(ret_message, -e, "cannot open: %s", strerror(e));
			return fail(ret_message, -e, "cannot open directory %s: %s", sofar, strerror(e));
		}
		closep(&fd);
		fd = next;
		r = check_dir(fd, sofar, listed && last, ret_message);
		if (r < 0)
			return r;
		p += n;
		p += strspn(p, "/");
	}
	r = fd;
	fd = -EBADF;
	return r;
}

/* The type rules only: the directories on the way are the caller's
 * choice, but the one we list is no symbolic link. */
static int open_dir_type(const char *dir, bool listed, const char *target, char **ret_message) {
	int fd, e;

	fd = open(dir, (listed ? O_RDONLY | O_NOFOLLOW : O_PATH) | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	e = errno;
	if (listed && (e == ELOOP || e == ENOTDIR) && is_link_at(AT_FDCWD, dir))
		return fail_link(ret_message, dir, target);
	return fail(ret_message, -e, "cannot open: %s", strerror(e));
}

static int open_dir(const char *dir, enum cgf_trust trust, bool listed, const char *target, char **ret_message) {
	return trust == CGF_TRUST_OWNER ? open_dir_owner(dir, listed, target, ret_message)
					: open_dir_type(dir, listed, target, ret_message);
}

int cgf_trust_open_dir(const char *path, enum cgf_trust trust, char **ret_message) {
	return open_dir(path, trust, true, path, ret_message);
}

int cgf_trust_read_at(int dir_fd, const char *name, const char *path, enum cgf_trust trust, size_t max,
		      char **ret, size_t *ret_size, char **ret_message) {
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	int flags, r;

	/* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer,
	 * and is then refused unread; O_NOCTTY: a terminal never becomes
	 * ours. */
	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ELOOP && is_link_at(dir_fd, name))
			return fail_link(ret_message, NULL, path);
		return fail(ret_message, -e, "cannot open: %s", strerror(e));
	}
	if (fstat(fd, &st) < 0)
		return fail(ret_message, -errno, "cannot stat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(ret_message, -EPERM, "refusing: a %s, not a regular file; replace it with a regular file",
			    type_name(st.st_mode));
	if (trust == CGF_TRUST_OWNER) {
		r = check_owner_mode(&st, "", path, false, ret_message);
		if (r < 0)
			return r;
	}
	if ((uintmax_t) st.st_size > max)
		return fail(ret_message, -EFBIG, "refusing: %jd bytes, more than the limit of %zu bytes (%zu MiB)",
			    (intmax_t) st.st_size, max, max >> 20);

	/* A regular file reads the same either way; without O_NONBLOCK no
	 * file system can answer EAGAIN. */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
		return fail(ret_message, -errno, "cannot read: %s", strerror(errno));
	r = read_fd_full(fd, max, ret, ret_size);
	if (r == -ENOMEM)
		return r;
	if (r == -EFBIG) /* it grew since fstat() */
		return fail(ret_message, r, "refusing: more than the limit of %zu bytes (%zu MiB)", max, max >> 20);
	if (r < 0)
		return fail(ret_message, r, "cannot read: %s", strerror(-r));
	return 0;
}

int cgf_trust_read_file(const char *path, enum cgf_trust trust, size_t max, char **ret, size_t *ret_size,
			char **ret_message) {
	_cleanup_free_ char *trimmed = NULL, *dir = NULL, *name = NULL;
	_cleanup_close_ int dir_fd = -EBADF;
	size_t n = strlen(path);
	const char *slash;

	/* "dir/name": a trailing '/' names the same file (a directory is
	 * refused as one), "/" is the directory "/" itself. */
	while (n > 1 && path[n - 1] == '/')
		n--;
	trimmed = strndup_nul(path, n);
	if (!trimmed)
		return -ENOMEM;
	slash = strrchr(trimmed, '/');
	if (!slash) {
		dir = strdup(".");
		name = strdup(trimmed);
	} else if (slash == trimmed) {
		dir = strdup("/");
		name = strdup(slash[1] ? slash + 1 : ".");
	} else {
		dir = strndup_nul(trimmed, (size_t) (slash - trimmed));
		name = strdup(slash + 1);
	}
	if (!dir || !name)
		return -ENOMEM;
	dir_fd = open_dir(dir, trust, false, path, ret_message);
	if (dir_fd < 0)
		return dir_fd;
	return cgf_trust_read_at(dir_fd, name, path, trust, max, ret, ret_size, ret_message);
}
