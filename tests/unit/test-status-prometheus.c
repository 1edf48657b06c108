/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The status record as Prometheus metrics: every output is read back by
 * a strict parser of the text exposition format written here (no
 * promtool: it is not a build dependency, and this checks more of what
 * matters to us):
 *
 *   - every line is "# HELP", "# TYPE" or a sample, ending in a newline;
 *     no raw control byte anywhere, valid UTF-8 throughout;
 *   - metric and label names match the format's regexes, no label name
 *     starts with "__", none twice in a sample;
 *   - HELP and TYPE once per family, both before its samples, a family's
 *     samples together; a sample's name is its family's; counters end
 *     in _total;
 *   - label values use only the escapes \\, \" and \n; values parse
 *     whole as floats; no timestamps (a textfile must not carry them);
 *   - no two samples of one series.
 *
 * Then what was read is checked against the record: hostile cgroup
 * names round-trip (as they are, or through <name>_escaped="true" and
 * its \xNN form), counters are the record's, the daemon's report and
 * counts appear; and one small record's output is checked exactly.
 */
#include <errno.h>
#include <stdarg.h>

#include "escape.h"
#include "status-prometheus.h"
#include "status.h"
#include "tests.h"
#include "util.h"

/* ---- the parser ---------------------------------------------------------- */

#define LABELS_MAX 8

struct sample {
	char *name;
	char *label_names[LABELS_MAX];
	char *label_values[LABELS_MAX]; /* unescaped */
	size_t n_labels;
	double value;
	char *text; /* the value as written */
};

struct family {
	char *name;
	char *type;
	bool help, samples_seen;
};

struct exposition {
	struct sample *samples;
	size_t n_samples;
	struct family *families;
	size_t n_families;
	char *error; /* the first violation, with its line */
};

static void exposition_done(struct exposition *e) {
	for (size_t i = 0; i < e->n_samples; i++) {
		free(e->samples[i].name);
		for (size_t j = 0; j < e->samples[i].n_labels; j++) {
			free(e->samples[i].label_names[j]);
			free(e->samples[i].label_values[j]);
		}
		free(e->samples[i].text);
	}
	free(e->samples);
	for (size_t i = 0; i < e->n_families; i++) {
		free(e->families[i].name);
		free(e->families[i].type);
	}
	free(e->families);
	free(e->error);
}

static bool ends_with(const char *s, const char *suffix) {
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && streq(s + n - k, suffix);
}

static bool name_char(char c, bool first, bool colon) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':') ||
	       (!first && c >= '0' && c <= '9');
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* (metric) or [a-zA-Z_][a-zA-Z0-9_]* (label),
 * at *p; advances past it.  NULL if there is none. */
static char *take_name(const char **p, bool colon) {
	const char *start = *p, *s = start;
	char *name;

	if (!name_char(*s, true, colon))
		return NULL;
	while (name_char(*s, false, colon))
		s++;
	REQUIRE((name = strndup(start, (size_t) (s - start))));
	*p = s;
	return name;
}

static struct family *find_family(struct exposition *e, const char *name) {
	for (size_t i = 0; i < e->n_families; i++)
		if (streq(e->families[i].name, name))
			return &e->families[i];
	return NULL;
}

static struct family *family_of(struct exposition *e, const char *name) {
	struct family *f = find_family(e, name);

	if (f)
		return f;
	REQUIRE((f = array_append((void **) &e->families, e->n_families, sizeof(*f))));
	*f = (struct family) { .name = strdup(name) };
	REQUIRE(f->name);
	e->n_families++;
	return f;
}

/* One label value after the opening quote; *p past the closing one. */
static char *take_value(const char **p) {
	const char *s = *p;
	char *out = malloc(strlen(s) + 1), *q = out;

	REQUIRE(out);
	for (;; s++) {
		if (*s == '"')
			break;
		if (*s == '\0' || *s == '\n') {
			free(out);
			return NULL;
		}
		if (*s != '\\') {
			*q++ = *s;
			continue;
		}
		s++;
		if (*s == '\\')
			*q++ = '\\';
		else if (*s == '"')
			*q++ = '"';
		else if (*s == 'n')
			*q++ = '\n';
		else {
			free(out);
			return NULL; /* no other escape exists */
		}
	}
	*q = 0;
	*p = s + 1;
	return out;
}

