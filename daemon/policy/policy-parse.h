/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

#include "diag.h"
#include "policy.h"

/*
 * Parses one policy file, already read into a source of p, and appends its
 * filters and attachments to p.  Every error goes to diags with its
 * position; parsing goes on after an error wherever the rest of the file
 * still makes sense, so that one run shows them all.  A YAML syntax error
 * ends the file (libyaml cannot resume) and is reported with libyaml's own
 * words and position.
 *
 * Returns 0 (look at diags for errors), or -ENOMEM.
 */
int cgf_policy_parse(struct cgf_policy *p, const struct cgf_source *source, struct cgf_diags *diags);
