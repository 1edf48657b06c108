/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The status record as Prometheus metrics (see status-prometheus.h).
 * Written straight to the FILE, label value by label value: nothing is
 * allocated, so the only error is the write's.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "escape.h"
#include "state.h"
#include "status-prometheus.h"
#include "unit-firewalls.h"
#include "util.h"

/* ---- the format ---------------------------------------------------------- */

static void family(FILE *f, const char *name, const char *type, const char *help) {
	/* HELP texts are ours: no backslash, no newline to escape. */
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Bytes of a label value as the format escapes them. */
static void put_quoted(FILE *f, const char *s, size_t n) {
	for (size_t i = 0; i < n; i++)
		switch (s[i]) {
		case '\\':
			fputs("\\\\", f);
			break;
		case '"':
			fputs("\\\"", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		default:
			fputc(s[i], f);
		}
}

/* Does escape.h show every character of s as itself (a newline aside,
 * which the format escapes losslessly)? */
static bool shown_as_is(const char *s) {
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		char shown[CGF_ESCAPE_CHAR_MAX];
		size_t k;

		if (s[i] == '\n') {
			i++;
			continue;
		}
		k = cgf_escape_char(s + i, n - i, shown, NULL);
		if (strlen(shown) != k || memcmp(shown, s + i, k) != 0)
			return false;
		i += k;
	}
	return true;
}

/* s in escape.h's form, its own backslashes as \x5c: an encoding that
 * can be undone, so that two names never look alike. */
static void put_escaped_value(FILE *f, const char *s) {
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		char shown[CGF_ESCAPE_CHAR_MAX];

		if (s[i] == '\\') {
			put_quoted(f, "\\x5c", 4);
			i++;
			continue;
		}
		i += cgf_escape_char(s + i, n - i, shown, NULL);
		put_quoted(f, shown, strlen(shown));
	}
}

/* The labels of one sample, written as they come: "{a=\"x\",b=\"y\"}". */
struct labels {
	FILE *f;
	bool open;
};

static void label(struct labels *l, const char *name, const char *value) {
	bool as_is = shown_as_is(value);

	fputc(l->open ? ',' : '{', l->f);
	l->open = true;
	fprintf(l->f, "%s=\"", name);
	if (as_is)
		put_quoted(l->f, value, strlen(value));
	else
		put_escaped_value(l->f, value);
	fputc('"', l->f);
	if (!as_is)
		fprintf(l->f, ",%s_escaped=\"true\"", name);
}

static void labels_end(struct labels *l, uint64_t value) {
	if (l->open)
		fputc('}', l->f);
	fprintf(l->f, " %" PRIu64 "\n", value);
}

/* A sample without labels. */
static void sample(FILE *f, const char *name, uint64_t value) {
	fprintf(f, "%s %" PRIu64 "\n", name, value);
}

/* µs since the epoch as seconds, exactly: "1733461234.500000". */
static void sample_usec(FILE *f, const char *name, uint64_t usec) {
	fprintf(f, "%s %" PRIu64 ".%06" PRIu64 "\n", name, usec / 1000000, usec % 1000000);
}

/* ---- kernel -------------------------------------------------------------- */

static const char *feature(const struct cgf_status *s, bool value) {
	return !s->features_known ? "unknown" : value ? "yes" : "no";
}

static void kernel_info(const struct cgf_status *s, FILE *f) {
	struct labels l = { .f = f };

	family(f, "cgfilterd_kernel_info", "gauge",
	       "The running kernel: its release and whether it has the cgroup-BPF features "
	       "cgfilterd uses (yes, no, unknown); always 1.");
	fputs("cgfilterd_kernel_info", f);
	/* Unknown release: the label left out, as an empty value would be. */
	if (s->kernel_release)
		label(&l, "release", s->kernel_release);
	label(&l, "preorder", feature(s, s->features.preorder));
	label(&l, "ordering", feature(s, s->features.ordering));
	label(&l, "revision", feature(s, s->features.revision));
	labels_end(&l, 1);
}

/* ---- counters ------------------------------------------------------------ */

/* A list's programs, the effective ones then its own, as one sequence:
 * a filter counts wherever the record shows it. */
static size_t n_progs(const struct cgf_status_list *l) {
	return l->n_effective + l->n_attached;
}

static const struct cgf_status_prog *prog_at(const struct cgf_status_list *l, size_t i) {
	return i < l->n_effective ? &l->effective[i] : &l->attached[i - l->n_effective];
}

static bool counted(const struct cgf_status_prog *p) {
	return p->ours && p->has_counters;
}

static const char *filter_of(const struct cgf_status_prog *p) {
	return p->filter ?: "?"; /* ours, pin metadata unreadable: as the table shows it */
}

/* Is i the first counted program of its filter (when same_identity: of
 * its object, filter and identity) in l? */