static bool valid_utf8(const char *s, size_t n) {
	for (size_t i = 0; i < n;) {
		size_t k = cgf_utf8_length(s + i, n - i);

		if (k == 0)
			return false;
		i += k;
	}
	return true;
}

static const char *take_sample(struct exposition *e, const char *line, struct sample *smp) {
	const char *p = line;
	char *end;

	smp->name = take_name(&p, true);
	if (!smp->name)
		return "no metric name";
	if (*p == '{') {
		p++;
		while (*p != '}') {
			char *n, *v;

			if (smp->n_labels == LABELS_MAX)
				return "too many labels";
			n = take_name(&p, false);
			if (!n)
				return "bad label name";
			/* Kept at once, so that an error path frees it. */
			smp->label_names[smp->n_labels++] = n;
			if (n[0] == '_' && n[1] == '_')
				return "reserved label name";
			for (size_t i = 0; i + 1 < smp->n_labels; i++)
				if (streq(smp->label_names[i], n))
					return "label twice";
			if (*p++ != '=' || *p++ != '"')
				return "no =\" after a label name";
			v = take_value(&p);
			if (!v)
				return "bad label value";
			smp->label_values[smp->n_labels - 1] = v;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return "no , or } after a label";
		}
		p++;
	}
	if (*p++ != ' ')
		return "no blank before the value";
	smp->text = strdup(p);
	REQUIRE(smp->text);
	errno = 0;
	smp->value = strtod(p, &end);
	if (end == p || *end != '\0' || errno != 0)
		return "the value is not a float (or a timestamp follows)";
	(void) e;
	return NULL;
}

static int compare_strings(const void *a, const void *b) {
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The series' identity: its name and its labels, sorted. */
static char *series_key(const struct sample *s) {
	char *parts[LABELS_MAX], *key = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&key, &size);

	REQUIRE(f);
	for (size_t i = 0; i < s->n_labels; i++)
		REQUIRE(asprintf(&parts[i], "%s\x01%s", s->label_names[i], s->label_values[i]) >= 0);
	qsort(parts, s->n_labels, sizeof(*parts), compare_strings);
	fputs(s->name, f);
	for (size_t i = 0; i < s->n_labels; i++) {
		fprintf(f, "\x02%s", parts[i]);
		free(parts[i]);
	}
	REQUIRE(fclose(f) == 0);
	return key;
}

static const char *check_line(struct exposition *e, char *line, const char **current) {
	struct family *f;

	if (strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0) {
		bool help = line[2] == 'H';
		const char *p = line + 7;
		_cleanup_free_ char *name = take_name(&p, true);

		if (!name || *p != ' ')
			return "bad HELP/TYPE";
		f = family_of(e, name);
		if (f->samples_seen)
			return "HELP/TYPE after the family's samples";
		if (help) {
			if (f->help)
				return "HELP twice";
			for (const char *c = p + 1; *c; c++)
				if (*c == '\\' && c[1] != '\\' && c[1] != 'n')
					return "bad escape in HELP";
			f->help = true;
		} else {
			static const char *const types[] = { "counter", "gauge", "histogram", "summary", "untyped" };
			bool known = false;

			if (f->type)
				return "TYPE twice";
			for (size_t i = 0; i < ELEMENTSOF(types); i++)
				known |= streq(p + 1, types[i]);
			if (!known)
				return "unknown type";
			REQUIRE((f->type = strdup(p + 1)));
			if (streq(f->type, "counter") && !ends_with(name, "_total"))
				return "a counter not named *_total";
		}
		*current = f->name;
		return NULL;
	}
	if (line[0] == '#')
		return "a comment that is neither HELP nor TYPE";
	{
		struct sample s = {};
		const char *why;

		why = take_sample(e, line, &s);
		REQUIRE(array_append((void **) &e->samples, e->n_samples, sizeof(s)));
		e->samples[e->n_samples++] = s;
		if (why)
			return why;
		f = find_family(e, s.name);
		if (!f || !f->help || !f->type)
			return "a sample before its family's HELP and TYPE";
		if (!*current || !streq(*current, s.name))
			return "a sample apart from its family";
		f->samples_seen = true;
	}
	return NULL;
}

