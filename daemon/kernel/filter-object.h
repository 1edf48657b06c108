/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The BPF object behind each filter of a policy: the built-in programs
 * (bpf-progs/, embedded in the binary) or the operator's object file,
 * read once per reconcile.  From the bytes comes the filter's program
 * identity (identity.h): the model's identity plus a digest of the object,
 * so that a rebuilt object file is "the filter's program changed" and
 * gets swapped in place, while a changed rule (map data) is not.
 *
 * Opening an object here only parses the ELF file (libbpf's open makes
 * no bpf() call); loading is the kernel edge's business.
 */

#include <stddef.h>

#include "diag.h"
#include "policy.h"

struct cgf_filter_object {
	const struct cgf_filter *filter;
	const void *bytes;   /* the ELF object */
	size_t size;
	void *owned;         /* bytes we read from a file (NULL for built-ins) */
	char *section;       /* the program's section, "cgroup_skb/egress" */
	char *program;       /* the program's function name in the object */
	char *identity;
};

struct cgf_objects {
	struct cgf_filter_object *items; /* in the policy's filter order */
	size_t n;
};

/*
 * Reads and checks the object of every filter of a valid policy: the
 * file exists, is a BPF object, has the program, and the program is a
 * cgroup_skb program of the filter's direction.  Each problem is a
 * diagnostic at the filter's object: / program: line.  Returns 0 (check
 * diags->n_errors) or -ENOMEM.
 */
int cgf_objects_resolve(const struct cgf_policy *p, struct cgf_objects *ret, struct cgf_diags *diags);
void cgf_objects_done(struct cgf_objects *o);
const struct cgf_filter_object *cgf_objects_find(const struct cgf_objects *o, const char *filter);

/* cgf_identity_func_t for expand(): userdata is the struct cgf_objects. */
int cgf_objects_identity(const struct cgf_filter *f, void *userdata, char **ret);

/* The embedded object of a built-in filter type (NULL for object). */
const void *cgf_builtin_object(enum cgf_filter_type type, size_t *ret_size);
