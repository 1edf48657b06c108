/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pin root as a trusted place and its lock (pin-root.h), on plain
 * directories: created 0700, a root-owned directory with a read-only
 * wider mode tightened (APPLY) or accepted (READ), another owner, a
 * group- or world-writable mode and a symlink refused with a message
 * that says what to fix; a second process cannot take the lock while
 * the first holds it, is told its pid, and takes it once the first has
 * exited; a reader takes no lock.  Needs root (chown); skipped otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "macro.h"
#include "pin-root.h"
#include "tests.h"

static mode_t mode_of(const char *path) {
	struct stat st;

	REQUIRE(lstat(path, &st) == 0);
	return st.st_mode & 07777;
}

static bool contains(const char *s, const char *what) {
	return s && strstr(s, what);
}

/* A process holding the APPLY lock on path until it reads from *ret_go;
 * it has taken it when this returns. */
static pid_t holder_start(const char *path, int *ret_go) {
	int ready[2], go[2];
	pid_t pid;
	char c;

	REQUIRE(pipe2(ready, O_CLOEXEC) == 0 && pipe2(go, O_CLOEXEC) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct cgf_pin_root p;
		char *message = NULL;

		close(ready[0]);
		close(go[1]);
		if (cgf_pin_root_open(path, CGF_PIN_ROOT_APPLY, 0, &p, NULL, &message) < 0)
			_exit(2);
		if (write(ready[1], "x", 1) != 1)
			_exit(3);
		if (read(go[0], &c, 1) < 0)
			_exit(4);
		_exit(0); /* exiting releases the lock, like a daemon that stops */
	}
	close(ready[1]);
	close(go[0]);
	REQUIRE(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	*ret_go = go[1];
	return pid;
}

int main(void) {
	struct test_state s = {};
	char base[] = "/tmp/cgf-test-pin-root.XXXXXX";
	char root[256], nested[256], link[256];
	struct cgf_pin_root p, q;
	_cleanup_free_ char *message = NULL;
	pid_t holder, pid;
	int r, go, status;

	if (geteuid() != 0) {
		printf("test-pin-root: skipped, needs root (chown)\n");
		return 77;
	}
	REQUIRE(mkdtemp(base));
	snprintf(root, sizeof(root), "%s/bpf/cgfilterd", base);
	snprintf(nested, sizeof(nested), "%s/bpf", base);
	snprintf(link, sizeof(link), "%s/link", base);

	/* READ of a directory that does not exist: nothing pinned, no error. */
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_READ, 0, &p, NULL, &message);
	CHECK(&s, r == 0 && p.fd < 0 && !p.locked, "read, missing: no directory, no error (%d)", r);
	CHECK(&s, access(root, F_OK) < 0, "read creates nothing");
	cgf_pin_root_done(&p);

	/* APPLY creates it 0700 (the parents too) and locks it. */
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_APPLY, 0, &p, NULL, &message);
	CHECK(&s, r == 0 && p.fd >= 0 && p.locked && !p.mode_fixed, "apply, missing: created and locked (%d)", r);
	CHECK(&s, mode_of(root) == 0700, "created with mode 0700, got %04o", mode_of(root));

	/* A reader works next to the holder, and takes no lock. */
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_READ, 0, &q, NULL, &message);
	CHECK(&s, r == 0 && q.fd >= 0 && !q.locked, "read next to the holder (%d)", r);
	cgf_pin_root_done(&q);
	cgf_pin_root_done(&p);

	/* Root's, 0755: tightened by APPLY (and said), accepted as is by READ. */
	REQUIRE(chmod(root, 0755) == 0);
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_READ, 0, &p, NULL, &message);
	CHECK(&s, r == 0 && mode_of(root) == 0755, "read accepts root's 0755, unchanged (%d)", r);
	cgf_pin_root_done(&p);
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_APPLY, 0, &p, NULL, &message);
	CHECK(&s, r == 0 && p.mode_fixed && p.old_mode == 0755, "apply tightens root's 0755 (%d)", r);
	CHECK(&s, mode_of(root) == 0700, "now 0700, got %04o", mode_of(root));
	cgf_pin_root_done(&p);

	/* Writable by group or others: refused by both, with the fix. */
	REQUIRE(chmod(root, 0770) == 0);
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_APPLY, 0, &p, NULL, &message);
	CHECK(&s, r == -EPERM && contains(message, "writable by group or others (mode 0770)") &&
		  contains(message, "chmod 0700"), "apply refuses 0770: %d %s", r, message);
	CHECK(&s, mode_of(root) == 0770, "and leaves it alone");
	REQUIRE(chmod(root, 0777) == 0);
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_READ, 0, &p, NULL, &message);
	CHECK(&s, r == -EPERM && contains(message, "mode 0777"), "read refuses 0777: %d %s", r, message);

	/* Another owner: refused, whatever the mode. */
	REQUIRE(chmod(root, 0700) == 0);
	REQUIRE(chown(root, 65534, 65534) == 0);
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_APPLY, 0, &p, NULL, &message);
	CHECK(&s, r == -EPERM && contains(message, "owned by uid 65534, not root") &&
		  contains(message, "chown root:root"), "apply refuses uid 65534: %d %s", r, message);
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_READ, 0, &p, NULL, &message);
	CHECK(&s, r == -EPERM, "read refuses uid 65534 too: %d", r);
	REQUIRE(chown(root, 0, 0) == 0);

	/* A symbolic link in its place: refused, not followed. */
	REQUIRE(symlink(root, link) == 0);
	r = cgf_pin_root_open(link, CGF_PIN_ROOT_APPLY, 0, &p, NULL, &message);
	CHECK(&s, r == -EPERM && contains(message, "symbolic link"), "a symlink is refused: %d %s", r, message);

	/* The lock: a second applier is refused and told who holds it. */
	holder = holder_start(root, &go);
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_APPLY, 0, &p, &pid, &message);
	CHECK(&s, r == -EBUSY, "a second applier gets -EBUSY, got %d", r);
	CHECK(&s, pid == holder, "the holder's pid %d is named, got %d", (int) holder, (int) pid);
	{
		char want[64];

		snprintf(want, sizeof(want), "another cgfilterd (pid %d) holds the lock", (int) holder);
		CHECK(&s, contains(message, want), "message: %s", message);
	}
	{
		_cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		CHECK(&s, fd >= 0 && cgf_flock_holder(fd) == holder, "/proc/locks names the holder");
	}
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_READ, 0, &p, NULL, &message);
	CHECK(&s, r == 0 && !p.locked, "a reader still works (%d)", r);
	cgf_pin_root_done(&p);

	/* The holder exits: the kernel releases the lock, the next one gets it. */
	REQUIRE(write(go, "x", 1) == 1);
	close(go);
	REQUIRE(waitpid(holder, &status, 0) == holder);
	CHECK(&s, WIFEXITED(status) && WEXITSTATUS(status) == 0, "the holder ran as planned (%d)", status);
	r = cgf_pin_root_open(root, CGF_PIN_ROOT_APPLY, 0, &p, &pid, &message);
	CHECK(&s, r == 0 && p.locked, "after the holder exited, the lock is ours (%d)", r);
	CHECK(&s, cgf_flock_holder(p.fd) == getpid(), "and /proc/locks names us");
	cgf_pin_root_done(&p);

	unlink(link);
	rmdir(root);
	rmdir(nested);
	rmdir(base);
	return test_finish(&s, "test-pin-root");
}