static bool first_of(const struct cgf_status_list *l, size_t i, bool same_identity) {
	const struct cgf_status_prog *p = prog_at(l, i);

	for (size_t j = 0; j < i; j++) {
		const struct cgf_status_prog *q = prog_at(l, j);

		if (counted(q) && streq(filter_of(q), filter_of(p)) &&
		    (!same_identity || streq_ptr(q->identity, p->identity)))
			return false;
	}
	return true;
}

/* The counters of filter_of(prog_at(l, i)) for l's cgroup: each of its
 * objects once (instances of an object share its map). */
static struct cgf_status_counters filter_sum(const struct cgf_status_list *l, size_t i) {
	const char *filter = filter_of(prog_at(l, i));
	struct cgf_status_counters sum = {};

	for (size_t j = i; j < n_progs(l); j++) {
		const struct cgf_status_prog *p = prog_at(l, j);

		if (!counted(p) || !streq(filter_of(p), filter) || !first_of(l, j, true))
			continue;
		sum.pass_packets += p->counters.pass_packets;
		sum.pass_bytes += p->counters.pass_bytes;
		sum.drop_packets += p->counters.drop_packets;
		sum.drop_bytes += p->counters.drop_bytes;
		sum.would_drop_packets += p->counters.would_drop_packets;
		sum.would_drop_bytes += p->counters.would_drop_bytes;
	}
	return sum;
}

static void counter_sample(FILE *f, const char *name, const struct cgf_status_list *l, const char *filter,
			   const char *verdict, uint64_t value) {
	struct labels lb = { .f = f };

	fputs(name, f);
	label(&lb, "cgroup", l->cgroup);
	label(&lb, "direction", cgf_direction_to_string(l->direction));
	label(&lb, "filter", filter);
	label(&lb, "verdict", verdict);
	labels_end(&lb, value);
}

static void counters(const struct cgf_status *s, FILE *f, bool bytes) {
	const char *name = bytes ? "cgfilterd_bytes_total" : "cgfilterd_packets_total";

	family(f, name, "counter",
	       bytes ? "Bytes of the cgroup's sockets that the filter let pass, dropped, or would have "
		       "dropped but let pass (audited rules), per direction."
		     : "Packets of the cgroup's sockets that the filter let pass, dropped, or would have "
		       "dropped but let pass (audited rules), per direction.");
	for (size_t i = 0; i < s->n_lists; i++) {
		const struct cgf_status_list *l = &s->lists[i];

		for (size_t j = 0; j < n_progs(l); j++) {
			struct cgf_status_counters c;

			if (!counted(prog_at(l, j)) || !first_of(l, j, false))
				continue;
			c = filter_sum(l, j);
			counter_sample(f, name, l, filter_of(prog_at(l, j)), "pass",
				       bytes ? c.pass_bytes : c.pass_packets);
			counter_sample(f, name, l, filter_of(prog_at(l, j)), "drop",
				       bytes ? c.drop_bytes : c.drop_packets);
			/* A third value of the same label, not a family of
			 * its own: each packet is counted under one verdict,
			 * so the sum over verdict is every packet judged.
			 * Written for every filter, 0 where nothing is
			 * audited, so that no series appears only once a
			 * filter is switched to audit. */
			counter_sample(f, name, l, filter_of(prog_at(l, j)), "would_drop",
				       bytes ? c.would_drop_bytes : c.would_drop_packets);
		}
	}
}

/* ---- the daemon's report ------------------------------------------------- */

/* Was an earlier kept list shown with the same labels?  (The report's
 * names are escaped and cut: two lists can look alike.) */
static bool shown_before(const struct cgf_pending *p, size_t i) {
	for (size_t j = 0; j < i; j++)
		if (p->lists[j].direction == p->lists[i].direction && streq(p->lists[j].cgroup, p->lists[i].cgroup))
			return true;
	return false;
}

static void pending(const struct cgf_pending *p, FILE *f) {
	family(f, "cgfilterd_failed_lists", "gauge",
	       "Lists (cgroup, direction) the daemon's last reconcile of the policy in force failed; "
	       "retried with backoff.");
	sample(f, "cgfilterd_failed_lists", p->n_lists_total);
	family(f, "cgfilterd_failed_list_attempts", "gauge",
	       "Attempts so far at a failed list, with its last error; the first lists of the daemon's "
	       "report, names as it shows them.");
	for (size_t i = 0; i < p->n_lists; i++) {
		const struct cgf_pending_list *pl = &p->lists[i];
		const char *name = strerrorname_np(-pl->error);
		struct labels l = { .f = f };
		char number[16];

		if (shown_before(p, i))
			continue;
		if (!name) {
			snprintf(number, sizeof(number), "%d", -pl->error);
			name = number;
		}
		fputs("cgfilterd_failed_list_attempts", f);
		label(&l, "cgroup", pl->cgroup);
		label(&l, "direction", cgf_direction_to_string(pl->direction));
		label(&l, "error", name);
		labels_end(&l, pl->attempts);
	}
	family(f, "cgfilterd_unreachable_cgroups", "gauge",
	       "Cgroups the daemon's last full walk could not enter; programs attached above them apply.");
	sample(f, "cgfilterd_unreachable_cgroups", p->n_unreachable_total);
}

