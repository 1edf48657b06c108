/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The streaming JSON writer (see json.h).  The only state is a stack of
 * open containers, each knowing whether it is an object and whether it
 * has a member yet (for the comma and for writing {} and [] when empty),
 * and whether a key waits for its value.
 */
#include <errno.h>
#include <inttypes.h>

#include "escape.h"
#include "json.h"
#include "util.h"

struct level {
	bool object;
	bool empty;
};

struct cgf_json {
	FILE *f;
	unsigned flags;
	int error;           /* the first failure, latched; 0 while all is well */
	struct level *stack; /* grown with array_append() */
	size_t depth;
	bool after_key;      /* a key was written, its value was not */
};

int cgf_json_new(FILE *f, unsigned flags, struct cgf_json **ret) {
	struct cgf_json *j;

	if (!f)
		return -EINVAL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->f = f;
	j->flags = flags;
	*ret = j;
	return 0;
}

struct cgf_json *cgf_json_free(struct cgf_json *j) {
	if (!j)
		return NULL;
	free(j->stack);
	free(j);
	return NULL;
}

int cgf_json_status(const struct cgf_json *j) {
	return j->error;
}

static void fail(struct cgf_json *j, int error) {
	if (j->error == 0)
		j->error = error;
}

void cgf_json_set_error(struct cgf_json *j, int error) {
	if (error < 0)
		fail(j, error);
}

static void emit(struct cgf_json *j, const char *s, size_t n) {
	if (j->error < 0 || n == 0)
		return;
	errno = 0;
	if (fwrite(s, 1, n, j->f) != n)
		/* stdio does not always set errno (a full memstream does). */
		fail(j, errno > 0 ? -errno : -EIO);
}

static void emits(struct cgf_json *j, const char *s) {
	emit(j, s, strlen(s));
}

static bool pretty(const struct cgf_json *j) {
	return j->flags & CGF_JSON_PRETTY;
}

static void newline_indent(struct cgf_json *j, size_t depth) {
	static const char spaces[] = "                                ";

	if (!pretty(j))
		return;
	emit(j, "\n", 1);
	for (size_t n = depth * 2; n > 0;) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		emit(j, spaces, k);
		n -= k;
	}
}

static struct level *top(struct cgf_json *j) {
	return j->depth > 0 ? &j->stack[j->depth - 1] : NULL;
}

/* Where an element or member starts: the comma and the line break. */
static void separate(struct cgf_json *j, struct level *l) {
	if (!l->empty)
		emit(j, ",", 1);
	l->empty = false;
	newline_indent(j, j->depth);
}

/* Checks that a value may come here and writes what precedes it; false
 * when it must not be written. */
static bool value_begin(struct cgf_json *j) {
	struct level *l = top(j);

	if (j->error < 0)
		return false;
	if (l && l->object) {
		if (!j->after_key) {
			fail(j, -EINVAL); /* a member without its key */
			return false;
		}
		j->after_key = false; /* cgf_json_key() wrote the separator */
		return true;
	}
	if (l)
		separate(j, l);
	return true;
}

static void value_end(struct cgf_json *j) {
	/* One line per document, also in compact mode. */
	if (j->depth == 0)
		emit(j, "\n", 1);
}

static void emit_string(struct cgf_json *j, const char *s, size_t n) {
	const unsigned char *p = (const unsigned char *) s;
	size_t run = 0; /* bytes before p[i] that pass through, not written yet */

	emit(j, "\"", 1);
	for (size_t i = 0; i < n;) {
		char esc[8];
		const char *e = esc;
		size_t len = cgf_utf8_length(s + i, n - i);
		/* C1 controls (U+0080..U+009F) are valid JSON as they are, but
		 * a terminal showing the document would act on them (U+009B is
		 * CSI): \u0080..\u009f, like the C0 ones. */
		bool c1 = len == 2 && p[i] == 0xc2 && p[i + 1] <= 0x9f;

		if ((len > 1 && !c1) || (len == 1 && p[i] >= 0x20 && p[i] != '"' && p[i] != '\\' && p[i] != 0x7f)) {
			run += len;
			i += len;
			continue;
		}
		emit(j, s + i - run, run);
		run = 0;
		if (c1) {
			snprintf(esc, sizeof(esc), "\\u%04x", p[i + 1]);
			emits(j, esc);
			i += 2;
			continue;
		}
		switch (len == 0 ? -1 : p[i]) {
		case -1:
			e = "\\ufffd";
			break;
		case '"':
			e = "\\\"";
			break;
		case '\\':
			e = "\\\\";
			break;
		case '\b':
			e = "\\b";
			break;
		case '\f':
			e = "\\f";
			break;
		case '\n':
			e = "\\n";
			break;
		case '\r':
			e = "\\r";
			break;
		case '\t':
			e = "\\t";
			break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04x", p[i]);
		}
		emits(j, e);
		i++;
	}
	emit(j, s + n - run, run);
	emit(j, "\"", 1);
}

