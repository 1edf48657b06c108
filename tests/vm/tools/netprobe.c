// SPDX-License-Identifier: GPL-2.0-only
/*
 * netprobe: the traffic side of the VM tests.
 *
 *   netprobe [--cgroup DIR] tcp-connect ADDR PORT [TIMEOUT_MS]
 *   netprobe [--cgroup DIR] udp-send ADDR PORT PAYLOAD
 *   netprobe [--cgroup DIR] udp-recv ADDR PORT TIMEOUT_MS READY_FILE
 *   netprobe [--cgroup DIR] tcp-listen ADDR PORT TIMEOUT_MS READY_FILE
 *
 * --cgroup moves this process into DIR (a cgroup2 directory) before it
 * opens any socket, so the packets it sends are subject to that cgroup's
 * programs.  Exit status: 0 the operation succeeded, 1 it failed (the
 * reason on stderr), 2 usage or set-up error.  The receivers print one
 * line per datagram or accepted connection and exit 0 after TIMEOUT_MS;
 * they create READY_FILE once bound, so a test never races its sender.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-join.h"

enum { EXIT_OP_FAILED = 1, EXIT_SETUP = 2 };

static int parse_addr(const char *host, const char *port, int socktype,
		      struct sockaddr_storage *ret_sa, socklen_t *ret_len)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = socktype,
	};
	struct addrinfo *ai;
	int r;

	r = getaddrinfo(host, port, &hints, &ai);
	if (r != 0) {
		fprintf(stderr, "netprobe: bad address %s port %s: %s\n",
			host, port, gai_strerror(r));
		return -EINVAL;
	}
	memcpy(ret_sa, ai->ai_addr, ai->ai_addrlen);
	*ret_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int tcp_connect(const struct sockaddr_storage *sa, socklen_t len, int timeout_ms)
{
	struct pollfd pfd;
	socklen_t errlen = sizeof(int);
	int fd, err = 0, r;

	fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("netprobe: socket");
		return EXIT_SETUP;
	}
	r = connect(fd, (const struct sockaddr *)sa, len);
	if (r < 0 && errno != EINPROGRESS) {
		fprintf(stderr, "netprobe: connect: %s\n", strerror(errno));
		close(fd);
		return EXIT_OP_FAILED;
	}
	if (r < 0) {
		pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
		r = poll(&pfd, 1, timeout_ms);
		if (r == 0) {
			fprintf(stderr, "netprobe: connect: timed out after %d ms\n", timeout_ms);
			close(fd);
			return EXIT_OP_FAILED;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0)
			err = errno;
		if (err) {
			fprintf(stderr, "netprobe: connect: %s\n", strerror(err));
			close(fd);
			return EXIT_OP_FAILED;
		}
	}
	close(fd);
	return 0;
}

static int udp_send(const struct sockaddr_storage *sa, socklen_t len, const char *payload)
{
	int fd;
	ssize_t n;

	fd = socket(sa->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("netprobe: socket");
		return EXIT_SETUP;
	}
	n = sendto(fd, payload, strlen(payload), 0, (const struct sockaddr *)sa, len);
	if (n < 0) {
		fprintf(stderr, "netprobe: sendto: %s\n", strerror(errno));
		close(fd);
		return EXIT_OP_FAILED;
	}
	close(fd);
	return 0;
}

static int bound_socket(const struct sockaddr_storage *sa, socklen_t len, int type,
			const char *ready_file)
{
	int fd, one = 1;

	fd = socket(sa->ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("netprobe: socket");
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)sa, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0)) {
		perror("netprobe: bind/listen");
		close(fd);
		return -1;
	}
	int rf = open(ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (rf < 0) {
		perror("netprobe: ready file");
		close(fd);
		return -1;
	}
	close(rf);
	return fd;
}

/* Receive until the deadline; one output line per datagram or connection. */
static int serve(const struct sockaddr_storage *sa, socklen_t len, int type,
		 int timeout_ms, const char *ready_file)
{
	long deadline = now_ms() + timeout_ms;
	char buf[512];
	int fd;

	fd = bound_socket(sa, len, type, ready_file);
	if (fd < 0)
		return EXIT_SETUP;
	for (;;) {
		long left = deadline - now_ms();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (left <= 0)
			break;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		if (type == SOCK_DGRAM) {
			ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

			if (n < 0)
				continue;
			buf[n] = '\0';
			printf("datagram %s\n", buf);
		} else {
			int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

			if (c < 0)
				continue;
			printf("connection\n");
			close(c);
		}
		fflush(stdout);
	}
	close(fd);
	return 0;
}

static int usage(void)
{
	fputs("usage: netprobe [--cgroup DIR] tcp-connect ADDR PORT [TIMEOUT_MS]\n"
	      "       netprobe [--cgroup DIR] udp-send ADDR PORT PAYLOAD\n"
	      "       netprobe [--cgroup DIR] udp-recv ADDR PORT TIMEOUT_MS READY_FILE\n"
	      "       netprobe [--cgroup DIR] tcp-listen ADDR PORT TIMEOUT_MS READY_FILE\n",
	      stderr);
	return EXIT_SETUP;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage sa;
	socklen_t len;
	const char *verb;
	int r;

	argv++, argc--;
	if (argc >= 2 && strcmp(argv[0], "--cgroup") == 0) {
		r = cgroup_join(argv[1]);
		if (r < 0) {
			fprintf(stderr, "netprobe: cannot join cgroup %s: %s\n", argv[1], strerror(-r));
			return EXIT_SETUP;
		}
		argv += 2, argc -= 2;
	}
	if (argc < 3)
		return usage();
	verb = argv[0];
	if (strcmp(verb, "tcp-connect") == 0 && argc <= 4) {
		if (parse_addr(argv[1], argv[2], SOCK_STREAM, &sa, &len) < 0)
			return EXIT_SETUP;
		return tcp_connect(&sa, len, argc == 4 ? atoi(argv[3]) : 2000);
	}
	if (strcmp(verb, "udp-send") == 0 && argc == 4) {
		if (parse_addr(argv[1], argv[2], SOCK_DGRAM, &sa, &len) < 0)
			return EXIT_SETUP;
		return udp_send(&sa, len, argv[3]);
	}
	if ((strcmp(verb, "udp-recv") == 0 || strcmp(verb, "tcp-listen") == 0) && argc == 5) {
		int type = verb[0] == 'u' ? SOCK_DGRAM : SOCK_STREAM;

		if (parse_addr(argv[1], argv[2], type, &sa, &len) < 0)
			return EXIT_SETUP;
		return serve(&sa, len, type, atoi(argv[3]), argv[4]);
	}
	return usage();
}
