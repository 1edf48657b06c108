/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The whole front half as the daemon and `cgfilterctl plan` run it: load
 * the policy (the installed one, or the paths given), validate it for the
 * running kernel's features, and resolve its filters' objects.  Every
 * problem is a diagnostic with its position; a policy with any error is
 * never applied.  Every file read here, policy (given or installed) and
 * object alike, must pass CGF_TRUST_OWNER (file-trust.h): root loads what
 * they say.
 */

#include "diag.h"
#include "filter-object.h"
#include "kernel-features.h"
#include "policy.h"

/* paths: as `cgfilterctl check` takes them; n_paths 0: CGF_POLICY_MAIN
 * and CGF_POLICY_DROPIN_DIR.  Returns 0 with a valid policy (and its
 * objects), -EINVAL when the diagnostics have errors, or another -errno.
 * With 0 or -EINVAL *ret_policy is set: the diagnostics point into its
 * sources, so free it after them, and never apply it after -EINVAL. */
int cgf_policy_read(char *const *paths, size_t n_paths, const struct cgf_features *features,
		    struct cgf_policy **ret_policy, struct cgf_objects *ret_objects, struct cgf_diags *diags);
