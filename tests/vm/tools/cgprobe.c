// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgprobe: traffic that watches the daemon at work, for the daemon's VM
 * tests and benchmarks (tests/vm/daemon-*.test, bench/daemon-e2e).
 *
 *   cgprobe trial PARENT COUNT ALLOWED_PORT DENIED_PORT TIMEOUT_MS
 *   cgprobe stream CGROUP ALLOWED_PORT DENIED_PORT INTERVAL_US STOP_FILE [ENFORCE_FILE]
 *   cgprobe burst NEW_CGROUP|- ADDR PORT COUNT
 *
 * trial: COUNT times, create PARENT/cgprobe-N and move a process into it
 * (forked before, waiting for the word, so that it joins within about a
 * millisecond of the mkdir), which opens a socket there (a socket belongs
 * to the cgroup it was created in) and at once sends, every 200 us, one
 * datagram to 127.0.0.1 DENIED_PORT and one to ALLOWED_PORT.  Until the
 * daemon has bound the child, the host's fail-closed program drops both
 * (sendto() fails with EPERM); then the tenant's rules let ALLOWED_PORT
 * through and still drop DENIED_PORT.  Per trial: the time from mkdir
 * until the first allowed datagram passes (the inotify-to-applied
 * latency as a tenant sees it), whether the first ones were dropped, and
 * after the first one arrived 20 ms more of sending.  Any datagram that
 * arrives on DENIED_PORT is an escape.  A trial without an allowed
 * datagram within TIMEOUT_MS is "unbound".
 *
 * stream: a process in CGROUP sends, every INTERVAL_US, one datagram to
 * ALLOWED_PORT and one to DENIED_PORT, each with a sequence number, until
 * STOP_FILE exists (or SIGTERM); the receivers count what arrives.  At
 * the end: allowed datagrams that never arrived, denied ones that did,
 * and the longest run of consecutive allowed datagrams lost, as a time.
 * With ENFORCE_FILE, the denied port's rules start audited (enforce:
 * false: its datagrams pass and arrive) and are switched to enforce by
 * the caller, who creates ENFORCE_FILE once the switch is complete (the
 * reload returned): the sender marks each datagram sent after it saw the
 * file, and only marked ones on the denied port are escapes.  Also
 * counted: denied sends that passed before and after the mark, and those
 * that passed after the first one was dropped (a switch that takes
 * effect at once and for good leaves none).
 *
 * burst: create NEW_CGROUP (it must not exist yet), move this process in,
 * open a UDP socket there and at once send COUNT datagrams back to back
 * to ADDR PORT (IPv4 or IPv6); "-" stays in the current cgroup (a process
 * a service manager started in a new unit).  Prints "sent COUNT passed P
 * join_us J": P datagrams the egress filters let through (sendto()
 * succeeded; a drop by a cgroup program or by netfilter's output hook
 * fails it with EPERM), J the time from mkdir until the process was in
 * the cgroup.  No receiver: ADDR must be routable (e.g. an address on
 * lo).  For bench/parts/3-alternatives, which compares how controllers
 * treat a cgroup created after their rules were loaded; exits 0 whatever
 * passed, 2 on a set-up error.  NEW_CGROUP is left for the caller to
 * remove.
 *
 * trial and stream print one "key value ..." summary line on stdout, and
 * exit 0 when nothing escaped and nothing allowed was lost (trial: and
 * every child was bound), 1 otherwise, 2 on a set-up error.  Receivers
 * run in this process, outside the probed cgroups, on 127.0.0.1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-join.h"

enum { EXIT_FOUND = 1, EXIT_SETUP = 2 };

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
	(void) sig;
	stop_requested = 1;
}

