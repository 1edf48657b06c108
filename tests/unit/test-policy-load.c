/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The loader on real files in a temporary directory: main file, drop-ins
 * in lexical order, what is skipped, what is an error, and the merge.
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>

#include "policy-load.h"
#include "policy-validate.h"
#include "tests.h"

static void write_file(const char *dir, const char *name, const char *text) {
	_cleanup_free_ char *path = NULL;
	FILE *f;

	REQUIRE(asprintf(&path, "%s/%s", dir, name) >= 0);
	f = fopen(path, "we");
	REQUIRE(f);
	fputs(text, f);
	REQUIRE(fclose(f) == 0);
}

static char *sub(const char *dir, const char *name) {
	char *path;

	REQUIRE(asprintf(&path, "%s/%s", dir, name) >= 0);
	return path;
}

/* The diagnostics one per line, with the temporary directory cut out. */
static char *brief(struct cgf_diags *d, const char *dir) {
	_cleanup_free_ char *s = NULL;
	char *out, *w;
	size_t n = strlen(dir);

	cgf_diags_sort(d);
	REQUIRE(cgf_diags_render_string(d, 0, &s) == 0);
	out = w = calloc(strlen(s) + 1, 1);
	REQUIRE(out);
	for (const char *r = s; *r;) {
		if (strncmp(r, dir, n) == 0) {
			*w++ = '@';
			r += n;
		} else
			*w++ = *r++;
	}
	return out;
}

static const char *source_names(const struct cgf_policy *p, const char *dir, char *buf, size_t size) {
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < p->n_sources; i++) {
		const char *name = p->sources[i]->name;

		if (strncmp(name, dir, strlen(dir)) == 0)
			name += strlen(dir);
		len += snprintf(buf + len, size - len, "%s%s", i ? " " : "", name);
	}
	return buf;
}

static void test_dropins(struct test_state *t, const char *dir) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	_cleanup_free_ char *main_path = sub(dir, "policy.yaml"), *dropins = sub(dir, "policy.d"), *out = NULL;
	struct cgf_diags d = CGF_DIAGS_INIT;
	struct cgf_features f = CGF_FEATURES_PATCHED;
	char buf[512];

	REQUIRE(p);
	REQUIRE(mkdir(dropins, 0755) == 0);
	write_file(dir, "policy.yaml",
		   "version: 1\n"
		   "filters:\n"
		   "  guard: {type: deny-all, direction: egress}\n");
	write_file(dropins, "20-b.yaml",
		   "version: 1\n"
		   "attachments:\n"
		   "  - {cgroup: system.slice, filters: [guard, count]}\n");
	write_file(dropins, "10-a.yaml",
		   "version: 1\n"
		   "filters:\n"
		   "  count: {type: count-only, direction: egress}\n"
		   "  guard: {type: deny-all, direction: ingress}\n");
	write_file(dropins, "9-c.yaml", "version: 1\n");     /* '9' sorts after '2' */
	write_file(dropins, "A-upper.yaml", "version: 1\n"); /* bytes, not locale: 'A' < 'a' */
	write_file(dropins, ".hidden.yaml", "not: read\n");
	write_file(dropins, "README", "not read\n");
	write_file(dropins, "x.yml", "not read\n");
	write_file(dropins, "x.yaml.dpkg-old", "not read\n");

	REQUIRE(cgf_policy_load(p, main_path, dropins, CGF_TRUST_TYPE, &d) == 0);
	CHECK_STREQ(t, source_names(p, dir, buf, sizeof(buf)),
		    "/policy.yaml /policy.d/10-a.yaml /policy.d/20-b.yaml /policy.d/9-c.yaml /policy.d/A-upper.yaml",
		    "files read, in order");
	REQUIRE(cgf_policy_validate(p, &f, &d) == 0);
	out = brief(&d, dir);
	/* The drop-in merge case: the second definition, with a note at the first. */
	CHECK_STREQ(t, out,
		    "@/policy.d/10-a.yaml:4:3: error: filter 'guard' is already defined\n"
		    "@/policy.yaml:3:3: note: first defined here\n",
		    "drop-in defines a filter again");
	cgf_diags_done(&d);
}

