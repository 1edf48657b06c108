/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "tab-record.h"
#include "pending.h"
#include "util.h"

#define MAGIC "cgfilterd-pending 1"

struct cgf_pending *cgf_pending_free(struct cgf_pending *p) {
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n_lists; i++) {
		free(p->lists[i].cgroup);
		free(p->lists[i].message);
	}
	free(p->lists);
	for (size_t i = 0; i < p->n_unreachable; i++)
		free(p->unreachable[i].path);
	free(p->unreachable);
	free(p);
	return NULL;
}

int cgf_pending_format(const struct cgf_list_failures *failures, const struct cgf_cgroup_tree *tree, char **ret) {
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *text = NULL;
	size_t size = 0, n_skipped = tree ? tree->n_skipped : 0;
	int r = 0;

	f = open_memstream(&text, &size);
	if (!f)
		return -ENOMEM;
	fprintf(f, MAGIC "\nlists\t%zu\n", failures->n);
	for (size_t i = 0; r >= 0 && i < failures->n && i < CGF_PENDING_LISTS_KEPT; i++) {
		const struct cgf_list_failure *l = &failures->items[i];

		fprintf(f, "list\t%s\t%u\t%d\t", cgf_direction_to_string(l->direction), l->attempts, -l->error);
		r = cgf_tab_put_text(f, l->cgroup, CGF_PENDING_TEXT_MAX);
		fputc('\t', f);
		if (r >= 0)
			r = cgf_tab_put_text(f, l->message, CGF_PENDING_TEXT_MAX);
		fputc('\n', f);
	}
	fprintf(f, "unreachable\t%zu\n", n_skipped);
	for (size_t i = 0; r >= 0 && i < n_skipped && i < CGF_CGROUP_TREE_SKIPPED_KEPT; i++) {
		fprintf(f, "cgroup\t%d\t", -tree->skipped[i].error);
		r = cgf_tab_put_text(f, tree->skipped[i].path, CGF_PENDING_TEXT_MAX);
		fputc('\n', f);
	}
	if (r < 0)
		return r;
	if (fflush(f) != 0 || ferror(f))
		return -ENOMEM;
	fclose(TAKE_PTR(f));
	*ret = TAKE_PTR(text);
	return 0;
}

static int number(const char *s, unsigned long max, unsigned long *ret) {
	unsigned long v;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EBADMSG;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end || v > max)
		return -EBADMSG;
	*ret = v;
	return 0;
}

int cgf_pending_parse(const char *text, struct cgf_pending **ret) {
	_cleanup_(cgf_pending_freep) struct cgf_pending *p = NULL;
	_cleanup_free_ char *copy = NULL;
	char *line, *next;
	unsigned long v;
	int section = 0; /* 0: magic, 1: lists, 2: unreachable */
	int r;

	if (strlen(text) > CGF_PENDING_FILE_MAX)
		return -EFBIG;
	p = calloc(1, sizeof(*p));
	copy = strdup(text);
	if (!p || !copy)
		return -ENOMEM;
	for (line = copy; line && *line; line = next) {
		char *f[6];

		next = strchr(line, '\n');
		if (!next)
			return -EBADMSG; /* every record ends its line */
		*next++ = '\0';
		if (section == 0) {
			if (!streq(line, MAGIC))
				return -EBADMSG;
			section = 1;
		} else if (strncmp(line, "lists\t", 6) == 0 && section == 1 && p->n_lists_total == 0) {
			if (number(line + 6, SIZE_MAX, &v) < 0)
				return -EBADMSG;
			p->n_lists_total = v;
		} else if (strncmp(line, "list\t", 5) == 0 && section == 1) {
			struct cgf_pending_list *l;
			unsigned long attempts, error;
			int d;

			if (cgf_tab_fields(line + 5, f, 5) < 0 || (d = cgf_direction_from_string(f[0])) < 0 ||
			    number(f[1], UINT_MAX, &attempts) < 0 || number(f[2], 4095, &error) < 0 ||
			    p->n_lists >= CGF_PENDING_LISTS_KEPT)
				return -EBADMSG;
			l = array_append((void **) &p->lists, p->n_lists, sizeof(*p->lists));
			if (!l)
				return -ENOMEM;
			*l = (struct cgf_pending_list) {
				.cgroup = strdup(f[3]),
				.direction = (enum cgf_direction) d,
				.attempts = (unsigned) attempts,
				.error = -(int) error,
				.message = strdup(f[4]),
			};
			p->n_lists++;
			if (!l->cgroup || !l->message)
				return -ENOMEM;
		} else if (strncmp(line, "unreachable\t", 12) == 0 && section == 1) {
			if (number(line + 12, SIZE_MAX, &v) < 0)
				return -EBADMSG;
			p->n_unreachable_total = v;
			section = 2;
		} else if (strncmp(line, "cgroup\t", 7) == 0 && section == 2) {
			struct cgf_pending_cgroup *c;

			if (cgf_tab_fields(line + 7, f, 2) < 0 || number(f[0], 4095, &v) < 0 ||
			    p->n_unreachable >= CGF_CGROUP_TREE_SKIPPED_KEPT)
				return -EBADMSG;
			c = array_append((void **) &p->unreachable, p->n_unreachable, sizeof(*p->unreachable));
			if (!c)
				return -ENOMEM;
			*c = (struct cgf_pending_cgroup) { .path = strdup(f[1]), .error = -(int) v };
			p->n_unreachable++;
			if (!c->path)
				return -ENOMEM;
		} else
			return -EBADMSG;
	}
	/* Truncated, or counts that the records contradict. */
	if (section != 2 || p->n_lists > p->n_lists_total || p->n_unreachable > p->n_unreachable_total)
		return -EBADMSG;
	r = 0;
	*ret = TAKE_PTR(p);
	return r;
}

