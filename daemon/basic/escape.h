/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * Escaping of text that a person, a terminal or journald reads.
 *
 * Cgroup names (chosen by any user with a delegated subtree), program
 * names and messages from the kernel, and the policy's own strings reach
 * the journal, cgfilterctl's output and terminals.  Written raw, a newline
 * ends a journal entry and "<0>" right after it makes the next one an
 * emergency; ESC or CSI drive the operator's terminal; a bidirectional
 * override reorders what is shown.  So every character that something
 * downstream would act on rather than show is written as \xNN, one per
 * byte, the form systemd-escape(1) uses:
 *
 *   - C0 control bytes (newline, tab, ESC, ...) and DEL;
 *   - C1 controls (U+0080..U+009F: U+009B is CSI), the line and
 *     paragraph separators U+2028 and U+2029, and the bidirectional
 *     embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069);
 *   - every byte that is not part of valid UTF-8 (RFC 3629: no overlong
 *     forms, no surrogates, nothing above U+10FFFF).
 *
 * Everything else passes unchanged: printable ASCII, valid UTF-8, and also
 * the backslash and quotes.  Two reasons:
 *
 *   - Idempotence: escaped text contains nothing to escape, so escaping it
 *     again changes nothing.  Every layer that writes text can therefore
 *     escape what it writes (the plan's lines where they are formatted,
 *     the log where every message passes, the table where cells are
 *     made), without one layer's escapes being doubled by the next.
 *   - Names as systemd shows them: cgroups of systemd units carry escapes
 *     of their own ("system-systemd\x2dfsck.slice"); doubling their
 *     backslash would show every such name differently from systemctl, ls
 *     and /sys/fs/cgroup.
 *
 * The price is that a name holding a literal "\x0a" looks like one holding
 * a newline.  Output that must be exact is JSON (`--json`), whose strings
 * are escaped per JSON.
 */

#include <stddef.h>
#include <stdio.h>

/* The shown form of one character: up to 4 bytes, each as "\xNN", and a NUL. */
#define CGF_ESCAPE_CHAR_MAX (4 * 4 + 1)

/*
 * The length of the valid UTF-8 sequence at s (n >= 1 bytes left), 0 if
 * there is none (an ASCII byte is a sequence of 1).
 */
size_t cgf_utf8_length(const char *s, size_t n);

/*
 * The one escaping function: the character at s (n >= 1 bytes left) as it
 * is to be shown, into shown (NUL-terminated).  Returns the number of bytes
 * of s it stands for (a valid UTF-8 sequence, else one byte), and in
 * *ret_columns (optional) the terminal columns it takes (a kept multi-byte
 * character counts as one: no East Asian widths).
 */
size_t cgf_escape_char(const char *s, size_t n, char shown[CGF_ESCAPE_CHAR_MAX], size_t *ret_columns);

/* The first n bytes of s escaped, malloc()ed; NULL when out of memory. */
char *cgf_escape_mem(const char *s, size_t n);

/* s escaped, malloc()ed; NULL when out of memory. */
char *cgf_escape(const char *s);

/* Writes the first n bytes of s escaped to f (errors: see ferror()). */
void cgf_escape_write(FILE *f, const char *s, size_t n);