static uint64_t now_us(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static struct sockaddr_in loopback(unsigned port) {
	return (struct sockaddr_in) {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t) port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
}

static int bind_receiver(unsigned port) {
	struct sockaddr_in sa = loopback(port);
	int fd, size = 4 << 20;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void) setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* A datagram: "<tag> <seq>", tag the trial number, or for a stream 0
 * (1 once the sender saw ENFORCE_FILE). */
static bool parse_datagram(const char *buf, ssize_t n, unsigned long *tag, unsigned long *seq) {
	char text[64];

	if (n <= 0 || n >= (ssize_t) sizeof(text))
		return false;
	memcpy(text, buf, (size_t) n);
	text[n] = '\0';
	return sscanf(text, "%lu %lu", tag, seq) == 2;
}

/*
 * The sender, in its own process.  With go_fd, it waits for the parent's
 * word that the cgroup exists, so that the time from mkdir to the move is
 * the kernel's, not fork's.  It then joins CGROUP and opens its socket
 * there.  Each round sends to the denied port first (it must never arrive,
 * not even before the allowed one does), then to the allowed one.  On
 * report_fd it writes, once its first allowed datagram went out (the
 * egress filters passed it: sendto() fails with EPERM for a dropped one),
 * "<join us> <first pass us> <allowed dropped before>", and at the end
 * "<rounds> <allowed send errors> <denied sends that passed> <... of them
 * after the mark> <... after the first denied one was dropped>".
 * mark_file (a stream's ENFORCE_FILE, or NULL): once it exists, tag 1.
 */
static void sender(const char *cgroup, unsigned long tag, unsigned allowed, unsigned denied,
		   unsigned interval_us, int go_fd, int report_fd, const char *mark_file) {
	struct sockaddr_in to_allowed = loopback(allowed), to_denied = loopback(denied);
	unsigned long seq = 0, errors_allowed = 0, ok_denied = 0, ok_denied_marked = 0, ok_denied_after_drop = 0;
	bool denied_dropped = false;
	struct sigaction sa = { .sa_handler = on_stop };
	uint64_t t_join;
	bool passed = false;
	char buf[64];
	int fd, r;

	sigaction(SIGTERM, &sa, NULL);
	if (go_fd >= 0 && read(go_fd, buf, 1) != 1)
		_exit(EXIT_SETUP);
	r = cgroup_join(cgroup);
	if (r < 0) {
		fprintf(stderr, "cgprobe: joining %s: %s\n", cgroup, strerror(-r));
		_exit(EXIT_SETUP);
	}
	t_join = now_us();
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "cgprobe: socket: %m\n");
		_exit(EXIT_SETUP);
	}
	while (!stop_requested) {
		int n;

		seq++;
		if (mark_file && tag == 0 && access(mark_file, F_OK) == 0)
			tag = 1;
		n = snprintf(buf, sizeof(buf), "%lu %lu", tag, seq);
		if (sendto(fd, buf, (size_t) n, 0, (struct sockaddr *) &to_denied, sizeof(to_denied)) == n) {
			ok_denied++;
			ok_denied_marked += mark_file && tag == 1;
			ok_denied_after_drop += denied_dropped;
		} else
			denied_dropped = true;
		if (sendto(fd, buf, (size_t) n, 0, (struct sockaddr *) &to_allowed, sizeof(to_allowed)) != n)
			errors_allowed++;
		else if (!passed) {
			passed = true;
			if (go_fd >= 0)
				(void) dprintf(report_fd, "%" PRIu64 " %" PRIu64 " %lu\n", t_join, now_us(),
					       errors_allowed);
		}
		usleep(interval_us);
	}
	if (go_fd < 0 && report_fd >= 0)
		(void) dprintf(report_fd, "%lu %lu %lu %lu %lu\n", seq, errors_allowed, ok_denied, ok_denied_marked,
			       ok_denied_after_drop);
	_exit(0);
}

/* Reads everything queued on fd; calls back per datagram. */
typedef void (*on_datagram_t)(void *userdata, unsigned long tag, unsigned long seq);

static void drain(int fd, on_datagram_t cb, void *userdata) {
	char buf[128];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		unsigned long tag, seq;

		if (n < 0)
			return;
		if (parse_datagram(buf, n, &tag, &seq))
			cb(userdata, tag, seq);
	}
}

/* ---- trial --------------------------------------------------------------- */

struct trial_state {
	unsigned long current;
	bool allowed_seen;
	unsigned long escaped, stray;
};

static void trial_on_allowed(void *userdata, unsigned long tag, unsigned long seq) {
	struct trial_state *t = userdata;

	(void) seq;
	if (tag == t->current)
		t->allowed_seen = true;
	else
		t->stray++; /* a late datagram of an earlier trial */
}

static void trial_on_denied(void *userdata, unsigned long tag, unsigned long seq) {
	struct trial_state *t = userdata;

	fprintf(stderr, "cgprobe: ESCAPE: trial %lu datagram %lu arrived on the denied port\n", tag, seq);
	t->escaped++;
}