static void test_errors(struct test_state *t, const char *dir) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	_cleanup_free_ char *missing = sub(dir, "missing.yaml"), *out = NULL, *big = NULL, *big_path = NULL,
			    *adir = sub(dir, "adir.yaml"), *afile = sub(dir, "afile"), *cfg = sub(dir, "cfg/");
	struct cgf_diags d = CGF_DIAGS_INIT;
	char buf[512];

	REQUIRE(p);
	REQUIRE(mkdir(adir, 0755) == 0);
	REQUIRE(mkdir(cfg, 0755) == 0);
	write_file(dir, "afile", "version: 1\n");
	big = malloc(CGF_POLICY_FILE_MAX + 2);
	REQUIRE(big);
	memset(big, '#', CGF_POLICY_FILE_MAX + 1);
	big[CGF_POLICY_FILE_MAX + 1] = 0;
	write_file(dir, "big.yaml", big);
	big_path = sub(dir, "big.yaml");

	REQUIRE(cgf_policy_load_file(p, missing, CGF_TRUST_TYPE, &d) == 0);     /* a missing file */
	REQUIRE(cgf_policy_load_file(p, adir, CGF_TRUST_TYPE, &d) == 0);        /* a directory */
	REQUIRE(cgf_policy_load_file(p, big_path, CGF_TRUST_TYPE, &d) == 0);    /* too large */
	REQUIRE(cgf_policy_load_dropins(p, afile, CGF_TRUST_TYPE, &d) == 0);    /* not a directory */
	REQUIRE(cgf_policy_load_dropins(p, missing, CGF_TRUST_TYPE, &d) == 0);  /* a missing drop-in dir: fine */
	REQUIRE(cgf_policy_load_path(p, cfg, CGF_TRUST_TYPE, &d) == 0);         /* a config dir without policy.yaml */
	CHECK(t, p->n_sources == 0, "%s", source_names(p, dir, buf, sizeof(buf)));
	out = brief(&d, dir);
	CHECK_STREQ(t, out,
		    "@/missing.yaml: error: cannot open: No such file or directory\n"
		    "@/adir.yaml: error: refusing: a directory, not a regular file; replace it with a regular file\n"
		    "@/big.yaml: error: refusing: 4194305 bytes, more than the limit of 4194304 bytes (4 MiB)\n"
		    "@/afile: error: cannot open: Not a directory\n"
		    "@/cfg/policy.yaml: error: cannot open: No such file or directory\n",
		    "file errors");
	cgf_diags_done(&d);
}

static void test_paths(struct test_state *t, const char *dir) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	_cleanup_free_ char *cfg = sub(dir, "conf"), *cfg_d = sub(dir, "conf/policy.d"), *slash = NULL,
			    *file = sub(dir, "conf/policy.d/50-x.yaml");
	struct cgf_diags d = CGF_DIAGS_INIT;
	char buf[512];
	int fd, saved;

	REQUIRE(p);
	REQUIRE(mkdir(cfg, 0755) == 0 && mkdir(cfg_d, 0755) == 0);
	write_file(cfg, "policy.yaml", "version: 1\n");
	write_file(cfg_d, "50-x.yaml", "version: 1\n");
	REQUIRE(asprintf(&slash, "%s//", cfg) >= 0);

	REQUIRE(cgf_policy_load_path(p, slash, CGF_TRUST_TYPE, &d) == 0); /* a configuration directory */
	REQUIRE(cgf_policy_load_path(p, file, CGF_TRUST_TYPE, &d) == 0);  /* a file, again */

	/* "-" reads standard input. */
	saved = dup(STDIN_FILENO);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	REQUIRE(saved >= 0 && fd >= 0 && dup2(fd, STDIN_FILENO) == STDIN_FILENO);
	REQUIRE(cgf_policy_load_path(p, "-", CGF_TRUST_TYPE, &d) == 0);
	REQUIRE(dup2(saved, STDIN_FILENO) == STDIN_FILENO);
	close(fd);
	close(saved);

	CHECK(t, d.n == 0, "%zu diagnostics", d.n);
	CHECK_STREQ(t, source_names(p, dir, buf, sizeof(buf)),
		    "/conf/policy.yaml /conf/policy.d/50-x.yaml /conf/policy.d/50-x.yaml <stdin>", "paths");
	cgf_diags_done(&d);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
	(void) st;
	(void) flag;
	(void) ftw;
	return remove(path);
}

int main(void) {
	struct test_state t = {};
	char dir[] = "/tmp/cgf-test-load-XXXXXX";

	REQUIRE(mkdtemp(dir));
	test_dropins(&t, dir);
	test_errors(&t, dir);
	test_paths(&t, dir);
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return test_finish(&t, "policy load");
}
