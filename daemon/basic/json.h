/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * A small streaming JSON writer on a FILE*, for `cgfilterctl ... --json`:
 * values are written as they are given, nothing is kept but the nesting.
 *
 * Errors latch: the first failure (a write error, out of memory, or a call
 * that would make the text invalid, such as a value in an object without
 * its key) is remembered, every later call does nothing, and
 * cgf_json_status() / cgf_json_finish() return it.  So rendering code
 * writes a whole document without checking each call, and checks once:
 *
 *     _cleanup_(cgf_json_freep) struct cgf_json *j = NULL;
 *
 *     r = cgf_json_new(stdout, CGF_JSON_PRETTY, &j);
 *     if (r < 0)
 *             return r;
 *     cgf_json_object_begin(j);
 *     cgf_json_field_string(j, "cgroup", "web.slice");
 *     cgf_json_field_u64(j, "revision", 7);
 *     cgf_json_object_end(j);
 *     r = cgf_json_finish(j);
 *
 * Output: pretty mode indents by two spaces, one member or element a line,
 * `"key": value`, and empty containers as {} and []; compact mode has no
 * white space at all.  Each complete top-level value is followed by a
 * newline (so several of them in compact mode are JSON Lines).
 *
 * Strings: '"', '\\' and the control characters (U+0000..U+001F, DEL and
 * the C1 controls U+0080..U+009F) are escaped (\n, \t, ... where JSON has
 * a short form, else \u00XX);
 * valid UTF-8 passes through unchanged; each byte that is not part of a
 * valid UTF-8 sequence becomes \ufffd, so that one odd cgroup name cannot
 * make a whole document unreadable.  Keys are escaped the same way.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "macro.h"

enum {
	CGF_JSON_PRETTY = 1 << 0, /* two-space indent, one member a line */
};

struct cgf_json;

/* The writer does not own f: cgf_json_free() neither flushes nor closes it. */
int cgf_json_new(FILE *f, unsigned flags, struct cgf_json **ret);
struct cgf_json *cgf_json_free(struct cgf_json *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_json *, cgf_json_free);

void cgf_json_object_begin(struct cgf_json *j);
void cgf_json_object_end(struct cgf_json *j);
void cgf_json_array_begin(struct cgf_json *j);
void cgf_json_array_end(struct cgf_json *j);

/* The key of the next member; only in an object, and once per value. */
void cgf_json_key(struct cgf_json *j, const char *key);

void cgf_json_string(struct cgf_json *j, const char *s); /* NULL: null */
void cgf_json_string_len(struct cgf_json *j, const char *s, size_t n);
void cgf_json_u64(struct cgf_json *j, uint64_t v);
void cgf_json_i64(struct cgf_json *j, int64_t v);
void cgf_json_bool(struct cgf_json *j, bool v);
void cgf_json_null(struct cgf_json *j);

/* A key and its value in one call. */
void cgf_json_field_string(struct cgf_json *j, const char *key, const char *s); /* NULL: null */
void cgf_json_field_u64(struct cgf_json *j, const char *key, uint64_t v);
void cgf_json_field_i64(struct cgf_json *j, const char *key, int64_t v);
void cgf_json_field_bool(struct cgf_json *j, const char *key, bool v);
void cgf_json_field_null(struct cgf_json *j, const char *key);
/* The number, or null when it is 0: for ids and revisions where 0 means "none". */
void cgf_json_field_u64_or_null(struct cgf_json *j, const char *key, uint64_t v);
void cgf_json_field_object_begin(struct cgf_json *j, const char *key);
void cgf_json_field_array_begin(struct cgf_json *j, const char *key);

/* 0, or the latched error: -EINVAL (misuse), -ENOMEM, or the -errno of a write. */
int cgf_json_status(const struct cgf_json *j);
/* Latches a renderer's own failure (e.g. -ENOMEM building a value), so
 * that its caller, too, checks once at the end.  The first error stays. */
void cgf_json_set_error(struct cgf_json *j, int error);

/* The status, after checking that every container was closed (else
 * -EINVAL) and flushing f (its -errno).  The writer stays usable for the
 * next top-level value. */
int cgf_json_finish(struct cgf_json *j);
