/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * File trust (daemon/basic/file-trust.h) on real files below a temporary
 * directory in /tmp: policy files, drop-ins and object files that are a
 * FIFO, writable by group or others, owned by someone else (nobody), a
 * symbolic link or too large, or that lie in a directory with one of
 * these problems: each refused at once with its exact message; a policy
 * and an object in good directories (below /tmp: the sticky exception)
 * accepted.  The daemon's rule (CGF_TRUST_OWNER) and `cgfilterctl check
 * PATH`'s (CGF_TRUST_TYPE) side by side.
 *
 * The owner cases chown files to nobody, which needs root: CI runs the
 * host tests as root; run by another user this test fails and says so.
 *
 *   test-file-trust DENY_ALL_OBJECT
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "file-trust.h"
#include "filter-object.h"
#include "policy-load.h"
#include "policy-validate.h"
#include "tests.h"

#define NOBODY 65534

struct ctx {
	struct test_state t;
	char base[64];
	const char *object; /* a good BPF object (the build's deny_all.bpf.o) */
	bool root;
};

static char *at(const struct ctx *c, const char *rel) {
	char *path;

	REQUIRE(asprintf(&path, "%s/%s", c->base, rel) >= 0);
	return path;
}

static void make_dir(const struct ctx *c, const char *rel, mode_t mode) {
	_cleanup_free_ char *path = at(c, rel);

	REQUIRE(mkdir(path, 0700) == 0);
	REQUIRE(chmod(path, mode) == 0); /* exactly, whatever the umask */
}

static void put(const struct ctx *c, const char *rel, const void *bytes, size_t size, mode_t mode) {
	_cleanup_free_ char *path = at(c, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, bytes, size) == (ssize_t) size);
	REQUIRE(fchmod(fd, mode) == 0);
	REQUIRE(close(fd) == 0);
}

static void put_text(const struct ctx *c, const char *rel, const char *text, mode_t mode) {
	put(c, rel, text, strlen(text), mode);
}

/* A file of "size" bytes that takes no space (and is never read). */
static void put_sparse(const struct ctx *c, const char *rel, off_t size) {
	_cleanup_free_ char *path = at(c, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, size) == 0);
	REQUIRE(close(fd) == 0);
}

static void set_mode(const struct ctx *c, const char *rel, mode_t mode) {
	_cleanup_free_ char *path = at(c, rel);

	REQUIRE(chmod(path, mode) == 0);
}

static void link_to(const struct ctx *c, const char *rel, const char *target) {
	_cleanup_free_ char *path = at(c, rel);

	REQUIRE(symlink(target, path) == 0);
}

static void move(const struct ctx *c, const char *from, const char *to) {
	_cleanup_free_ char *a = at(c, from), *b = at(c, to);

	REQUIRE(rename(a, b) == 0);
}

static void fifo(const struct ctx *c, const char *rel) {
	_cleanup_free_ char *path = at(c, rel);

	REQUIRE(mkfifo(path, 0644) == 0);
}

/* Gives rel to nobody; false (and a failed check) when we are not root. */
static bool give_to_nobody(struct ctx *c, const char *rel) {
	_cleanup_free_ char *path = at(c, rel);

	CHECK(&c->t, c->root, "'%s': chown to nobody needs root; CI runs the host tests as root: run this one as root",
	      rel);
	if (!c->root)
		return false;
	REQUIRE(lchown(path, NOBODY, NOBODY) == 0);
	return true;
}

/* DIR/policy.yaml (0644) and DIR/policy.d/10-a.yaml (0644), DIR 0755. */
static void config_dir(const struct ctx *c, const char *rel) {
	_cleanup_free_ char *main_rel = NULL, *d = NULL, *dropin = NULL;

	REQUIRE(asprintf(&main_rel, "%s/policy.yaml", rel) >= 0);
	REQUIRE(asprintf(&d, "%s/policy.d", rel) >= 0);
	REQUIRE(asprintf(&dropin, "%s/policy.d/10-a.yaml", rel) >= 0);
	make_dir(c, rel, 0755);
	make_dir(c, d, 0755);
	put_text(c, main_rel,
		 "version: 1\n"
		 "filters:\n"
		 "  guard: {type: deny-all, direction: egress}\n",
		 0644);
	put_text(c, dropin, "version: 1\n", 0644);
}

/* The rendered diagnostics with the temporary directory as '@'. */
static char *brief(const struct ctx *c, struct cgf_diags *d) {
	_cleanup_free_ char *s = NULL;
	size_t n = strlen(c->base);
	char *out, *w;

	cgf_diags_sort(d);
	REQUIRE(cgf_diags_render_string(d, 0, &s) == 0);
	out = w = calloc(strlen(s) + 1, 1);
	REQUIRE(out);
	for (const char *r = s; *r;)
		if (strncmp(r, c->base, n) == 0) {
			*w++ = '@';
			r += n;
		} else
			*w++ = *r++;
	return out;
}

static double now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* "ok: WHAT (RULE, TIME)", then each message indented. */
static void print_ok(const char *what, const char *rule, double took, const char *messages) {
	printf("ok: %s (%s, %.3f s)%s\n", what, rule, took, *messages ? ":" : ", accepted");
	for (const char *m = messages; *m;) {
		size_t n = strcspn(m, "\n");

		printf("    %.*s\n", (int) n, m);
		m += n + (m[n] == '\n');
	}
}

/* Loads rel (a configuration directory or a file) as `cgfilterctl check
 * PATH` would under "trust", and compares what it says. */
static void expect(struct ctx *c, const char *what, enum cgf_trust trust, const char *rel, const char *want) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	_cleanup_free_ char *path = at(c, rel), *got = NULL;
	struct cgf_diags d = CGF_DIAGS_INIT;
	double start, took;

	REQUIRE(p);
	start = now();
	REQUIRE(cgf_policy_load_path(p, path, trust, &d) == 0);
	took = now() - start;
	got = brief(c, &d);
	CHECK_STREQ(&c->t, got, want, what);
	/* A refusal comes from fstat(), at once: no file is waited for. */
	CHECK(&c->t, took < 1.0, "%s: took %.3f s", what, took);
	if (got && streq(got, want))
		print_ok(what, trust == CGF_TRUST_OWNER ? "daemon" : "check PATH", took, got);
	cgf_diags_done(&d);
}

static void test_policy_files(struct ctx *c) {
	enum cgf_trust O = CGF_TRUST_OWNER, T = CGF_TRUST_TYPE;

	/* Accepted: root's (or our) files in a 0755 directory in a 0700
	 * one in /tmp (1777, root's: passed through). */
	config_dir(c, "good");
	expect(c, "a policy in a good directory", O, "good", "");

	config_dir(c, "fifo");
	fifo(c, "fifo/policy.d/20-fifo.yaml");
	expect(c, "a FIFO in policy.d", O, "fifo",
	       "@/fifo/policy.d/20-fifo.yaml: error: refusing: a FIFO, not a regular file; replace it with a regular file\n");
	expect(c, "a FIFO in policy.d", T, "fifo",
	       "@/fifo/policy.d/20-fifo.yaml: error: refusing: a FIFO, not a regular file; replace it with a regular file\n");
	fifo(c, "fifo.yaml");
	expect(c, "a FIFO as the policy file", T, "fifo.yaml",
	       "@/fifo.yaml: error: refusing: a FIFO, not a regular file; replace it with a regular file\n");

	config_dir(c, "ww");
	set_mode(c, "ww/policy.yaml", 0666);
	expect(c, "a world-writable policy.yaml", O, "ww",
	       "@/ww/policy.yaml: error: refusing: writable by group or others (mode 0666); run: chmod go-w @/ww/policy.yaml\n");
	expect(c, "a world-writable policy.yaml", T, "ww", "");

	config_dir(c, "gw");
	set_mode(c, "gw/policy.yaml", 0664);
	expect(c, "a group-writable policy.yaml", O, "gw",
	       "@/gw/policy.yaml: error: refusing: writable by group or others (mode 0664); run: chmod go-w @/gw/policy.yaml\n");

	config_dir(c, "wwd");
	set_mode(c, "wwd/policy.d/10-a.yaml", 0646);
	expect(c, "a world-writable drop-in", O, "wwd",
	       "@/wwd/policy.d/10-a.yaml: error: refusing: writable by group or others (mode 0646); run: chmod go-w @/wwd/policy.d/10-a.yaml\n");

	config_dir(c, "gwd");
	set_mode(c, "gwd/policy.d/10-a.yaml", 0660);
	expect(c, "a group-writable drop-in", O, "gwd",
	       "@/gwd/policy.d/10-a.yaml: error: refusing: writable by group or others (mode 0660); run: chmod go-w @/gwd/policy.d/10-a.yaml\n");

	config_dir(c, "nobody");
	if (give_to_nobody(c, "nobody/policy.yaml")) {
		expect(c, "a policy.yaml owned by nobody", O, "nobody",
		       "@/nobody/policy.yaml: error: refusing: owned by uid 65534, not by root; run: chown root @/nobody/policy.yaml\n");
		expect(c, "a policy.yaml owned by nobody", T, "nobody", "");
	}
	config_dir(c, "nobodyd");
	if (give_to_nobody(c, "nobodyd/policy.d/10-a.yaml"))
		expect(c, "a drop-in owned by nobody", O, "nobodyd",
		       "@/nobodyd/policy.d/10-a.yaml: error: refusing: owned by uid 65534, not by root; run: chown root @/nobodyd/policy.d/10-a.yaml\n");
	config_dir(c, "both");
	set_mode(c, "both/policy.yaml", 0666);
	if (give_to_nobody(c, "both/policy.yaml"))
		expect(c, "a policy.yaml owned by nobody and world-writable", O, "both",
		       "@/both/policy.yaml: error: refusing: owned by uid 65534, not by root, and writable by group or others (mode 0666); run: chown root @/both/policy.yaml && chmod go-w @/both/policy.yaml\n");

	config_dir(c, "link");
	put_text(c, "link/real.yaml", "version: 1\n", 0644);
	move(c, "link/policy.yaml", "link/old.yaml");
	link_to(c, "link/policy.yaml", "real.yaml");
	expect(c, "a symlinked policy.yaml", O, "link",
	       "@/link/policy.yaml: error: refusing: a symbolic link (links are not followed); replace it with the file it points to, @/link/real.yaml\n");
	expect(c, "a symlinked policy.yaml", T, "link",
	       "@/link/policy.yaml: error: refusing: a symbolic link (links are not followed); replace it with the file it points to, @/link/real.yaml\n");

	config_dir(c, "linkd");
	link_to(c, "linkd/policy.d/20-l.yaml", "../../good/policy.d/10-a.yaml");
	expect(c, "a symlinked drop-in", O, "linkd",
	       "@/linkd/policy.d/20-l.yaml: error: refusing: a symbolic link (links are not followed); replace it with the file it points to, @/good/policy.d/10-a.yaml\n");

	config_dir(c, "big");
	move(c, "big/policy.yaml", "big/old.yaml");
	put_sparse(c, "big/policy.yaml", CGF_POLICY_FILE_MAX + 1);
	expect(c, "a policy.yaml over the size limit", T, "big",
	       "@/big/policy.yaml: error: refusing: 4194305 bytes, more than the limit of 4194304 bytes (4 MiB)\n");
	put_sparse(c, "big/policy.d/20-huge.yaml", (off_t) 1 << 40);
	expect(c, "a 1 TiB drop-in", O, "big/policy.d/20-huge.yaml",
	       "@/big/policy.d/20-huge.yaml: error: refusing: 1099511627776 bytes, more than the limit of 4194304 bytes (4 MiB)\n");
}

static void test_directories(struct ctx *c) {
	enum cgf_trust O = CGF_TRUST_OWNER, T = CGF_TRUST_TYPE;

	config_dir(c, "dww");
	set_mode(c, "dww/policy.d", 0777);
	expect(c, "a world-writable policy.d", O, "dww",
	       "@/dww/policy.d: error: refusing: directory @/dww/policy.d is writable by group or others (mode 0777); run: chmod go-w @/dww/policy.d\n");

	/* Listed: anyone could drop a file in, so the sticky bit is no excuse. */
	config_dir(c, "dsticky");
	set_mode(c, "dsticky/policy.d", 01777);
	expect(c, "a sticky world-writable policy.d", O, "dsticky",
	       "@/dsticky/policy.d: error: refusing: directory @/dsticky/policy.d is writable by group or others (mode 1777); run: chmod go-w @/dsticky/policy.d\n");
	expect(c, "a sticky world-writable policy.d", T, "dsticky", "");

	config_dir(c, "dgw");
	set_mode(c, "dgw", 0775);
	expect(c, "a group-writable configuration directory", O, "dgw",
	       "@/dgw/policy.yaml: error: refusing: directory @/dgw is writable by group or others (mode 0775); run: chmod go-w @/dgw\n"
	       "@/dgw/policy.d: error: refusing: directory @/dgw is writable by group or others (mode 0775); run: chmod go-w @/dgw\n");

	/* Passed through: a root-owned sticky directory, like /tmp. */
	make_dir(c, "tmpish", 01777);
	config_dir(c, "tmpish/cfg");
	expect(c, "a policy below a sticky world-writable directory", O, "tmpish/cfg", "");
	/* ... but not when what lies in it is not root's. */
	make_dir(c, "tmpish/theirs", 0755);
	put_text(c, "tmpish/theirs/policy.yaml", "version: 1\n", 0644);
	if (give_to_nobody(c, "tmpish/theirs"))
		expect(c, "a policy in nobody's directory below a sticky one", O, "tmpish/theirs/policy.yaml",
		       "@/tmpish/theirs/policy.yaml: error: refusing: directory @/tmpish/theirs is owned by uid 65534, not by root; run: chown root @/tmpish/theirs\n");

	make_dir(c, "dnobody", 0755);
	config_dir(c, "dnobody/cfg");
	if (give_to_nobody(c, "dnobody"))
		expect(c, "a configuration directory below nobody's", O, "dnobody/cfg",
		       "@/dnobody/cfg/policy.yaml: error: refusing: directory @/dnobody is owned by uid 65534, not by root; run: chown root @/dnobody\n"
		       "@/dnobody/cfg/policy.d: error: refusing: directory @/dnobody is owned by uid 65534, not by root; run: chown root @/dnobody\n");

	link_to(c, "dlink", "good");
	expect(c, "a symlinked configuration directory", O, "dlink",
	       "@/dlink/policy.yaml: error: refusing: @/dlink is a symbolic link (links are not followed); name the real path, @/good/policy.yaml\n"
	       "@/dlink/policy.d: error: refusing: @/dlink is a symbolic link (links are not followed); name the real path, @/good/policy.d\n");
	expect(c, "a symlinked configuration directory", T, "dlink", "");

	config_dir(c, "pdlink");
	move(c, "pdlink/policy.d", "pdlink/old.d");
	link_to(c, "pdlink/policy.d", "../good/policy.d");
	expect(c, "a symlinked policy.d", O, "pdlink",
	       "@/pdlink/policy.d: error: refusing: @/pdlink/policy.d is a symbolic link (links are not followed); name the real path, @/good/policy.d\n");
	expect(c, "a symlinked policy.d", T, "pdlink",
	       "@/pdlink/policy.d: error: refusing: @/pdlink/policy.d is a symbolic link (links are not followed); name the real path, @/good/policy.d\n");
}

static void test_stdin(struct ctx *c) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	_cleanup_free_ char *got = NULL;
	struct cgf_diags d = CGF_DIAGS_INIT;

	REQUIRE(p);
	REQUIRE(cgf_policy_load_path(p, "-", CGF_TRUST_OWNER, &d) == 0);
	got = brief(c, &d);
	CHECK_STREQ(&c->t, got, "<stdin>: error: refusing: standard input has no owner or mode to check; name a file\n",
		    "standard input, for the daemon");
	cgf_diags_done(&d);
}

/* An object filter over the file rel; the diagnostics. */
static char *resolve(struct ctx *c, const char *rel, bool *ret_found) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	_cleanup_free_ char *path = at(c, rel), *text = NULL;
	struct cgf_features f = CGF_FEATURES_PATCHED;
	struct cgf_objects objects = {};
	struct cgf_diags d = CGF_DIAGS_INIT;
	char *got;

	REQUIRE(p);
	REQUIRE(asprintf(&text,
			 "version: 1\n"
			 "filters:\n"
			 "  mine:\n"
			 "    type: object\n"
			 "    direction: egress\n"
			 "    object: %s\n"
			 "    program: cgf_deny_all\n",
			 path) >= 0);
	REQUIRE(cgf_policy_load_text(p, "obj.yaml", text, strlen(text), &d) == 0);
	REQUIRE(cgf_policy_validate(p, &f, &d) == 0);
	REQUIRE(d.n_errors == 0);
	REQUIRE(cgf_objects_resolve(p, &objects, &d) == 0);
	got = brief(c, &d);
	if (ret_found)
		*ret_found = objects.n == 1 && streq_ptr(objects.items[0].program, "cgf_deny_all");
	cgf_objects_done(&objects);
	cgf_diags_done(&d);
	return got;
}

static void expect_object(struct ctx *c, const char *what, const char *rel, const char *message) {
	_cleanup_free_ char *got = NULL, *want = NULL;
	double start = now(), took;

	got = resolve(c, rel, NULL);
	took = now() - start;
	REQUIRE(asprintf(&want, "obj.yaml:6:13: error: filter 'mine': object '@/%s': %s\n", rel, message) >= 0);
	CHECK_STREQ(&c->t, got, want, what);
	CHECK(&c->t, took < 1.0, "%s: took %.3f s", what, took);
	if (got && streq(got, want))
		print_ok(what, "object", took, got);
}

static void test_objects(struct ctx *c) {
	_cleanup_free_ char *good = NULL, *bytes = NULL;
	bool found = false;
	size_t size = 0;
	int fd;

	fd = open(c->object, O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	REQUIRE(read_fd_full(fd, 64u << 20, &bytes, &size) == 0);
	close(fd);

	make_dir(c, "obj", 0755);
	put(c, "obj/good.bpf.o", bytes, size, 0644);
	good = resolve(c, "obj/good.bpf.o", &found);
	CHECK_STREQ(&c->t, good, "", "an object in a good directory");
	CHECK(&c->t, found, "the good object's program was found");
	if (good && !*good && found)
		printf("ok: an object in a good directory: accepted, program cgf_deny_all found\n");

	put(c, "obj/ww.bpf.o", bytes, size, 0666);
	expect_object(c, "a world-writable object", "obj/ww.bpf.o",
		      "refusing: writable by group or others (mode 0666); run: chmod go-w @/obj/ww.bpf.o");
	put(c, "obj/gw.bpf.o", bytes, size, 0664);
	expect_object(c, "a group-writable object", "obj/gw.bpf.o",
		      "refusing: writable by group or others (mode 0664); run: chmod go-w @/obj/gw.bpf.o");
	put(c, "obj/nobody.bpf.o", bytes, size, 0644);
	if (give_to_nobody(c, "obj/nobody.bpf.o"))
		expect_object(c, "an object owned by nobody", "obj/nobody.bpf.o",
			      "refusing: owned by uid 65534, not by root; run: chown root @/obj/nobody.bpf.o");
	link_to(c, "obj/link.bpf.o", "good.bpf.o");
	expect_object(c, "a symlinked object", "obj/link.bpf.o",
		      "refusing: a symbolic link (links are not followed); replace it with the file it points to, @/obj/good.bpf.o");
	fifo(c, "obj/fifo.bpf.o");
	expect_object(c, "a FIFO as the object", "obj/fifo.bpf.o",
		      "refusing: a FIFO, not a regular file; replace it with a regular file");
	put_sparse(c, "obj/big.bpf.o", (off_t) (64u << 20) + 1);
	expect_object(c, "an object over the size limit", "obj/big.bpf.o",
		      "refusing: 67108865 bytes, more than the limit of 67108864 bytes (64 MiB)");

	make_dir(c, "objww", 0777);
	put(c, "objww/x.bpf.o", bytes, size, 0644);
	expect_object(c, "an object in a world-writable directory", "objww/x.bpf.o",
		      "refusing: directory @/objww is writable by group or others (mode 0777); run: chmod go-w @/objww");
	make_dir(c, "objnobody", 0755);
	put(c, "objnobody/x.bpf.o", bytes, size, 0644);
	if (give_to_nobody(c, "objnobody"))
		expect_object(c, "an object in nobody's directory", "objnobody/x.bpf.o",
			      "refusing: directory @/objnobody is owned by uid 65534, not by root; run: chown root @/objnobody");
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
	(void) st;
	(void) flag;
	(void) ftw;
	return remove(path);
}

static void on_alarm(int sig) {
	static const char msg[] = "test-file-trust: hung for 20 s (a FIFO waited for?)\n";

	(void) sig;
	(void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(EXIT_FAILURE);
}

int main(int argc, char *argv[]) {
	struct ctx c = { .base = "/tmp/cgf-test-trust-XXXXXX", .root = geteuid() == 0 };
	int r;

	REQUIRE(argc == 2);
	c.object = argv[1];
	/* No FIFO may block us: a hang fails the test instead of waiting for
	 * meson's timeout. */
	signal(SIGALRM, on_alarm);
	alarm(20);

	REQUIRE(mkdtemp(c.base));
	test_policy_files(&c);
	test_directories(&c);
	test_stdin(&c);
	test_objects(&c);
	nftw(c.base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	r = test_finish(&c.t, "file trust");
	return r;
}
