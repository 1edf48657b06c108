/* SPDX-License-Identifier: GPL-2.0-only */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "policy-load.h"
#include "policy-parse.h"
#include "util.h"

/* "dir/name", without doubling a trailing '/' of dir. */
static char *path_join(const char *dir, const char *name) {
	size_t n = strlen(dir);
	char *s;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (asprintf(&s, "%.*s/%s", (int) n, dir, name) < 0)
		return NULL;
	return s;
}

int cgf_policy_load_text(struct cgf_policy *p, const char *name, const char *text, size_t size,
			 struct cgf_diags *diags) {
	const struct cgf_source *source;
	int r;

	r = cgf_policy_add_source(p, name, text, size, &source);
	if (r < 0)
		return r;
	return cgf_policy_parse(p, source, diags);
}

/* A file that cannot be read, or is refused: one error naming it. */
static int report_file(struct cgf_diags *diags, const char *path, int r, const char *message) {
	if (r == -ENOMEM)
		return r;
	cgf_diags_add_file(diags, CGF_ERROR, path, "%s", message ?: strerror(-r));
	return cgf_diags_status(diags);
}

static int report_errno(struct cgf_diags *diags, const char *path, const char *what, int r) {
	if (r == -ENOMEM)
		return r;
	cgf_diags_add_file(diags, CGF_ERROR, path, "cannot %s: %s", what, strerror(-r));
	return cgf_diags_status(diags);
}

static int load_stdin(struct cgf_policy *p, enum cgf_trust trust, struct cgf_diags *diags) {
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *text = NULL, *message = NULL;
	size_t size = 0;
	int r;

	/* Whoever feeds standard input decides what it holds: fine for a
	 * check, not for what root loads. */
	if (trust == CGF_TRUST_OWNER)
		return report_file(diags, "<stdin>", -EPERM,
				   "refusing: standard input has no owner or mode to check; name a file");
	fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return report_errno(diags, "<stdin>", "read", -errno);
	r = read_fd_full(fd, CGF_POLICY_FILE_MAX, &text, &size);
	if (r == -EFBIG) {
		if (asprintf(&message, "refusing: more than the limit of %u bytes (%u MiB)", CGF_POLICY_FILE_MAX,
			     CGF_POLICY_FILE_MAX >> 20) < 0)
			return -ENOMEM;
		return report_file(diags, "<stdin>", r, message);
	}
	if (r < 0)
		return report_errno(diags, "<stdin>", "read", r);
	return cgf_policy_load_text(p, "<stdin>", text, size, diags);
}

int cgf_policy_load_file(struct cgf_policy *p, const char *path, enum cgf_trust trust, struct cgf_diags *diags) {
	_cleanup_free_ char *text = NULL, *message = NULL;
	size_t size = 0;
	int r;

	if (streq(path, "-"))
		return load_stdin(p, trust, diags);
	r = cgf_trust_read_file(path, trust, CGF_POLICY_FILE_MAX, &text, &size, &message);
	if (r < 0)
		return report_file(diags, path, r, message);
	return cgf_policy_load_text(p, path, text, size, diags);
}

static bool is_dropin_name(const char *name) {
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && streq(name + n - 5, ".yaml");
}

static int compare_names(const void *a, const void *b) {
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static void strv_free_n(char **v, size_t n) {
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void closedirp(DIR **d) {
	if (*d)
		closedir(*d);
}

/* One drop-in, read relative to the directory it was listed in. */
static int load_dropin(struct cgf_policy *p, int dir_fd, const char *dir, const char *name, enum cgf_trust trust,
		       struct cgf_diags *diags) {
	_cleanup_free_ char *path = path_join(dir, name), *text = NULL, *message = NULL;
	size_t size = 0;
	int r;

	if (!path)
		return -ENOMEM;
	r = cgf_trust_read_at(dir_fd, name, path, trust, CGF_POLICY_FILE_MAX, &text, &size, &message);
	if (r < 0)
		return report_file(diags, path, r, message);
	return cgf_policy_load_text(p, path, text, size, diags);
}

int cgf_policy_load_dropins(struct cgf_policy *p, const char *dir, enum cgf_trust trust, struct cgf_diags *diags) {
	_cleanup_(closedirp) DIR *d = NULL;
	_cleanup_free_ char *message = NULL;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	int fd, r = 0;

	fd = cgf_trust_open_dir(dir, trust, &message);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return report_file(diags, dir, fd, message);
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return report_errno(diags, dir, "read the drop-in directory", r);
	}

	/* Read the list first, then the files: the order is lexical (bytes,
	 * not the locale's collation), whatever readdir() returns.  Each file
	 * is opened in the directory that was checked and listed, not by its
	 * path again. */
	for (;;) {
		char **slot;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno != 0)
				r = report_errno(diags, dir, "read the drop-in directory", -errno);
			break;
		}
		if (!is_dropin_name(de->d_name))
			continue;
		slot = array_append((void **) &names, n, sizeof(*names));
		if (!slot || !(*slot = strdup(de->d_name))) {
			r = -ENOMEM;
			break;
		}
		n++;
	}

	if (r >= 0)
		qsort_safe(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = load_dropin(p, dirfd(d), dir, names[i], trust, diags);

	strv_free_n(names, n);
	return r;
}

int cgf_policy_load(struct cgf_policy *p, const char *main_path, const char *dropin_dir, enum cgf_trust trust,
		    struct cgf_diags *diags) {
	int r;

	r = cgf_policy_load_file(p, main_path, trust, diags);
	if (r < 0)
		return r;
	if (!dropin_dir)
		return 0;
	return cgf_policy_load_dropins(p, dropin_dir, trust, diags);
}

int cgf_policy_load_path(struct cgf_policy *p, const char *path, enum cgf_trust trust, struct cgf_diags *diags) {
	_cleanup_free_ char *main_path = NULL, *dropins = NULL;
	struct stat st;

	/* Which of the two it is; the files themselves are checked as they
	 * are opened. */
	if (streq(path, "-") || stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return cgf_policy_load_file(p, path, trust, diags);

	main_path = path_join(path, CGF_POLICY_MAIN_NAME);
	dropins = path_join(path, CGF_POLICY_DROPIN_NAME);
	if (!main_path || !dropins)
		return -ENOMEM;
	return cgf_policy_load(p, main_path, dropins, trust, diags);
}