static int cmp_u64(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, size_t n, double p) {
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t) (p / 100.0 * (double) n + 0.999999);
	if (i > 0)
		i--;
	if (i >= n)
		i = n - 1;
	return (double) v[i] / 1000.0;
}

static int run_trials(const char *parent, unsigned long count, unsigned allowed, unsigned denied,
		      unsigned timeout_ms) {
	struct trial_state t = {};
	uint64_t *lat = calloc(count, sizeof(*lat)), *join = calloc(count, sizeof(*join));
	unsigned long bound = 0, unbound = 0, dropped_first = 0;
	int fa, fd;

	fa = bind_receiver(allowed);
	fd = bind_receiver(denied);
	if (!lat || !join || fa < 0 || fd < 0) {
		fprintf(stderr, "cgprobe: receivers on ports %u, %u: %s\n", allowed, denied,
			strerror(fa < 0 ? -fa : fd < 0 ? -fd : ENOMEM));
		return EXIT_SETUP;
	}
	for (unsigned long i = 1; i <= count; i++) {
		char dir[4096], line[128];
		uint64_t t0, deadline, got = 0;
		int go[2], report[2], status;
		bool reported = false;
		pid_t pid;

		snprintf(dir, sizeof(dir), "%s/cgprobe-%lu", parent, i);
		t.current = i;
		t.allowed_seen = false;
		if (pipe2(go, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC | O_NONBLOCK) < 0)
			return EXIT_SETUP;
		pid = fork();
		if (pid < 0)
			return EXIT_SETUP;
		if (pid == 0)
			sender(dir, i, allowed, denied, 200, go[0], report[1], NULL);
		close(go[0]);
		close(report[1]);
		t0 = now_us();
		if (mkdir(dir, 0755) < 0) {
			fprintf(stderr, "cgprobe: mkdir %s: %m\n", dir);
			return EXIT_SETUP;
		}
		if (write(go[1], "g", 1) != 1)
			return EXIT_SETUP;
		deadline = t0 + (uint64_t) timeout_ms * 1000u;
		for (;;) {
			struct pollfd p[3] = {
				{ .fd = fa, .events = POLLIN },
				{ .fd = fd, .events = POLLIN },
				{ .fd = report[0], .events = POLLIN },
			};
			uint64_t now = now_us();

			if (got == 0 && t.allowed_seen && reported) {
				got = now;
				deadline = got + 20000; /* 20 ms more of sending */
			}
			if (now >= deadline)
				break;
			(void) poll(p, reported ? 2 : 3, (int) ((deadline - now) / 1000u) + 1);
			drain(fa, trial_on_allowed, &t);
			drain(fd, trial_on_denied, &t);
			if (!reported) {
				ssize_t n = read(report[0], line, sizeof(line) - 1);
				uint64_t t_join, t_pass;
				unsigned long before;

				if (n > 0) {
					line[n] = '\0';
					if (sscanf(line, "%" SCNu64 " %" SCNu64 " %lu", &t_join, &t_pass, &before) == 3) {
						reported = true;
						join[bound] = t_join - t0;
						lat[bound++] = t_pass - t0;
						dropped_first += before > 0;
					}
				}
			}
		}
		if (got == 0) {
			fprintf(stderr, "cgprobe: trial %lu: %s never let an allowed datagram through within %u ms\n",
				i, dir, timeout_ms);
			unbound++;
		}
		kill(pid, SIGKILL);
		(void) waitpid(pid, &status, 0);
		close(go[1]);
		close(report[0]);
		if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SETUP)
			return EXIT_SETUP;
		/* The cgroup is empty once its last process is reaped. */
		for (int tries = 0; rmdir(dir) < 0; tries++) {
			if (errno != EBUSY || tries > 1000) {
				fprintf(stderr, "cgprobe: rmdir %s: %m\n", dir);
				return EXIT_SETUP;
			}
			usleep(1000);
		}
	}
	/* Late arrivals of the last trial. */
	usleep(50000);
	drain(fa, trial_on_allowed, &t);
	drain(fd, trial_on_denied, &t);
	qsort(lat, bound, sizeof(*lat), cmp_u64);
	qsort(join, bound, sizeof(*join), cmp_u64);
	/* latency: mkdir -> the first allowed datagram the egress filters
	 * passed; join: mkdir -> the sender is in the cgroup; dropped_first:
	 * trials whose first allowed datagrams were dropped (the child was
	 * seen unbound, fail-closed). */
	printf("trials %lu escaped %lu unbound %lu dropped_first %lu latency_ms p50 %.1f p90 %.1f p99 %.1f max %.1f "
	       "join_ms p50 %.1f p99 %.1f\n",
	       count, t.escaped, unbound, dropped_first, pct(lat, bound, 50), pct(lat, bound, 90), pct(lat, bound, 99),
	       pct(lat, bound, 100), pct(join, bound, 50), pct(join, bound, 99));
	free(lat);
	free(join);
	return t.escaped == 0 && unbound == 0 ? 0 : EXIT_FOUND;
}