/* Parses text; e->error says the first violation (NULL: none). */
static void parse_exposition(const char *text, struct exposition *e) {
	_cleanup_free_ char *copy = strdup(text);
	const char *current = NULL;
	size_t n = strlen(text), lineno = 0;
	char *line, *nl;

	REQUIRE(copy);
	*e = (struct exposition) {};
	if (!valid_utf8(text, n)) {
		REQUIRE((e->error = strdup("not valid UTF-8")));
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (((unsigned char) text[i] < 0x20 && text[i] != '\n') || text[i] == 0x7f) {
			REQUIRE(asprintf(&e->error, "a raw control byte 0x%02x at offset %zu", (unsigned char) text[i],
					 i) >= 0);
			return;
		}
	if (n == 0 || text[n - 1] != '\n') {
		REQUIRE((e->error = strdup("the last line has no newline")));
		return;
	}
	for (line = copy; *line; line = nl + 1) {
		const char *why;

		nl = strchr(line, '\n');
		*nl = 0;
		lineno++;
		why = check_line(e, line, &current);
		if (why) {
			REQUIRE(asprintf(&e->error, "line %zu: %s: %s", lineno, why, line) >= 0);
			return;
		}
	}
	for (size_t i = 0; i < e->n_samples; i++) {
		_cleanup_free_ char *a = series_key(&e->samples[i]);

		for (size_t j = 0; j < i; j++) {
			_cleanup_free_ char *b = series_key(&e->samples[j]);

			if (streq(a, b)) {
				REQUIRE(asprintf(&e->error, "samples %zu and %zu are one series (%s)", j, i,
						 e->samples[i].name) >= 0);
				return;
			}
		}
	}
}

static const char *label_of(const struct sample *s, const char *name) {
	for (size_t i = 0; i < s->n_labels; i++)
		if (streq(s->label_names[i], name))
			return s->label_values[i];
	return NULL;
}

/* The samples of name whose labels include every (name, value) pair of
 * the NULL-terminated list; *ret_n of them, the last in *ret. */
static const struct sample *find_sample(const struct exposition *e, const char *name, size_t *ret_n, ...) {
	const struct sample *found = NULL;
	size_t n = 0;

	for (size_t i = 0; i < e->n_samples; i++) {
		const struct sample *s = &e->samples[i];
		bool match = streq(s->name, name);
		va_list ap;

		va_start(ap, ret_n);
		for (const char *k; match && (k = va_arg(ap, const char *));) {
			const char *v = va_arg(ap, const char *), *got = label_of(s, k);

			match = v ? got && streq(got, v) : !got;
		}
		va_end(ap);
		if (match) {
			found = s;
			n++;
		}
	}
	*ret_n = n;
	return found;
}

/* A cgroup label as the name it stands for: itself, or with
 * cgroup_escaped="true" its \xNN form decoded.  NULL: not decodable. */
static char *cgroup_name(const struct sample *s) {
	const char *v = label_of(s, "cgroup"), *escaped = label_of(s, "cgroup_escaped");
	char *out, *q;

	if (!v)
		return NULL;
	if (!escaped)
		return strdup(v);
	if (!streq(escaped, "true"))
		return NULL;
	REQUIRE((out = q = malloc(strlen(v) + 1)));
	for (const char *p = v; *p;) {
		unsigned x;

		if (*p != '\\') {
			*q++ = *p++;
			continue;
		}
		/* Every backslash starts a \xNN: the encoding is one to one. */
		if (p[1] != 'x' || sscanf(p + 2, "%2x", &x) != 1 || !p[2] || !p[3]) {
			free(out);
			return NULL;
		}
		*q++ = (char) x;
		p += 4;
	}
	*q = 0;
	return out;
}

/* ---- records ------------------------------------------------------------- */

static char *render(const struct cgf_status *s) {
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);

	REQUIRE(f);
	REQUIRE(cgf_status_render_prometheus(s, f) == 0);
	REQUIRE(fclose(f) == 0);
	return out;
}

