/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * Small inline helpers shared by every file of the daemon: cleanup
 * attributes in the style of systemd, string comparisons and qsort()
 * wrappers.  Nothing here keeps state; util.h declares util.c's
 * functions.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define _pure_ __attribute__((pure))
#define _warn_unused_result_ __attribute__((warn_unused_result))
#define _fallthrough_ __attribute__((fallthrough))

/* Number of elements of an array (not a pointer: that fails to compile). */
#define ELEMENTSOF(x)                                                        \
	(__builtin_choose_expr(                                              \
		!__builtin_types_compatible_p(__typeof__(x), __typeof__(&*(x))), \
		sizeof(x) / sizeof((x)[0]), (void)0))

/* Hand a pointer over to someone else: returns it and leaves NULL behind. */
#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) *_pp_ = &(p);  \
		__typeof__(p) _p_ = *_pp_;   \
		*_pp_ = NULL;                \
		_p_;                         \
	})

/* Destructors return NULL, so that "p = foo_free(p)" leaves nothing behind. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)        \
	static inline void func##p(type *p) {          \
		if (*p)                                \
			*p = func(*p);                 \
	}

static inline void freep(void *p) {
	free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void fclosep(FILE **f) {
	if (*f)
		fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closep(int *fd) {
	if (*fd >= 0)
		close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

/* Hands an fd over, leaving -EBADF behind for _cleanup_close_. */
#define TAKE_FD(fd)                     \
	({                              \
		int _fd_ = (fd);        \
		(fd) = -EBADF;          \
		_fd_;                   \
	})

static inline bool streq(const char *a, const char *b) {
	return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b) {
	if (!a || !b)
		return a == b;
	return streq(a, b);
}

/* qsort() and qsort_r() that accept an empty (NULL) array. */
static inline void qsort_safe(void *base, size_t n, size_t size, int (*compare)(const void *, const void *)) {
	if (n > 1)
		qsort(base, n, size, compare);
}

static inline void qsort_r_safe(void *base, size_t n, size_t size,
				int (*compare)(const void *, const void *, void *), void *userdata) {
	if (n > 1)
		qsort_r(base, n, size, compare, userdata);
}