/* ---- stream -------------------------------------------------------------- */

struct stream_state {
	uint8_t *seen; /* per allowed sequence number */
	unsigned long capacity, recv_allowed, recv_denied, max_seq;
	unsigned long recv_denied_audit; /* arrived before the mark (tag 0) of a stream with ENFORCE_FILE */
	bool audit;
};

static void stream_on_allowed(void *userdata, unsigned long tag, unsigned long seq) {
	struct stream_state *s = userdata;

	(void) tag;
	if (seq == 0 || seq >= s->capacity || s->seen[seq])
		return;
	s->seen[seq] = 1;
	s->recv_allowed++;
	if (seq > s->max_seq)
		s->max_seq = seq;
}

static void stream_on_denied(void *userdata, unsigned long tag, unsigned long seq) {
	struct stream_state *s = userdata;

	if (s->audit && tag == 0) {
		s->recv_denied_audit++; /* audited then: it passes */
		return;
	}
	if (s->recv_denied++ < 10)
		fprintf(stderr, "cgprobe: ESCAPE: datagram %lu arrived on the denied port\n", seq);
}

static int run_stream(const char *cgroup, unsigned allowed, unsigned denied, unsigned interval_us,
		      const char *stop_file, const char *enforce_file) {
	struct stream_state s = { .capacity = 50u * 1000u * 1000u, .audit = enforce_file };
	unsigned long ok_denied_marked = 0, ok_denied_after_drop = 0;
	struct sigaction sa = { .sa_handler = on_stop };
	unsigned long sent = 0, errors_allowed = 0, ok_denied = 0, lost, run = 0, longest = 0;
	int fa, fd, pipefd[2], status;
	char line[128] = "";
	ssize_t n;
	pid_t pid;

	s.seen = calloc(s.capacity, 1);
	fa = bind_receiver(allowed);
	fd = bind_receiver(denied);
	if (!s.seen || fa < 0 || fd < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
		fprintf(stderr, "cgprobe: set-up of the receivers failed\n");
		return EXIT_SETUP;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	pid = fork();
	if (pid < 0)
		return EXIT_SETUP;
	if (pid == 0) {
		close(pipefd[0]);
		sender(cgroup, 0, allowed, denied, interval_us, -1, pipefd[1], enforce_file);
	}
	close(pipefd[1]);
	while (!stop_requested && access(stop_file, F_OK) < 0) {
		struct pollfd p[2] = { { .fd = fa, .events = POLLIN }, { .fd = fd, .events = POLLIN } };

		(void) poll(p, 2, 50);
		drain(fa, stream_on_allowed, &s);
		drain(fd, stream_on_denied, &s);
	}
	kill(pid, SIGTERM);
	n = read(pipefd[0], line, sizeof(line) - 1);
	(void) waitpid(pid, &status, 0);
	if (n <= 0 || sscanf(line, "%lu %lu %lu %lu %lu", &sent, &errors_allowed, &ok_denied, &ok_denied_marked,
			     &ok_denied_after_drop) != 5) {
		fprintf(stderr, "cgprobe: the sender failed (status %d)\n", status);
		return EXIT_SETUP;
	}
	/* What is still on its way on loopback. */
	usleep(100000);
	drain(fa, stream_on_allowed, &s);
	drain(fd, stream_on_denied, &s);
	for (unsigned long i = 1; i <= sent && i < s.capacity; i++) {
		run = s.seen[i] ? 0 : run + 1;
		if (run > longest)
			longest = run;
	}
	lost = sent - s.recv_allowed;
	printf(		"sent %lu allowed_lost %lu allowed_send_errors %lu denied_arrived %lu denied_send_ok %lu "
	       "longest_gap %lu (%.1f ms)",
	       sent, lost, errors_allowed, s.recv_denied, ok_denied, longest,
		(double) longest * (double) interval_us / 1000.0);
	if (!enforce_file) {
		putchar('\n');
		return lost == 0 && s.recv_denied == 0 && sent > 0 ? 0 : EXIT_FOUND;
	}
	/* denied_arrived counts only marked datagrams here: escapes. */
	printf(" denied_arrived_audit %lu denied_send_ok_marked %lu denied_send_ok_after_drop %lu\n",
	       s.recv_denied_audit, ok_denied_marked, ok_denied_after_drop);
	return lost == 0 && s.recv_denied == 0 && ok_denied_marked == 0 && ok_denied_after_drop == 0 && sent > 0
		? 0 : EXIT_FOUND;
}

/* ---- burst -------------------------------------------------------------- */

static int run_burst(const char *cgroup, const char *addr, unsigned port, unsigned long count) {
	struct sockaddr_storage ss = {};
	struct sockaddr_in *sin = (struct sockaddr_in *) &ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &ss;
	socklen_t len;
	unsigned long passed = 0;
	uint64_t t0 = 0, t_join = 0;
	char payload[] = "cgprobe burst";
	int fd, r;

	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t) port);
		len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t) port);
		len = sizeof(*sin6);
	} else {
		fprintf(stderr, "cgprobe: not an address: '%s'\n", addr);
		return EXIT_SETUP;
	}
	if (strcmp(cgroup, "-") != 0) {
		t0 = now_us();
		if (mkdir(cgroup, 0755) < 0) {
			fprintf(stderr, "cgprobe: mkdir %s: %m\n", cgroup);
			return EXIT_SETUP;
		}
		r = cgroup_join(cgroup);
		if (r < 0) {
			fprintf(stderr, "cgprobe: joining %s: %s\n", cgroup, strerror(-r));
			return EXIT_SETUP;
		}
		t_join = now_us();
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "cgprobe: socket: %m\n");
		return EXIT_SETUP;
	}
	for (unsigned long i = 0; i < count; i++) {
		if (sendto(fd, payload, sizeof(payload), 0, (struct sockaddr *) &ss, len) == (ssize_t) sizeof(payload))
			passed++;
		else if (errno != EPERM) {
			/* Only a filter's drop is an answer; anything else (no
			 * route, no buffer) would be counted as a drop wrongly. */
			fprintf(stderr, "cgprobe: sendto %s port %u: %m\n", addr, port);
			return EXIT_SETUP;
		}
	}
	close(fd);
	printf("sent %lu passed %lu join_us %" PRIu64 "\n", count, passed, t_join - t0);
	return 0;
}

