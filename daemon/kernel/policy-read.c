/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>

#include "policy-load.h"
#include "policy-read.h"
#include "policy-validate.h"

int cgf_policy_read(char *const *paths, size_t n_paths, const struct cgf_features *features,
		    struct cgf_policy **ret_policy, struct cgf_objects *ret_objects, struct cgf_diags *diags) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	struct cgf_objects objects = {};
	int r;

	if (!p)
		return -ENOMEM;
	if (n_paths == 0)
		r = cgf_policy_load(p, CGF_POLICY_MAIN, CGF_POLICY_DROPIN_DIR, CGF_TRUST_OWNER, diags);
	else {
		r = 0;
		for (size_t i = 0; i < n_paths && r >= 0; i++)
			r = cgf_policy_load_path(p, paths[i], CGF_TRUST_OWNER, diags);
	}
	if (r < 0)
		return r;
	r = cgf_policy_validate(p, features, diags);
	if (r < 0)
		return r;
	/* Objects only for a policy that is otherwise right: a file that
	 * cannot be read is one more error, not a reason to stop reporting. */
	if (diags->n_errors == 0) {
		r = cgf_objects_resolve(p, &objects, diags);
		if (r < 0)
			return r;
	}
	/* The diagnostics point into the policy's sources: the caller keeps
	 * the policy until it has shown them, valid or not. */
	*ret_policy = TAKE_PTR(p);
	if (diags->n_errors > 0) {
		cgf_objects_done(&objects);
		return -EINVAL;
	}
	*ret_objects = objects;
	return 0;
}
