/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/* The attach flags: their values, the mode they select, and their names in
 * the plan, in status and in JSON, in one place. */

#include <stdint.h>

#include "json.h"
#include "policy.h"

/*
 * Attach flags, with the values of the kernel's uapi (linux/bpf.h of
 * upstream 6.17; 6.1's header lacks the newer ones), under our own names
 * so that this header does not depend on which linux/bpf.h is installed.
 * The kernel edge checks them against the uapi at compile time.
 */
#define CGF_ATTACH_OVERRIDE (1U << 0)  /* BPF_F_ALLOW_OVERRIDE */
#define CGF_ATTACH_MULTI    (1U << 1)  /* BPF_F_ALLOW_MULTI */
#define CGF_ATTACH_REPLACE  (1U << 2)  /* BPF_F_REPLACE */
#define CGF_ATTACH_BEFORE   (1U << 3)  /* BPF_F_BEFORE */
#define CGF_ATTACH_AFTER    (1U << 4)  /* BPF_F_AFTER */
#define CGF_ATTACH_ID       (1U << 5)  /* BPF_F_ID: the anchor is a program id */
#define CGF_ATTACH_PREORDER (1U << 6)  /* BPF_F_PREORDER */
#define CGF_ATTACH_MODE_MASK (CGF_ATTACH_OVERRIDE | CGF_ATTACH_MULTI)

/* The attach flag that selects a mode: 0, ALLOW_OVERRIDE or ALLOW_MULTI. */
uint32_t cgf_mode_to_flags(enum cgf_mode m);
/* "none", "override" or "multi" for a list's mode flags (0 is "none"). */
const char *cgf_mode_flags_to_string(uint32_t flags);
/* "multi|replace|preorder" and the like; "none" for 0. */
int cgf_attach_flags_to_string(uint32_t flags, char **ret);

/* "key": the names of the flags set, as cgf_attach_flags_to_string() calls
 * them ("unknown(0x80)" for bits we do not know), [] for 0: "none" there
 * names the absence of a mode bit, not a flag. */
void cgf_json_field_attach_flags(struct cgf_json *j, const char *key, uint32_t flags);
