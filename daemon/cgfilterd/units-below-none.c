/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * systemd's units below the none attachments of the policy in force
 * (units-below-none.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "coexist.h"
#include "log.h"
#include "runtime.h"
#include "unit-query.h"
#include "units-below-none.h"
#include "util.h"

void ubn_done(struct ubn *w) {
	cgf_missing_firewalls_done(&w->missing);
	free(w->written);
	*w = (struct ubn) {};
}

static uint64_t now_usec(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

void ubn_read_units(const struct cgf_policy *p, struct cgf_unit_firewalls *ret, bool *ret_known) {
	_cleanup_free_ char *error = NULL;
	uint64_t start = now_usec();
	size_t asked = 0;
	int r;

	cgf_unit_firewalls_done(ret);
	*ret_known = true;
	if (!cgf_coexist_may_hold_units(p, false))
		return; /* no none where a unit can be: nothing to ask */
	r = cgf_systemd_read_units(ret, &asked, &error);
	if (r >= 0) {
		log_info("systemd: %zu loaded units asked about, %zu make it attach network programs (%llu ms)", asked,
			 ret->n, (unsigned long long) ((now_usec() - start) / 1000));
		return;
	}
	*ret_known = false;
	/* Refusing every none when PID 1 cannot be asked would keep a host
	 * guard off a host without systemd, or at a boot where PID 1 does not
	 * answer in time: the kernel's programs are still checked, and what
	 * PID 1 could not say is said here (coexist.h). */
	if (r == -ENOENT)
		log_info("%s: the none attachments are checked against the programs attached now only",
			 error ?: strerror(-r));
	else
		log_warning("systemd's units could not be read: %s; the none attachments are checked against the "
			    "programs attached now only, and a unit below one that asks systemd for an IP firewall "
			    "would run without it",
			    error ?: strerror(-r));
}

/* ---- after a reconcile --------------------------------------------------- */

static void write_file(struct ubn *w) {
	_cleanup_free_ char *text = NULL;
	int r;

	if (!w->write)
		return;
	r = cgf_missing_firewalls_format(&w->missing, &text);
	if (r >= 0 && streq_ptr(text, w->written))
		return;
	if (r >= 0)
		r = cgf_runtime_write_file(CGF_MISSING_FIREWALLS_FILE, text);
	if (r < 0) {
		log_warning("writing " CGF_RUNTIME_DIR "/" CGF_MISSING_FIREWALLS_FILE ", ignoring: %s", strerror(-r));
		return;
	}
	free(w->written);
	w->written = TAKE_PTR(text);
}

/* Would the policy be refused for this unit at the next start or reload
 * (a none above it without foreign-below: lock-out)? */
static bool refused_for(const struct cgf_coexist *c, const char *unit) {
	for (size_t i = 0; i < c->n_lockouts; i++)
		for (size_t j = 0; !c->lockouts[i].allowed && j < c->lockouts[i].n_units; j++)
			if (streq(c->lockouts[i].units[j].unit, unit))
				return true;
	return false;
}

/* Each unit found missing its programs that was not missing before, in
 * the journal once; at most UBN_LOG_MAX lines a reconcile.  A unit the
 * policy does not allow to lock out (it appeared after the policy came
 * into force) says so: that policy is refused at the next start. */
static void say_found(const struct ubn *w, const struct cgf_policy *p, const struct cgf_unit_firewalls *units,
		      const struct cgf_missing_firewalls *found) {
	struct cgf_coexist c = {};
	size_t said = 0, more = 0, new = 0;

	for (size_t i = 0; i < found->n; i++)
		new += !cgf_missing_firewalls_find(&w->missing, found->items[i].unit, found->items[i].cgroup);
	if (new == 0)
		return; /* the usual case: a cost of the found, not of the table */
	if (cgf_coexist_check(p, units, NULL, &c) < 0)
		log_warning("checking the units below a none: out of memory");
	for (size_t i = 0; i < found->n; i++) {
		const struct cgf_missing_firewall *e = &found->items[i];

		if (cgf_missing_firewalls_find(&w->missing, e->unit, e->cgroup))
			continue;
		if (said == UBN_LOG_MAX) {
			more++;
			continue;
		}
		log_warning("unit %s runs without the programs systemd attaches for %s on %s: its cgroup %s lies "
			    "below a none of ours, where the kernel refused systemd's attach (EPERM)%s",
			    e->unit, e->settings, cgf_directions_to_string(e->directions), e->cgroup,
			    refused_for(&c, e->unit) ? "; the policy is refused at the next start or reload unless "
						       "that none says foreign-below: lock-out" : "");
		said++;
	}
	if (more > 0)
		log_warning("... and %zu more units without their programs (cgfilterctl status lists them)", more);
	cgf_coexist_done(&c);
}

/* An event's new cgroups that may be units': PID 1 says which are, and
 * what they ask for; they join the table. */
static void ask_new_units(struct ubn *w, const struct cgf_policy *p, struct cgf_unit_firewalls *units,
			  const struct cgf_reconcile *rc, const struct cgf_reconcile_scope *scope) {
	_cleanup_free_ char *error = NULL;
	char **cgroups = NULL;
	size_t n = 0, more = 0;
	int r;

	r = cgf_coexist_new_unit_cgroups(p, rc->tree.paths, rc->tree.n_paths, scope->created, scope->n_created,
					 UBN_ASK_MAX, &cgroups, &n, &more);
	if (r >= 0 && n > 0)
		r = cgf_systemd_read_cgroups(cgroups, n, units, &error);
	for (size_t i = 0; i < n; i++)
		free(cgroups[i]);
	free(cgroups);
	if (more > 0)
		log_debug("%zu more new cgroups below a none than asked about at once: the next full reconcile "
			  "checks them", more);
	if (r < 0 && r != -ENOENT && !w->ask_failed)
		log_warning("asking systemd about new units below a none: %s; they are checked at the next full "
			    "reconcile", error ?: strerror(-r));
	w->ask_failed = r < 0;
}

/* Entries whose cgroup is gone since (the unit stopped): dropped at an
 * event, one look each, so that the set is right before the next full
 * reconcile redoes it.  A stop with no event at all waits for that one. */
static void drop_gone(struct ubn *w, int root_fd) {
	size_t n = 0;

	for (size_t i = 0; i < w->missing.n; i++) {
		struct cgf_missing_firewall *e = &w->missing.items[i];

		if (faccessat(root_fd, e->cgroup, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
			free(e->unit);
			free(e->cgroup);
			free(e->settings);
			continue;
		}
		w->missing.items[n++] = *e;
	}
	w->missing.n = w->missing.n_total = n;
}

void ubn_after_reconcile(struct ubn *w, const struct cgf_policy *p, struct cgf_unit_firewalls *units,
			 const struct cgf_reconcile *rc, const struct cgf_reconcile_scope *scope, int root_fd) {
	struct cgf_missing_firewalls found = {};
	int r;

	if (!cgf_coexist_may_hold_units(p, false)) {
		ubn_clear(w);
		return; /* no unit can be below a none of ours: nothing to miss */
	}
	if (scope)
		ask_new_units(w, p, units, rc, scope);
	else if (cgf_unit_firewalls_forget_stopped(units, rc->tree.paths, rc->tree.n_paths) < 0)
		log_warning("forgetting units that stopped: out of memory");
	r = cgf_coexist_missing(rc->desired, rc->actual, units, rc->tree.paths, rc->tree.n_paths, &found);
	if (r < 0) {
		log_warning("checking the units below a none: %s", strerror(-r));
		cgf_missing_firewalls_done(&found);
		return;
	}
	say_found(w, p, units, &found);
	if (scope) {
		drop_gone(w, root_fd);
		r = cgf_missing_firewalls_merge(&w->missing, &found);
	} else {
		/* A full walk: the whole answer, replacing the last. */
		cgf_missing_firewalls_done(&w->missing);
		w->missing = found;
		found = (struct cgf_missing_firewalls) {};
	}
	cgf_missing_firewalls_done(&found);
	if (r < 0)
		log_warning("keeping the units without their programs: out of memory");
	write_file(w);
}

void ubn_clear(struct ubn *w) {
	cgf_missing_firewalls_done(&w->missing);
	write_file(w);
}
