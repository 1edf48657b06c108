/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * Which program a filter loads, as a string: the planner compares it to
 * the identity recorded with each pinned instance to decide whether an
 * attached program is still the one the policy asks for.  Made here, and
 * only here.
 */

#include <stddef.h>

#include "policy.h"

/*
 * A filter's program identity: a string that changes exactly when the
 * program that would be loaded for it changes (code or load-time
 * configuration), not when only map data (rules, tenants) changes.
 * Returns a malloc()ed string or -errno.
 */
typedef int (*cgf_identity_func_t)(const struct cgf_filter *f, void *userdata, char **ret);

/*
 * The identity from the model alone: the filter type and direction (which
 * built-in program and section), and for `object` filters the path and
 * program name.  "<type>:<16 hex digits>".  It cannot see a changed
 * object file: reconcile.c passes cgf_objects_identity() (filter-object.h)
 * instead, which gives cgf_filter_identity_of_bytes() of the object.
 */
int cgf_filter_identity(const struct cgf_filter *f, void *userdata, char **ret);

/*
 * The identity of a filter whose program comes from these object bytes
 * (as the kernel edge read them): the model's identity and a digest of
 * the bytes, "<type>:<16 hex>-<16 hex>", so that a rebuilt object file is
 * a new program while a changed rule is not.
 */
int cgf_filter_identity_of_bytes(const struct cgf_filter *f, const void *bytes, size_t size, char **ret);
