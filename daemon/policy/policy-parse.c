/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * YAML policy file -> model, in two steps:
 *
 *  1. compose: libyaml's events become a small tree of nodes, each with its
 *     position.  Aliases, anchors, tags and second documents are refused
 *     here, so that the walker sees plain data only.
 *  2. walk: the tree is checked against the format and the model filled.
 *     Each mapping is checked for unknown and duplicate keys first; every
 *     value is then checked on its own (syntax, range).  Relations between
 *     values (a port needs tcp or udp, a name must be defined, ...) are the
 *     validator's job.
 */
#include <errno.h>
#include <yaml.h>

#include "cgroup-pattern.h"
#include "policy-parse.h"
#include "util.h"

#define MAX_DEPTH 32

enum ynode_kind {
	Y_INVALID, /* stands for something already reported: accepted silently */
	Y_SCALAR,
	Y_SEQUENCE,
	Y_MAPPING,
};

struct ynode {
	enum ynode_kind kind;
	struct cgf_pos pos;
	char *value; /* scalar, NUL-terminated (NULs inside are refused) */
	bool plain;  /* scalar style */
	struct ynode **children; /* sequence: items; mapping: key, value, key, value, ... */
	size_t n_children;
};

static struct ynode *ynode_free(struct ynode *n) {
	if (!n)
		return NULL;
	for (size_t i = 0; i < n->n_children; i++)
		ynode_free(n->children[i]);
	free(n->children);
	free(n->value);
	free(n);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct ynode *, ynode_free);

struct parser {
	yaml_parser_t yaml;
	struct cgf_policy *policy;
	const struct cgf_source *source;
	struct cgf_diags *diags;
};

static void error_at(struct parser *p, struct cgf_pos pos, const char *format, ...) _printf_(3, 4);
static void error_at(struct parser *p, struct cgf_pos pos, const char *format, ...) {
	va_list ap;

	va_start(ap, format);
	cgf_diags_addv(p->diags, CGF_ERROR, pos, format, ap);
	va_end(ap);
}

static struct cgf_pos pos_from_mark(struct parser *p, yaml_mark_t start, yaml_mark_t end) {
	struct cgf_pos pos = {
		.source = p->source,
		.line = start.line + 1,
		.column = start.column + 1,
		.width = 1,
	};

	if (end.line == start.line && end.column > start.column)
		pos.width = end.column - start.column;
	return pos;
}

/* The position of a byte offset (libyaml's reader errors have no mark). */
static struct cgf_pos pos_from_offset(struct parser *p, size_t offset) {
	struct cgf_pos pos = { .source = p->source, .line = 1, .column = 1, .width = 1 };

	for (size_t i = 0; i < offset && i < p->source->size; i++) {
		unsigned char c = p->source->text[i];

		if (c == '\n') {
			pos.line++;
			pos.column = 1;
		} else if ((c & 0xc0) != 0x80)
			pos.column++;
	}
	return pos;
}

/* ---- 1. compose ---------------------------------------------------------- */

/* Reports libyaml's error; -ENOMEM for its memory errors, else 1 (stop). */
static int yaml_error(struct parser *p) {
	yaml_parser_t *y = &p->yaml;

	switch (y->error) {
	case YAML_MEMORY_ERROR:
		return -ENOMEM;
	case YAML_READER_ERROR:
		if (y->problem_value >= 0)
			error_at(p, pos_from_offset(p, y->problem_offset), "invalid input: %s (byte 0x%02X)",
				 y->problem ?: "unreadable", (unsigned) y->problem_value);
		else
			error_at(p, pos_from_offset(p, y->problem_offset), "invalid input: %s",
				 y->problem ?: "unreadable");
		return 1;
	default:
		error_at(p, pos_from_mark(p, y->problem_mark, y->problem_mark), "YAML syntax error: %s",
			 y->problem ?: "unknown problem");
		if (y->context)
			cgf_diags_note(p->diags, pos_from_mark(p, y->context_mark, y->context_mark), "%s",
				       y->context);
		return 1;
	}
}

static int next_event(struct parser *p, yaml_event_t *ev) {
	if (!yaml_parser_parse(&p->yaml, ev))
		return yaml_error(p);
	return 0;
}

/* Anchors, aliases and tags: reported, then ignored. */
static void refuse_extras(struct parser *p, struct cgf_pos pos, const yaml_char_t *anchor, const yaml_char_t *tag) {
	if (anchor)
		error_at(p, pos, "YAML anchors and aliases are not supported; write the value out");
	if (tag) {
		const char *t = (const char *) tag, *core = "tag:yaml.org,2002:";

		/* Show the tag as written: "!!str", not its expansion. */
		if (strncmp(t, core, strlen(core)) == 0)
			error_at(p, pos, "YAML tags ('!!%s') are not supported", t + strlen(core));
		else
			error_at(p, pos, "YAML tags ('%s') are not supported", t);
	}
}

static int compose_node(struct parser *p, yaml_event_t *ev, unsigned depth, struct ynode **ret);

