/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The built-in filters' BPF objects, embedded through bpftool's
 * skeletons: the daemon never depends on files that an upgrade may
 * change under a running reconcile, and the identity of a built-in
 * filter changes exactly when a new daemon brings new programs.
 */
#include "filter-object.h"

#include "count_only.skel.h"
#include "deny_all.skel.h"
#include "rules.skel.h"

const void *cgf_builtin_object(enum cgf_filter_type type, size_t *ret_size) {
	switch (type) {
	case CGF_FILTER_RULES:
		return cgf_rules_bpf__elf_bytes(ret_size);
	case CGF_FILTER_DENY_ALL:
		return cgf_deny_all_bpf__elf_bytes(ret_size);
	case CGF_FILTER_COUNT_ONLY:
		return cgf_count_only_bpf__elf_bytes(ret_size);
	default:
		return NULL;
	}
}
