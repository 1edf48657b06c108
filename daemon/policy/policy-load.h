/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

#include "diag.h"
#include "file-trust.h"
#include "policy.h"

#define CGF_POLICY_MAIN "/etc/cgfilterd/policy.yaml"
#define CGF_POLICY_DROPIN_DIR "/etc/cgfilterd/policy.d"
#define CGF_POLICY_MAIN_NAME "policy.yaml"
#define CGF_POLICY_DROPIN_NAME "policy.d"
#define CGF_POLICY_FILE_MAX (4u << 20) /* bytes: larger files are refused */

/*
 * Reading policy files into one model.  The only file in this part that
 * does I/O, and only on the policy files themselves.
 *
 * "trust" says which files are read at all (file-trust.h): the daemon,
 * `cgfilterctl plan` and `cgfilterctl check` of the installed policy ask
 * CGF_TRUST_OWNER (root's files in root's directories), `cgfilterctl
 * check PATH...` CGF_TRUST_TYPE (regular files, no links, size cap).  A
 * refused file is one error naming it and the fix.
 *
 * Every function appends to p and reports problems (a file that cannot be
 * read, and everything the parser finds) to diags; they return 0, or
 * -ENOMEM when memory ran out.  Whether the policy is usable is the
 * question diags->n_errors == 0 after cgf_policy_validate().
 */

/* One file's text, named "name" in messages. */
int cgf_policy_load_text(struct cgf_policy *p, const char *name, const char *text, size_t size,
			 struct cgf_diags *diags);

/* One file; "-" reads standard input (named "<stdin>"; refused under
 * CGF_TRUST_OWNER). */
int cgf_policy_load_file(struct cgf_policy *p, const char *path, enum cgf_trust trust, struct cgf_diags *diags);

/* The *.yaml files of a drop-in directory in lexical (byte) order, hidden
 * files skipped, each opened relative to the directory fd that was
 * checked and listed; a missing directory is no error. */
int cgf_policy_load_dropins(struct cgf_policy *p, const char *dir, enum cgf_trust trust, struct cgf_diags *diags);

/* The main file (required), then the drop-ins (dir may be NULL). */
int cgf_policy_load(struct cgf_policy *p, const char *main_path, const char *dropin_dir, enum cgf_trust trust,
		    struct cgf_diags *diags);

/* A path as `cgfilterctl check` takes it: a directory stands for a
 * configuration directory (DIR/policy.yaml and DIR/policy.d/), anything
 * else for one file. */
int cgf_policy_load_path(struct cgf_policy *p, const char *path, enum cgf_trust trust, struct cgf_diags *diags);
