/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/* The out-of-line helpers of util.c: growing arrays, reading a file
 * whole, messages that name a failed call, "did you mean" hints. */

#include "macro.h"

/*
 * Append one zeroed element to a growing array of n elements of size
 * "size" and return a pointer to it, or NULL when out of memory (the array
 * is then unchanged).  The capacity is implicit (the next power of two, at
 * least 4), so arrays grown only through this helper need no capacity
 * field.  The caller increments its count after filling the element.
 */
void *array_append(void **array, size_t n, size_t size);

/* Reads all of fd into a malloc()ed buffer, at most max bytes (-EFBIG
 * beyond); the buffer is not NUL-terminated. */
int read_fd_full(int fd, size_t max, char **ret, size_t *ret_size);

/* Replaces *ret with "<what>: <strerror(-r)>" (NULL when out of memory)
 * and returns r: for messages that name the object of a failed call. */
int errno_message(char **ret, int r, const char *format, ...) _printf_(3, 4);
/* The same without errno's text, for a message that says all there is. */
int plain_message(char **ret, int r, const char *format, ...) _printf_(3, 4);

/* strdup() for a buffer that is not NUL-terminated. */
char *strndup_nul(const char *s, size_t n);

/* Edit distance (with transpositions) of two short strings; SIZE_MAX when either is
 * longer than 64 bytes (we only use it for "did you mean" hints). */
size_t edit_distance(const char *a, const char *b);

/* Is candidate close enough to word to suggest it ("did you mean")? */
bool is_close_match(const char *word, const char *candidate, size_t *ret_distance);
