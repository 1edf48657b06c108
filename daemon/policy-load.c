/* SPDX-License-Identifier: GPL-2.0-only */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "policy-load.h"
#include "policy-parse.h"

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

static int report_errno(struct cgf_diags *diags, const char *path, const char *what, int r) {
	if (r == -ENOMEM)
		return r;
	if (r == -EFBIG)
		cgf_diags_add_file(diags, CGF_ERROR, path, "larger than %u MiB; refusing to read it",
				   CGF_POLICY_FILE_MAX >> 20);
	else
		cgf_diags_add_file(diags, CGF_ERROR, path, "cannot %s: %s", what, strerror(-r));
	return cgf_diags_status(diags);
}

int cgf_policy_load_file(struct cgf_policy *p, const char *path, struct cgf_diags *diags) {
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *text = NULL;
	const char *name = path;
	struct stat st;
	size_t size = 0;
	int r;

	if (streq(path, "-")) {
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
		name = "<stdin>";
	} else
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return report_errno(diags, name, "open", -errno);
	if (fstat(fd, &st) < 0)
		return report_errno(diags, name, "stat", -errno);
	if (S_ISDIR(st.st_mode))
		return report_errno(diags, name, "read", -EISDIR);

	r = read_fd_full(fd, CGF_POLICY_FILE_MAX, &text, &size);
	if (r < 0)
		return report_errno(diags, name, "read", r);
	return cgf_policy_load_text(p, name, text, size, diags);
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

int cgf_policy_load_dropins(struct cgf_policy *p, const char *dir, struct cgf_diags *diags) {
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	int r = 0;

	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return report_errno(diags, dir, "open the drop-in directory", -errno);
	}

	/* Read the list first, then the files: the order is lexical (bytes,
	 * not the locale's collation), whatever readdir() returns. */
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
		if (!slot || !(*slot = path_join(dir, de->d_name))) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);

	if (r >= 0)
		qsort_safe(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = cgf_policy_load_file(p, names[i], diags);

	strv_free_n(names, n);
	return r;
}

int cgf_policy_load(struct cgf_policy *p, const char *main_path, const char *dropin_dir,
		    struct cgf_diags *diags) {
	int r;

	r = cgf_policy_load_file(p, main_path, diags);
	if (r < 0)
		return r;
	if (!dropin_dir)
		return 0;
	return cgf_policy_load_dropins(p, dropin_dir, diags);
}

int cgf_policy_load_path(struct cgf_policy *p, const char *path, struct cgf_diags *diags) {
	_cleanup_free_ char *main_path = NULL, *dropins = NULL;
	struct stat st;

	if (streq(path, "-") || stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return cgf_policy_load_file(p, path, diags);

	main_path = path_join(path, CGF_POLICY_MAIN_NAME);
	dropins = path_join(path, CGF_POLICY_DROPIN_NAME);
	if (!main_path || !dropins)
		return -ENOMEM;
	return cgf_policy_load(p, main_path, dropins, diags);
}