/* Names a tenant could choose, each with its own counts. */
static const char *const hostile[] = {
	"quote\"d",
	"back\\slash",
	"new\nline",
	"all\"\n\\three",
	"caf\xc3\xa9.slice/\xe6\x97\xa5\xe6\x9c\xac",
	"system.slice/system-systemd\\x2dfsck.slice",
	"esc\x1b[31mred",
	"tab\tname",
	"tab\\x09name", /* the escaped form of the one above, literally: another series */
	"cr\rname",
	"del\x7f",
	"bad\xff\\x utf8",
	"c1\xc2\x9b" "csi",
	"rtl\xe2\x80\xae" "txet",
	"\\x5c",
	"",
};

static struct cgf_status_prog ours(const char *filter, const char *identity, uint64_t base) {
	return (struct cgf_status_prog) {
		.prog_id = 10, .prog_name = (char *) "cgf_x", .ours = true, .filter = (char *) filter,
		.identity = (char *) identity, .attach_flags = CGF_ATTACH_MULTI, .has_counters = true,
		.counters = { .pass_packets = base + 1, .pass_bytes = base + 2, .drop_packets = base + 3,
			      .drop_bytes = base + 4, .would_drop_packets = base + 5, .would_drop_bytes = base + 6 },
	};
}

static struct cgf_status *hostile_host(void) {
	struct cgf_status *s = cgf_status_new();
	_cleanup_free_ char *pending_text = NULL;

	REQUIRE(s);
	REQUIRE(cgf_status_set_kernel(s, "6.1.0-cgf\x1b]0;title\x07", &CGF_FEATURES_PATCHED) == 0);
	for (size_t i = 0; i < ELEMENTSOF(hostile); i++) {
		struct cgf_status_list *l;
		struct cgf_status_prog p = ours("tenants", "rules:1", 1000 * (i + 1));
		const struct cgf_status_prog foreign = { .prog_id = 77 };

		REQUIRE(cgf_status_add_list(s, hostile[i], CGF_EGRESS, CGF_ATTACH_MULTI, 3, &l) == 0);
		REQUIRE(cgf_status_list_add_effective(l, &foreign, NULL) == 0);
		REQUIRE(cgf_status_list_add_effective(l, &p, NULL) == 0);
		REQUIRE(cgf_status_list_add_attached(l, &p, NULL) == 0);
	}
	/* The daemon's report: two lists it shows alike (its names are cut
	 * and escaped), one hostile name as it writes it, and more lists
	 * than it kept. */
	REQUIRE(asprintf(&pending_text,
			 "cgfilterd-pending 1\n"
			 "lists\t40\n"
			 "list\tegress\t3\t16\tweb.slice\tattach: Device or resource busy\n"
			 "list\tegress\t5\t16\tweb.slice\tattach: Device or resource busy\n"
			 "list\tingress\t1\t1\ttab\\x09name\tattach: Operation not permitted\n"
			 "unreachable\t1001\n"
			 "cgroup\t40\tdeep/x\n") >= 0);
	REQUIRE(cgf_pending_parse(pending_text, &s->daemon) == 0);
	s->has_reconciles = true;
	s->reconciles.n[CGF_RECONCILE_FULL][CGF_RECONCILE_SUCCESS] = 4;
	s->reconciles.n[CGF_RECONCILE_EVENT][CGF_RECONCILE_INCOMPLETE] = 2;
	s->reconciles.last_usec = 1733461234000042;
	s->reconciles.last_success_usec = 1733461200500000;
	s->has_reload = true;
	s->reloads = 3;
	s->reload_ok = false;
	return s;
}

/* ---- tests --------------------------------------------------------------- */

