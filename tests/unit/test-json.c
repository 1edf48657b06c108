/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The JSON writer: exact text of nesting in both modes, string escaping
 * (control characters, quotes, backslashes, UTF-8 passthrough, invalid
 * bytes), the extremes of the numbers, and the error latch (misuse, a
 * failing stream).
 */
#include <errno.h>
#include <inttypes.h>

#include "json.h"
#include "tests.h"

/* Runs build() on a fresh writer over a memory stream: the text, and the
 * status of cgf_json_finish() in *ret_status. */
static char *render(unsigned flags, void (*build)(struct cgf_json *j), int *ret_status) {
	_cleanup_(cgf_json_freep) struct cgf_json *j = NULL;
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	REQUIRE(f);
	REQUIRE(cgf_json_new(f, flags, &j) == 0);
	build(j);
	*ret_status = cgf_json_finish(j);
	REQUIRE(fclose(f) == 0);
	return s;
}

static void check_render(struct test_state *t, const char *what, unsigned flags, void (*build)(struct cgf_json *j),
			 const char *want, int want_status) {
	_cleanup_free_ char *got = NULL;
	int status;

	got = render(flags, build, &status);
	CHECK_STREQ(t, got, want, what);
	CHECK(t, status == want_status, "%s: status %d, want %d", what, status, want_status);
}

static void build_nesting(struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_array_begin(j, "list");
	cgf_json_u64(j, 1);
	cgf_json_string(j, "two");
	cgf_json_object_begin(j);
	cgf_json_object_end(j);
	cgf_json_array_begin(j);
	cgf_json_array_end(j);
	cgf_json_array_begin(j);
	cgf_json_bool(j, false);
	cgf_json_array_end(j);
	cgf_json_array_end(j);
	cgf_json_field_object_begin(j, "inner");
	cgf_json_field_bool(j, "yes", true);
	cgf_json_field_null(j, "nothing");
	cgf_json_field_string(j, "null_string", NULL);
	cgf_json_field_u64_or_null(j, "zero", 0);
	cgf_json_field_u64_or_null(j, "seven", 7);
	cgf_json_object_end(j);
	cgf_json_field_array_begin(j, "empty");
	cgf_json_array_end(j);
	cgf_json_object_end(j);
}

static void test_nesting(struct test_state *t) {
	check_render(t, "compact nesting", 0, build_nesting,
		     "{\"list\":[1,\"two\",{},[],[false]],\"inner\":{\"yes\":true,\"nothing\":null,"
		     "\"null_string\":null,\"zero\":null,\"seven\":7},\"empty\":[]}\n",
		     0);
	check_render(t, "pretty nesting", CGF_JSON_PRETTY, build_nesting,
		     "{\n"
		     "  \"list\": [\n"
		     "    1,\n"
		     "    \"two\",\n"
		     "    {},\n"
		     "    [],\n"
		     "    [\n"
		     "      false\n"
		     "    ]\n"
		     "  ],\n"
		     "  \"inner\": {\n"
		     "    \"yes\": true,\n"
		     "    \"nothing\": null,\n"
		     "    \"null_string\": null,\n"
		     "    \"zero\": null,\n"
		     "    \"seven\": 7\n"
		     "  },\n"
		     "  \"empty\": []\n"
		     "}\n",
		     0);
}

static void build_top_level(struct cgf_json *j) {
	cgf_json_u64(j, 1);
	cgf_json_string(j, "x");
	cgf_json_object_begin(j);
	cgf_json_object_end(j);
	cgf_json_null(j);
}

static void test_top_level(struct test_state *t) {
	/* Each document on a line of its own, in both modes. */
	check_render(t, "top-level values, compact", 0, build_top_level, "1\n\"x\"\n{}\nnull\n", 0);
	check_render(t, "top-level values, pretty", CGF_JSON_PRETTY, build_top_level, "1\n\"x\"\n{}\nnull\n", 0);
}

static void build_escapes(struct cgf_json *j) {
	cgf_json_array_begin(j);
	cgf_json_string(j, "quote \" backslash \\ slash /");
	cgf_json_string(j, "\b\f\n\r\t");
	cgf_json_string(j, "\x01\x1f\x7f ~");
	cgf_json_string_len(j, "nul\0byte", 8);
	cgf_json_string(j, "");
	cgf_json_array_end(j);
}

