/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The status record and its two renderings (see status.h).  Each level of
 * the record (kernel, list, program) has its table and its JSON function
 * next to each other, so that a new field is added to both or visibly to
 * one.  The table is written in two passes over the same cells: one to
 * measure the columns, one to print.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>

#include "attach-flags.h"
#include "escape.h"
#include "state.h"
#include "status.h"
#include "util.h"

/* ---- the record ---------------------------------------------------------- */

static void prog_clear(struct cgf_status_prog *p) {
	free(p->prog_name);
	free(p->filter);
	free(p->identity);
	free(p->attached_at);
}

static void list_clear(struct cgf_status_list *l) {
	free(l->cgroup);
	for (size_t i = 0; i < l->n_attached; i++)
		prog_clear(&l->attached[i]);
	free(l->attached);
	for (size_t i = 0; i < l->n_effective; i++)
		prog_clear(&l->effective[i]);
	free(l->effective);
	for (size_t i = 0; i < l->n_notes; i++)
		free(l->notes[i]);
	free(l->notes);
}

struct cgf_status *cgf_status_new(void) {
	return calloc(1, sizeof(struct cgf_status));
}

struct cgf_status *cgf_status_free(struct cgf_status *s) {
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n_lists; i++)
		list_clear(&s->lists[i]);
	free(s->lists);
	free(s->kernel_release);
	cgf_pending_free(s->daemon);
	cgf_missing_firewalls_free(s->missing_firewalls);
	free(s);
	return NULL;
}

/* strdup() that keeps NULL. */
static int strdup_or_null(const char *s, char **ret) {
	char *c = NULL;

	if (s && !(c = strdup(s)))
		return -ENOMEM;
	*ret = c;
	return 0;
}

int cgf_status_set_kernel(struct cgf_status *s, const char *release, const struct cgf_features *features) {
	char *r;

	if (strdup_or_null(release, &r) < 0)
		return -ENOMEM;
	free(s->kernel_release);
	s->kernel_release = r;
	s->features = features ? *features : (struct cgf_features) {};
	s->features_known = features;
	return 0;
}