/* The parser itself refuses what it must. */
static void test_parser(struct test_state *t) {
	static const char *const bad[] = {
		"x 1\n",                                              /* no HELP/TYPE */
		"# HELP x h\n# TYPE x gauge\nx 1",                    /* no newline at the end */
		"# HELP x h\n# TYPE x gauge\nx{a=\"\t\"} 1\n",        /* raw control byte */
		"# HELP x h\n# TYPE x gauge\nx{a=\"\\t\"} 1\n",       /* no such escape */
		"# HELP x h\n# TYPE x gauge\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n", /* one series twice */
		"# HELP x h\n# TYPE x gauge\nx{a=\"1\",a=\"2\"} 1\n",  /* label twice */
		"# HELP x h\n# TYPE x gauge\nx{__a=\"1\"} 1\n",       /* reserved */
		"# HELP x h\n# TYPE x gauge\nx{1a=\"1\"} 1\n",        /* label name */
		"# HELP x h\n# TYPE x gauge\nx one\n",                /* value */
		"# HELP x h\n# TYPE x gauge\nx 1 1733461234000\n",    /* timestamp */
		"# HELP x h\n# TYPE x counter\nx 1\n",                /* counter not *_total */
		"# HELP x h\n# TYPE x gauge\n# TYPE x gauge\nx 1\n",  /* TYPE twice */
		"# HELP x h\n# TYPE x gauge\nx 1\n# HELP x h\n",      /* HELP after samples */
		"# HELP x h\n# TYPE x gauge\n# HELP y h\n# TYPE y gauge\nx 1\n", /* apart */
		"# HELP x h\n# TYPE x gauge\nx{a=\"\xff\"} 1\n",      /* not UTF-8 */
		"# HELP 0x h\n# TYPE 0x gauge\n0x 1\n",               /* metric name */
	};
	struct exposition e;

	parse_exposition("# HELP x_total h\n# TYPE x_total counter\nx_total{a=\"q\\\"\\n\\\\\"} 1.5e3\n", &e);
	CHECK(t, !e.error, "a good one refused: %s", e.error);
	CHECK(t, e.n_samples == 1 && streq(label_of(&e.samples[0], "a"), "q\"\n\\") && e.samples[0].value == 1500,
	      "a good one read wrong");
	exposition_done(&e);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		parse_exposition(bad[i], &e);
		CHECK(t, e.error, "bad exposition %zu accepted", i);
		exposition_done(&e);
	}
}

