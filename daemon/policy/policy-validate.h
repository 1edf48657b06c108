/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

#include "diag.h"
#include "kernel-features.h"
#include "policy.h"

/*
 * Judges a parsed policy before anything touches the kernel: everything
 * the kernel would refuse, and what it would accept but not do as the
 * policy says, each reported at the lines involved.  With the features of
 * the kernel that will run it (see kernel-features.h).
 *
 * Works on an incomplete model too (after parse errors): what failed to
 * parse is skipped, not reported again.  Returns 0 (errors are in diags),
 * or -ENOMEM.
 */
int cgf_policy_validate(const struct cgf_policy *p, const struct cgf_features *features, struct cgf_diags *diags);
