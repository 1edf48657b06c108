/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "list-failures.h"
#include "util.h"

void cgf_list_failures_done(struct cgf_list_failures *f) {
	for (size_t i = 0; i < f->n; i++) {
		free(f->items[i].cgroup);
		free(f->items[i].message);
	}
	free(f->items);
	*f = (struct cgf_list_failures) {};
}

const struct cgf_list_failure *cgf_list_failures_find(const struct cgf_list_failures *f, const char *cgroup,
						      enum cgf_direction direction) {
	for (size_t i = 0; i < f->n; i++)
		if (f->items[i].direction == direction && streq(f->items[i].cgroup, cgroup))
			return &f->items[i];
	return NULL;
}

int cgf_list_failures_add(struct cgf_list_failures *f, const char *cgroup, enum cgf_direction direction, int error,
			  const char *message) {
	struct cgf_list_failure *item;

	if (cgf_list_failures_find(f, cgroup, direction))
		return 0;
	item = array_append((void **) &f->items, f->n, sizeof(*f->items));
	if (!item)
		return -ENOMEM;
	*item = (struct cgf_list_failure) {
		.cgroup = strdup(cgroup),
		.direction = direction,
		.error = error,
		.message = strdup(message ?: strerror(-error)),
		.attempts = 1,
	};
	if (!item->cgroup || !item->message) {
		free(item->cgroup);
		free(item->message);
		return -ENOMEM;
	}
	f->n++;
	return 0;
}

void cgf_list_failures_forget_error(struct cgf_list_failures *f, int error) {
	size_t kept = 0;

	for (size_t i = 0; i < f->n; i++) {
		if (f->items[i].error == error) {
			free(f->items[i].cgroup);
			free(f->items[i].message);
			continue;
		}
		f->items[kept++] = f->items[i];
	}
	f->n = kept;
}

bool cgf_list_failures_cover_plan(const struct cgf_list_failures *f, const struct cgf_plan *plan) {
	for (size_t i = 0; plan && i < plan->n_actions; i++)
		if (!cgf_list_failures_find(f, plan->actions[i].cgroup, plan->actions[i].direction))
			return false;
	return true;
}

void cgf_list_failures_count_attempts(struct cgf_list_failures *f, const struct cgf_list_failures *previous) {
	for (size_t i = 0; i < f->n; i++) {
		const struct cgf_list_failure *p =
			previous ? cgf_list_failures_find(previous, f->items[i].cgroup, f->items[i].direction) : NULL;

		f->items[i].attempts = p ? p->attempts + 1 : 1;
	}
}

char *cgf_truncate_utf8(const char *s, size_t max) {
	size_t len = strlen(s), cut = 0;
	char *t;

	if (len <= max)
		return strdup(s);
	/* Whole characters only: a cut sequence would show as \xNN bytes. */
	while (cut < len) {
		size_t n = cgf_utf8_length(s + cut, len - cut) ?: 1;

		if (cut + n > max)
			break;
		cut += n;
	}
	t = malloc(cut + 4);
	if (!t)
		return NULL;
	memcpy(t, s, cut);
	memcpy(t + cut, "...", 4);
	return t;
}

char *cgf_list_failures_verdict(const struct cgf_list_failures *f) {
	_cleanup_fclose_ FILE *out = NULL;
	char *text = NULL;
	size_t size = 0;

	out = open_memstream(&text, &size);
	if (!out)
		return NULL;
	fprintf(out, "the kernel refused %zu list%s: ", f->n, f->n == 1 ? "" : "s");
	for (size_t i = 0; i < f->n && i < CGF_LIST_FAILURES_SHOWN; i++) {
		_cleanup_free_ char *cgroup = cgf_truncate_utf8(f->items[i].cgroup, CGF_LIST_FAILURES_CGROUP_MAX);

		if (!cgroup)
			break;
		/* strerror's text, not the whole message: that is in the
		 * journal, and the verdict stays one short line. */
		fprintf(out, "%s%s %s: %s", i > 0 ? "; " : "", cgroup,
			cgf_direction_to_string(f->items[i].direction), strerror(-f->items[i].error));
	}
	if (f->n > CGF_LIST_FAILURES_SHOWN)
		fprintf(out, "; and %zu more", f->n - CGF_LIST_FAILURES_SHOWN);
	if (fflush(out) != 0 || ferror(out)) {
		fclose(TAKE_PTR(out));
		free(text);
		return NULL;
	}
	fclose(TAKE_PTR(out));
	return text;
}