/* The index of the first list not below (cgroup, direction). */
static size_t lower_bound(const struct cgf_status *s, const char *cgroup, enum cgf_direction direction) {
	size_t lo = 0, hi = s->n_lists;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cgf_list_key_compare(s->lists[mid].cgroup, s->lists[mid].direction, cgroup, direction) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct cgf_status_list *cgf_status_find(struct cgf_status *s, const char *cgroup, enum cgf_direction direction) {
	size_t i = lower_bound(s, cgroup, direction);

	if (i < s->n_lists && cgf_list_key_compare(s->lists[i].cgroup, s->lists[i].direction, cgroup, direction) == 0)
		return &s->lists[i];
	return NULL;
}

int cgf_status_add_list(struct cgf_status *s, const char *cgroup, enum cgf_direction direction,
			uint32_t mode_flags, uint64_t revision, struct cgf_status_list **ret) {
	_cleanup_free_ char *c = NULL;
	size_t at = lower_bound(s, cgroup, direction);

	if (at < s->n_lists && cgf_list_key_compare(s->lists[at].cgroup, s->lists[at].direction, cgroup, direction) == 0)
		return -EEXIST;
	c = strdup(cgroup);
	if (!c || !array_append((void **) &s->lists, s->n_lists, sizeof(*s->lists)))
		return -ENOMEM;
	/* Insert in place, so that the lists are always sorted: the kernel
	 * edge walks the tree in order, so this is nearly always the end. */
	memmove(&s->lists[at + 1], &s->lists[at], (s->n_lists - at) * sizeof(*s->lists));
	s->lists[at] = (struct cgf_status_list) {
		.cgroup = TAKE_PTR(c),
		.direction = direction,
		.mode_flags = mode_flags,
		.revision = revision,
	};
	s->n_lists++;
	if (ret)
		*ret = &s->lists[at];
	return 0;
}

static int add_prog(struct cgf_status_prog **array, size_t *n, const struct cgf_status_prog *p,
		    struct cgf_status_prog **ret) {
	struct cgf_status_prog c = *p, *e;

	c.prog_name = c.filter = c.identity = c.attached_at = NULL;
	if (strdup_or_null(p->prog_name, &c.prog_name) < 0 || strdup_or_null(p->filter, &c.filter) < 0 ||
	    strdup_or_null(p->identity, &c.identity) < 0 || strdup_or_null(p->attached_at, &c.attached_at) < 0)
		goto oom;
	e = array_append((void **) array, *n, sizeof(**array));
	if (!e)
		goto oom;
	*e = c;
	(*n)++;
	if (ret)
		*ret = e;
	return 0;
oom:
	prog_clear(&c);
	return -ENOMEM;
}

int cgf_status_list_add_attached(struct cgf_status_list *l, const struct cgf_status_prog *p,
				 struct cgf_status_prog **ret) {
	return add_prog(&l->attached, &l->n_attached, p, ret);
}

int cgf_status_list_add_effective(struct cgf_status_list *l, const struct cgf_status_prog *p,
				  struct cgf_status_prog **ret) {
	return add_prog(&l->effective, &l->n_effective, p, ret);
}

int cgf_status_list_add_note(struct cgf_status_list *l, const char *format, ...) {
	char **slot, *m;
	va_list ap;
	int k;

	va_start(ap, format);
	k = vasprintf(&m, format, ap);
	va_end(ap);
	if (k < 0)
		return -ENOMEM;
	slot = array_append((void **) &l->notes, l->n_notes, sizeof(*l->notes));
	if (!slot) {
		free(m);
		return -ENOMEM;
	}
	*slot = m;
	l->n_notes++;
	return 0;
}

/* ---- helpers of the table ------------------------------------------------ */

enum column {
	COL_POSITION,
	COL_ID,
	COL_NAME,
	COL_OWNER,
	COL_ATTACHED_AT,
	COL_FLAGS,
	COL_PASS,
	COL_DROP,
	COL_WOULD_DROP,
	_COL_MAX,
};

static const struct {
	const char *title;
	bool right; /* numbers: aligned right */
} columns[_COL_MAX] = {
	[COL_POSITION] = { "#", true },
	[COL_ID] = { "ID", true },
	[COL_NAME] = { "NAME", false },
	[COL_OWNER] = { "OWNER", false },
	[COL_ATTACHED_AT] = { "ATTACHED AT", false },
	[COL_FLAGS] = { "FLAGS", false },
	[COL_PASS] = { "PASS", false },
	[COL_DROP] = { "DROP", false },
	[COL_WOULD_DROP] = { "WOULD DROP", false },
};

#define INDENT "  "

/* Names and paths come from the kernel and the cgroup tree: a newline or
 * an escape sequence in a cgroup name must not break or colour the table.
 * Every cell made of them is escaped (escape.h) with cgf_escape() before
 * it is measured, and the measure is of what is printed. */

/* Display width, in characters: one per UTF-8 lead byte (no East Asian
 * widths; names are ASCII in practice). */
static size_t width(const char *s) {
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char) *s & 0xc0) != 0x80;
	return w;
}

/* 1536 → "1.5K": powers of 1024, one decimal rounded down (never more
 * than there was), bytes below 1024 exact. */
static void format_bytes(uint64_t v, char *buf, size_t size) {
	static const char units[] = "KMGTPE";
	unsigned k = 0;

	if (v < 1024) {
		snprintf(buf, size, "%" PRIu64 "B", v);
		return;
	}
	while (k + 1 < sizeof(units) - 1 && v >> (10 * (k + 2)) > 0)
		k++;
	snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "%c", v >> (10 * (k + 1)),
		 ((v >> (10 * k)) & 1023) * 10 / 1024, units[k]);
}

static int format_counter(uint64_t packets, uint64_t bytes, char **ret) {
	char b[32];

	format_bytes(bytes, b, sizeof(b));
	return asprintf(ret, "%" PRIu64 "/%s", packets, b) < 0 ? -ENOMEM : 0;
}

static void cells_free(char *cells[_COL_MAX]) {
	for (size_t i = 0; i < _COL_MAX; i++) {
		free(cells[i]);
		cells[i] = NULL;
	}
}

static void measure(size_t widths[_COL_MAX], char *const cells[_COL_MAX]) {
	for (size_t i = 0; i < _COL_MAX; i++) {
		size_t w = width(cells[i]);

		if (w > widths[i])
			widths[i] = w;
	}
}

