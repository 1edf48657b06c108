/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The pin root (/sys/fs/bpf/cgfilterd) as a trusted place, and the lock
 * that makes one cgfilterd at a time apply.  No bpf() here: the unit
 * tests run it on plain directories.
 *
 * Trust: what is pinned there decides which programs are ours, so the
 * directory must be root's and mode 0700.  Owned by another user, or
 * writable by group or others, it is refused: someone else may have put
 * things in it.  Root's with a wider but read-only mode (a hand-made
 * `mkdir` under umask 022) can only hold what root put there: an applying
 * opener tightens it to 0700 (as systemd does with the mode of the
 * directories it manages) and says so; a read-only opener accepts it.
 *
 * Lock: flock(LOCK_EX|LOCK_NB) on the directory's fd, held as long as the
 * fd is open (the daemon's lifetime).  The kernel releases it when the
 * holder exits, however it exits, so a restart cannot find a stale lock;
 * the directory outlives the daemon (bpffs), so an old and a new daemon
 * always lock the same inode.  Readers (cgfilterctl plan and status, a
 * `cgfilterd --once` that found the lock taken) take no lock at all.
 */

#include <stdbool.h>
#include <sys/types.h>

enum cgf_pin_root_mode {
	CGF_PIN_ROOT_READ,  /* check only; a missing directory is no error */
	CGF_PIN_ROOT_APPLY, /* create when missing, tighten the mode, lock */
};

struct cgf_pin_root {
	int fd;          /* O_DIRECTORY; -EBADF when READ found no directory */
	bool locked;     /* APPLY: we hold the lock */
	bool mode_fixed; /* APPLY: the mode was tightened to 0700 (was old_mode) */
	mode_t old_mode;
};

/*
 * Opens (APPLY: creating with its parents, 0700) and checks the pin root
 * at path; APPLY also takes the lock.  -EBUSY: another process holds the
 * lock, *ret_holder its pid (0: unknown); -EPERM: the directory is not
 * trusted (owner, mode, a symlink or not a directory); *ret_message
 * says what to fix.  The uid it must belong to is 0; tests may
 * pass another.
 */
int cgf_pin_root_open(const char *path, enum cgf_pin_root_mode mode, uid_t owner, struct cgf_pin_root *ret,
		      pid_t *ret_holder, char **ret_message);
void cgf_pin_root_done(struct cgf_pin_root *p);

/* The pid of the process holding a flock() write lock on fd's inode, from
 * /proc/locks; 0 when none is listed (or it is in another pid namespace). */
pid_t cgf_flock_holder(int fd);
