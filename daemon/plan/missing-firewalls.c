/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "tab-record.h"
#include "list-failures.h"
#include "missing-firewalls.h"
#include "unit-firewalls.h"
#include "util.h"

#define MAGIC "cgfilterd-missing-firewalls 1"

static void item_clear(struct cgf_missing_firewall *e) {
	free(e->unit);
	free(e->cgroup);
	free(e->settings);
	*e = (struct cgf_missing_firewall) {};
}

void cgf_missing_firewalls_done(struct cgf_missing_firewalls *m) {
	for (size_t i = 0; i < m->n; i++)
		item_clear(&m->items[i]);
	free(m->items);
	*m = (struct cgf_missing_firewalls) {};
}

struct cgf_missing_firewalls *cgf_missing_firewalls_free(struct cgf_missing_firewalls *m) {
	if (!m)
		return NULL;
	cgf_missing_firewalls_done(m);
	free(m);
	return NULL;
}

int cgf_missing_firewalls_add(struct cgf_missing_firewalls *m, const char *unit, const char *cgroup,
			      unsigned directions, const char *settings) {
	struct cgf_missing_firewall *e = array_append((void **) &m->items, m->n, sizeof(*e));

	if (!e)
		return -ENOMEM;
	*e = (struct cgf_missing_firewall) {
		.unit = strdup(unit), .cgroup = strdup(cgroup), .directions = directions, .settings = strdup(settings),
	};
	if (!e->unit || !e->cgroup || !e->settings) {
		item_clear(e);
		return -ENOMEM;
	}
	m->n++;
	m->n_total++;
	return 0;
}

const struct cgf_missing_firewall *cgf_missing_firewalls_find(const struct cgf_missing_firewalls *m,
								const char *unit, const char *cgroup) {
	for (size_t i = 0; i < m->n; i++)
		if (streq(m->items[i].unit, unit) && streq(m->items[i].cgroup, cgroup))
			return &m->items[i];
	return NULL;
}

int cgf_missing_firewalls_merge(struct cgf_missing_firewalls *m, struct cgf_missing_firewalls *from) {
	for (size_t i = 0; i < from->n; i++) {
		struct cgf_missing_firewall *e = &from->items[i], *slot = NULL;

		for (size_t j = 0; j < m->n && !slot; j++)
			if (streq(m->items[j].unit, e->unit) && streq(m->items[j].cgroup, e->cgroup))
				slot = &m->items[j];
		if (!slot) {
			slot = array_append((void **) &m->items, m->n, sizeof(*slot));
			if (!slot)
				return -ENOMEM;
			m->n++;
			m->n_total++;
		}
		item_clear(slot);
		*slot = *e;
		*e = (struct cgf_missing_firewall) {};
	}
	cgf_missing_firewalls_done(from);
	return 0;
}

/* ---- the file ------------------------------------------------------------ */

static const char *directions_word(unsigned d) {
	return d == CGF_DIRECTIONS_BOTH ? "ingress,egress" : d == CGF_DIRECTION_BIT(CGF_INGRESS) ? "ingress" : "egress";
}

