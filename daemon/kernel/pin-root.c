/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "macro.h"
#include "pin-root.h"
#include "util.h"

void cgf_pin_root_done(struct cgf_pin_root *p) {
	if (p->fd >= 0)
		close(p->fd); /* releases the lock */
	*p = (struct cgf_pin_root) { .fd = -EBADF };
}

static int mkdir_parents(const char *path) {
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		bool last = *s == '\0';

		if (*s != '/' && !last)
			continue;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (last)
			return 0;
		*s = '/';
	}
}

pid_t cgf_flock_holder(int fd) {
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t size = 0;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return 0;
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	/* "1: FLOCK  ADVISORY  WRITE 1234 00:1f:5678 0 EOF"; waiters are
	 * listed as "1: -> FLOCK ...". */
	while (getline(&line, &size, f) >= 0) {
		char type[16], kind[16], access[16];
		unsigned maj, min;
		unsigned long long ino;
		int pid;

		if (sscanf(line, "%*d: %15s %15s %15s %d %x:%x:%llu", type, kind, access, &pid, &maj, &min, &ino) != 7)
			continue;
		if (streq(type, "FLOCK") && streq(access, "WRITE") && maj == major(st.st_dev) &&
		    min == minor(st.st_dev) && ino == (unsigned long long) st.st_ino)
			return pid > 0 ? (pid_t) pid : 0;
	}
	return 0;
}

static int check(const char *path, int fd, enum cgf_pin_root_mode mode, uid_t owner, struct cgf_pin_root *p,
		 char **ret_message) {
	struct stat st;

	if (fstat(fd, &st) < 0)
		return errno_message(ret_message, -errno, "pin directory %s", path);
	if (st.st_uid != owner)
		return plain_message(ret_message, -EPERM,
				     "pin directory %s is owned by uid %u, not root: which programs are ours "
				     "cannot be trusted from it; check what it holds, then 'chown root:root %s' "
				     "and 'chmod 0700 %s' (or remove it)",
				     path, (unsigned) st.st_uid, path, path);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return plain_message(ret_message, -EPERM,
				     "pin directory %s is writable by group or others (mode %04o): anyone could "
				     "have pinned programs there; check what it holds, then 'chmod 0700 %s'",
				     path, (unsigned) (st.st_mode & 07777), path);
	if ((st.st_mode & 07777) == 0700 || mode == CGF_PIN_ROOT_READ)
		return 0;
	/* Root's and written by root only: just too widely readable. */
	if (fchmod(fd, 0700) < 0)
		return errno_message(ret_message, -errno, "pin directory %s: chmod 0700 (mode %04o)", path,
				     (unsigned) (st.st_mode & 07777));
	p->mode_fixed = true;
	p->old_mode = st.st_mode & 07777;
	return 0;
}

int cgf_pin_root_open(const char *path, enum cgf_pin_root_mode mode, uid_t owner, struct cgf_pin_root *ret,
		      pid_t *ret_holder, char **ret_message) {
	struct cgf_pin_root p = { .fd = -EBADF };
	int r;

	if (ret_holder)
		*ret_holder = 0;
	if (mode == CGF_PIN_ROOT_APPLY) {
		r = mkdir_parents(path);
		if (r < 0)
			return errno_message(ret_message, r, "creating pin directory %s", path);
	}
	p.fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (p.fd < 0) {
		r = -errno;
		if (r == -ENOENT && mode == CGF_PIN_ROOT_READ) {
			*ret = p; /* nothing pinned yet */
			return 0;
		}
		if (r == -ELOOP || r == -ENOTDIR)
			return plain_message(ret_message, -EPERM,
					     "pin directory %s is a symbolic link or not a directory: remove it", path);
		return errno_message(ret_message, r, "opening pin directory %s", path);
	}
	r = check(path, p.fd, mode, owner, &p, ret_message);
	if (r >= 0 && mode == CGF_PIN_ROOT_APPLY) {
		if (flock(p.fd, LOCK_EX | LOCK_NB) < 0) {
			r = errno == EWOULDBLOCK ? -EBUSY : -errno;
			if (r == -EBUSY) {
				pid_t holder = cgf_flock_holder(p.fd);
				char who[64] = "pid unknown";

				if (holder > 0)
					snprintf(who, sizeof(who), "pid %d", (int) holder);
				if (ret_holder)
					*ret_holder = holder;
				r = plain_message(ret_message, r,
						  "another cgfilterd (%s) holds the lock on %s and applies the policy",
						  who, path);
			} else
				r = errno_message(ret_message, r, "locking pin directory %s", path);
		} else
			p.locked = true;
	}
	if (r < 0) {
		cgf_pin_root_done(&p);
		return r;
	}
	*ret = p;
	return 0;
}
