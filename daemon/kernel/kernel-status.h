/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

#include "kernel.h"
#include "status.h"

/*
 * The status record (status.h) of the lists of "a" (a read of the tree):
 * by default those with programs attached; with "all" also those that
 * only inherit; with "only" (cgroup paths) exactly those.  Effective
 * programs come from BPF_F_QUERY_EFFECTIVE at the time of the call.
 */
int cgf_kernel_status(struct cgf_kernel *k, const struct cgf_actual *a, char *const *only, size_t n_only,
		      bool all, struct cgf_status **ret);
