/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the guest-side traffic tools (netprobe, cgprobe, bench/pps): move
 * the calling process into a cgroup2 directory before it opens any
 * socket, so that its packets meet that cgroup's programs.
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static inline int cgroup_join(const char *dir)
{
	char path[4096];
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* "0" means the writing process itself. */
	if (write(fd, "0", 1) != 1) {
		int r = -errno;

		close(fd);
		return r;
	}
	close(fd);
	return 0;
}