static void build_utf8(struct cgf_json *j) {
	cgf_json_array_begin(j);
	/* U+00E9, U+20AC, U+1F600, U+10FFFF, U+FFFD itself: all pass. */
	cgf_json_string(j, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \xef\xbf\xbd");
	/* A stray continuation byte, 0xff, 0xc1 (never valid). */
	cgf_json_string(j, "a\x80" "b\xff" "c\xc1\x81" "d");
	/* Overlong "/" (C0 AF), overlong U+0000 in three bytes (E0 80 80). */
	cgf_json_string(j, "\xc0\xaf|\xe0\x80\x80");
	/* A surrogate (ED A0 80), beyond U+10FFFF (F4 90 80 80). */
	cgf_json_string(j, "\xed\xa0\x80|\xf4\x90\x80\x80");
	/* Truncated sequences: at the end, and before an ASCII byte. */
	cgf_json_string(j, "\xe2\x82|\xf0\x9f\x98");
	cgf_json_array_end(j);
}

static void build_escaped_key(struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_u64(j, "a\"b\n", 1);
	cgf_json_object_end(j);
}

static void test_strings(struct test_state *t) {
	check_render(t, "escapes", 0, build_escapes,
		     "[\"quote \\\" backslash \\\\ slash /\",\"\\b\\f\\n\\r\\t\",\"\\u0001\\u001f\\u007f ~\","
		     "\"nul\\u0000byte\",\"\"]\n",
		     0);
	check_render(t, "utf-8", 0, build_utf8,
		     "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \xef\xbf\xbd\","
		     "\"a\\ufffdb\\ufffdc\\ufffd\\ufffdd\","
		     "\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\","
		     "\"\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd\","
		     "\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\"]\n",
		     0);
	check_render(t, "escaped key", CGF_JSON_PRETTY, build_escaped_key, "{\n  \"a\\\"b\\n\": 1\n}\n", 0);
}

static void build_numbers(struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_u64(j, "u64_max", UINT64_MAX);
	cgf_json_field_u64(j, "zero", 0);
	cgf_json_field_i64(j, "i64_min", INT64_MIN);
	cgf_json_field_i64(j, "i64_max", INT64_MAX);
	cgf_json_field_i64(j, "minus_one", -1);
	cgf_json_field_u64_or_null(j, "u64_max_or_null", UINT64_MAX);
	cgf_json_object_end(j);
}

static void test_numbers(struct test_state *t) {
	check_render(t, "numbers", 0, build_numbers,
		     "{\"u64_max\":18446744073709551615,\"zero\":0,\"i64_min\":-9223372036854775808,"
		     "\"i64_max\":9223372036854775807,\"minus_one\":-1,\"u64_max_or_null\":18446744073709551615}\n",
		     0);
}

/* ---- the error latch: the first error stays, nothing is written after it ---- */

static void build_value_without_key(struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_u64(j, "a", 1);
	cgf_json_u64(j, 2);              /* no key: latched here */
	cgf_json_field_u64(j, "b", 3);   /* ignored, however valid */
	cgf_json_object_end(j);
}

static void build_key_in_array(struct cgf_json *j) {
	cgf_json_array_begin(j);
	cgf_json_field_u64(j, "a", 1);
	cgf_json_array_end(j);
}

static void build_key_at_top(struct cgf_json *j) {
	cgf_json_key(j, "a");
	cgf_json_u64(j, 1);
}

static void build_two_keys(struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_key(j, "a");
	cgf_json_key(j, "b");
	cgf_json_u64(j, 1);
	cgf_json_object_end(j);
}

static void build_key_without_value(struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_key(j, "a");
	cgf_json_object_end(j);
}

static void build_mismatched_end(struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_array_begin(j, "a");
	cgf_json_object_end(j);
	cgf_json_array_end(j);
	cgf_json_object_end(j);
}

static void build_end_at_top(struct cgf_json *j) {
	cgf_json_u64(j, 1);
	cgf_json_array_end(j);
}

static void build_unfinished(struct cgf_json *j) {
	cgf_json_object_begin(j);
	cgf_json_field_array_begin(j, "a");
	cgf_json_u64(j, 1);
}

static void build_set_error(struct cgf_json *j) {
	cgf_json_array_begin(j);
	cgf_json_u64(j, 1);
	cgf_json_set_error(j, 0); /* not an error: ignored */
	cgf_json_u64(j, 2);
	cgf_json_set_error(j, -ENOMEM);
	cgf_json_set_error(j, -EIO); /* the first stays */
	cgf_json_u64(j, 3);
	cgf_json_array_end(j);
}

static void test_latch(struct test_state *t) {
	check_render(t, "value without key", 0, build_value_without_key, "{\"a\":1", -EINVAL);
	check_render(t, "key in an array", 0, build_key_in_array, "[", -EINVAL);
	check_render(t, "key at the top", 0, build_key_at_top, "", -EINVAL);
	check_render(t, "two keys", 0, build_two_keys, "{\"a\":", -EINVAL);
	check_render(t, "key without value", 0, build_key_without_value, "{\"a\":", -EINVAL);
	check_render(t, "mismatched end", 0, build_mismatched_end, "{\"a\":[", -EINVAL);
	check_render(t, "end with nothing open", 0, build_end_at_top, "1\n", -EINVAL);
	check_render(t, "unfinished document", 0, build_unfinished, "{\"a\":[1", -EINVAL);
	check_render(t, "a renderer's own error", 0, build_set_error, "[1,2", -ENOMEM);
}

static void test_stream_errors(struct test_state *t) {
	_cleanup_(cgf_json_freep) struct cgf_json *j = NULL;
	_cleanup_fclose_ FILE *ro = NULL, *small = NULL;
	char buf[8];
	int r;

	CHECK(t, cgf_json_new(NULL, 0, &j) == -EINVAL, "no stream");

	/* A stream that refuses every write: the first write latches. */
	ro = fopen("/dev/null", "re");
	REQUIRE(ro);
	REQUIRE(cgf_json_new(ro, 0, &j) == 0);
	cgf_json_array_begin(j);
	r = cgf_json_status(j);
	CHECK(t, r < 0, "write to a read-only stream: %d", r);
	cgf_json_u64(j, 1);
	cgf_json_array_end(j);
	CHECK(t, cgf_json_finish(j) == r, "the first error stays");
	j = cgf_json_free(j);

	/* A stream that fills up: buffered, so the error may only show when
	 * cgf_json_finish() flushes; it must show then. */
	small = fmemopen(buf, sizeof(buf), "w");
	REQUIRE(small);
	REQUIRE(cgf_json_new(small, 0, &j) == 0);
	cgf_json_string(j, "longer than eight bytes");
	r = cgf_json_finish(j);
	CHECK(t, r < 0, "a full stream: %d", r);
}

int main(void) {
	struct test_state t = {};

	test_nesting(&t);
	test_top_level(&t);
	test_strings(&t);
	test_numbers(&t);
	test_latch(&t);
	test_stream_errors(&t);
	return test_finish(&t, "test-json");
}