static void container_begin(struct cgf_json *j, bool object) {
	struct level *l;

	if (!value_begin(j))
		return;
	l = array_append((void **) &j->stack, j->depth, sizeof(*j->stack));
	if (!l) {
		fail(j, -ENOMEM);
		return;
	}
	*l = (struct level) { .object = object, .empty = true };
	j->depth++;
	emit(j, object ? "{" : "[", 1);
}

static void container_end(struct cgf_json *j, bool object) {
	struct level *l = top(j);
	bool empty;

	if (j->error < 0)
		return;
	if (!l || l->object != object || j->after_key) {
		fail(j, -EINVAL); /* nothing open, the other kind open, or a key without value */
		return;
	}
	empty = l->empty;
	j->depth--;
	if (!empty)
		newline_indent(j, j->depth);
	emit(j, object ? "}" : "]", 1);
	value_end(j);
}

void cgf_json_object_begin(struct cgf_json *j) {
	container_begin(j, true);
}

void cgf_json_object_end(struct cgf_json *j) {
	container_end(j, true);
}

void cgf_json_array_begin(struct cgf_json *j) {
	container_begin(j, false);
}

void cgf_json_array_end(struct cgf_json *j) {
	container_end(j, false);
}

void cgf_json_key(struct cgf_json *j, const char *key) {
	struct level *l = top(j);

	if (j->error < 0)
		return;
	if (!l || !l->object || j->after_key || !key) {
		fail(j, -EINVAL);
		return;
	}
	separate(j, l);
	emit_string(j, key, strlen(key));
	emits(j, pretty(j) ? ": " : ":");
	j->after_key = true;
}

void cgf_json_string_len(struct cgf_json *j, const char *s, size_t n) {
	if (!s) {
		cgf_json_null(j);
		return;
	}
	if (!value_begin(j))
		return;
	emit_string(j, s, n);
	value_end(j);
}

void cgf_json_string(struct cgf_json *j, const char *s) {
	cgf_json_string_len(j, s, s ? strlen(s) : 0);
}

/* Numbers and literals: the text is all there is. */
static void emit_literal(struct cgf_json *j, const char *text) {
	if (!value_begin(j))
		return;
	emits(j, text);
	value_end(j);
}

void cgf_json_u64(struct cgf_json *j, uint64_t v) {
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	emit_literal(j, buf);
}

void cgf_json_i64(struct cgf_json *j, int64_t v) {
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	emit_literal(j, buf);
}

void cgf_json_bool(struct cgf_json *j, bool v) {
	emit_literal(j, v ? "true" : "false");
}

void cgf_json_null(struct cgf_json *j) {
	emit_literal(j, "null");
}

void cgf_json_field_string(struct cgf_json *j, const char *key, const char *s) {
	cgf_json_key(j, key);
	cgf_json_string(j, s);
}

void cgf_json_field_u64(struct cgf_json *j, const char *key, uint64_t v) {
	cgf_json_key(j, key);
	cgf_json_u64(j, v);
}

void cgf_json_field_i64(struct cgf_json *j, const char *key, int64_t v) {
	cgf_json_key(j, key);
	cgf_json_i64(j, v);
}

void cgf_json_field_bool(struct cgf_json *j, const char *key, bool v) {
	cgf_json_key(j, key);
	cgf_json_bool(j, v);
}

void cgf_json_field_null(struct cgf_json *j, const char *key) {
	cgf_json_key(j, key);
	cgf_json_null(j);
}

void cgf_json_field_u64_or_null(struct cgf_json *j, const char *key, uint64_t v) {
	cgf_json_key(j, key);
	if (v)
		cgf_json_u64(j, v);
	else
		cgf_json_null(j);
}

void cgf_json_field_object_begin(struct cgf_json *j, const char *key) {
	cgf_json_key(j, key);
	cgf_json_object_begin(j);
}

void cgf_json_field_array_begin(struct cgf_json *j, const char *key) {
	cgf_json_key(j, key);
	cgf_json_array_begin(j);
}

int cgf_json_finish(struct cgf_json *j) {
	if (j->depth > 0 || j->after_key)
		fail(j, -EINVAL); /* an unfinished document */
	if (fflush(j->f) != 0)
		fail(j, errno > 0 ? -errno : -EIO);
	return j->error;
}
