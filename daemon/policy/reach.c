/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-pattern.h"
#include "macro.h"
#include "reach.h"
#include "util.h"

#define MAGIC "cgfilterd-reach 1"

void cgf_reach_done(struct cgf_reach *r) {
	for (size_t i = 0; i < r->n; i++)
		free(r->patterns[i]);
	free(r->patterns);
	*r = (struct cgf_reach) {};
}

int cgf_reach_add(struct cgf_reach *r, const char *pattern) {
	char **slot;

	for (size_t i = 0; i < r->n; i++)
		if (streq(r->patterns[i], pattern))
			return 0;
	if (r->n >= CGF_REACH_PATTERNS_MAX)
		return -E2BIG;
	slot = array_append((void **) &r->patterns, r->n, sizeof(*r->patterns));
	if (!slot || !(*slot = strdup(pattern)))
		return -ENOMEM;
	r->n++;
	return 0;
}

int cgf_reach_add_policy(struct cgf_reach *r, const struct cgf_policy *p) {
	for (size_t i = 0; i < p->n_attachments; i++) {
		int k = cgf_reach_add(r, p->attachments[i].cgroup);

		if (k < 0)
			return k;
	}
	return 0;
}

int cgf_reach_add_reach(struct cgf_reach *r, const struct cgf_reach *other) {
	for (size_t i = 0; i < other->n; i++) {
		int k = cgf_reach_add(r, other->patterns[i]);

		if (k < 0)
			return k;
	}
	return 0;
}

bool cgf_reach_enters(const char *path, void *userdata) {
	const struct cgf_reach *r = userdata;

	for (size_t i = 0; i < r->n; i++)
		if (cgf_cgroup_pattern_may_reach(r->patterns[i], path))
			return true;
	return false;
}

int cgf_reach_format(const struct cgf_reach *r, char **ret) {
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *text = NULL;
	size_t size = 0;

	f = open_memstream(&text, &size);
	if (!f)
		return -ENOMEM;
	fputs(MAGIC "\n", f);
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "%s\n", r->patterns[i]);
	if (fflush(f) != 0 || ferror(f))
		return -ENOMEM;
	fclose(TAKE_PTR(f));
	if (size > CGF_REACH_FILE_MAX)
		return -E2BIG;
	*ret = TAKE_PTR(text);
	return 0;
}

int cgf_reach_parse(const char *text, struct cgf_reach *ret) {
	struct cgf_reach r = {};
	_cleanup_free_ char *copy = NULL;
	char *line, *next;
	bool magic = false;
	int k = 0;

	if (strlen(text) > CGF_REACH_FILE_MAX)
		return -EBADMSG;
	copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	for (line = copy; *line; line = next) {
		next = strchr(line, '\n');
		if (!next) {
			k = -EBADMSG; /* every line ends, or the file was cut */
			break;
		}
		*next++ = '\0';
		if (!magic) {
			magic = streq(line, MAGIC);
			if (!magic) {
				k = -EBADMSG;
				break;
			}
			continue;
		}
		if (cgf_cgroup_pattern_check(line)) {
			k = -EBADMSG;
			break;
		}
		k = cgf_reach_add(&r, line);
		if (k < 0) {
			k = k == -E2BIG ? -EBADMSG : k;
			break;
		}
	}
	if (k >= 0 && !magic)
		k = -EBADMSG; /* empty: not even the magic line */
	if (k < 0) {
		cgf_reach_done(&r);
		return k;
	}
	*ret = r;
	return 0;
}
