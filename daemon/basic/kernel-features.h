/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

#include <stdbool.h>

/*
 * What the running kernel's cgroup-BPF attach API offers beyond Linux 6.1,
 * as far as the policy cares.  The kernel edge probes it once; the
 * validator and `cgfilterctl check --kernel=` take it as plain input.
 */
struct cgf_features {
	bool preorder; /* BPF_F_PREORDER: upstream 6.15, or our kernel-patch/ series */
	bool ordering; /* BPF_F_BEFORE / BPF_F_AFTER / BPF_F_ID: upstream 6.17, or the series */
	bool revision; /* query revision / expected_revision: upstream 6.17, or the series */
};

#define CGF_FEATURES_PATCHED ((struct cgf_features) { .preorder = true, .ordering = true, .revision = true })
#define CGF_FEATURES_STOCK ((struct cgf_features) {})
