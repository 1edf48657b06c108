/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Coexistence with other controllers below a `mode: none` (coexist.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-pattern.h"
#include "coexist.h"
#include "list-failures.h"
#include "util.h"

static void lockout_clear(struct cgf_lockout *l) {
	for (size_t i = 0; i < l->n_units; i++) {
		free(l->units[i].unit);
		free(l->units[i].cgroup);
	}
	free(l->units);
	for (size_t i = 0; i < l->n_progs; i++) {
		free(l->progs[i].cgroup);
		free(l->progs[i].prog_name);
	}
	free(l->progs);
}

void cgf_coexist_done(struct cgf_coexist *c) {
	for (size_t i = 0; i < c->n_lockouts; i++)
		lockout_clear(&c->lockouts[i]);
	free(c->lockouts);
	*c = (struct cgf_coexist) {};
}

bool cgf_coexist_has_none(const struct cgf_policy *p, bool refusable) {
	for (size_t i = 0; i < p->n_attachments; i++) {
		const struct cgf_attachment *a = &p->attachments[i];

		if (a->mode == CGF_MODE_NONE && (!refusable || a->foreign_below != CGF_FOREIGN_BELOW_LOCK_OUT))
			return true;
	}
	return false;
}

/* May the last component of a matching path be a slice or a unit's? */
static bool may_be_unit_name(const char *component) {
	static const char *const names[] = { "*.slice", "*.service", "*.scope", "*.socket", "*.mount", "*.swap" };

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (cgf_component_globs_may_overlap(component, names[i]))
			return true;
	return false;
}

/* May a cgroup the pattern matches be a unit's, or lie above one? */
static bool pattern_may_hold_units(const char *pattern) {
	_cleanup_free_ char *copy = strdup(pattern);
	char *save = NULL, *c, *next;

	if (!copy || streq(pattern, "."))
		return true;
	for (c = strtok_r(copy, "/", &save); c; c = next) {
		next = strtok_r(NULL, "/", &save);
		if (streq(c, "**"))
			return true; /* zero or more slices, then anything */
		if (!next)
			return may_be_unit_name(c);
		if (!cgf_component_globs_may_overlap(c, "*.slice"))
			return false; /* no unit of PID 1's lies below a non-slice */
	}
	return true;
}

bool cgf_coexist_may_hold_units(const struct cgf_policy *p, bool refusable) {
	for (size_t i = 0; i < p->n_attachments; i++) {
		const struct cgf_attachment *a = &p->attachments[i];

		if (a->mode == CGF_MODE_NONE && a->cgroup &&
		    (!refusable || a->foreign_below != CGF_FOREIGN_BELOW_LOCK_OUT) && pattern_may_hold_units(a->cgroup))
			return true;
	}
	return false;
}

/* ---- what a none attachment locks out ------------------------------------ */

/* The directions an attachment puts a none on: its filters'. */
static unsigned none_directions(const struct cgf_policy *p, const struct cgf_attachment *a) {
	unsigned d = 0;

	if (a->mode != CGF_MODE_NONE || !a->cgroup)
		return 0;
	for (size_t i = 0; i < a->n_filters; i++) {
		const struct cgf_filter *f = cgf_policy_find_filter(p, a->filters[i].filter);

		if (f)
			d |= CGF_DIRECTION_BIT(f->direction);
	}
	return d;
}

/*
 * Does path lie below a cgroup that pattern matches (or_at: or is it
 * one)?  Each ancestor of path is matched in turn, from the root down:
 * the pattern, not the cgroups that exist, decides, so a unit that is
 * not running counts as well.
 */
static int below_match(const char *pattern, const char *path, bool or_at, bool *ret) {
	_cleanup_free_ char *buf = strdup(path);
	bool root = streq(path, ".");

	if (!buf)
		return -ENOMEM;
	*ret = false;
	if ((!root || or_at) && cgf_cgroup_pattern_match(pattern, ".")) {
		*ret = true;
		return 0;
	}
	if (root)
		return 0;
	for (char *slash = strchr(buf, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (cgf_cgroup_pattern_match(pattern, buf)) {
			*ret = true;
			return 0;
		}
		*slash = '/';
	}
	*ret = or_at && cgf_cgroup_pattern_match(pattern, path);
	return 0;
}

static int add_unit(struct cgf_lockout *l, const struct cgf_unit_firewall *u, unsigned settings, unsigned inherited,
		    unsigned directions) {
	struct cgf_lockout_unit *e = array_append((void **) &l->units, l->n_units, sizeof(*e));

	if (!e)
		return -ENOMEM;
	*e = (struct cgf_lockout_unit) {
		.unit = strdup(u->unit), .cgroup = strdup(u->cgroup), .active = u->active,
		.settings = settings, .inherited = inherited, .directions = directions,
	};
	l->n_units++;
	return e->unit && e->cgroup ? 0 : -ENOMEM;
}

static int find_units(struct cgf_lockout *l, const char *pattern, const struct cgf_unit_firewalls *units) {
	int r;

	for (size_t i = 0; units && i < units->n; i++) {
		const struct cgf_unit_firewall *u = &units->units[i];
		unsigned inherited, settings = cgf_unit_firewalls_effective(units, u, &inherited);
		unsigned d = cgf_unit_settings_directions(settings) & l->directions;
		bool below;

		if (d == 0)
			continue;
		/* At the none's own cgroup too: systemd's multi attach meets a
		 * list of another mode there, which the kernel refuses as well. */
		r = below_match(pattern, u->cgroup, true, &below);
		if (r >= 0 && below)
			r = add_unit(l, u, settings, inherited, d);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool is_unit_cgroup(const struct cgf_lockout *l, const char *cgroup) {
	for (size_t i = 0; i < l->n_units; i++)
		if (streq(l->units[i].cgroup, cgroup))
			return true;
	return false;
}

static int add_prog(struct cgf_lockout *l, const struct cgf_actual_list *list, const struct cgf_actual_entry *e) {
	struct cgf_lockout_prog *p = array_append((void **) &l->progs, l->n_progs, sizeof(*p));

	if (!p)
		return -ENOMEM;
	*p = (struct cgf_lockout_prog) {
		.cgroup = strdup(list->cgroup), .direction = list->direction, .prog_id = e->prog_id,
		.prog_name = strdup(e->prog_name ?: ""),
	};
	l->n_progs++;
	return p->cgroup && p->prog_name ? 0 : -ENOMEM;
}

/* Foreign programs attached now strictly below: on the none's own list
 * they are the planner's to report (the list is blocked). */
static int find_progs(struct cgf_lockout *l, const char *pattern, const struct cgf_actual *actual) {
	int r;

	for (size_t i = 0; actual && i < actual->n_lists; i++) {
		const struct cgf_actual_list *list = &actual->lists[i];
		bool below, foreign = false;

		if (!(l->directions & CGF_DIRECTION_BIT(list->direction)) || is_unit_cgroup(l, list->cgroup))
			continue;
		for (size_t j = 0; j < list->n_entries; j++)
			foreign = foreign || !list->entries[j].ours;
		if (!foreign)
			continue;
		r = below_match(pattern, list->cgroup, false, &below);
		if (r < 0)
			return r;
		for (size_t j = 0; below && j < list->n_entries; j++) {
			if (list->entries[j].ours)
				continue;
			r = add_prog(l, list, &list->entries[j]);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int check_attachment(const struct cgf_policy *p, size_t ai, const struct cgf_unit_firewalls *units,
			    const struct cgf_actual *actual, struct cgf_coexist *c) {
	const struct cgf_attachment *a = &p->attachments[ai];
	struct cgf_lockout l = {
		.attachment = ai,
		.directions = none_directions(p, a),
		.allowed = a->foreign_below == CGF_FOREIGN_BELOW_LOCK_OUT,
	};
	struct cgf_lockout *slot;
	int r;

	if (l.directions == 0)
		return 0;
	r = find_units(&l, a->cgroup, units);
	if (r >= 0)
		r = find_progs(&l, a->cgroup, actual);
	if (r >= 0 && l.n_units + l.n_progs == 0)
		return 0;
	slot = r >= 0 ? array_append((void **) &c->lockouts, c->n_lockouts, sizeof(*slot)) : NULL;
	if (!slot) {
		lockout_clear(&l);
		return r < 0 ? r : -ENOMEM;
	}
	*slot = l;
	c->n_lockouts++;
	c->n_refused += !l.allowed;
	return 0;
}

int cgf_coexist_check(const struct cgf_policy *p, const struct cgf_unit_firewalls *units,
		      const struct cgf_actual *actual, struct cgf_coexist *ret) {
	int r;

	*ret = (struct cgf_coexist) {};
	for (size_t i = 0; i < p->n_attachments; i++) {
		r = check_attachment(p, i, units, actual, ret);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- saying it ----------------------------------------------------------- */

static const char *plural(size_t n) {
	return n == 1 ? "" : "s";
}

/* "the programs systemd attaches for 2 units (...); and 1 foreign program attached now (...)". */
static int what_locked_out(const struct cgf_lockout *l, char **ret) {
	_cleanup_free_ char *units = NULL, *progs = NULL;

	/* asprintf() leaves its pointer undefined when it fails. */
	if (l->n_units > 0 &&
	    asprintf(&units, "the programs systemd attaches for %zu unit%s (their IP firewall or accounting: the "
			     "kernel refuses the attach below a none with EPERM, and systemd then starts the unit "
			     "without them)",
		     l->n_units, plural(l->n_units)) < 0) {
		units = NULL;
		return -ENOMEM;
	}
	if (l->n_progs > 0 &&
	    asprintf(&progs, "%zu foreign program%s attached now (each replaces ours for its subtree, and its "
			     "owner could not change it any more)",
		     l->n_progs, plural(l->n_progs)) < 0) {
		progs = NULL;
		return -ENOMEM;
	}
	if (asprintf(ret, "%s%s%s", units ?: "", units && progs ? "; and " : "", progs ?: "") < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void note_unit(struct cgf_diags *d, const struct cgf_lockout_unit *u) {
	_cleanup_free_ char *settings = NULL;

	if (cgf_unit_settings_describe(u->settings, u->inherited, u->directions, &settings) < 0) {
		d->oom = true;
		return;
	}
	cgf_diags_note(d, (struct cgf_pos) {}, "unit %s (%s%s): %s, on %s", u->unit, u->cgroup,
		       u->active ? "" : ", not running", settings, cgf_directions_to_string(u->directions));
}

static void note_prog(struct cgf_diags *d, const struct cgf_lockout_prog *p) {
	cgf_diags_note(d, (struct cgf_pos) {}, "program '%s' (id %" PRIu32 ") on %s %s", p->prog_name, p->prog_id,
		       p->cgroup, cgf_direction_to_string(p->direction));
}

/* What to write instead: a multi guard cannot be weakened from below. */
static void note_fix(struct cgf_diags *d, const struct cgf_features *features) {
	if (features->preorder)
		cgf_diags_note(d, (struct cgf_pos) {},
			       "write 'mode: multi' and 'preorder: true' instead: these filters then run first "
			       "and a packet must pass every program, so nothing below can weaken them; or, if "
			       "locking these out is meant (a container host's tenants), add 'foreign-below: "
			       "lock-out' to this attachment");
	else
		cgf_diags_note(d, (struct cgf_pos) {},
			       "write 'mode: multi' instead: a packet must pass every program, so nothing below "
			       "can weaken these filters ('preorder: true', to run them first, needs the "
			       "kernel-patch series); or, if locking these out is meant (a container host's "
			       "tenants), add 'foreign-below: lock-out' to this attachment");
}

static void report_one(const struct cgf_lockout *l, const struct cgf_policy *p, const struct cgf_features *features,
		       struct cgf_diags *d) {
	const struct cgf_attachment *a = &p->attachments[l->attachment];
	_cleanup_free_ char *what = NULL;
	size_t named = 0;

	if (what_locked_out(l, &what) < 0) {
		d->oom = true;
		return;
	}
	cgf_diags_add(d, CGF_ERROR, a->mode_pos, "mode none on '%s' (%s) would lock out what other controllers "
		      "attach below it: %s", a->cgroup, cgf_directions_to_string(l->directions), what);
	for (size_t i = 0; i < l->n_units && named < CGF_COEXIST_NAMED_MAX; i++, named++)
		note_unit(d, &l->units[i]);
	for (size_t i = 0; i < l->n_progs && named < CGF_COEXIST_NAMED_MAX; i++, named++)
		note_prog(d, &l->progs[i]);
	if (l->n_units + l->n_progs > named)
		cgf_diags_note(d, (struct cgf_pos) {}, "... and %zu more", l->n_units + l->n_progs - named);
	note_fix(d, features);
}

void cgf_coexist_report(const struct cgf_coexist *c, const struct cgf_policy *p, const struct cgf_features *features,
			struct cgf_diags *diags) {
	for (size_t i = 0; i < c->n_lockouts; i++)
		if (!c->lockouts[i].allowed)
			report_one(&c->lockouts[i], p, features, diags);
}

/* Names in the one-line summary are cut to this many bytes: the line
 * stays short whatever the units are called. */
#define SUMMARY_NAME_MAX 128

/* "'system.slice' (policy.yaml:9:11) locks out unit a.service, unit b.service and 1 more". */
static void summary_one(FILE *f, const struct cgf_lockout *l, const struct cgf_policy *p) {
	const struct cgf_attachment *a = &p->attachments[l->attachment];
	size_t named = 0;

	fprintf(f, "'%s' (%s:%u:%u) locks out ", a->cgroup, a->mode_pos.source ? a->mode_pos.source->name : "?",
		a->mode_pos.line, a->mode_pos.column);
	for (size_t i = 0; i < l->n_units && named < 3; i++, named++) {
		_cleanup_free_ char *unit = cgf_truncate_utf8(l->units[i].unit, SUMMARY_NAME_MAX);

		fprintf(f, "%sunit %s", named ? ", " : "", unit ?: "?");
	}
	for (size_t i = 0; i < l->n_progs && named < 3; i++, named++) {
		_cleanup_free_ char *cgroup = cgf_truncate_utf8(l->progs[i].cgroup, SUMMARY_NAME_MAX);

		fprintf(f, "%sprogram %" PRIu32 " on %s", named ? ", " : "", l->progs[i].prog_id, cgroup ?: "?");
	}
	if (l->n_units + l->n_progs > named)
		fprintf(f, " and %zu more", l->n_units + l->n_progs - named);
}

int cgf_coexist_summary(const struct cgf_coexist *c, const struct cgf_policy *p, char **ret) {
	_cleanup_free_ char *s = NULL;
	size_t size = 0, said = 0;
	FILE *f = open_memstream(&s, &size);

	if (!f)
		return -ENOMEM;
	fputs("mode none would lock out other controllers' programs below it: ", f);
	for (size_t i = 0; i < c->n_lockouts; i++) {
		if (c->lockouts[i].allowed)
			continue;
		if (said == 2) {
			fprintf(f, "; and %zu more attachments", c->n_refused - said);
			break;
		}
		fputs(said ? "; " : "", f);
		summary_one(f, &c->lockouts[i], p);
		said++;
	}
	fputs("; write mode multi (with preorder: true where the kernel has it), or foreign-below: lock-out", f);
	if (fclose(f) != 0 || !s)
		return -ENOMEM;
	*ret = TAKE_PTR(s);
	return 0;
}

/* ---- while running ------------------------------------------------------- */

static int compare_str(const void *a, const void *b) {
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static bool has_foreign(const struct cgf_actual *actual, const char *cgroup, enum cgf_direction d) {
	const struct cgf_actual_list *l = cgf_actual_find(actual, cgroup, d);

	for (size_t i = 0; l && i < l->n_entries; i++)
		if (!l->entries[i].ours)
			return true;
	return false;
}

/* The directions in which u, an existing cgroup, misses the programs of
 * settings below a none list of desired. */
static unsigned missing_directions(const struct cgf_desired *desired, const struct cgf_actual *actual,
				   const struct cgf_unit_firewall *u, unsigned settings) {
	unsigned asks = cgf_unit_settings_directions(settings), missing = 0;

	for (size_t i = 0; i < desired->n_lists; i++) {
		const struct cgf_desired_list *l = &desired->lists[i];

		if (l->mode != CGF_MODE_NONE || !(asks & CGF_DIRECTION_BIT(l->direction)) ||
		    (!streq(u->cgroup, l->cgroup) && !cgf_cgroup_is_below(u->cgroup, l->cgroup)))
			continue;
		if (!has_foreign(actual, u->cgroup, l->direction))
			missing |= CGF_DIRECTION_BIT(l->direction);
	}
	return missing;
}

int cgf_coexist_missing(const struct cgf_desired *desired, const struct cgf_actual *actual,
			const struct cgf_unit_firewalls *units, char *const *paths, size_t n_paths,
			struct cgf_missing_firewalls *ret) {
	_cleanup_free_ char **sorted = NULL;
	int r;

	if (!units || units->n == 0)
		return 0;
	sorted = calloc(n_paths + 1, sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, paths, n_paths * sizeof(*sorted));
	qsort(sorted, n_paths, sizeof(*sorted), compare_str);
	for (size_t i = 0; i < units->n; i++) {
		const struct cgf_unit_firewall *u = &units->units[i];
		_cleanup_free_ char *text = NULL;
		unsigned inherited, settings, d;
		const char *key = u->cgroup;

		if (!bsearch(&key, sorted, n_paths, sizeof(*sorted), compare_str))
			continue; /* not running: nothing to miss */
		settings = cgf_unit_firewalls_effective(units, u, &inherited);
		d = missing_directions(desired, actual, u, settings);
		if (d == 0)
			continue;
		/* systemd installs a unit's programs in one go and stops at the
		 * first refusal (egress comes first): the unit's other lists lack
		 * them too, none of ours above or not. */
		for (unsigned other = 0; other < _CGF_DIRECTION_MAX; other++)
			if ((cgf_unit_settings_directions(settings) & CGF_DIRECTION_BIT(other)) &&
			    !has_foreign(actual, u->cgroup, other))
				d |= CGF_DIRECTION_BIT(other);
		r = cgf_unit_settings_describe(settings, inherited, d, &text);
		if (r >= 0)
			r = cgf_missing_firewalls_add(ret, u->unit, u->cgroup, d, text);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- where new units appear ---------------------------------------------- */

static const char *last_component(const char *path) {
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}


/* Is path a slice (or the root) that pattern matches, or below one
 * through slices only?  buf: room for path. */
static bool slices_below(const char *pattern, const char *path, char *buf, size_t size) {
	snprintf(buf, size, "%s", path);
	for (;;) {
		char *slash;

		/* Each level, the matched one too: a slice of systemd's. */
		if (!streq(buf, ".") && !cgf_unit_is_slice(last_component(buf)))
			return false;
		if (cgf_cgroup_pattern_match(pattern, buf))
			return true;
		if (streq(buf, "."))
			return false;
		/* Up one level, in place. */
		slash = strrchr(buf, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(buf, size, ".");
	}
}

/* systemd puts units in slices only: a none on a service, a scope or a
 * directory of a container's makes no unit of PID 1 appear directly below
 * it, and what its tenant makes there is none of PID 1's business (nor a
 * reason to ask it). */
bool cgf_coexist_watches(const struct cgf_policy *p, const char *path) {
	size_t size = strlen(path) + 2;
	_cleanup_free_ char *buf = malloc(size);

	/* Out of memory: watch it rather than miss a unit there. */
	if (!buf)
		return true;
	for (size_t i = 0; i < p->n_attachments; i++) {
		const struct cgf_attachment *a = &p->attachments[i];

		if (a->mode == CGF_MODE_NONE && a->cgroup && slices_below(a->cgroup, path, buf, size))
			return true;
	}
	return false;
}

static bool at_or_below_any(const char *path, const char *const *created, size_t n_created) {
	for (size_t i = 0; i < n_created; i++)
		if (streq(path, created[i]) || cgf_cgroup_is_below(path, created[i]))
			return true;
	return false;
}

static bool may_be_new_unit(const struct cgf_policy *p, const char *path, const char *const *created,
			    size_t n_created) {
	_cleanup_free_ char *parent = NULL;
	const char *name = last_component(path);

	if (streq(path, ".") || !at_or_below_any(path, created, n_created))
		return false;
	/* cg_escape()'s '_' in front of a unit's name. */
	if (!cgf_unit_interface(name[0] == '_' ? name + 1 : name))
		return false;
	parent = malloc(strlen(path) + 2);
	return parent && cgf_cgroup_parent(path, parent, strlen(path) + 2) && cgf_coexist_watches(p, parent);
}

int cgf_coexist_new_unit_cgroups(const struct cgf_policy *p, char *const *paths, size_t n_paths,
				 const char *const *created, size_t n_created, size_t max, char ***ret, size_t *ret_n,
				 size_t *ret_more) {
	char **found = NULL;
	size_t n = 0, more = 0;

	for (size_t i = 0; i < n_paths; i++) {
		char **slot;

		if (!may_be_new_unit(p, paths[i], created, n_created))
			continue;
		if (n >= max) {
			more++;
			continue;
		}
		slot = array_append((void **) &found, n, sizeof(*slot));
		if (!slot || !(*slot = strdup(paths[i]))) {
			for (size_t j = 0; j < n; j++)
				free(found[j]);
			free(found);
			return -ENOMEM;
		}
		n++;
	}
	*ret = found;
	*ret_n = n;
	*ret_more = more;
	return 0;
}