static void print_row(FILE *f, const size_t widths[_COL_MAX], const char *const cells[_COL_MAX]) {
	fputs(INDENT, f);
	for (size_t i = 0; i < _COL_MAX; i++) {
		size_t pad = widths[i] - width(cells[i]);
		bool last = i + 1 == _COL_MAX;

		if (columns[i].right)
			fprintf(f, "%*s", (int) pad, "");
		fputs(cells[i], f);
		/* No trailing blanks after the last column. */
		if (!columns[i].right && !last)
			fprintf(f, "%*s", (int) pad, "");
		fputs(last ? "\n" : "  ", f);
	}
}

/* ---- kernel -------------------------------------------------------------- */

static const char *yes_no(bool b) {
	return b ? "yes" : "no";
}

static int kernel_table(const struct cgf_status *s, FILE *f) {
	_cleanup_free_ char *release = NULL;

	if (s->kernel_release && !(release = cgf_escape(s->kernel_release)))
		return -ENOMEM;
	fprintf(f, "kernel%s%s: ", release ? " " : "", release ?: "");
	if (s->features_known)
		fprintf(f, "preorder %s, ordering %s, revision %s\n", yes_no(s->features.preorder),
			yes_no(s->features.ordering), yes_no(s->features.revision));
	else
		fputs("features unknown\n", f);
	return 0;
}

static void feature_json(struct cgf_json *j, const struct cgf_status *s, const char *key, bool value) {
	if (s->features_known)
		cgf_json_field_bool(j, key, value);
	else
		cgf_json_field_null(j, key);
}

static void kernel_json(const struct cgf_status *s, struct cgf_json *j) {
	cgf_json_field_object_begin(j, "kernel");
	cgf_json_field_string(j, "release", s->kernel_release);
	feature_json(j, s, "preorder", s->features.preorder);
	feature_json(j, s, "ordering", s->features.ordering);
	feature_json(j, s, "revision", s->features.revision);
	cgf_json_object_end(j);
}

/* ---- program ------------------------------------------------------------- */

static const char *attached_at(const struct cgf_status_list *l, const struct cgf_status_prog *p) {
	return p->attached_at ?: l->cgroup;
}

/* The cells of a program's row; position SIZE_MAX: not in the effective list. */
static int prog_cells(const struct cgf_status_list *l, const struct cgf_status_prog *p, size_t position,
		      char *cells[_COL_MAX]) {
	_cleanup_free_ char *name = NULL, *filter = NULL, *at = NULL;
	int r;

	for (size_t i = 0; i < _COL_MAX; i++)
		cells[i] = NULL;
	name = cgf_escape(p->prog_name && p->prog_name[0] ? p->prog_name : "-");
	filter = cgf_escape(p->filter ?: "?");
	at = cgf_escape(attached_at(l, p));
	if (!name || !filter || !at)
		goto oom;
	if (position == SIZE_MAX)
		cells[COL_POSITION] = strdup("-");
	else if (asprintf(&cells[COL_POSITION], "%zu", position) < 0)
		cells[COL_POSITION] = NULL;
	if (asprintf(&cells[COL_ID], "%" PRIu32, p->prog_id) < 0)
		cells[COL_ID] = NULL;
	cells[COL_NAME] = TAKE_PTR(name);
	if (!p->ours)
		cells[COL_OWNER] = strdup("foreign");
	else if (asprintf(&cells[COL_OWNER], "ours: %s%s", filter,
			  p->enforce == CGF_STATUS_AUDITED ? " (audit)" : "") < 0)
		cells[COL_OWNER] = NULL;
	cells[COL_ATTACHED_AT] = TAKE_PTR(at);
	r = cgf_attach_flags_to_string(p->attach_flags | (p->preorder ? CGF_ATTACH_PREORDER : 0), &cells[COL_FLAGS]);
	if (r < 0)
		goto oom;
	if (p->has_counters) {
		if (format_counter(p->counters.pass_packets, p->counters.pass_bytes, &cells[COL_PASS]) < 0 ||
		    format_counter(p->counters.drop_packets, p->counters.drop_bytes, &cells[COL_DROP]) < 0 ||
		    format_counter(p->counters.would_drop_packets, p->counters.would_drop_bytes,
				   &cells[COL_WOULD_DROP]) < 0)
			goto oom;
	} else {
		cells[COL_PASS] = strdup("-");
		cells[COL_DROP] = strdup("-");
		cells[COL_WOULD_DROP] = strdup("-");
	}
	for (size_t i = 0; i < _COL_MAX; i++)
		if (!cells[i])
			goto oom;
	return 0;
oom:
	cells_free(cells);
	return -ENOMEM;
}