static int compose_children(struct parser *p, struct ynode *n, yaml_event_type_t end, unsigned depth) {
	for (;;) {
		_cleanup_(ynode_freep) struct ynode *child = NULL;
		yaml_event_t ev;
		struct ynode **slot;
		int r;

		r = next_event(p, &ev);
		if (r != 0)
			return r;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return 0;
		}
		r = compose_node(p, &ev, depth + 1, &child);
		yaml_event_delete(&ev);
		if (r != 0)
			return r;

		slot = array_append((void **) &n->children, n->n_children, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		*slot = TAKE_PTR(child);
		n->n_children++;
	}
}

/* Builds the node that starts with event ev (owned by the caller).
 * Returns 0, 1 after a reported error that ends the file, or -ENOMEM. */
static int compose_node(struct parser *p, yaml_event_t *ev, unsigned depth, struct ynode **ret) {
	_cleanup_(ynode_freep) struct ynode *n = NULL;
	int r;

	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->pos = pos_from_mark(p, ev->start_mark, ev->end_mark);

	if (depth > MAX_DEPTH) {
		error_at(p, n->pos, "nesting deeper than %d levels", MAX_DEPTH);
		return 1;
	}

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n->kind = Y_SCALAR;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		n->value = strndup_nul((const char *) ev->data.scalar.value, ev->data.scalar.length);
		if (!n->value)
			return -ENOMEM;
		refuse_extras(p, n->pos, ev->data.scalar.anchor, ev->data.scalar.tag);
		if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length)) {
			error_at(p, n->pos, "a value must not contain a NUL character");
			n->kind = Y_INVALID;
		}
		break;
	case YAML_ALIAS_EVENT:
		n->kind = Y_INVALID;
		refuse_extras(p, n->pos, ev->data.alias.anchor, NULL);
		break;
	case YAML_SEQUENCE_START_EVENT:
		n->kind = Y_SEQUENCE;
		n->pos.width = 1;
		refuse_extras(p, n->pos, ev->data.sequence_start.anchor, ev->data.sequence_start.tag);
		r = compose_children(p, n, YAML_SEQUENCE_END_EVENT, depth);
		if (r != 0)
			return r;
		break;
	case YAML_MAPPING_START_EVENT:
		n->kind = Y_MAPPING;
		n->pos.width = 1;
		refuse_extras(p, n->pos, ev->data.mapping_start.anchor, ev->data.mapping_start.tag);
		r = compose_children(p, n, YAML_MAPPING_END_EVENT, depth);
		if (r != 0)
			return r;
		break;
	default:
		/* libyaml never gives another event here. */
		error_at(p, n->pos, "unexpected YAML event");
		return 1;
	}

	*ret = TAKE_PTR(n);
	return 0;
}

/* The single document of the file into *ret (NULL for an empty file).
 * Returns 0, 1 after a reported error that ends the file, or -ENOMEM. */
static int compose(struct parser *p, struct ynode **ret) {
	_cleanup_(ynode_freep) struct ynode *root = NULL;
	unsigned documents = 0;
	int r;

	for (;;) {
		yaml_event_t ev;

		r = next_event(p, &ev);
		if (r != 0)
			return r;

		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			yaml_event_delete(&ev);
			*ret = TAKE_PTR(root);
			return 0;
		case YAML_DOCUMENT_START_EVENT:
			if (++documents > 1) {
				error_at(p, pos_from_mark(p, ev.start_mark, ev.end_mark),
					 "a policy file holds one YAML document; this is a second one");
				yaml_event_delete(&ev);
				return 1;
			}
			break;
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			break;
		default:
			r = compose_node(p, &ev, 0, &root);
			if (r != 0) {
				yaml_event_delete(&ev);
				return r;
			}
		}
		yaml_event_delete(&ev);
	}
}

/* ---- 2. walk: helpers ---------------------------------------------------- */

static bool is_null(const struct ynode *n) {
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

	if (n->kind != Y_SCALAR || !n->plain)
		return false;
	for (size_t i = 0; i < ELEMENTSOF(nulls); i++)
		if (streq(n->value, nulls[i]))
			return true;
	return false;
}

static const char *describe(const struct ynode *n) {
	if (n->kind == Y_MAPPING)
		return "a mapping";
	if (n->kind == Y_SEQUENCE)
		return "a list";
	if (is_null(n))
		return "empty";
	return "a single value";
}

/* what: "'filters'", "filter 'web'", ... */
static bool expect_mapping(struct parser *p, const struct ynode *n, const char *what) {
	if (n->kind == Y_MAPPING)
		return true;
	if (n->kind != Y_INVALID)
		error_at(p, n->pos, "%s must be a mapping, not %s", what, describe(n));
	return false;
}

static bool expect_list(struct parser *p, const struct ynode *n, const char *what) {
	if (n->kind == Y_SEQUENCE)
		return true;
	if (n->kind != Y_INVALID)
		error_at(p, n->pos, "%s must be a list, not %s", what, describe(n));
	return false;
}

/* The text of a scalar, or NULL (reported) for anything else. */
static const char *expect_scalar(struct parser *p, const struct ynode *n, const char *what) {
	if (n->kind == Y_INVALID)
		return NULL;
	if (n->kind != Y_SCALAR) {
		error_at(p, n->pos, "%s must be a single value, not %s", what, describe(n));
		return NULL;
	}
	if (is_null(n)) {
		error_at(p, n->pos, "%s needs a value", what);
		return NULL;
	}
	return n->value;
}

