/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdarg.h>

#include "util.h"

void *array_append(void **array, size_t n, size_t size) {
	char *p = *array;

	/* Grow at 0, 4, 8, 16, ...: the capacity is a function of n alone. */
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
		size_t cap = n == 0 ? 4 : n * 2;

		if (cap < n || size == 0 || cap > SIZE_MAX / size)
			return NULL;
		p = realloc(p, cap * size);
		if (!p)
			return NULL;
		*array = p;
	}

	memset(p + n * size, 0, size);
	return p + n * size;
}

char *strndup_nul(const char *s, size_t n) {
	char *p;

	if (n == SIZE_MAX)
		return NULL;
	p = malloc(n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

size_t edit_distance(const char *a, const char *b) {
	size_t n = strlen(a), m = strlen(b), rows[3][65];
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	/* Optimal string alignment: insertions, deletions, substitutions and
	 * transpositions of neighbours ("wbe" for "web") cost one each. */
	if (n > 64 || m > 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= m; j++)
		prev[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t *t;

		cur[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[m];
}

bool is_close_match(const char *word, const char *candidate, size_t *ret_distance) {
	size_t d = edit_distance(word, candidate), limit = strlen(word) / 3;

	if (limit < 1)
		limit = 1;
	if (limit > 2)
		limit = 2;
	if (d > limit)
		return false;
	if (ret_distance)
		*ret_distance = d;
	return true;
}

int read_fd_full(int fd, size_t max, char **ret, size_t *ret_size) {
	_cleanup_free_ char *buf = NULL;
	size_t size = 0, alloc = 0;

	for (;;) {
		ssize_t k;

		if (size == alloc) {
			char *n;

			if (alloc >= max + 1)
				return -EFBIG;
			alloc = alloc ? alloc * 2 : 16384;
			if (alloc > max + 1)
				alloc = max + 1;
			n = realloc(buf, alloc);
			if (!n)
				return -ENOMEM;
			buf = n;
		}
		k = read(fd, buf + size, alloc - size);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		size += (size_t) k;
	}
	if (size > max)
		return -EFBIG;
	*ret = TAKE_PTR(buf);
	*ret_size = size;
	return 0;
}

int errno_message(char **ret, int r, const char *format, ...) {
	_cleanup_free_ char *what = NULL;
	va_list va;

	va_start(va, format);
	if (vasprintf(&what, format, va) < 0)
		what = NULL;
	va_end(va);
	free(*ret);
	if (asprintf(ret, "%s: %s", what ?: "?", strerror(-r)) < 0)
		*ret = NULL;
	return r;
}

int plain_message(char **ret, int r, const char *format, ...) {
	va_list va;

	free(*ret);
	va_start(va, format);
	if (vasprintf(ret, format, va) < 0)
		*ret = NULL;
	va_end(va);
	return r;
}
