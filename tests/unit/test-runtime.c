/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgf_runtime_signal(), what `cgfilterctl reload` signals the daemon
 * with: a pid that is not cgfilterd (a `sleep`, as a stale pid file may
 * name) is refused and gets no signal; a process that only calls itself
 * cgfilterd (comm) but runs another executable is refused too; a process
 * whose executable is named cgfilterd gets the signal; a pid that is gone
 * is -ESRCH.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "macro.h"
#include "runtime.h"
#include "tests.h"

static pid_t spawn(const char *path) {
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		/* The test may run under nohup: a sleep that ignores SIGHUP
		 * would outlive the check that it dies of one. */
		signal(SIGHUP, SIG_DFL);
		execl(path, path, "60", (char *) NULL);
		_exit(127);
	}
	return pid;
}

/* Until the child runs the new program (its comm changed). */
static void wait_exec(pid_t pid, const char *comm) {
	char path[64], line[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "re");
		bool done = false;

		if (f) {
			done = fgets(line, sizeof(line), f) && strncmp(line, comm, strlen(comm)) == 0;
			fclose(f);
		}
		if (done)
			return;
		usleep(10000);
	}
	REQUIRE(!"the child never ran its program");
}

static bool alive(pid_t pid) {
	int status;

	return waitpid(pid, &status, WNOHANG) == 0;
}

static void copy_file(const char *from, const char *to) {
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	char buf[65536];
	ssize_t n;

	REQUIRE(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		REQUIRE(write(out, buf, (size_t) n) == n);
	REQUIRE(n == 0);
}

int main(void) {
	struct test_state s = {};
	char base[] = "/tmp/cgf-test-runtime.XXXXXX";
	char sleep_path[4096], fake[256], named[256], linkdir[128];
	_cleanup_free_ char *message = NULL;
	pid_t pid;
	ssize_t n;
	int r, status;

	REQUIRE(mkdtemp(base));

	/* A stale pid file naming a `sleep`: refused, no signal. */
	pid = spawn("/bin/sleep");
	wait_exec(pid, "sleep");
	r = cgf_runtime_signal(pid, "cgfilterd", SIGHUP, &message);
	CHECK(&s, r == -ESTALE, "a sleep is not cgfilterd: %d", r);
	CHECK(&s, message && strstr(message, "is 'sleep'") && strstr(message, "not cgfilterd"), "message: %s",
	      message ?: "(null)");
	usleep(100000);
	CHECK(&s, alive(pid), "the sleep got no SIGHUP and still runs");

	/* Where its executable is, for the copies below. */
	{
		char exe[64];

		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int) pid);
		n = readlink(exe, sleep_path, sizeof(sleep_path) - 1);
		REQUIRE(n > 0);
		sleep_path[n] = '\0';
	}
	kill(pid, SIGKILL);
	REQUIRE(waitpid(pid, &status, 0) == pid);

	/* Gone: -ESRCH, and nothing else gets it. */
	r = cgf_runtime_signal(pid, "cgfilterd", SIGHUP, &message);
	CHECK(&s, r == -ESRCH, "a pid that is gone: -ESRCH, got %d", r);

	/* Started through a symlink named cgfilterd: comm says cgfilterd, the
	 * executable is still sleep. */
	snprintf(linkdir, sizeof(linkdir), "%s/bin", base);
	REQUIRE(mkdir(linkdir, 0755) == 0);
	snprintf(fake, sizeof(fake), "%s/cgfilterd", linkdir);
	REQUIRE(symlink(sleep_path, fake) == 0);
	pid = spawn(fake);
	wait_exec(pid, "cgfilterd");
	r = cgf_runtime_signal(pid, "cgfilterd", SIGHUP, &message);
	CHECK(&s, r == -ESTALE, "comm alone is not enough: %d (%s)", r, message ?: "");
	usleep(100000);
	CHECK(&s, alive(pid), "it got no SIGHUP");
	kill(pid, SIGKILL);
	REQUIRE(waitpid(pid, &status, 0) == pid);

	/* An executable named cgfilterd gets the signal (sleep dies of it). */
	snprintf(named, sizeof(named), "%s/cgfilterd", base);
	copy_file(sleep_path, named);
	pid = spawn(named);
	wait_exec(pid, "cgfilterd");
	r = cgf_runtime_signal(pid, "cgfilterd", SIGHUP, &message);
	CHECK(&s, r == 0, "cgfilterd gets the signal: %d (%s)", r, message ?: "");
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(&s, WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP, "it died of SIGHUP (status %d)", status);

	unlink(named);
	unlink(fake);
	rmdir(linkdir);
	rmdir(base);
	return test_finish(&s, "test-runtime");
}