int cgf_missing_firewalls_format(const struct cgf_missing_firewalls *m, char **ret) {
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *text = NULL;
	size_t size = 0;
	int r = 0;

	f = open_memstream(&text, &size);
	if (!f)
		return -ENOMEM;
	fprintf(f, MAGIC "\nunits\t%zu\n", m->n);
	for (size_t i = 0; r >= 0 && i < m->n && i < CGF_MISSING_FIREWALLS_KEPT; i++) {
		fprintf(f, "unit\t%s\t", directions_word(m->items[i].directions));
		r = cgf_tab_put_text(f, m->items[i].unit, CGF_MISSING_FIREWALLS_TEXT_MAX);
		fputc('\t', f);
		if (r >= 0)
			r = cgf_tab_put_text(f, m->items[i].cgroup, CGF_MISSING_FIREWALLS_TEXT_MAX);
		fputc('\t', f);
		if (r >= 0)
			r = cgf_tab_put_text(f, m->items[i].settings, CGF_MISSING_FIREWALLS_TEXT_MAX);
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

static int parse_directions(const char *s, unsigned *ret) {
	static const unsigned all[] = { CGF_DIRECTION_BIT(CGF_INGRESS), CGF_DIRECTION_BIT(CGF_EGRESS),
					CGF_DIRECTIONS_BOTH };

	for (size_t i = 0; i < ELEMENTSOF(all); i++)
		if (streq(s, directions_word(all[i]))) {
			*ret = all[i];
			return 0;
		}
	return -EBADMSG;
}

static int parse_total(const char *s, size_t *ret) {
	unsigned long long v;
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return -EBADMSG;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end || v > SIZE_MAX)
		return -EBADMSG;
	*ret = (size_t) v;
	return 0;
}

static int parse_line(struct cgf_missing_firewalls *m, char *line, bool *seen_total) {
	char *f[4];
	unsigned d;
	int r;

	if (strncmp(line, "units\t", 6) == 0 && !*seen_total) {
		*seen_total = true;
		return parse_total(line + 6, &m->n_total);
	}
	if (strncmp(line, "unit\t", 5) != 0 || !*seen_total || m->n >= CGF_MISSING_FIREWALLS_KEPT ||
	    cgf_tab_fields(line + 5, f, 4) < 0 || parse_directions(f[0], &d) < 0)
		return -EBADMSG;
	r = cgf_missing_firewalls_add(m, f[1], f[2], d, f[3]);
	m->n_total--; /* the file's count is the total */
	return r;
}

int cgf_missing_firewalls_parse(const char *text, struct cgf_missing_firewalls **ret) {
	_cleanup_(cgf_missing_firewalls_freep) struct cgf_missing_firewalls *m = NULL;
	_cleanup_free_ char *copy = NULL;
	bool magic = false, seen_total = false;
	char *line, *next;
	int r;

	if (strlen(text) > CGF_MISSING_FIREWALLS_FILE_MAX)
		return -EFBIG;
	m = calloc(1, sizeof(*m));
	copy = strdup(text);
	if (!m || !copy)
		return -ENOMEM;
	for (line = copy; *line; line = next) {
		next = strchr(line, '\n');
		if (!next)
			return -EBADMSG; /* every record ends its line */
		*next++ = '\0';
		if (!magic) {
			if (!streq(line, MAGIC))
				return -EBADMSG;
			magic = true;
			continue;
		}
		r = parse_line(m, line, &seen_total);
		if (r < 0)
			return r;
	}
	if (!seen_total || m->n > m->n_total)
		return -EBADMSG;
	*ret = TAKE_PTR(m);
	return 0;
}

/* ---- showing ------------------------------------------------------------- */

static size_t shown_width(const char *s, size_t at_least) {
	_cleanup_free_ char *e = cgf_escape(s);
	size_t n = e ? strlen(e) : 0;

	return n > at_least ? n : at_least;
}

int cgf_missing_firewalls_render_table(const struct cgf_missing_firewalls *m, FILE *f) {
	size_t w_unit = strlen("UNIT"), w_cgroup = strlen("CGROUP"), w_dir = strlen("MISSING");

	if (m->n_total == 0)
		return 0;
	for (size_t i = 0; i < m->n; i++) {
		w_unit = shown_width(m->items[i].unit, w_unit);
		w_cgroup = shown_width(m->items[i].cgroup, w_cgroup);
		w_dir = shown_width(cgf_directions_to_string(m->items[i].directions), w_dir);
	}
	fprintf(f, "\nunits without their firewall: %zu", m->n_total);
	if (m->n < m->n_total)
		fprintf(f, ", the first %zu", m->n);
	fputs(" (systemd's attach refused below a none of ours)\n", f);
	fprintf(f, "  %-*s  %-*s  %-*s  SETTINGS\n", (int) w_unit, "UNIT", (int) w_cgroup, "CGROUP", (int) w_dir,
		"MISSING");
	for (size_t i = 0; i < m->n; i++) {
		const struct cgf_missing_firewall *e = &m->items[i];
		_cleanup_free_ char *unit = cgf_escape(e->unit), *cgroup = cgf_escape(e->cgroup),
				    *settings = cgf_escape(e->settings);

		if (!unit || !cgroup || !settings)
			return -ENOMEM;
		fprintf(f, "  %-*s  %-*s  %-*s  %s\n", (int) w_unit, unit, (int) w_cgroup, cgroup, (int) w_dir,
			cgf_directions_to_string(e->directions), settings);
	}
	return ferror(f) ? -EIO : 0;
}

void cgf_missing_firewalls_render_json(const struct cgf_missing_firewalls *m, struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_u64(j, "count", m->n_total);
	cgf_json_field_array_begin(j, "units");
	for (size_t i = 0; i < m->n; i++) {
		const struct cgf_missing_firewall *e = &m->items[i];

		cgf_json_object_begin(j);
		cgf_json_field_string(j, "unit", e->unit);
		cgf_json_field_string(j, "cgroup", e->cgroup);
		cgf_json_field_array_begin(j, "directions");
		for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++)
			if (e->directions & CGF_DIRECTION_BIT(d))
				cgf_json_string(j, cgf_direction_to_string(d));
		cgf_json_array_end(j);
		cgf_json_field_string(j, "settings", e->settings);
		cgf_json_object_end(j);
	}
	cgf_json_array_end(j);
	cgf_json_object_end(j);
}