static void test_hostile(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = hostile_host();
	_cleanup_free_ char *out = render(s);
	struct exposition e;
	const struct sample *smp;
	size_t n;

	parse_exposition(out, &e);
	CHECK(t, !e.error, "the output is not a valid exposition: %s\n%s", e.error, out);

	for (size_t i = 0; i < ELEMENTSOF(hostile); i++) {
		static const char *const verdicts[] = { "pass", "drop", "would_drop" };
		uint64_t base = 1000 * (i + 1);
		bool found = false;

		/* Find the series by decoding every cgroup label: the name
		 * must come back exactly, and only once per family. */
		for (size_t j = 0; j < e.n_samples; j++) {
			const struct sample *x = &e.samples[j];
			_cleanup_free_ char *name = NULL;
			bool packets = streq(x->name, "cgfilterd_packets_total");

			if (!packets && !streq(x->name, "cgfilterd_bytes_total"))
				continue;
			name = cgroup_name(x);
			CHECK(t, name, "sample %zu: cgroup label not decodable", j);
			if (!name || !streq(name, hostile[i]))
				continue;
			found = true;
			CHECK(t, streq_ptr(label_of(x, "direction"), "egress") && streq_ptr(label_of(x, "filter"), "tenants"),
			      "cgroup %zu: labels", i);
			for (size_t v = 0; v < ELEMENTSOF(verdicts); v++)
				if (streq_ptr(label_of(x, "verdict"), verdicts[v]))
					/* pass: +1 packets, +2 bytes; drop: +3, +4;
					 * would_drop: +5, +6.
					 * The program is both effective and in the
					 * own list: counted once, not twice. */
					CHECK(t, x->value == (double) (base + 1 + 2 * v + !packets),
					      "cgroup %zu %s %s: %s", i, x->name, verdicts[v], x->text);
		}
		CHECK(t, found, "cgroup %zu not found", i);
		/* Plain names are written as they are, no flag. */
		if (!strpbrk(hostile[i], "\t\r\x1b\x7f\xff\xc2\xe2"))
			CHECK(t, find_sample(&e, "cgfilterd_packets_total", &n, "cgroup", hostile[i], "cgroup_escaped",
					     (char *) NULL, "verdict", "pass", (char *) NULL) && n == 1,
			      "cgroup %zu not as itself", i);
	}
	/* Three packets and three bytes samples per cgroup (pass, drop,
	 * would_drop), nothing else. */
	find_sample(&e, "cgfilterd_packets_total", &n, (char *) NULL);
	CHECK(t, n == 3 * ELEMENTSOF(hostile), "%zu packets samples", n);
	find_sample(&e, "cgfilterd_bytes_total", &n, (char *) NULL);
	CHECK(t, n == 3 * ELEMENTSOF(hostile), "%zu bytes samples", n);

	smp = find_sample(&e, "cgfilterd_kernel_info", &n, "preorder", "yes", "release_escaped", "true",
			  (char *) NULL);
	CHECK(t, smp && n == 1 && smp->value == 1, "kernel info");
	CHECK(t, smp && streq_ptr(label_of(smp, "release"), "6.1.0-cgf\\x1b]0;title\\x07"), "kernel release %s",
	      smp ? label_of(smp, "release") : "-");

	smp = find_sample(&e, "cgfilterd_daemon_report", &n, (char *) NULL);
	CHECK(t, smp && smp->value == 1, "daemon report");
	smp = find_sample(&e, "cgfilterd_failed_lists", &n, (char *) NULL);
	CHECK(t, smp && smp->value == 40, "every failed list counted, also those not kept");
	find_sample(&e, "cgfilterd_failed_list_attempts", &n, (char *) NULL);
	CHECK(t, n == 2, "%zu failed list samples: the two alike shown once", n);
	smp = find_sample(&e, "cgfilterd_failed_list_attempts", &n, "cgroup", "web.slice", "error", "EBUSY",
			  (char *) NULL);
	CHECK(t, smp && smp->value == 3, "the first of two alike");
	smp = find_sample(&e, "cgfilterd_failed_list_attempts", &n, "cgroup", "tab\\x09name", "direction", "ingress",
			  "error", "EPERM", (char *) NULL);
	CHECK(t, smp && smp->value == 1, "a report's name as the report has it");
	smp = find_sample(&e, "cgfilterd_unreachable_cgroups", &n, (char *) NULL);
	CHECK(t, smp && smp->value == 1001, "unreachable cgroups");

	find_sample(&e, "cgfilterd_reconciles_total", &n, (char *) NULL);
	CHECK(t, n == 6, "every scope and result: %zu", n);
	smp = find_sample(&e, "cgfilterd_reconciles_total", &n, "scope", "full", "result", "success", (char *) NULL);
	CHECK(t, smp && smp->value == 4, "full reconciles");
	smp = find_sample(&e, "cgfilterd_reconciles_total", &n, "scope", "event", "result", "incomplete",
			  (char *) NULL);
	CHECK(t, smp && smp->value == 2, "incomplete event reconciles");
	smp = find_sample(&e, "cgfilterd_last_reconcile_timestamp_seconds", &n, (char *) NULL);
	CHECK(t, smp && streq(smp->text, "1733461234.000042"), "last reconcile %s", smp ? smp->text : "-");
	smp = find_sample(&e, "cgfilterd_last_successful_reconcile_timestamp_seconds", &n, (char *) NULL);
	CHECK(t, smp && streq(smp->text, "1733461200.500000"), "last success %s", smp ? smp->text : "-");
	smp = find_sample(&e, "cgfilterd_reloads_total", &n, (char *) NULL);
	CHECK(t, smp && smp->value == 3, "reloads");
	smp = find_sample(&e, "cgfilterd_last_reload_successful", &n, (char *) NULL);
	CHECK(t, smp && smp->value == 0, "last reload refused");
	exposition_done(&e);
}

/* A filter as two objects (an update half way) is their sum; one object
 * attached at two levels, its instances sharing the map, counts once;
 * foreign programs and ours without counters give nothing. */