/* "a, b or c" into buf */
static void join_or(const char *const *words, char *buf, size_t size) {
	size_t n = 0, len = 0;

	while (words[n])
		n++;
	buf[0] = 0;
	for (size_t i = 0; i < n && len < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
		int k = snprintf(buf + len, size - len, "%s%s", sep, words[i]);

		if (k < 0)
			break;
		len += (size_t) k;
	}
}

static const char *closest(const char *word, const char *const *words) {
	const char *best = NULL;
	size_t best_d = SIZE_MAX, d;

	for (size_t i = 0; words[i]; i++) {
		if (is_close_match(word, words[i], &d) && d < best_d) {
			best_d = d;
			best = words[i];
		}
	}
	return best;
}

/* An enumerated value: its index in words, or -1 (reported). */
static int expect_enum(struct parser *p, const struct ynode *n, const char *key, const char *const *words) {
	char list[128], quoted[32];
	const char *v;

	snprintf(quoted, sizeof(quoted), "'%s'", key);
	v = expect_scalar(p, n, quoted);
	if (!v)
		return -1;
	for (int i = 0; words[i]; i++)
		if (streq(v, words[i]))
			return i;
	join_or(words, list, sizeof(list));
	error_at(p, n->pos, "invalid %s '%s'; expected %s", key, v, list);
	return -1;
}

static const char *key_of(const struct ynode *map, size_t i) {
	const struct ynode *k = map->children[2 * i];

	return k->kind == Y_SCALAR && !is_null(k) ? k->value : NULL;
}

static size_t n_pairs(const struct ynode *map) {
	return map->n_children / 2;
}

static int compare_keys(const void *a, const void *b, void *userdata) {
	const struct ynode *map = userdata;
	size_t i = *(const size_t *) a, j = *(const size_t *) b;
	int r = strcmp(key_of(map, i), key_of(map, j));

	if (r != 0)
		return r;
	return i < j ? -1 : i > j;
}

/* Reports key k if it is not one of known, with "did you mean" for a close
 * one.  Returns the bit of the word offered (bit j for known[j]), so that
 * the caller does not also call that word missing; else 0. */
static unsigned check_known_key(struct parser *p, const struct ynode *k, const char *key, const char *const *known,
				const char *where) {
	unsigned suggested = 0;
	const char *hint;
	char list[160];

	for (size_t j = 0; known[j]; j++)
		if (streq(key, known[j]))
			return 0;
	hint = closest(key, known);
	if (!hint) {
		join_or(known, list, sizeof(list));
		error_at(p, k->pos, "unknown key '%s' %s (expected %s)", key, where, list);
		return 0;
	}
	error_at(p, k->pos, "unknown key '%s' %s; did you mean '%s'?", key, where, hint);
	for (size_t j = 0; known[j]; j++)
		if (known[j] == hint)
			suggested |= 1u << j;
	return suggested;
}

/*
 * Checks the keys of a mapping: each must be a non-empty single value; no
 * key twice (reported at the second, with a note at the first).  With
 * known != NULL, also that each is one of those words ("where": "in filter
 * 'web'"); *ret_suggested gets a bit for each known word offered as "did
 * you mean", so that the caller does not also call it missing.  Returns
 * -ENOMEM or 0.
 *
 * check_keys_repeats() also gives an array with, for each pair, whether
 * its key repeated an earlier one (free() it).
 */