static void prog_json(const struct cgf_status_list *l, const struct cgf_status_prog *p, struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_u64(j, "id", p->prog_id);
	cgf_json_field_u64_or_null(j, "link_id", p->link_id);
	cgf_json_field_string(j, "name", p->prog_name);
	cgf_json_field_string(j, "owner", p->ours ? "ours" : "foreign");
	cgf_json_field_string(j, "filter", p->filter);
	cgf_json_field_string(j, "identity", p->identity);
	cgf_json_field_string(j, "attached_at", attached_at(l, p));
	cgf_json_field_attach_flags(j, "attach_flags", p->attach_flags);
	cgf_json_field_u64(j, "attach_flags_raw", p->attach_flags);
	cgf_json_field_bool(j, "preorder", p->preorder);
	if (p->enforce == CGF_STATUS_ENFORCE_UNKNOWN)
		cgf_json_field_null(j, "enforce");
	else
		cgf_json_field_bool(j, "enforce", p->enforce == CGF_STATUS_ENFORCED);
	if (p->has_counters) {
		cgf_json_field_object_begin(j, "counters");
		cgf_json_field_u64(j, "pass_packets", p->counters.pass_packets);
		cgf_json_field_u64(j, "pass_bytes", p->counters.pass_bytes);
		cgf_json_field_u64(j, "drop_packets", p->counters.drop_packets);
		cgf_json_field_u64(j, "drop_bytes", p->counters.drop_bytes);
		cgf_json_field_u64(j, "would_drop_packets", p->counters.would_drop_packets);
		cgf_json_field_u64(j, "would_drop_bytes", p->counters.would_drop_bytes);
		cgf_json_object_end(j);
	} else
		cgf_json_field_null(j, "counters");
	cgf_json_object_end(j);
}

/* ---- list ---------------------------------------------------------------- */

static bool list_shown(const struct cgf_status_list *l) {
	return l->n_attached > 0 || l->n_effective > 0 || l->n_notes > 0;
}

/* Is own-list program p among the effective ones?  (The kernel always runs
 * a cgroup's own programs for it, but a record need not say so: the
 * effective query may have failed, or the kernel edge skipped it.) */
static bool is_effective(const struct cgf_status_list *l, const struct cgf_status_prog *p) {
	for (size_t i = 0; i < l->n_effective; i++)
		if (l->effective[i].prog_id == p->prog_id && streq(attached_at(l, &l->effective[i]), l->cgroup))
			return true;
	return false;
}

/* Calls row() on every row of the list, in the order shown. */
static int list_rows(const struct cgf_status_list *l, void (*row)(char *const cells[_COL_MAX], void *userdata),
		     void *userdata) {
	char *cells[_COL_MAX];
	int r;

	for (size_t i = 0; i < l->n_effective; i++) {
		r = prog_cells(l, &l->effective[i], i, cells);
		if (r < 0)
			return r;
		row(cells, userdata);
		cells_free(cells);
	}
	for (size_t i = 0; i < l->n_attached; i++) {
		if (is_effective(l, &l->attached[i]))
			continue;
		r = prog_cells(l, &l->attached[i], SIZE_MAX, cells);
		if (r < 0)
			return r;
		row(cells, userdata);
		cells_free(cells);
	}
	return 0;
}

struct table {
	FILE *f;
	size_t widths[_COL_MAX];
	size_t cgroup_width;
};

static void measure_row(char *const cells[_COL_MAX], void *userdata) {
	struct table *t = userdata;

	measure(t->widths, cells);
}

static void print_row_cb(char *const cells[_COL_MAX], void *userdata) {
	struct table *t = userdata;

	print_row(t->f, t->widths, (const char *const *) cells);
}