static const char *skip_reason(int error) {
	switch (error) {
	case -ELOOP:
		return "too deep";
	case -ENAMETOOLONG:
		return "path too long";
	default:
		return strerror(-error);
	}
}

int cgf_pending_render_table(const struct cgf_pending *p, FILE *f) {
	size_t w_cgroup = strlen("CGROUP");

	if (p->n_lists_total > 0) {
		for (size_t i = 0; i < p->n_lists; i++) {
			_cleanup_free_ char *shown = cgf_escape(p->lists[i].cgroup);

			if (!shown)
				return -ENOMEM;
			if (strlen(shown) > w_cgroup)
				w_cgroup = strlen(shown);
		}
		fprintf(f, "\npending lists: %zu (retried with backoff)", p->n_lists_total);
		if (p->n_lists < p->n_lists_total)
			fprintf(f, ", the first %zu", p->n_lists);
		fprintf(f, "\n  %-*s  DIRECTION  STATE     ATTEMPTS  ERROR\n", (int) w_cgroup, "CGROUP");
		for (size_t i = 0; i < p->n_lists; i++) {
			const struct cgf_pending_list *l = &p->lists[i];
			_cleanup_free_ char *cgroup = cgf_escape(l->cgroup), *message = cgf_escape(l->message);

			if (!cgroup || !message)
				return -ENOMEM;
			fprintf(f, "  %-*s  %-9s  %-8s  %-8u  %s\n", (int) w_cgroup, cgroup,
				cgf_direction_to_string(l->direction), "retrying", l->attempts, message);
		}
	}
	if (p->n_unreachable_total > 0) {
		fprintf(f, "\nunreachable cgroups: %zu", p->n_unreachable_total);
		if (p->n_unreachable < p->n_unreachable_total)
			fprintf(f, " (the first %zu)", p->n_unreachable);
		fputs("; programs attached above them apply there\n", f);
		for (size_t i = 0; i < p->n_unreachable; i++) {
			_cleanup_free_ char *path = cgf_escape(p->unreachable[i].path);

			if (!path)
				return -ENOMEM;
			fprintf(f, "  %s: %s\n", path, skip_reason(p->unreachable[i].error));
		}
	}
	return ferror(f) ? -EIO : 0;
}

void cgf_pending_render_json(const struct cgf_pending *p, struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_object_begin(j, "pending_lists");
	cgf_json_field_u64(j, "count", p->n_lists_total);
	cgf_json_field_array_begin(j, "lists");
	for (size_t i = 0; i < p->n_lists; i++) {
		const struct cgf_pending_list *l = &p->lists[i];

		cgf_json_object_begin(j);
		cgf_json_field_string(j, "cgroup", l->cgroup);
		cgf_json_field_string(j, "direction", cgf_direction_to_string(l->direction));
		cgf_json_field_string(j, "state", "retrying");
		cgf_json_field_u64(j, "attempts", l->attempts);
		cgf_json_field_i64(j, "errno", -l->error);
		cgf_json_field_string(j, "error", l->message);
		cgf_json_object_end(j);
	}
	cgf_json_array_end(j);
	cgf_json_object_end(j);
	cgf_json_field_object_begin(j, "unreachable_cgroups");
	cgf_json_field_u64(j, "count", p->n_unreachable_total);
	cgf_json_field_array_begin(j, "cgroups");
	for (size_t i = 0; i < p->n_unreachable; i++) {
		cgf_json_object_begin(j);
		cgf_json_field_string(j, "path", p->unreachable[i].path);
		cgf_json_field_i64(j, "errno", -p->unreachable[i].error);
		cgf_json_field_string(j, "error", skip_reason(p->unreachable[i].error));
		cgf_json_object_end(j);
	}
	cgf_json_array_end(j);
	cgf_json_object_end(j);
	cgf_json_object_end(j);
}