static int check_keys_repeats(struct parser *p, const struct ynode *map, const char *const *known,
			      const char *where, unsigned *ret_suggested, bool **ret_repeated) {
	unsigned suggested = 0;
	_cleanup_free_ size_t *idx = NULL;
	_cleanup_free_ bool *repeated = NULL;
	size_t n = 0;

	if (ret_repeated) {
		repeated = calloc(n_pairs(map) + 1, sizeof(*repeated));
		if (!repeated)
			return -ENOMEM;
	}

	idx = calloc(n_pairs(map) + 1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;

	for (size_t i = 0; i < n_pairs(map); i++) {
		const struct ynode *k = map->children[2 * i];
		const char *key = key_of(map, i);

		if (!key) {
			if (k->kind != Y_INVALID)
				error_at(p, k->pos, "a key must be a name, not %s", describe(k));
			continue;
		}
		idx[n++] = i;
		if (known)
			suggested |= check_known_key(p, k, key, known, where);
	}

	/* Sorting finds duplicates in n log n: the filters: mapping of a big
	 * generated policy has thousands of keys. */
	qsort_r_safe(idx, n, sizeof(*idx), compare_keys, (void *) map);
	for (size_t i = 1, first = 0; i < n; i++) {
		/* Report each repeat against the first occurrence. */
		if (!streq(key_of(map, idx[first]), key_of(map, idx[i]))) {
			first = i;
			continue;
		}
		error_at(p, map->children[2 * idx[i]]->pos, "duplicate key '%s'", key_of(map, idx[i]));
		cgf_diags_note(p->diags, map->children[2 * idx[first]]->pos, "first defined here");
		if (repeated)
			repeated[idx[i]] = true;
	}
	if (ret_suggested)
		*ret_suggested = suggested;
	if (ret_repeated)
		*ret_repeated = TAKE_PTR(repeated);
	return 0;
}

static int check_keys(struct parser *p, const struct ynode *map, const char *const *known, const char *where,
		      unsigned *ret_suggested) {
	return check_keys_repeats(p, map, known, where, ret_suggested, NULL);
}

/* Should a missing key be reported?  Not if a typo of it was. */
static bool report_missing(unsigned suggested, const char *const *known, const char *key) {
	for (size_t j = 0; known[j]; j++)
		if (streq(known[j], key))
			return !(suggested & (1u << j));
	return true;
}

/* The value of the first occurrence of key, or NULL; the key node too. */
static const struct ynode *get(const struct ynode *map, const char *key, const struct ynode **ret_key) {
	for (size_t i = 0; i < n_pairs(map); i++) {
		const char *k = key_of(map, i);

		if (k && streq(k, key)) {
			if (ret_key)
				*ret_key = map->children[2 * i];
			return map->children[2 * i + 1];
		}
	}
	return NULL;
}

/*
 * get() for a key that must be there.  A missing key is reported at pos,
 * with format saying what the key holds, unless check_keys() offered it
 * as "did you mean" for a typo (bit j of suggested for known[j]): one
 * mistake, one message.
 */
static const struct ynode *get_required(struct parser *p, const struct ynode *map, const char *key,
					const struct ynode **ret_key, const char *const *known, unsigned suggested,
					struct cgf_pos pos, const char *format, ...) _printf_(8, 9);
static const struct ynode *get_required(struct parser *p, const struct ynode *map, const char *key,
					const struct ynode **ret_key, const char *const *known, unsigned suggested,
					struct cgf_pos pos, const char *format, ...) {
	const struct ynode *v = get(map, key, ret_key);
	va_list ap;

	if (v || !report_missing(suggested, known, key))
		return v;
	va_start(ap, format);
	cgf_diags_addv(p->diags, CGF_ERROR, pos, format, ap);
	va_end(ap);
	return NULL;
}

static int set_string(char **dst, const char *src) {
	char *s = strdup(src);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* ---- 2. walk: rules ------------------------------------------------------ */

static const char *const rule_keys[] = { "cidr", "protocol", "ports", NULL };
static const char *const protocol_words[] = { "tcp", "udp", "icmp", "icmpv6", NULL };

/* A decimal number of 1 to 5 digits (the range is checked by the caller). */
static bool parse_port_text(const char *s, unsigned *ret) {
	unsigned v = 0;

	if (!*s || strlen(s) > 5)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
	}
	*ret = v;
	return true;
}

static int parse_port(struct parser *p, struct cgf_rule *rule, const struct ynode *n) {
	const char *v = expect_scalar(p, n, "a port");
	struct cgf_port_range *range;
	_cleanup_free_ char *copy = NULL;
	unsigned lo, hi;
	char *dash;

	if (!v)
		return 0;
	copy = strdup(v);
	if (!copy)
		return -ENOMEM;
	dash = strchr(copy, '-');
	if (dash)
		*dash = 0;
	if (!parse_port_text(copy, &lo) || (dash && !parse_port_text(dash + 1, &hi))) {
		error_at(p, n->pos, "invalid port '%s'; write a number from 1 to 65535 or a range 'low-high'", v);
		return 0;
	}
	if (!dash)
		hi = lo;
	if (lo < 1 || lo > 65535 || hi < 1 || hi > 65535) {
		error_at(p, n->pos, "invalid port '%s': a port is a number from 1 to 65535", v);
		return 0;
	}
	if (lo > hi) {
		error_at(p, n->pos, "invalid port range '%s': the first port is above the last", v);
		return 0;
	}

	range = array_append((void **) &rule->ports, rule->n_ports, sizeof(*range));
	if (!range)
		return -ENOMEM;
	range->pos = n->pos;
	range->lo = lo;
	range->hi = hi;
	rule->n_ports++;
	return 0;
}

static int parse_rule(struct parser *p, struct cgf_rule *rule, const struct ynode *n, const char *where) {
	const struct ynode *v, *k;
	unsigned suggested = 0;
	int r;

	rule->pos = n->pos;
	if (!expect_mapping(p, n, "a rule"))
		return 0;
	r = check_keys(p, n, rule_keys, where, &suggested);
	if (r < 0)
		return r;

	v = get_required(p, n, "cidr", NULL, rule_keys, suggested, n->pos, "this rule is missing 'cidr'");
	if (v) {
		const char *s = expect_scalar(p, v, "'cidr'");

		if (s) {
			bool v6 = strchr(s, ':');

			r = cgf_cidr_parse(s, &rule->family, rule->addr, &rule->prefixlen);
			if (r == -ERANGE)
				error_at(p, v->pos, "invalid cidr '%s': the prefix length must be 0 to %u for %s", s,
					 v6 ? 128 : 32, v6 ? "IPv6" : "IPv4");
			else if (r < 0)
				error_at(p, v->pos, "invalid cidr '%s': not an IPv4 or IPv6 address or prefix", s);
			else {
				rule->cidr_pos = v->pos;
				r = set_string(&rule->cidr, s);
				if (r < 0)
					return r;
			}
		}
	}

	v = get(n, "protocol", NULL);
	if (v) {
		int i = expect_enum(p, v, "protocol", protocol_words);

		if (i >= 0) {
			rule->protocol = cgf_protocol_from_string(protocol_words[i]);
			rule->protocol_pos = v->pos;
		}
	}

	v = get(n, "ports", &k);
	if (v && expect_list(p, v, "'ports'")) {
		rule->ports_pos = k->pos;
		if (v->n_children == 0)
			error_at(p, v->pos, "'ports' is empty; leave it out to match every port");
		for (size_t i = 0; i < v->n_children; i++) {
			r = parse_port(p, rule, v->children[i]);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int parse_rules(struct parser *p, struct cgf_filter *f, const struct ynode *n, const char *key,
		       struct cgf_rule **rules, size_t *n_rules) {
	_cleanup_free_ char *where = NULL;
	char what[16];

	snprintf(what, sizeof(what), "'%s'", key);
	if (!expect_list(p, n, what))
		return 0;
	if (asprintf(&where, "in a rule of filter '%s'", f->name) < 0)
		return -ENOMEM;

	for (size_t i = 0; i < n->n_children; i++) {
		struct cgf_rule *rule;
		int r;

		rule = array_append((void **) rules, *n_rules, sizeof(*rule));
		if (!rule)
			return -ENOMEM;
		(*n_rules)++;
		r = parse_rule(p, rule, n->children[i], where);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- 2. walk: filters ---------------------------------------------------- */

static const char *const filter_keys[] = {
	"type", "direction", "default", "allow", "deny", "enforce", "object", "program", NULL,
};
static const char *const type_words[] = { "rules", "deny-all", "count-only", "object", NULL };
static const char *const direction_words[] = { "ingress", "egress", NULL };
static const char *const verdict_words[] = { "allow", "deny", NULL };
static const char *const bool_words[] = { "true", "false", NULL };

static bool is_identifier(const char *s) {
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Records the filter under its name, valid or not, into *ret. */
static int new_filter(struct parser *p, const struct ynode *key, struct cgf_filter **ret) {
	struct cgf_filter *f;
	int r;

	if (!cgf_filter_name_is_valid(key->value))
		error_at(p, key->pos,
			 "invalid filter name '%s': use 1 to %d characters a-z, 0-9 and '-', "
			 "starting with a letter or digit",
			 key->value, CGF_FILTER_NAME_MAX);

	/* Even a broken filter is recorded under its name, so that the
	 * attachments that use it do not all report it as unknown. */
	f = cgf_policy_new_filter(p->policy);
	if (!f)
		return -ENOMEM;
	r = set_string(&f->name, key->value);
	if (r < 0)
		return r;
	f->pos = key->pos;
	*ret = f;
	return 0;
}

/* 'type' and 'direction', which every filter has.  Returns the index of
 * the type in type_words, or -1 if it is missing or invalid (reported). */
static int parse_filter_kind(struct parser *p, struct cgf_filter *f, const struct ynode *n, unsigned suggested) {
	const struct ynode *v;
	int type = -1, i;

	v = get_required(p, n, "type", NULL, filter_keys, suggested, f->pos,
			 "filter '%s' is missing 'type' (rules, deny-all, count-only or object)", f->name);
	if (v) {
		type = expect_enum(p, v, "type", type_words);
		if (type >= 0) {
			f->type = cgf_filter_type_from_string(type_words[type]);
			f->type_pos = v->pos;
		}
	}

	v = get_required(p, n, "direction", NULL, filter_keys, suggested, f->pos,
			 "filter '%s' is missing 'direction' (ingress or egress)", f->name);
	if (v) {
		i = expect_enum(p, v, "direction", direction_words);
		if (i >= 0) {
			f->direction = cgf_direction_from_string(direction_words[i]);
			f->direction_pos = v->pos;
		}
	}
	return type;
}

/* Keys that belong to another type are named as such: more useful than
 * "unknown key".  type: the index in type_words of a valid type. */
static void check_other_type_keys(struct parser *p, const struct cgf_filter *f, const struct ynode *n, int type) {
	static const char *const rules_only[] = { "default", "allow", "deny", "enforce", NULL };
	static const char *const object_only[] = { "object", "program", NULL };
	/* Why only a rules filter can be audited, per other type. */
	static const char *const why_no_audit[_CGF_FILTER_TYPE_MAX] = {
		[CGF_FILTER_DENY_ALL] = ", whose program cannot count instead of drop; "
					"a rules filter with 'default: deny' and no rules can",
		[CGF_FILTER_COUNT_ONLY] = ", which never drops",
		[CGF_FILTER_OBJECT] = ": cgfilterd cannot make another program count instead of drop",
	};

	for (size_t j = 0; j < n_pairs(n); j++) {
		const char *key_name = key_of(n, j);
		bool r_only = false, o_only = false;

		if (!key_name)
			continue;
		for (size_t m = 0; rules_only[m]; m++)
			r_only = r_only || streq(key_name, rules_only[m]);
		for (size_t m = 0; object_only[m]; m++)
			o_only = o_only || streq(key_name, object_only[m]);
		if ((r_only && f->type != CGF_FILTER_RULES) || (o_only && f->type != CGF_FILTER_OBJECT))
			error_at(p, n->children[2 * j]->pos,
				 "'%s' is only valid in filters of type %s; '%s' is of type %s%s", key_name,
				 r_only ? "rules" : "object", f->name, type_words[type],
				 streq(key_name, "enforce") ? why_no_audit[f->type] ?: "" : "");
	}
}

/* 'default', 'allow', 'deny' and 'enforce' of a rules filter.  Also read when 'type'
 * is missing or invalid: f->type is then still the zero value, rules, so
 * the rules are checked all the same. */
static int parse_rules_filter(struct parser *p, struct cgf_filter *f, const struct ynode *n) {
	const struct ynode *v;
	int r, i;

	f->default_verdict = CGF_ALLOW;
	if (f->type != CGF_FILTER_RULES)
		return 0;

	v = get(n, "default", NULL);
	if (v) {
		i = expect_enum(p, v, "default", verdict_words);
		if (i >= 0) {
			f->default_verdict = cgf_verdict_from_string(verdict_words[i]);
			f->default_pos = v->pos;
		}
	}
	v = get(n, "allow", NULL);
	if (v) {
		r = parse_rules(p, f, v, "allow", &f->allow, &f->n_allow);
		if (r < 0)
			return r;
	}
	v = get(n, "deny", NULL);
	if (v) {
		r = parse_rules(p, f, v, "deny", &f->deny, &f->n_deny);
		if (r < 0)
			return r;
	}
	v = get(n, "enforce", NULL);
	if (v) {
		i = expect_enum(p, v, "enforce", bool_words);
		if (i >= 0) {
			f->audit = i == 1;
			f->enforce_pos = v->pos;
		}
	}
	return 0;
}

/* 'object' and 'program' of an object filter (one whose type is valid). */
static int parse_object_filter(struct parser *p, struct cgf_filter *f, const struct ynode *n, unsigned suggested) {
	const struct ynode *v;
	const char *s;
	int r;

	v = get_required(p, n, "object", NULL, filter_keys, suggested, f->pos,
			 "filter '%s' is missing 'object' (the path of a BPF object file)", f->name);
	s = v ? expect_scalar(p, v, "'object'") : NULL;
	if (s && s[0] != '/')
		error_at(p, v->pos, "'object' must be an absolute path, not '%s'", s);
	else if (s) {
		r = set_string(&f->object, s);
		if (r < 0)
			return r;
		f->object_pos = v->pos;
	}

	v = get_required(p, n, "program", NULL, filter_keys, suggested, f->pos,
			 "filter '%s' is missing 'program' (a program name in the object file)", f->name);
	s = v ? expect_scalar(p, v, "'program'") : NULL;
	if (s && !is_identifier(s))
		error_at(p, v->pos, "invalid program '%s': a program name is a C identifier", s);
	else if (s) {
		r = set_string(&f->program, s);
		if (r < 0)
			return r;
		f->program_pos = v->pos;
	}
	return 0;
}

/* One filter: its name, the keys every filter has, then those of its type.
 * The steps run in the order their messages come out, which the corpus
 * under tests/policies/bad pins down. */
static int parse_filter(struct parser *p, const struct ynode *key, const struct ynode *n) {
	_cleanup_free_ char *what = NULL, *where = NULL;
	struct cgf_filter *f;
	unsigned suggested = 0;
	int r, type;

	r = new_filter(p, key, &f);
	if (r < 0)
		return r;

	if (asprintf(&what, "filter '%s'", f->name) < 0 || asprintf(&where, "in filter '%s'", f->name) < 0)
		return -ENOMEM;
	if (!expect_mapping(p, n, what))
		return 0;
	r = check_keys(p, n, filter_keys, where, &suggested);
	if (r < 0)
		return r;

	type = parse_filter_kind(p, f, n, suggested);
	if (type >= 0)
		check_other_type_keys(p, f, n, type);

	r = parse_rules_filter(p, f, n);
	if (r < 0)
		return r;

	if (type < 0 || f->type != CGF_FILTER_OBJECT)
		return 0;
	return parse_object_filter(p, f, n, suggested);
}

static int parse_filters(struct parser *p, const struct ynode *n) {
	int r;

	if (!expect_mapping(p, n, "'filters'"))
		return 0;
	/* No duplicate check here: the validator reports a filter defined
	 * twice, whether in one file or in two. */
	for (size_t i = 0; i < n_pairs(n); i++) {
		const struct ynode *k = n->children[2 * i];

		if (!key_of(n, i)) {
			if (k->kind != Y_INVALID)
				error_at(p, k->pos, "a filter name must be a single value, not %s", describe(k));
			continue;
		}
		r = parse_filter(p, k, n->children[2 * i + 1]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- 2. walk: attachments ------------------------------------------------ */

static const char *const attachment_keys[] = { "cgroup", "filters", "mode", "preorder", "foreign-below", "tenants", NULL };
static const char *const entry_keys[] = { "filter", "before", "after", NULL };
static const char *const mode_words[] = { "none", "override", "multi", NULL };
static const char *const foreign_below_words[] = { "keep", "lock-out", NULL };

/* A filter name as an entry of filters: or of a tenant's list. */
static int parse_ref_name(struct parser *p, struct cgf_filter_ref *ref, const struct ynode *n) {
	const char *s = expect_scalar(p, n, "a filter name");

	if (!s)
		return 0;
	ref->pos = n->pos;
	return set_string(&ref->filter, s);
}

static int parse_entry(struct parser *p, struct cgf_attachment *a, const struct ynode *n) {
	const struct ynode *v, *before_key = NULL, *after_key = NULL, *before, *after;
	struct cgf_filter_ref *ref;
	unsigned suggested = 0;
	const char *s;
	int r;

	ref = array_append((void **) &a->filters, a->n_filters, sizeof(*ref));
	if (!ref)
		return -ENOMEM;
	a->n_filters++;

	if (n->kind != Y_MAPPING) {
		if (n->kind == Y_SEQUENCE) {
			error_at(p, n->pos, "a filters entry is a filter name or a mapping "
					    "{filter: NAME, before: NAME} / {filter: NAME, after: NAME}, not a list");
			return 0;
		}
		return parse_ref_name(p, ref, n);
	}

	r = check_keys(p, n, entry_keys, "in a filters entry", &suggested);
	if (r < 0)
		return r;
	v = get_required(p, n, "filter", NULL, entry_keys, suggested, n->pos, "this filters entry is missing 'filter'");
	if (!v)
		return 0;
	r = parse_ref_name(p, ref, v);
	if (r < 0)
		return r;

	before = get(n, "before", &before_key);
	after = get(n, "after", &after_key);
	if (before && after) {
		const struct ynode *second = cgf_pos_compare(before_key->pos, after_key->pos) > 0 ? before_key : after_key;

		error_at(p, second->pos, "'before' and 'after' cannot both be set; a filter takes one anchor");
		return 0;
	}
	if (!before && !after)
		return 0;
	s = expect_scalar(p, before ?: after, before ? "'before'" : "'after'");
	if (!s)
		return 0;
	ref->anchor = before ? CGF_ANCHOR_BEFORE : CGF_ANCHOR_AFTER;
	ref->anchor_pos = (before ?: after)->pos;
	return set_string(&ref->anchor_filter, s);
}

static int parse_tenants(struct parser *p, struct cgf_attachment *a, const struct ynode *n) {
	_cleanup_free_ bool *repeated = NULL;
	int r;

	if (!expect_mapping(p, n, "'tenants'"))
		return 0;
	/* Which keys repeat, from the sort: get() per key would be
	 * quadratic in the number of tenants. */
	r = check_keys_repeats(p, n, NULL, NULL, NULL, &repeated);
	if (r < 0)
		return r;

	for (size_t i = 0; i < n_pairs(n); i++) {
		const struct ynode *k = n->children[2 * i], *list = n->children[2 * i + 1];
		const char *name = key_of(n, i), *why;
		_cleanup_free_ char *what = NULL;
		struct cgf_tenant *t;

		if (!name || repeated[i])
			continue; /* reported by check_keys_repeats() */
		why = cgf_tenant_pattern_check(name);
		if (why) {
			error_at(p, k->pos, "invalid tenant '%s': %s", name, why);
			continue;
		}

		t = array_append((void **) &a->tenants, a->n_tenants, sizeof(*t));
		if (!t)
			return -ENOMEM;
		a->n_tenants++;
		r = set_string(&t->pattern, name);
		if (r < 0)
			return r;
		t->pos = k->pos;

		if (asprintf(&what, "tenant '%s'", name) < 0)
			return -ENOMEM;
		if (!expect_list(p, list, what))
			continue;
		for (size_t j = 0; j < list->n_children; j++) {
			struct cgf_filter_ref *ref;

			ref = array_append((void **) &t->filters, t->n_filters, sizeof(*ref));
			if (!ref)
				return -ENOMEM;
			t->n_filters++;
			if (list->children[j]->kind == Y_MAPPING) {
				error_at(p, list->children[j]->pos,
					 "a tenant's filters are names only (ordering applies to attached filters)");
				continue;
			}
			r = parse_ref_name(p, ref, list->children[j]);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int parse_attachment_cgroup(struct parser *p, struct cgf_attachment *a, const struct ynode *n,
				   unsigned suggested) {
	const struct ynode *v;
	const char *s, *why;

	v = get_required(p, n, "cgroup", NULL, attachment_keys, suggested, a->pos, "this attachment is missing 'cgroup'");
	if (!v)
		return 0;
	s = expect_scalar(p, v, "'cgroup'");
	why = s ? cgf_cgroup_pattern_check(s) : NULL;
	if (why && strncmp(s, "/sys/fs/cgroup/", 15) == 0 && !cgf_cgroup_pattern_check(s + 15))
		error_at(p, v->pos, "invalid cgroup '%s': %s; did you mean '%s'?", s, why, s + 15);
	else if (why)
		error_at(p, v->pos, "invalid cgroup '%s': %s", s, why);
	else if (s) {
		a->cgroup_pos = v->pos;
		return set_string(&a->cgroup, s);
	}
	return 0;
}

static int parse_attachment_filters(struct parser *p, struct cgf_attachment *a, const struct ynode *n,
				    unsigned suggested) {
	const struct ynode *v, *k;
	int r;

	v = get_required(p, n, "filters", &k, attachment_keys, suggested, a->pos, "this attachment is missing 'filters'");
	if (!v || !expect_list(p, v, "'filters'"))
		return 0;
	a->filters_pos = k->pos;
	if (v->n_children == 0)
		error_at(p, v->pos, "'filters' is empty; an attachment needs at least one filter");
	for (size_t j = 0; j < v->n_children; j++) {
		r = parse_entry(p, a, v->children[j]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_attachment(struct parser *p, const struct ynode *n) {
	const struct ynode *v, *k;
	struct cgf_attachment *a;
	unsigned suggested = 0;
	int r, i;

	a = cgf_policy_new_attachment(p->policy);
	if (!a)
		return -ENOMEM;
	a->pos = n->pos;
	if (!expect_mapping(p, n, "an attachment"))
		return 0;
	r = check_keys(p, n, attachment_keys, "in an attachment", &suggested);
	if (r < 0)
		return r;

	r = parse_attachment_cgroup(p, a, n, suggested);
	if (r < 0)
		return r;
	r = parse_attachment_filters(p, a, n, suggested);
	if (r < 0)
		return r;

	v = get(n, "mode", NULL);
	if (v) {
		i = expect_enum(p, v, "mode", mode_words);
		if (i >= 0) {
			a->mode = cgf_mode_from_string(mode_words[i]);
			a->mode_pos = v->pos;
		}
	}

	v = get(n, "preorder", NULL);
	if (v) {
		i = expect_enum(p, v, "preorder", bool_words);
		if (i >= 0) {
			a->preorder = i == 0;
			a->preorder_pos = v->pos;
		}
	}

	v = get(n, "foreign-below", NULL);
	if (v) {
		i = expect_enum(p, v, "foreign-below", foreign_below_words);
		if (i >= 0) {
			a->foreign_below = cgf_foreign_below_from_string(foreign_below_words[i]);
			a->foreign_below_pos = v->pos;
		}
	}

	v = get(n, "tenants", &k);
	if (v) {
		a->tenants_pos = k->pos;
		r = parse_tenants(p, a, v);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_attachments(struct parser *p, const struct ynode *n) {
	int r;

	if (!expect_list(p, n, "'attachments'"))
		return 0;
	for (size_t i = 0; i < n->n_children; i++) {
		r = parse_attachment(p, n->children[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- 2. walk: the file --------------------------------------------------- */

static const char *const top_keys[] = { "version", "filters", "attachments", NULL };

static int parse_root(struct parser *p, const struct ynode *root) {
	const struct ynode *v;
	int r;

	if (!root || is_null(root)) {
		cgf_diags_add_file(p->diags, CGF_ERROR, p->source->name,
				   "empty policy file; a policy file starts with 'version: %d'", CGF_POLICY_VERSION);
		return 0;
	}
	if (!expect_mapping(p, root, "a policy file"))
		return 0;

	/* A file for another version of the format is not read any further:
	 * its keys would only produce noise. */
	v = get(root, "version", NULL);
	if (!v)
		error_at(p, root->pos, "this policy file is missing 'version' (write 'version: %d' at the top)",
			 CGF_POLICY_VERSION);
	else {
		const char *s = expect_scalar(p, v, "'version'");

		if (s && !streq(s, "1")) {
			if (strspn(s, "0123456789") == strlen(s))
				error_at(p, v->pos, "unsupported policy version %s; this cgfilterd reads version %d", s,
					 CGF_POLICY_VERSION);
			else
				error_at(p, v->pos, "invalid version '%s'; write 'version: %d'", s, CGF_POLICY_VERSION);
			return 0;
		}
	}

	r = check_keys(p, root, top_keys, "at the top level", NULL);
	if (r < 0)
		return r;

	v = get(root, "filters", NULL);
	if (v) {
		r = parse_filters(p, v);
		if (r < 0)
			return r;
	}
	v = get(root, "attachments", NULL);
	if (v) {
		r = parse_attachments(p, v);
		if (r < 0)
			return r;
	}
	return 0;
}

int cgf_policy_parse(struct cgf_policy *policy, const struct cgf_source *source, struct cgf_diags *diags) {
	_cleanup_(ynode_freep) struct ynode *root = NULL;
	struct parser p = {
		.policy = policy,
		.source = source,
		.diags = diags,
	};
	int r;

	if (!yaml_parser_initialize(&p.yaml))
		return -ENOMEM;
	yaml_parser_set_input_string(&p.yaml, (const unsigned char *) source->text, source->size);
	r = compose(&p, &root);
	yaml_parser_delete(&p.yaml);
	if (r < 0)
		return r;
	if (r > 0) /* a syntax error: the tree is gone, nothing more to say */
		return cgf_diags_status(diags);

	r = parse_root(&p, root);
	if (r < 0)
		return r;
	return cgf_diags_status(diags);
}
