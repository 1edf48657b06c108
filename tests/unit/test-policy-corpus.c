/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The malformed-policy corpus: every CASE.yaml (one file) or CASE/ (a
 * configuration directory: policy.yaml + policy.d/) in the directory given
 * as argument is loaded and validated, and its diagnostics, one line each
 * ("file:line:col: error: message", notes included), must equal
 * CASE.expected exactly.  A case is checked against the patched kernel
 * unless the first line of its YAML is "# kernel: stock".
 *
 *   test-policy-corpus DIR [CASE...]
 *
 * With CGF_UPDATE_EXPECTED=1 in the environment the .expected files are
 * (re)written instead: review the diff before committing it.
 */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "macro.h"
#include "policy-load.h"
#include "policy-validate.h"
#include "policy.h"
#include "tests.h"

#define MIN_CASES 40

static char *read_file(const char *path) {
	_cleanup_fclose_ FILE *f = NULL;
	char *buf = NULL;
	size_t size = 0;
	FILE *out;
	int c;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	out = open_memstream(&buf, &size);
	REQUIRE(out);
	while ((c = fgetc(f)) != EOF)
		fputc(c, out);
	REQUIRE(fclose(out) == 0);
	return buf;
}

static bool wants_stock(const char *yaml_path) {
	_cleanup_free_ char *text = read_file(yaml_path);

	return text && strncmp(text, "# kernel: stock\n", 16) == 0;
}

static void run_case(struct test_state *t, const char *name, bool update) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = NULL;
	_cleanup_free_ char *expected_path = NULL, *expected = NULL, *got = NULL, *yaml = NULL;
	struct cgf_diags d = CGF_DIAGS_INIT;
	struct cgf_features features = CGF_FEATURES_PATCHED;
	struct stat st;

	REQUIRE(asprintf(&yaml, "%s.yaml", name) >= 0);
	REQUIRE(asprintf(&expected_path, "%s.expected", name) >= 0);
	p = cgf_policy_new();
	REQUIRE(p);

	if (stat(name, &st) == 0 && S_ISDIR(st.st_mode))
		REQUIRE(cgf_policy_load_path(p, name, CGF_TRUST_TYPE, &d) == 0);
	else {
		if (wants_stock(yaml))
			features = CGF_FEATURES_STOCK;
		REQUIRE(cgf_policy_load_file(p, yaml, CGF_TRUST_TYPE, &d) == 0);
	}
	REQUIRE(cgf_policy_validate(p, &features, &d) == 0);
	cgf_diags_sort(&d);
	REQUIRE(cgf_diags_render_string(&d, 0, &got) == 0);

	if (update) {
		FILE *f = fopen(expected_path, "we");

		REQUIRE(f);
		fputs(got, f);
		REQUIRE(fclose(f) == 0);
	} else {
		expected = read_file(expected_path);
		CHECK(t, expected, "%s: missing", expected_path);
		if (expected)
			CHECK_STREQ(t, got, expected, name);
	}
	/* A malformed policy must fail: an empty expectation is a mistake. */
	CHECK(t, d.n_errors > 0, "%s: no errors", name);
	cgf_diags_done(&d);
}

static int compare_strings(const void *a, const void *b) {
	return strcmp(*(char *const *) a, *(char *const *) b);
}

int main(int argc, char *argv[]) {
	struct test_state t = {};
	bool update = getenv("CGF_UPDATE_EXPECTED") && streq(getenv("CGF_UPDATE_EXPECTED"), "1");
	char **cases = NULL;
	size_t n = 0;
	DIR *dir;
	struct dirent *de;

	REQUIRE(argc >= 2);
	REQUIRE(chdir(argv[1]) == 0); /* so that messages name files as the .expected do */

	if (argc > 2) {
		for (int i = 2; i < argc; i++)
			run_case(&t, argv[i], update);
		return test_finish(&t, "policy corpus");
	}

	dir = opendir(".");
	REQUIRE(dir);
	while ((de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		char **slot, *name;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (len > 5 && streq(de->d_name + len - 5, ".yaml"))
			name = strndup(de->d_name, len - 5);
		else if (stat(de->d_name, &st) == 0 && S_ISDIR(st.st_mode))
			name = strdup(de->d_name);
		else {
			/* Every .expected needs its case. */
			if (len > 9 && streq(de->d_name + len - 9, ".expected")) {
				_cleanup_free_ char *base = strndup(de->d_name, len - 9), *y = NULL;

				REQUIRE(base && asprintf(&y, "%s.yaml", base) >= 0);
				CHECK(&t, access(y, F_OK) == 0 || access(base, F_OK) == 0, "%s has no case", de->d_name);
			}
			continue;
		}
		REQUIRE(name);
		slot = array_append((void **) &cases, n, sizeof(*cases));
		REQUIRE(slot);
		*slot = name;
		n++;
	}
	closedir(dir);
	qsort_safe(cases, n, sizeof(*cases), compare_strings);

	for (size_t i = 0; i < n; i++) {
		run_case(&t, cases[i], update);
		free(cases[i]);
	}
	free(cases);
	printf("%zu malformed policies\n", n);
	CHECK(&t, n >= MIN_CASES, "only %zu cases, want at least %d", n, MIN_CASES);
	return test_finish(&t, "policy corpus");
}