static int list_table(const struct cgf_status_list *l, struct table *t) {
	_cleanup_free_ char *cgroup = cgf_escape(l->cgroup);
	int r;

	if (!cgroup)
		return -ENOMEM;
	fprintf(t->f, "%-*s  %-7s  mode %s  rev ", (int) (t->cgroup_width + strlen(cgroup) - width(cgroup)),
		cgroup, cgf_direction_to_string(l->direction), cgf_mode_flags_to_string(l->mode_flags));
	if (l->revision)
		fprintf(t->f, "%" PRIu64 "\n", l->revision);
	else
		fputs("-\n", t->f);
	r = list_rows(l, print_row_cb, t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n_notes; i++) {
		_cleanup_free_ char *note = cgf_escape(l->notes[i]);

		if (!note)
			return -ENOMEM;
		fprintf(t->f, INDENT "note: %s\n", note);
	}
	return 0;
}

static void list_json(const struct cgf_status_list *l, struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_string(j, "cgroup", l->cgroup);
	cgf_json_field_string(j, "direction", cgf_direction_to_string(l->direction));
	cgf_json_field_string(j, "mode", cgf_mode_flags_to_string(l->mode_flags));
	cgf_json_field_u64_or_null(j, "revision", l->revision);
	cgf_json_field_array_begin(j, "attached");
	for (size_t i = 0; i < l->n_attached; i++)
		prog_json(l, &l->attached[i], j);
	cgf_json_array_end(j);
	cgf_json_field_array_begin(j, "effective");
	for (size_t i = 0; i < l->n_effective; i++)
		prog_json(l, &l->effective[i], j);
	cgf_json_array_end(j);
	cgf_json_field_array_begin(j, "notes");
	for (size_t i = 0; i < l->n_notes; i++)
		cgf_json_string(j, l->notes[i]);
	cgf_json_array_end(j);
	cgf_json_object_end(j);
}

/* ---- the whole record ---------------------------------------------------- */

int cgf_status_render_table(const struct cgf_status *s, FILE *f) {
	struct table t = { .f = f };
	const char *titles[_COL_MAX];
	bool any = false;
	int r;

	/* Pass 1: the widths, over every row of every list shown. */
	for (size_t i = 0; i < _COL_MAX; i++) {
		titles[i] = columns[i].title;
		t.widths[i] = width(titles[i]);
	}
	for (size_t i = 0; i < s->n_lists; i++) {
		_cleanup_free_ char *cgroup = NULL;

		if (!list_shown(&s->lists[i]))
			continue;
		any = true;
		cgroup = cgf_escape(s->lists[i].cgroup);
		if (!cgroup)
			return -ENOMEM;
		if (width(cgroup) > t.cgroup_width)
			t.cgroup_width = width(cgroup);
		r = list_rows(&s->lists[i], measure_row, &t);
		if (r < 0)
			return r;
	}

	/* Pass 2: print. */
	r = kernel_table(s, f);
	if (r < 0)
		return r;
	fputc('\n', f);
	if (!any)
		fputs("no programs attached\n", f);
	else
		print_row(f, t.widths, titles);
	for (size_t i = 0, n = 0; i < s->n_lists; i++) {
		if (!list_shown(&s->lists[i]))
			continue;
		if (n++ > 0)
			fputc('\n', f);
		r = list_table(&s->lists[i], &t);
		if (r < 0)
			return r;
	}
	if (s->daemon) {
		r = cgf_pending_render_table(s->daemon, f);
		if (r < 0)
			return r;
	}
	if (s->missing_firewalls) {
		r = cgf_missing_firewalls_render_table(s->missing_firewalls, f);
		if (r < 0)
			return r;
	}
	errno = 0;
	if (fflush(f) != 0 || ferror(f))
		return errno > 0 ? -errno : -EIO;
	return 0;
}

int cgf_status_render_json(const struct cgf_status *s, struct cgf_json *j) {
	cgf_json_object_begin(j);
	kernel_json(s, j);
	cgf_json_field_array_begin(j, "lists");
	for (size_t i = 0; i < s->n_lists; i++)
		list_json(&s->lists[i], j);
	cgf_json_array_end(j);
	cgf_json_key(j, "daemon");
	if (s->daemon)
		cgf_pending_render_json(s->daemon, j);
	else
		cgf_json_null(j);
	cgf_json_key(j, "missing_firewalls");
	if (s->missing_firewalls)
		cgf_missing_firewalls_render_json(s->missing_firewalls, j);
	else
		cgf_json_null(j);
	cgf_json_object_end(j);
	return cgf_json_status(j);
}
