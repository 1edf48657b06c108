/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * A few assertion macros for the unit tests: each failed check prints
 * where and what, and counts; test_finish() reports and sets the exit
 * status (meson counts a non-zero exit as a failure).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_state {
	unsigned checks, failures;
};

#define CHECK(state, cond, ...)                                                       \
	do {                                                                          \
		(state)->checks++;                                                    \
		if (!(cond)) {                                                        \
			(state)->failures++;                                          \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
		}                                                                     \
	} while (0)

/* Compares two strings and shows both on a mismatch. */
#define CHECK_STREQ(state, got, want, what)                                           \
	do {                                                                          \
		const char *_g = (got), *_w = (want);                                 \
		(state)->checks++;                                                    \
		if (!_g || !_w || strcmp(_g, _w) != 0) {                              \
			(state)->failures++;                                          \
			fprintf(stderr, "%s:%d: %s: mismatch\n--- want\n%s--- got\n%s---\n", __FILE__, \
				__LINE__, (what), _w ? _w : "(null)\n", _g ? _g : "(null)\n"); \
		}                                                                     \
	} while (0)

/* Fatal: setup that the rest depends on. */
#define REQUIRE(cond)                                                                 \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: required: %s\n", __FILE__, __LINE__, #cond); \
			exit(EXIT_FAILURE);                                           \
		}                                                                     \
	} while (0)

static inline int test_finish(const struct test_state *s, const char *name) {
	printf("%s: %u checks, %u failed\n", name, s->checks, s->failures);
	return s->failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
