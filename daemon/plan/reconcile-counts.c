/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcile-counts.h"
#include "util.h"

#define MAGIC "cgfilterd-reconciles 1"

static const char *const scope_names[_CGF_RECONCILE_SCOPE_MAX] = {
	[CGF_RECONCILE_FULL] = "full",
	[CGF_RECONCILE_EVENT] = "event",
};

static const char *const result_names[_CGF_RECONCILE_RESULT_MAX] = {
	[CGF_RECONCILE_SUCCESS] = "success",
	[CGF_RECONCILE_INCOMPLETE] = "incomplete",
	[CGF_RECONCILE_ERROR] = "error",
};

const char *cgf_reconcile_scope_kind_to_string(enum cgf_reconcile_scope_kind k) {
	return k < _CGF_RECONCILE_SCOPE_MAX ? scope_names[k] : NULL;
}

const char *cgf_reconcile_result_to_string(enum cgf_reconcile_result r) {
	return r < _CGF_RECONCILE_RESULT_MAX ? result_names[r] : NULL;
}

void cgf_reconcile_counts_add(struct cgf_reconcile_counts *c, enum cgf_reconcile_scope_kind k,
			      enum cgf_reconcile_result r, uint64_t now_usec) {
	c->n[k][r]++;
	c->last_usec = now_usec;
	if (r == CGF_RECONCILE_SUCCESS)
		c->last_success_usec = now_usec;
}

int cgf_reconcile_counts_format(const struct cgf_reconcile_counts *c, char **ret) {
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return -ENOMEM;
	fputs(MAGIC "\n", f);
	for (size_t k = 0; k < _CGF_RECONCILE_SCOPE_MAX; k++)
		for (size_t r = 0; r < _CGF_RECONCILE_RESULT_MAX; r++)
			fprintf(f, "count\t%s\t%s\t%" PRIu64 "\n", scope_names[k], result_names[r], c->n[k][r]);
	fprintf(f, "last\t%" PRIu64 "\nlast_success\t%" PRIu64 "\n", c->last_usec, c->last_success_usec);
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	*ret = text;
	return 0;
}

static int index_of(const char *const *names, size_t n, const char *s) {
	for (size_t i = 0; i < n; i++)
		if (streq(names[i], s))
			return (int) i;
	return -1;
}

/* A decimal u64, the whole of s: no sign, no blanks, no overflow. */
static int parse_u64(const char *s, uint64_t *ret) {
	uint64_t v = 0;

	if (!*s)
		return -EBADMSG;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t) (*s - '0')) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t) (*s - '0');
	}
	*ret = v;
	return 0;
}

int cgf_reconcile_counts_parse(const char *text, struct cgf_reconcile_counts *ret) {
	_cleanup_free_ char *copy = strdup(text);
	struct cgf_reconcile_counts c = {};
	bool seen[_CGF_RECONCILE_SCOPE_MAX][_CGF_RECONCILE_RESULT_MAX] = {};
	bool seen_last = false, seen_success = false;
	char *line, *next;

	if (!copy)
		return -ENOMEM;
	line = copy;
	next = strchr(line, '\n');
	if (!next || (size_t) (next - line) != strlen(MAGIC) || strncmp(line, MAGIC, strlen(MAGIC)) != 0)
		return -EBADMSG;
	for (line = next + 1; *line; line = next + 1) {
		char *f[4] = {};
		size_t n = 0;
		uint64_t v;

		next = strchr(line, '\n');
		if (!next)
			return -EBADMSG; /* every line ends in a newline: a cut file is refused */
		*next = 0;
		for (char *p = line; n < 4; n++) {
			f[n] = p;
			p = strchr(p, '\t');
			if (!p)
				break;
			*p++ = 0;
		}
		if (n == 3 && streq(f[0], "count")) {
			int k = index_of(scope_names, _CGF_RECONCILE_SCOPE_MAX, f[1]);
			int r = index_of(result_names, _CGF_RECONCILE_RESULT_MAX, f[2]);

			if (k < 0 || r < 0 || seen[k][r] || parse_u64(f[3], &v) < 0)
				return -EBADMSG;
			c.n[k][r] = v;
			seen[k][r] = true;
		} else if (n == 1 && streq(f[0], "last") && !seen_last && parse_u64(f[1], &v) >= 0) {
			c.last_usec = v;
			seen_last = true;
		} else if (n == 1 && streq(f[0], "last_success") && !seen_success && parse_u64(f[1], &v) >= 0) {
			c.last_success_usec = v;
			seen_success = true;
		} else
			return -EBADMSG;
	}
	for (size_t k = 0; k < _CGF_RECONCILE_SCOPE_MAX; k++)
		for (size_t r = 0; r < _CGF_RECONCILE_RESULT_MAX; r++)
			if (!seen[k][r])
				return -EBADMSG;
	if (!seen_last || !seen_success)
		return -EBADMSG;
	*ret = c;
	return 0;
}