static void test_sums(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = cgf_status_new();
	_cleanup_free_ char *out = NULL;
	struct cgf_status_prog base = ours("base", "count:1", 0), inherited = base;
	struct cgf_status_prog old = ours("web", "rules:old", 100), new = ours("web", "rules:new", 200);
	struct cgf_status_prog nocount = ours("deny", "deny:1", 0);
	struct cgf_status_list *l;
	struct exposition e;
	const struct sample *smp;
	size_t n;

	REQUIRE(s);
	nocount.has_counters = false;
	inherited.attached_at = (char *) ".";
	inherited.prog_id = 11;
	REQUIRE(cgf_status_add_list(s, "web.slice", CGF_INGRESS, CGF_ATTACH_MULTI, 1, &l) == 0);
	REQUIRE(cgf_status_list_add_effective(l, &inherited, NULL) == 0);
	REQUIRE(cgf_status_list_add_effective(l, &base, NULL) == 0);
	REQUIRE(cgf_status_list_add_effective(l, &old, NULL) == 0);
	REQUIRE(cgf_status_list_add_effective(l, &nocount, NULL) == 0);
	REQUIRE(cgf_status_list_add_attached(l, &new, NULL) == 0); /* not (yet) in the effective list */
	out = render(s);
	parse_exposition(out, &e);
	CHECK(t, !e.error, "invalid: %s\n%s", e.error, out);
	smp = find_sample(&e, "cgfilterd_packets_total", &n, "filter", "base", "verdict", "pass", (char *) NULL);
	CHECK(t, smp && n == 1 && smp->value == 1, "base once: %s", out);
	smp = find_sample(&e, "cgfilterd_bytes_total", &n, "filter", "web", "verdict", "drop", (char *) NULL);
	CHECK(t, smp && n == 1 && smp->value == 104 + 204, "web's two objects summed: %s", out);
	smp = find_sample(&e, "cgfilterd_packets_total", &n, "filter", "web", "verdict", "would_drop", (char *) NULL);
	CHECK(t, smp && n == 1 && smp->value == 105 + 205, "web's would-drop summed too: %s", out);
	smp = find_sample(&e, "cgfilterd_bytes_total", &n, "filter", "base", "verdict", "would_drop", (char *) NULL);
	CHECK(t, smp && n == 1 && smp->value == 6, "base's would-drop bytes once: %s", out);
	find_sample(&e, "cgfilterd_packets_total", &n, "filter", "deny", (char *) NULL);
	CHECK(t, n == 0, "no counters, no sample");
	/* No daemon: its families are left out, and it says so. */
	smp = find_sample(&e, "cgfilterd_daemon_report", &n, (char *) NULL);
	CHECK(t, smp && smp->value == 0, "no daemon report");
	find_sample(&e, "cgfilterd_reconciles_total", &n, (char *) NULL);
	CHECK(t, n == 0 && !find_family(&e, "cgfilterd_reconciles_total"), "no reconcile counts");
	exposition_done(&e);
}

