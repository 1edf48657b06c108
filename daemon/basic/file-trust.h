/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * Which files cgfilterd reads.  The policy files, the drop-in directory
 * and the filters' object files decide what root loads into the kernel,
 * so whoever can change one of them is root for that purpose.  The rule
 * is sshd's StrictModes (safe_path()): the file and every directory above
 * it, up to /, are owned by root and not writable by group or others,
 * with one exception sshd does not make, for /tmp: a root-owned directory
 * with the sticky bit may be writable by others as long as it is only
 * passed through (the next component is checked like any other, and in a
 * sticky directory nobody but root can rename or replace a root-owned
 * entry).  A directory we list (policy.d) gets no such exception: anyone
 * could drop a file there and have every reload refused.
 *
 * Unlike sshd, nothing is resolved first: every component is opened with
 * openat(O_NOFOLLOW) relative to the one before and checked with fstat()
 * on that fd, and the file is read from the fd it was checked on, so what
 * is checked is what is read.  A symbolic link anywhere on the way is
 * refused (the message names the real path to use instead).
 *
 * Whatever the trust: the file is a regular file (a directory we list is
 * a directory), neither is a symbolic link, the file is opened
 * O_NONBLOCK (a FIFO is refused at once, never read), and a file larger
 * than the cap is refused from its size, unread.
 *
 * Messages say what is wrong and how to fix it, without the file's name
 * (the caller's diagnostic carries it): "refusing: writable by group or
 * others (mode 0666); run: chmod go-w /etc/cgfilterd/policy.yaml".
 * These helpers do not log.
 */

#include <stdbool.h>
#include <stddef.h>

enum cgf_trust {
	/* The type rules only: what `cgfilterctl check PATH...` asks of the
	 * files it is given (a checkout, a staging directory, any owner). */
	CGF_TRUST_TYPE,
	/* And owner and mode of the file and every directory above it:
	 * what the daemon and `cgfilterctl plan` ask of every file they read
	 * and `cgfilterctl check` of the installed policy.  "Root" means root
	 * or the user we run as (the daemon runs as root). */
	CGF_TRUST_OWNER,
};

/*
 * Opens directory "path" (relative paths start at the working directory)
 * for listing (O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC) and returns its
 * fd.  Errors: -ENOENT when it or a directory above is missing, -EPERM
 * when the rules refuse it, -ENOMEM, or another -errno; all but -ENOMEM
 * set *ret_message.
 */
int cgf_trust_open_dir(const char *path, enum cgf_trust trust, char **ret_message);

/*
 * Reads file "name" (one component, no '/') of the directory dir_fd (which
 * was opened and checked with cgf_trust_open_dir()), at most max bytes,
 * into a malloc()ed buffer (not NUL-terminated); "path" names it in
 * messages.  Errors as above, and -EFBIG when it is larger than max.
 */
int cgf_trust_read_at(int dir_fd, const char *name, const char *path, enum cgf_trust trust, size_t max,
		      char **ret, size_t *ret_size, char **ret_message);

/* The same for a path: its directories are walked and checked first. */
int cgf_trust_read_file(const char *path, enum cgf_trust trust, size_t max, char **ret, size_t *ret_size,
			char **ret_message);
