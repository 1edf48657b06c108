/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgfilterd: keeps the kernel's cgroup-BPF network filters as the policy
 * says.  run() → manager_new() → the first reconcile → sd_event_loop():
 *
 *   - inotify on the cgroup directories the policy can reach: each batch
 *     of events reconciles what it can affect (the new cgroups, their
 *     ancestors and descendants, the tenant entries of removed ones);
 *     lost events, reloads and a periodic safety net make a full
 *     reconcile (every cgroup within the policy's reach, reach.h);
 *   - SIGHUP rereads the policy: a valid one is reconciled, and if the
 *     kernel refuses it the previous one is reconciled again and stays in
 *     force; the outcome goes to /run/cgfilterd/reload, which
 *     `cgfilterctl reload` (the unit's ExecReload) waits for;
 *   - SIGTERM ends the loop; the watchdog is sd-event's.
 *
 * Enforcement never depends on this process: the kernel holds the
 * attachments and our pins hold the programs, so an exit, a crash or a
 * restart leaves every filter in place, and start-up adopts them.  A
 * policy with errors is refused before the kernel is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "cgroup-pattern.h"
#include "cgroup-watch.h"
#include "coexist.h"
#include "libbpf-log.h"
#include "log.h"
#include "pending.h"
#include "policy-load.h"
#include "policy-read.h"
#include "reach.h"
#include "reconcile-counts.h"
#include "reconcile.h"
#include "runtime.h"
#include "units-below-none.h"
#include "util.h"

/* --once found another cgfilterd applying: nothing applied, the plan shown. */
#define EXIT_LOCKED 3

/* A valid policy with what its filters load. */
struct loaded_policy {
	struct cgf_policy *policy;
	struct cgf_objects objects;
	char **watch_patterns; /* cgroup patterns whose cgroups matter: attachments, tenants' children */
	size_t n_watch_patterns;
	size_t first_tenant_children; /* watch_patterns from here on: the tenant hosts' child patterns */
	struct cgf_unit_firewalls units; /* systemd's units that attach programs (units-below-none.h) */
	bool units_known;                /* ... read from PID 1 (else: it could not be asked) */
};

struct manager {
	sd_event *event;
	struct cgf_kernel *kernel;
	struct cgf_watch *watch;
	sd_event_source *watch_source;
	char **policy_paths; /* from the command line; none: the installed policy */
	size_t n_policy_paths;
	struct loaded_policy current; /* the policy in force */
	unsigned generation;          /* policies taken into force so far */
	unsigned reloads;             /* SIGHUPs answered so far */
	bool started;                 /* the first reconcile is done */
	size_t skipped_said;          /* cgroups the last logged walk skipped */
	sd_event_source *retry;       /* armed while the kernel differs from the policy in force */
	uint64_t retry_delay;         /* µs until the next retry; doubles per failure */
	sd_event_source *safety_net;  /* the periodic full reconcile */
	uint64_t safety_net_interval; /* µs; 0: none */
	struct cgf_list_failures pending; /* the policy in force's lists that the last reconcile failed */
	char *pending_written;        /* what CGF_RUNTIME_DIR/pending says now */
	struct cgf_reconcile_counts counts; /* CGF_RUNTIME_DIR/reconciles */
	bool counts_unwritten;        /* the last write of it failed (said once) */
	struct ubn ubn;               /* units below our nones without their programs */
	bool refused;                 /* the last reconcile's policy was refused before anything
				       * was applied (coexist.h): nothing to restore */
};

static void loaded_policy_done(struct loaded_policy *lp) {
	for (size_t i = 0; i < lp->n_watch_patterns; i++)
		free(lp->watch_patterns[i]);
	free(lp->watch_patterns);
	cgf_unit_firewalls_done(&lp->units);
	cgf_objects_done(&lp->objects);
	lp->policy = cgf_policy_free(lp->policy);
	*lp = (struct loaded_policy) {};
}

static struct manager *manager_free(struct manager *m) {
	if (!m)
		return NULL;
	loaded_policy_done(&m->current);
	ubn_done(&m->ubn);
	cgf_list_failures_done(&m->pending);
	free(m->pending_written);
	sd_event_source_unref(m->watch_source);
	sd_event_source_unref(m->retry);
	sd_event_source_unref(m->safety_net);
	cgf_watch_free(m->watch);
	cgf_kernel_free(m->kernel);
	sd_event_unref(m->event);
	free(m);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct manager *, manager_free);

static int add_watch_pattern(struct loaded_policy *lp, const char *pattern, const char *suffix) {
	char **slot = array_append((void **) &lp->watch_patterns, lp->n_watch_patterns, sizeof(*slot));

	if (!slot || asprintf(slot, "%s%s", pattern, suffix) < 0)
		return -ENOMEM;
	lp->n_watch_patterns++;
	return 0;
}

/* Which cgroups matter: those an attachment names, and the children of
 * an attachment with tenants (each is bound, or fails closed). */
static int collect_watch_patterns(struct loaded_policy *lp) {
	int r;

	for (size_t i = 0; i < lp->policy->n_attachments; i++) {
		r = add_watch_pattern(lp, lp->policy->attachments[i].cgroup, "");
		if (r < 0)
			return r;
	}
	lp->first_tenant_children = lp->n_watch_patterns;
	for (size_t i = 0; i < lp->policy->n_attachments; i++) {
		const struct cgf_attachment *a = &lp->policy->attachments[i];

		if (a->n_tenants == 0)
			continue;
		r = add_watch_pattern(lp, streq(a->cgroup, ".") ? "" : a->cgroup, streq(a->cgroup, ".") ? "*" : "/*");
		if (r < 0)
			return r;
	}
	return 0;
}

/* Reads and checks the policy; errors go to the journal with positions. */
static int manager_read_policy(struct manager *m, struct loaded_policy *ret) {
	struct cgf_diags diags = CGF_DIAGS_INIT;
	struct loaded_policy lp = {};
	_cleanup_free_ char *text = NULL;
	size_t n_errors;
	int r;

	r = cgf_policy_read(m->policy_paths, m->n_policy_paths, cgf_kernel_features(m->kernel), &lp.policy,
			    &lp.objects, &diags);
	cgf_diags_sort(&diags);
	if (diags.n > 0 && cgf_diags_render_string(&diags, CGF_RENDER_SOURCE, &text) >= 0)
		cgf_log_text(r < 0 ? LOG_ERR : LOG_WARNING, text);
	n_errors = diags.n_errors;
	cgf_diags_done(&diags);
	if (r >= 0)
		r = collect_watch_patterns(&lp);
	if (r < 0) {
		if (r == -EINVAL)
			log_error("the policy has %zu error%s", n_errors, n_errors == 1 ? "" : "s");
		else
			log_error("reading the policy failed: %s", strerror(-r));
		loaded_policy_done(&lp);
		return r;
	}
	/* A none must not lock out the programs systemd attaches below it
	 * (coexist.h): what PID 1 says, for the reconcile's gate. */
	ubn_read_units(lp.policy, &lp.units, &lp.units_known);
	*ret = lp;
	return 0;
}

static void log_plan(const struct cgf_reconcile *rc) {
	for (size_t i = 0; i < rc->plan->n_reports; i++) {
		_cleanup_free_ char *line = NULL;

		if (cgf_report_format(&rc->plan->reports[i], &line) >= 0)
			log_warning("%s", line);
	}
	for (size_t i = 0; rc->ran && i < rc->plan->n_actions; i++) {
		_cleanup_free_ char *line = NULL;

		if (!rc->ran[i])
			continue; /* its list failed, or its cgroup went */
		if (cgf_action_format(&rc->plan->actions[i], i, &line) >= 0)
			log_info("%s", line);
	}
}

static bool watch_wanted(const char *path, void *userdata) {
	const struct loaded_policy *lp = userdata;

	for (size_t i = 0; i < lp->n_watch_patterns; i++)
		if (cgf_cgroup_pattern_may_be_ancestor(path, lp->watch_patterns[i]))
			return true;
	/* A tenant host's children themselves: the watch's end (IN_IGNORED)
	 * is what gives the id of one that went away, whose tenant entry
	 * must go with it, or a tenant's churn fills the map. */
	for (size_t i = lp->first_tenant_children; i < lp->n_watch_patterns; i++)
		if (cgf_cgroup_pattern_match(lp->watch_patterns[i], path))
			return true;
	/* A none's cgroup and systemd's slices below it: where the units
	 * appear whose programs the none locks out (units-below-none.h). */
	return cgf_coexist_watches(lp->policy, path);
}

/* A literal cgroup of the policy that does not exist gets its programs
 * only once it appears; for a tenant host that means its first children
 * race the daemon instead of meeting the host's program.  Say so once per
 * reconcile that finds it missing (they are rare: start-up, reloads). */
static void warn_missing(const struct loaded_policy *lp, const struct cgf_cgroup_tree *tree) {
	for (size_t i = 0; i < lp->policy->n_attachments; i++) {
		const struct cgf_attachment *a = &lp->policy->attachments[i];
		bool found = false;

		if (cgf_pattern_is_glob(a->cgroup))
			continue;
		for (size_t j = 0; j < tree->n_paths && !found; j++)
			found = streq(tree->paths[j], a->cgroup);
		if (found)
			continue;
		log_warning("%s:%u:%u: cgroup '%s' does not exist (yet): it gets its filters when it appears%s",
			    a->cgroup_pos.source ? a->cgroup_pos.source->name : "?", a->cgroup_pos.line,
			    a->cgroup_pos.column, a->cgroup,
			    a->n_tenants > 0 ? "; until then its children are not covered from birth" : "");
	}
}

/* Directories the walk did not enter (too deep, path too long, not
 * openable): said when their number changes, not at every event, since
 * whoever built them can also make events. */
static void warn_skipped(struct manager *m, const struct cgf_cgroup_tree *tree) {
	if (tree->n_skipped == m->skipped_said)
		return;
	m->skipped_said = tree->n_skipped;
	if (tree->n_skipped == 0) {
		log_info("the cgroup walk skips no directory any more");
		return;
	}
	if (tree->skipped[0].error == -ELOOP)
		log_warning("the cgroup walk skips %zu directories and what is below them (the first: %s: "
			    "deeper than %d levels); programs attached above them still apply there",
			    tree->n_skipped, tree->skipped[0].path, CGF_CGROUP_TREE_DEPTH_MAX);
	else
		log_warning("the cgroup walk skips %zu directories and what is below them (the first: %s: %s); "
			    "programs attached above them still apply there",
			    tree->n_skipped, tree->skipped[0].path, strerror(-tree->skipped[0].error));
}

/* The safety net's period, in seconds: long enough that an idle host
 * barely notices, short enough that a missed change does not linger. */
#define FULL_RECONCILE_INTERVAL_DEFAULT 600
/* What `cgfilterctl status` shows of us: the lists the last reconcile of
 * the policy in force failed, and the cgroups its walk skipped.  Written
 * when it changes (events come often; the file seldom changes). */
static void write_pending(struct manager *m, const struct cgf_cgroup_tree *tree) {
	_cleanup_free_ char *text = NULL;
	int r;

	if (!m->event)
		return; /* --once: nobody asks */
	r = cgf_pending_format(&m->pending, tree, &text);
	if (r >= 0 && streq_ptr(text, m->pending_written))
		return;
	if (r >= 0)
		r = cgf_runtime_write_file(CGF_PENDING_FILE, text);
	if (r < 0) {
		log_warning("writing " CGF_RUNTIME_DIR "/" CGF_PENDING_FILE ", ignoring: %s", strerror(-r));
		return;
	}
	free(m->pending_written);
	m->pending_written = TAKE_PTR(text);
}

/* Counts a reconcile for the metrics (reconcile-counts.h).  Rewritten
 * after each, events' included: a few µs on tmpfs next to the reconcile's
 * own bpf() calls, and a count that lags would say the daemon is idle
 * when it is not. */
static void count_reconcile(struct manager *m, const struct cgf_reconcile_scope *scope,
			    enum cgf_reconcile_result result) {
	_cleanup_free_ char *text = NULL;
	struct timespec ts;
	int r;

	if (!m->event)
		return; /* --once: nobody asks */
	(void) clock_gettime(CLOCK_REALTIME, &ts);
	cgf_reconcile_counts_add(&m->counts, scope ? CGF_RECONCILE_EVENT : CGF_RECONCILE_FULL, result,
				 (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000);
	r = cgf_reconcile_counts_format(&m->counts, &text);
	if (r >= 0)
		r = cgf_runtime_write_file(CGF_RECONCILE_COUNTS_FILE, text);
	if (r < 0 && !m->counts_unwritten)
		log_warning("writing " CGF_RUNTIME_DIR "/" CGF_RECONCILE_COUNTS_FILE ", ignoring: %s", strerror(-r));
	m->counts_unwritten = r < 0;
}

/* One line per failed list, with what failed; the rest of the plan went
 * through. */
static void log_failures(const struct cgf_list_failures *f, bool current) {
	for (size_t i = 0; i < f->n; i++)
		log_error("%s %s: not applied%s: %s", f->items[i].cgroup,
			  cgf_direction_to_string(f->items[i].direction),
			  current ? (f->items[i].attempts > 1 ? ", failed again" : "") : " (new policy)",
			  f->items[i].message);
}

#define RETRY_DELAY_FIRST (100 * 1000ULL)        /* µs */
#define RETRY_DELAY_MAX (60 * 1000 * 1000ULL)

static int reconcile(struct manager *m, struct loaded_policy *lp, const struct cgf_reconcile_scope *scope,
		     bool announce, char **ret_message);

static int on_retry(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata) {
	struct manager *m = userdata;

	log_info("reconciling again after a failure");
	(void) reconcile(m, &m->current, NULL, false, NULL);
	return 0;
}

/*
 * A reconcile that failed or did not converge (a cgroup removed between
 * the snapshot and the attach, another controller's list in the way)
 * is tried again later: no event may come that would try it for us.  The
 * delay doubles up to a minute, so that a failure someone keeps causing
 * costs little; the first success disarms it.
 */
static void retry_later(struct manager *m, bool failed) {
	int r;

	if (!m->event)
		return; /* --once */
	if (!failed) {
		m->retry_delay = RETRY_DELAY_FIRST;
		if (m->retry)
			(void) sd_event_source_set_enabled(m->retry, SD_EVENT_OFF);
		return;
	}
	if (m->retry_delay == 0)
		m->retry_delay = RETRY_DELAY_FIRST;
	if (!m->retry)
		r = sd_event_add_time_relative(m->event, &m->retry, CLOCK_MONOTONIC, m->retry_delay, 0, on_retry, m);
	else {
		r = sd_event_source_set_time_relative(m->retry, m->retry_delay);
		if (r >= 0)
			r = sd_event_source_set_enabled(m->retry, SD_EVENT_ONESHOT);
	}
	if (r < 0)
		log_error("arming the retry timer: %s", strerror(-r));
	else
		log_info("trying again in %llu ms", (unsigned long long) (m->retry_delay / 1000));
	m->retry_delay = m->retry_delay * 2 > RETRY_DELAY_MAX ? RETRY_DELAY_MAX : m->retry_delay * 2;
}

/* Writes the record of the reach (reach.h); when that fails, no record
 * is left, and the next full reconcile reads the whole cgroup tree. */
static int reach_write(const struct cgf_reach *r) {
	_cleanup_free_ char *text = NULL;
	int k;

	k = cgf_reach_format(r, &text);
	if (k >= 0)
		k = cgf_runtime_write_file(CGF_REACH_FILE, text);
	if (k < 0)
		(void) cgf_runtime_remove_file(CGF_REACH_FILE);
	return k;
}

/*
 * The reach of a full reconcile of lp (reach.h): the record's patterns,
 * the policy in force's and lp's, written back before anything changes,
 * so that a crash half way leaves a record that covers what was done.
 * false: no valid record, or it could not be written: the walk reads the
 * whole host (and, if that converges, a new record starts).
 */
static bool reach_before(struct manager *m, const struct loaded_policy *lp, struct cgf_reach *ret) {
	_cleanup_free_ char *text = NULL;
	struct cgf_reach r = {};
	int k;

	k = cgf_runtime_read_file(CGF_REACH_FILE, CGF_REACH_FILE_MAX, &text);
	if (k >= 0)
		k = cgf_reach_parse(text, &r);
	if (k == -ENOENT) {
		log_debug("no record of where programs of ours may be: reading the whole cgroup tree");
		return false;
	}
	if (k >= 0)
		k = cgf_reach_add_policy(&r, lp->policy);
	if (k >= 0 && m->current.policy)
		k = cgf_reach_add_policy(&r, m->current.policy);
	if (k >= 0)
		k = reach_write(&r);
	if (k < 0) {
		log_warning(CGF_RUNTIME_DIR "/" CGF_REACH_FILE ": %s; reading the whole cgroup tree",
			    k == -EBADMSG ? "not a record of ours" : strerror(-k));
		cgf_reach_done(&r);
		(void) cgf_runtime_remove_file(CGF_REACH_FILE);
		return false;
	}
	*ret = r;
	return true;
}

/* After a full reconcile of lp converged, every program of ours outside
 * its patterns is gone: the record is the policy's own reach. */
static void reach_after(const struct loaded_policy *lp) {
	struct cgf_reach r = {};
	int k;

	k = cgf_reach_add_policy(&r, lp->policy);
	if (k >= 0)
		k = reach_write(&r);
	cgf_reach_done(&r);
	if (k < 0)
		log_warning("writing " CGF_RUNTIME_DIR "/" CGF_REACH_FILE ": %s; the next full reconcile reads the "
			    "whole cgroup tree", strerror(-k));
}

/* What a watch update could not do, said once per update. */
static void log_watch_result(int r, const struct cgf_watch_failures *failed, const char *what) {
	if (r < 0)
		log_warning("watching %s, ignoring: %s", what, strerror(-r));
	else if (failed->n > 0)
		log_warning("cannot watch %u of %s (the first: %s), ignoring: %s; "
			    "cgroups created in them are seen at the next full reconcile",
			    failed->n, what, failed->first_path, strerror(-failed->first_error));
}

/* Watches what a full reconcile's tree shows.  *ret_added: the
 * directories watched only now (they may have gained children since the
 * tree was read: the caller looks again). */
static void watch_full(struct manager *m, const struct loaded_policy *lp, const struct cgf_cgroup_tree *tree,
		       char ***ret_added, size_t *ret_n_added) {
	struct cgf_watch_failures failed;
	int r;

	*ret_added = NULL;
	*ret_n_added = 0;
	r = cgf_watch_update(m->watch, tree, watch_wanted, (void *) lp, &failed, ret_added, ret_n_added);
	log_watch_result(r, &failed, "the cgroup directories");
}

/* The same for an event's partial tree: nothing outside it is forgotten.
 * *ret_added: the directories watched only now, to read again. */
static void watch_scope(struct manager *m, const struct loaded_policy *lp, const struct cgf_cgroup_tree *tree,
			char ***ret_added, size_t *ret_n_added) {
	struct cgf_watch_failures failed;
	int r;

	*ret_added = NULL;
	*ret_n_added = 0;
	r = cgf_watch_add_scope(m->watch, tree, watch_wanted, (void *) lp, &failed, ret_added, ret_n_added);
	log_watch_result(r, &failed, "the new cgroup directories");
}

/* Sets *ret_message (optional) to a copy of text, or strerror(-r). */
static void set_message(char **ret_message, const char *text, int r) {
	if (!ret_message)
		return;
	free(*ret_message);
	*ret_message = strdup(text ?: strerror(-r));
}

/* The reconcile itself: an event's batch, or the whole host within the
 * reach that the record and both policies give. */
static int run_reconcile(struct manager *m, const struct loaded_policy *lp,
			 const struct cgf_reconcile_scope *scope, const struct cgf_reconcile_gate *gate,
			 struct cgf_reconcile *rc) {
	struct cgf_reach reach = {};
	bool within;
	int r;

	if (scope)
		return cgf_reconcile_run_scope(m->kernel, lp->policy, &lp->objects, scope, true, rc);
	within = reach_before(m, lp, &reach);
	r = cgf_reconcile_run(m->kernel, lp->policy, &lp->objects, within ? &reach : NULL, gate, true, rc);
	cgf_reach_done(&reach);
	return r;
}

/*
 * The lists that failed: said, and for a full reconcile kept as the
 * policy in force's (a new policy that went through whole is in force
 * next, and the old one's failures are moot).  An event's reconcile saw
 * only its own lists: its failures make the retry timer run, and the full
 * reconcile that follows says them (with the whole walk's unreachable
 * cgroups).
 */
static void take_failures(struct manager *m, const struct loaded_policy *lp, const struct cgf_reconcile_scope *scope,
			  int r, struct cgf_reconcile *rc, char **ret_message) {
	bool current = lp == &m->current;

	if (r >= 0 && rc->failures.n > 0) {
		if (current && !scope)
			cgf_list_failures_count_attempts(&rc->failures, &m->pending);
		log_failures(&rc->failures, current);
		log_error("reconciled all but %zu list%s: %zu actions applied, the failed lists are retried",
			  rc->failures.n, rc->failures.n == 1 ? "" : "s", rc->applied);
		if (ret_message) {
			free(*ret_message);
			*ret_message = cgf_list_failures_verdict(&rc->failures);
		}
	} else if (r >= 0 && current && !scope && m->pending.n > 0)
		log_info("every list failed before is applied now");
	if (r >= 0 && !scope && (current || rc->failures.n == 0)) {
		cgf_list_failures_done(&m->pending);
		m->pending = rc->failures;
		rc->failures = (struct cgf_list_failures) {};
		write_pending(m, &rc->tree);
	}
}

/* One line on how the reconcile ended (the failed lists are said by
 * take_failures()). */
static void say_outcome(struct manager *m, const struct cgf_reconcile_scope *scope, bool announce, int r,
			const struct cgf_reconcile *rc, char **ret_message) {
	if (rc->refused) {
		/* Said with every line by say_refusal(). */
		set_message(ret_message, rc->error, r);
		return;
	}
	if (r < 0) {
		log_error("reconcile%s failed after %zu of %zu actions: %s", scope ? " of new cgroups" : "",
			  rc->applied, rc->plan ? rc->plan->n_actions : 0, rc->error ?: strerror(-r));
		set_message(ret_message, rc->error, r);
	} else if (rc->failures.n > 0) {
		/* Said by take_failures(). */
	} else if (!rc->converged) {
		_cleanup_free_ char *text = NULL;

		log_error("after applying, the kernel still differs from the policy; next plan:");
		if (cgf_plan_format(rc->leftover, &text) >= 0)
			cgf_log_text(LOG_ERR, text);
	} else if (rc->applied > 0 || rc->gc_removed > 0 || rc->stale > 0)
		log_info("reconciled: %zu cgroups%s, %zu actions, %u stale retries, %d programs unpinned",
			 rc->tree.n_paths, scope ? " of an event" : "", rc->applied, rc->stale, rc->gc_removed);
	else if (!m->started && announce)
		/* After a restart this is the adoption: say so. */
		log_info("the kernel already matches the policy (%zu cgroups): adopted, nothing to do",
			 rc->tree.n_paths);
	else
		log_debug("reconciled: %zu cgroups%s, no changes", rc->tree.n_paths, scope ? " of an event" : "");
}

/* What the walk showed that the operator should know: cgroups the policy
 * names that do not exist (at start-up and reload), and the directories
 * it could not enter. */
static void say_tree(struct manager *m, const struct loaded_policy *lp, const struct cgf_reconcile_scope *scope,
		     bool announce, int r, const struct cgf_reconcile *rc) {
	if (r >= 0 && announce && rc->tree.paths)
		warn_missing(lp, &rc->tree);
	if (rc->tree.paths && !scope)
		warn_skipped(m, &rc->tree);
	else if (rc->tree.n_skipped > 0)
		/* A tenant can make these at will: not worth a warning each. */
		log_debug("the event's cgroup walk skipped %zu directories (the first: %s)", rc->tree.n_skipped,
			  rc->tree.skipped[0].path);
}

/* Watches the directories of the reconcile's tree.  *ret_again: cgroups
 * that appeared in a directory before its watch existed, for an event's
 * reconcile of their own (not another full one). */
static void watch_tree(struct manager *m, const struct loaded_policy *lp, const struct cgf_reconcile_scope *scope,
		       const struct cgf_reconcile *rc, char ***ret_again, size_t *ret_n_again) {
	char **watched = NULL;
	size_t n_watched = 0;

	if (!m->watch || !rc->tree.paths)
		return;
	if (scope)
		watch_scope(m, lp, &rc->tree, &watched, &n_watched);
	else
		watch_full(m, lp, &rc->tree, &watched, &n_watched);
	if (n_watched > 0 &&
	    cgf_cgroup_tree_unseen_children(cgf_kernel_cgroup_root_fd(m->kernel), &rc->tree, watched, n_watched,
					    ret_again, ret_n_again) < 0)
		log_warning("looking for cgroups made before their parents' watches: out of memory");
	cgf_strv_free(watched, n_watched);
}

/* The gate refused the policy (coexist.h): every error with its line,
 * the units and programs it would lock out, and what to write instead. */
static void say_refusal(const struct cgf_diags *refusal) {
	_cleanup_free_ char *text = NULL;

	if (cgf_diags_render_string(refusal, CGF_RENDER_SOURCE, &text) >= 0)
		cgf_log_text(LOG_ERR, text);
}

/*
 * One reconcile of a policy; *ret_message (optional) says why it failed.
 * scope NULL: a full reconcile of the reach (start-up, reload, lost
 * events, safety net, retry); else one batch of events.  "announce":
 * start-up or reload, a policy coming into force: it is held to the gate
 * (reconcile.h; m->refused says it was refused), and a missing cgroup is
 * worth a warning (not at every cgroup event).  Returns -errno when the
 * reconcile failed as a whole, else the number of lists it failed (the
 * others applied): 0 is a full success.
 */
static int reconcile(struct manager *m, struct loaded_policy *lp, const struct cgf_reconcile_scope *scope,
		     bool announce, char **ret_message) {
	struct cgf_diags refusal = CGF_DIAGS_INIT;
	struct cgf_reconcile_gate gate = { .units = lp->units_known ? &lp->units : NULL, .diags = &refusal };
	struct cgf_reconcile rc = {};
	char **again = NULL;
	size_t n_again = 0;
	bool converged, current = lp == &m->current, whole;
	int r;

	r = run_reconcile(m, lp, scope, announce && !scope ? &gate : NULL, &rc);
	m->refused = rc.refused;
	if (rc.refused)
		say_refusal(&refusal);
	cgf_diags_done(&refusal);
	if (r >= 0)
		ubn_after_reconcile(&m->ubn, lp->policy, &lp->units, &rc, scope, cgf_kernel_cgroup_root_fd(m->kernel));
	/* Every list of the plan applied (take_failures() moves them on). */
	whole = r >= 0 && rc.failures.n == 0;
	count_reconcile(m, scope, r < 0 ? CGF_RECONCILE_ERROR :
				  whole && rc.converged ? CGF_RECONCILE_SUCCESS : CGF_RECONCILE_INCOMPLETE);
	if (rc.plan && !rc.refused)
		log_plan(&rc);
	take_failures(m, lp, scope, r, &rc, ret_message);
	say_outcome(m, scope, announce, r, &rc, ret_message);
	say_tree(m, lp, scope, announce, r, &rc);
	watch_tree(m, lp, scope, &rc, &again, &n_again);

	converged = r >= 0 && rc.converged && rc.failures.n == 0 && (!current || m->pending.n == 0);
	if (!scope && whole && rc.converged)
		reach_after(lp);
	if (r >= 0)
		r = (int) (current && !scope ? m->pending.n : rc.failures.n);
	cgf_reconcile_done(&rc);
	/*
	 * A full reconcile of 10,000 tenants builds its tree, plan and
	 * snapshots in a few MiB and has just freed them; glibc keeps freed
	 * pages below the top of the heap, so without this the resident size
	 * would stay at the largest full reconcile's for good.  Only here:
	 * an event's reconcile is as small as the event, and trimming after
	 * each would give pages back only to fault them in again.
	 */
	if (!scope)
		(void) malloc_trim(0);
	if (r >= 0 && n_again > 0) {
		/* Cgroups created before their parents' watches existed: their
		 * own round.  Each round goes one level deeper at least, and
		 * the walk stops at CGF_CGROUP_TREE_DEPTH_MAX: it ends. */
		struct cgf_reconcile_scope next = { .created = (const char *const *) again, .n_created = n_again };

		r = reconcile(m, lp, &next, false, ret_message);
		cgf_strv_free(again, n_again);
		return r;
	}
	cgf_strv_free(again, n_again);
	if (r < 0 && scope && lp == &m->current) {
		/* An event's cgroups could not be reconciled on their own (a
		 * tenant map full of entries of cgroups gone unseen, say): the
		 * whole host once, which also removes those. */
		log_info("reconciling the whole host instead");
		return reconcile(m, lp, NULL, false, ret_message);
	}
	/* Only the policy in force is retried: a new one that fails is
	 * refused, and the reload reconciles the old one again.  While a
	 * list failed, the timer retries (every list is planned again; the
	 * applied ones give no action). */
	if (current)
		retry_later(m, !converged);
	return r;
}

static void notify_status(struct manager *m, const char *what) {
	(void) sd_notifyf(false, "STATUS=%s; policy %u in force, %u cgroup directories watched", what,
			  m->generation, m->watch ? cgf_watch_count(m->watch) : 0);
}

/*
 * One batch of cgroup events, however many arrived since the last: the
 * created cgroups and the watched ones that went away are reconciled on
 * their own; lost events cost one full reconcile.
 */
static int on_cgroup_event(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_,
			   void *userdata) {
	struct manager *m = userdata;
	struct cgf_watch_changes c;
	int r;

	r = cgf_watch_drain(m->watch, &c);
	if (r < 0)
		log_error("reading cgroup events: %s; reconciling the whole host", strerror(-r));
	else if (c.overflow)
		log_warning("cgroup events were lost or too many: reconciling the whole host");
	if (r < 0 || c.overflow)
		(void) reconcile(m, &m->current, NULL, false, NULL);
	else if (!cgf_watch_changes_empty(&c)) {
		struct cgf_reconcile_scope scope = {
			.created = (const char *const *) c.created,
			.n_created = c.n_created,
			.removed = c.removed,
			.n_removed = c.n_removed,
		};

		(void) reconcile(m, &m->current, &scope, false, NULL);
	}
	cgf_watch_changes_done(&c);
	return 0;
}

/* The safety net: whatever no event told us (a watch that could not be
 * added, another controller's change), a full reconcile finds. */
static int on_safety_net(sd_event_source *s, uint64_t usec _unused_, void *userdata) {
	struct manager *m = userdata;
	int r;

	log_debug("periodic full reconcile");
	(void) reconcile(m, &m->current, NULL, false, NULL);
	r = sd_event_source_set_time_relative(s, m->safety_net_interval);
	if (r >= 0)
		r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (r < 0)
		log_error("re-arming the periodic reconcile: %s", strerror(-r));
	return 0;
}

/*
 * SIGHUP: a new policy replaces the one in force only once the kernel
 * took it.  If the reconcile fails half way, reconciling the previous
 * policy again undoes what went through: the policy in force stays.
 */
static int on_reload(sd_event_source *s _unused_, const struct signalfd_siginfo *si _unused_, void *userdata) {
	struct manager *m = userdata;
	struct loaded_policy next = {};
	_cleanup_free_ char *why = NULL;
	int r;

	m->reloads++;
	(void) sd_notify(false, "RELOADING=1\nSTATUS=Reloading the policy");
	log_info("reloading the policy");
	r = manager_read_policy(m, &next);
	if (r < 0) {
		why = strdup(r == -EINVAL ? "the policy has errors (see the journal)" : strerror(-r));
		goto refused;
	}
	r = reconcile(m, &next, NULL, true, &why);
	if (r != 0 && m->refused) {
		/* Refused before anything was applied: nothing to restore. */
		log_error("the new policy is refused; policy %u stays in force", m->generation);
		loaded_policy_done(&next);
		goto refused;
	}
	if (r != 0) {
		/* Also when only some lists failed: a policy is in force
		 * whole or not at all. */
		log_error("the kernel refused the new policy; restoring policy %u", m->generation);
		loaded_policy_done(&next);
		r = reconcile(m, &m->current, NULL, false, NULL);
		if (r < 0)
			log_error("restoring policy %u failed too; the kernel holds a mix of both", m->generation);
		else if (r > 0)
			log_error("restoring policy %u: %d list%s not restored yet, retried", m->generation, r,
				  r == 1 ? "" : "s");
		goto refused;
	}
	loaded_policy_done(&m->current);
	m->current = next;
	m->generation++;
	(void) cgf_runtime_write_reload(m->reloads, true, NULL);
	notify_status(m, "Reloaded");
	(void) sd_notify(false, "READY=1");
	return 0;

refused:
	(void) cgf_runtime_write_reload(m->reloads, false, why);
	notify_status(m, "Reload refused, the previous policy stays in force");
	(void) sd_notify(false, "READY=1");
	return 0;
}

/*
 * The kernel edge, locked: one cgfilterd applies at a time.  A second
 * daemon refuses to start; a second --once (read_only_ok) carries on
 * read-only and only shows what it would do.
 */
static int manager_new(char **paths, size_t n_paths, bool read_only_ok, struct manager **ret) {
	_cleanup_(manager_freep) struct manager *m = calloc(1, sizeof(*m));
	_cleanup_free_ char *message = NULL;
	const struct cgf_features *f;
	const char *const *warnings;
	size_t n;
	int r;

	if (!m)
		return -ENOMEM;
	m->policy_paths = paths;
	m->n_policy_paths = n_paths;
	r = cgf_kernel_open(NULL, NULL, CGF_KERNEL_APPLY, &m->kernel, &message);
	if (r == -EBUSY && read_only_ok) {
		log_warning("%s: not applying; showing what this run would do", message);
		free(message);
		message = NULL;
		r = cgf_kernel_open(NULL, NULL, CGF_KERNEL_READ, &m->kernel, &message);
	} else if (r == -EBUSY) {
		log_error("%s: refusing to start a second one", message);
		return r;
	}
	if (r < 0) {
		log_error("%s", message ?: strerror(-r));
		return r;
	}
	n = cgf_kernel_warnings(m->kernel, &warnings);
	for (size_t i = 0; i < n; i++)
		log_warning("%s", warnings[i]);
	f = cgf_kernel_features(m->kernel);
	log_info("kernel: preorder %s, ordering %s, revision %s", f->preorder ? "yes" : "no",
		 f->ordering ? "yes" : "no", f->revision ? "yes" : "no");
	*ret = TAKE_PTR(m);
	return 0;
}

/* The loop's sources, set up before the first reconcile so that no
 * cgroup created during it goes unseen. */
static int manager_setup_loop(struct manager *m) {
	sigset_t mask;
	int r;

	r = sd_event_default(&m->event);
	if (r < 0)
		return r;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	r = sd_event_add_signal(m->event, NULL, SIGHUP, on_reload, m);
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGTERM, NULL, NULL); /* NULL: exit the loop */
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGINT, NULL, NULL);
	if (r >= 0)
		r = sd_event_set_watchdog(m->event, true);
	if (r < 0)
		return r;
	if (m->safety_net_interval > 0) {
		r = sd_event_add_time_relative(m->event, &m->safety_net, CLOCK_MONOTONIC, m->safety_net_interval,
					       m->safety_net_interval / 10, on_safety_net, m);
		if (r < 0)
			return r;
	}
	r = cgf_watch_new(cgf_kernel_cgroup_root_fd(m->kernel), &m->watch);
	if (r < 0)
		return r;
	return sd_event_add_io(m->event, &m->watch_source, cgf_watch_fd(m->watch), EPOLLIN, on_cgroup_event, m);
}

/* --once without the lock: what it would do, changing nothing. */
static int show_plan(struct manager *m) {
	struct cgf_diags refusal = CGF_DIAGS_INIT;
	struct cgf_reconcile_gate gate = { .diags = &refusal };
	struct cgf_reconcile rc = {};
	_cleanup_free_ char *text = NULL;
	int r;

	r = manager_read_policy(m, &m->current);
	if (r < 0)
		return r;
	gate.units = m->current.units_known ? &m->current.units : NULL;
	r = cgf_reconcile_run(m->kernel, m->current.policy, &m->current.objects, NULL, &gate, false, &rc);
	if (rc.refused)
		say_refusal(&refusal);
	cgf_diags_done(&refusal);
	if (r >= 0)
		r = cgf_plan_format(rc.plan, &text);
	if (r < 0)
		log_error("planning failed: %s", rc.error ?: strerror(-r));
	else {
		fputs(text, stdout);
		printf("Not applied (another cgfilterd holds the lock): %zu action%s, %zu report%s.\n",
		       rc.plan->n_actions, rc.plan->n_actions == 1 ? "" : "s", rc.plan->n_reports,
		       rc.plan->n_reports == 1 ? "" : "s");
		if (fflush(stdout) != 0)
			r = -errno;
	}
	cgf_reconcile_done(&rc);
	return r < 0 ? r : EXIT_LOCKED;
}

static void help(void) {
	printf("Usage: cgfilterd [--once] [--full-reconcile-interval=SEC] [POLICY...]\n"
	       "\n"
	       "Apply the network-filter policy to the kernel's cgroup-BPF attachments and\n"
	       "keep it applied: new cgroups get their filters as they appear, and SIGHUP\n"
	       "(systemctl reload cgfilterd) rereads the policy.\n"
	       "Without POLICY: " CGF_POLICY_MAIN " and its drop-ins.\n"
	       "\n"
	       "  --once      Reconcile once and exit: 0 when the kernel matches the policy.\n"
	       "              If another cgfilterd holds the lock, change nothing, print\n"
	       "              the plan it would apply and exit 3.\n"
	       "  --full-reconcile-interval=SEC\n"
	       "              Reconcile the whole host every SEC seconds besides the events\n"
	       "              (default 600; 0: only at start-up, reload and lost events).\n"
	       "  -h --help   Show this help.\n"
	       "\n"
	       "See cgfilterd(8), cgfilterd.policy(5) and cgfilterctl(1).\n");
}

static int run(int argc, char *argv[]) {
	enum { ARG_ONCE = 0x100, ARG_FULL_INTERVAL };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "once", no_argument, NULL, ARG_ONCE },
		{ "full-reconcile-interval", required_argument, NULL, ARG_FULL_INTERVAL },
		{},
	};
	_cleanup_(manager_freep) struct manager *m = NULL;
	unsigned long interval = FULL_RECONCILE_INTERVAL_DEFAULT;
	bool once = false;
	char *end;
	int c, r;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_ONCE:
			once = true;
			break;
		case ARG_FULL_INTERVAL:
			errno = 0;
			interval = strtoul(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-' ||
			    interval > 7 * 24 * 3600) {
				log_error("--full-reconcile-interval: '%s' is not a number of seconds up to a week",
					  optarg);
				return -EINVAL;
			}
			break;
		default:
			return -EINVAL;
		}

	r = manager_new(argv + optind, (size_t) (argc - optind), once, &m);
	if (r < 0)
		return r;
	if (!cgf_kernel_can_apply(m->kernel))
		return show_plan(m);
	m->safety_net_interval = interval * 1000 * 1000ULL;
	if (!once) {
		r = manager_setup_loop(m);
		if (r < 0) {
			log_error("setting up the event loop: %s", strerror(-r));
			return r;
		}
	}
	if (!once) {
		/* A previous daemon's verdict, pid and counts would answer
		 * for us until our first reconcile is done: they go now. */
		(void) cgf_runtime_remove_file("reload");
		(void) cgf_runtime_remove_file("pid");
		(void) cgf_runtime_remove_file(CGF_RECONCILE_COUNTS_FILE);
		(void) cgf_runtime_remove_file(CGF_MISSING_FIREWALLS_FILE);
		m->ubn.write = true;
	}
	r = manager_read_policy(m, &m->current);
	if (r < 0)
		return r;
	m->generation = 1;
	r = reconcile(m, &m->current, NULL, true, NULL);
	if (m->refused)
		log_error("the policy is refused; not starting (the filters attached before stay as they are)");
	m->started = true;
	/* --once: 0 only when every list is as the policy says.  The daemon
	 * starts with failed lists too: the others are applied and the
	 * failed ones retried (a tenant must not keep it from starting). */
	if (once && r > 0)
		return -EAGAIN;
	if (once || r < 0)
		return r;

	(void) cgf_runtime_write_pid();
	(void) cgf_runtime_write_reload(m->reloads, true, NULL);
	notify_status(m, "Applied");
	(void) sd_notify(false, "READY=1");
	r = sd_event_loop(m->event);
	(void) sd_notify(false, "STOPPING=1\nSTATUS=Stopping; the filters stay attached");
	log_info("stopping; the filters stay attached");
	return r;
}

int main(int argc, char *argv[]) {
	int r;

	cgf_log_setup_libbpf();
	r = run(argc, argv);
	return r < 0 ? EXIT_FAILURE : r;
}