/* One small record, exactly. */
static void test_exact(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = cgf_status_new();
	_cleanup_free_ char *out = NULL;
	struct cgf_status_prog p = ours("web", "rules:1", 0);
	struct cgf_status_list *l;

	REQUIRE(s);
	REQUIRE(cgf_status_add_list(s, "a\"b", CGF_EGRESS, CGF_ATTACH_MULTI, 1, &l) == 0);
	REQUIRE(cgf_status_list_add_effective(l, &p, NULL) == 0);
	out = render(s);
	CHECK_STREQ(t, out,
		    "# HELP cgfilterd_kernel_info The running kernel: its release and whether it has the cgroup-BPF "
		    "features cgfilterd uses (yes, no, unknown); always 1.\n"
		    "# TYPE cgfilterd_kernel_info gauge\n"
		    "cgfilterd_kernel_info{preorder=\"unknown\",ordering=\"unknown\",revision=\"unknown\"} 1\n"
		    "# HELP cgfilterd_packets_total Packets of the cgroup's sockets that the filter let pass, "
		    "dropped, or would have dropped but let pass (audited rules), per direction.\n"
		    "# TYPE cgfilterd_packets_total counter\n"
		    "cgfilterd_packets_total{cgroup=\"a\\\"b\",direction=\"egress\",filter=\"web\",verdict=\"pass\"} 1\n"
		    "cgfilterd_packets_total{cgroup=\"a\\\"b\",direction=\"egress\",filter=\"web\",verdict=\"drop\"} 3\n"
		    "cgfilterd_packets_total{cgroup=\"a\\\"b\",direction=\"egress\",filter=\"web\",verdict=\"would_drop\"} 5\n"
		    "# HELP cgfilterd_bytes_total Bytes of the cgroup's sockets that the filter let pass, "
		    "dropped, or would have dropped but let pass (audited rules), per direction.\n"
		    "# TYPE cgfilterd_bytes_total counter\n"
		    "cgfilterd_bytes_total{cgroup=\"a\\\"b\",direction=\"egress\",filter=\"web\",verdict=\"pass\"} 2\n"
		    "cgfilterd_bytes_total{cgroup=\"a\\\"b\",direction=\"egress\",filter=\"web\",verdict=\"drop\"} 4\n"
		    "cgfilterd_bytes_total{cgroup=\"a\\\"b\",direction=\"egress\",filter=\"web\",verdict=\"would_drop\"} 6\n"
		    "# HELP cgfilterd_daemon_report 1 when the running daemon's report of failed lists and "
		    "unreachable cgroups was read.\n"
		    "# TYPE cgfilterd_daemon_report gauge\n"
		    "cgfilterd_daemon_report 0\n",
		    "a small record");
}

/* The units without their programs: the total, one series per unit and
 * direction, hostile names as the daemon's file has them. */
static void test_missing_firewalls(struct test_state *t) {
	_cleanup_(cgf_status_freep) struct cgf_status *s = cgf_status_new();
	_cleanup_free_ char *out = NULL;
	const struct sample *smp;
	struct exposition e;
	size_t n;

	REQUIRE(s);
	REQUIRE(cgf_missing_firewalls_parse("cgfilterd-missing-firewalls 1\n"
					    "units\t40\n"
					    "unit\tingress,egress\tweb.service\tsystem.slice/web.service\tIPAddressDeny=\n"
					    "unit\tegress\tq\"\\x0a.service\tsystem.slice/q\"\\x0a.service\tBPFProgram=egress:\n"
					    "unit\tegress\tweb.service\tsystem.slice/web.service\tIPAddressDeny=\n",
					    &s->missing_firewalls) == 0);
	out = render(s);
	parse_exposition(out, &e);
	CHECK(t, !e.error, "invalid: %s\n%s", e.error, out);
	smp = find_sample(&e, "cgfilterd_units_without_firewall", &n, (char *) NULL);
	CHECK(t, smp && n == 1 && smp->value == 40, "every unit counted, also those not kept");
	find_sample(&e, "cgfilterd_unit_firewall_missing", &n, (char *) NULL);
	CHECK(t, n == 3, "%zu series: web.service twice, the other once, a repeated entry not again", n);
	smp = find_sample(&e, "cgfilterd_unit_firewall_missing", &n, "unit", "web.service", "direction", "ingress",
			  (char *) NULL);
	CHECK(t, smp && n == 1 && smp->value == 1, "web.service ingress");
	/* The file's names are escaped already: shown as they are, quotes
	 * and backslashes as the format writes them. */
	smp = find_sample(&e, "cgfilterd_unit_firewall_missing", &n, "unit", "q\"\\x0a.service", (char *) NULL);
	CHECK(t, smp && n == 1 && streq_ptr(label_of(smp, "direction"), "egress") && !label_of(smp, "unit_escaped"),
	      "a name as the daemon's file has it: %s", out);
	exposition_done(&e);
}

int main(void) {
	struct test_state t = {};

	test_parser(&t);
	test_hostile(&t);
	test_missing_firewalls(&t);
	test_sums(&t);
	test_exact(&t);
	return test_finish(&t, "test-status-prometheus");
}