/* Units below a none of ours without the programs they asked systemd
 * for (missing-firewalls.h): the total, and one series per unit and
 * direction the daemon's file names. */
static void missing_firewalls(const struct cgf_missing_firewalls *m, FILE *f) {
	family(f, "cgfilterd_units_without_firewall", "gauge",
	       "Units below a none of ours running without the programs they asked systemd for (IPAddressDeny= "
	       "...): the kernel refused systemd's attach.");
	sample(f, "cgfilterd_units_without_firewall", m->n_total);
	family(f, "cgfilterd_unit_firewall_missing", "gauge",
	       "1 per unit and direction without its programs; the first units of the daemon's file, names as "
	       "it shows them.");
	for (size_t i = 0; i < m->n; i++)
		for (unsigned d = 0; d < _CGF_DIRECTION_MAX; d++) {
			struct labels l = { .f = f };
			bool seen = false;

			if (!(m->items[i].directions & CGF_DIRECTION_BIT(d)))
				continue;
			/* Names are escaped and cut: two entries can look alike. */
			for (size_t j = 0; j < i && !seen; j++)
				seen = (m->items[j].directions & CGF_DIRECTION_BIT(d)) &&
				       streq(m->items[j].unit, m->items[i].unit) &&
				       streq(m->items[j].cgroup, m->items[i].cgroup);
			if (seen)
				continue;
			fputs("cgfilterd_unit_firewall_missing", f);
			label(&l, "unit", m->items[i].unit);
			label(&l, "cgroup", m->items[i].cgroup);
			label(&l, "direction", cgf_direction_to_string(d));
			labels_end(&l, 1);
		}
}

static void reconciles(const struct cgf_reconcile_counts *c, FILE *f) {
	family(f, "cgfilterd_reconciles_total", "counter",
	       "Reconciles the running daemon made, by scope (full, event) and result "
	       "(success, incomplete: lists retried, error).");
	for (size_t k = 0; k < _CGF_RECONCILE_SCOPE_MAX; k++)
		for (size_t r = 0; r < _CGF_RECONCILE_RESULT_MAX; r++) {
			struct labels l = { .f = f };

			fputs("cgfilterd_reconciles_total", f);
			label(&l, "scope", cgf_reconcile_scope_kind_to_string(k));
			label(&l, "result", cgf_reconcile_result_to_string(r));
			labels_end(&l, c->n[k][r]);
		}
	if (c->last_usec > 0) {
		family(f, "cgfilterd_last_reconcile_timestamp_seconds", "gauge",
		       "When the daemon's last reconcile ended, in seconds since the epoch.");
		sample_usec(f, "cgfilterd_last_reconcile_timestamp_seconds", c->last_usec);
	}
	if (c->last_success_usec > 0) {
		family(f, "cgfilterd_last_successful_reconcile_timestamp_seconds", "gauge",
		       "When the daemon's last successful reconcile ended, in seconds since the epoch.");
		sample_usec(f, "cgfilterd_last_successful_reconcile_timestamp_seconds", c->last_success_usec);
	}
}

static void reloads(const struct cgf_status *s, FILE *f) {
	family(f, "cgfilterd_reloads_total", "counter", "Reloads (SIGHUP) the running daemon answered.");
	sample(f, "cgfilterd_reloads_total", s->reloads);
	family(f, "cgfilterd_last_reload_successful", "gauge",
	       "1 when the last reload (or else the start) put its policy in force, 0 when it was refused.");
	sample(f, "cgfilterd_last_reload_successful", s->reload_ok);
}

/* ---- the whole record ---------------------------------------------------- */

int cgf_status_render_prometheus(const struct cgf_status *s, FILE *f) {
	kernel_info(s, f);
	counters(s, f, false);
	counters(s, f, true);
	family(f, "cgfilterd_daemon_report", "gauge",
	       "1 when the running daemon's report of failed lists and unreachable cgroups was read.");
	sample(f, "cgfilterd_daemon_report", s->daemon != NULL);
	if (s->daemon)
		pending(s->daemon, f);
	if (s->missing_firewalls)
		missing_firewalls(s->missing_firewalls, f);
	if (s->has_reconciles)
		reconciles(&s->reconciles, f);
	if (s->has_reload)
		reloads(s, f);
	errno = 0;
	if (fflush(f) != 0 || ferror(f))
		return errno > 0 ? -errno : -EIO;
	return 0;
}