static unsigned long number(const char *s) {
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end) {
		fprintf(stderr, "cgprobe: not a number: '%s'\n", s);
		exit(EXIT_SETUP);
	}
	return v;
}

int main(int argc, char *argv[]) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 7 && strcmp(argv[1], "trial") == 0)
		return run_trials(argv[2], number(argv[3]), (unsigned) number(argv[4]), (unsigned) number(argv[5]),
				  (unsigned) number(argv[6]));
	if ((argc == 7 || argc == 8) && strcmp(argv[1], "stream") == 0)
		return run_stream(argv[2], (unsigned) number(argv[3]), (unsigned) number(argv[4]),
				  (unsigned) number(argv[5]), argv[6], argc == 8 ? argv[7] : NULL);
	if (argc == 6 && strcmp(argv[1], "burst") == 0)
		return run_burst(argv[2], argv[3], (unsigned) number(argv[4]), number(argv[5]));
	fprintf(stderr, "usage: cgprobe trial PARENT COUNT ALLOWED_PORT DENIED_PORT TIMEOUT_MS\n"
			"       cgprobe stream CGROUP ALLOWED_PORT DENIED_PORT INTERVAL_US STOP_FILE [ENFORCE_FILE]\n"
			"       cgprobe burst NEW_CGROUP|- ADDR PORT COUNT\n");
	return EXIT_SETUP;
}
