// SPDX-License-Identifier: GPL-2.0-only
/*
 * pps: UDP datagrams per second over loopback, from a process in a given
 * cgroup, so that the cgroup's egress programs run on each of them.
 *
 *   pps [--cgroup DIR] [--v6] SECONDS PORT
 *
 * One thread sends 32-byte datagrams in batches (sendmmsg) to a socket
 * of its own on 127.0.0.1 (::1) PORT, another drains it (recvmmsg).
 * Prints "sent N received M seconds S sent_pps X received_pps Y".
 * Loopback delivers within the sender's own softirq, so the sent rate
 * includes the receive path; filters slow it down by their cost.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-join.h"

#define BATCH 32
#define PAYLOAD 32

static atomic_bool stop;
static unsigned long long received;

static double now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *drain(void *arg) {
	int fd = *(int *) arg;
	char bufs[BATCH][PAYLOAD + 16];
	struct iovec iov[BATCH];
	struct mmsghdr msgs[BATCH];

	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec) { .iov_base = bufs[i], .iov_len = sizeof(bufs[i]) };
		msgs[i] = (struct mmsghdr) { .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	while (!atomic_load(&stop)) {
		int n = recvmmsg(fd, msgs, BATCH, 0, NULL);

		if (n > 0)
			received += (unsigned) n;
	}
	return NULL;
}

int main(int argc, char **argv) {
	struct sockaddr_storage sa = {};
	socklen_t len;
	struct timeval tv = { .tv_usec = 100000 };
	char payload[PAYLOAD] = "cgfilterd pps bench";
	struct iovec iov = { .iov_base = payload, .iov_len = sizeof(payload) };
	struct mmsghdr msgs[BATCH];
	unsigned long long sent = 0, errors = 0;
	bool v6 = false;
	double seconds, start, end;
	pthread_t thread;
	int rx, tx, rcvbuf = 4 << 20;

	argv++, argc--;
	if (argc >= 2 && strcmp(argv[0], "--cgroup") == 0) {
		int r = cgroup_join(argv[1]);

		if (r < 0) {
			fprintf(stderr, "pps: join %s: %s\n", argv[1], strerror(-r));
			return 2;
		}
		argv += 2, argc -= 2;
	}
	if (argc >= 1 && strcmp(argv[0], "--v6") == 0)
		v6 = true, argv++, argc--;
	if (argc != 2) {
		fputs("usage: pps [--cgroup DIR] [--v6] SECONDS PORT\n", stderr);
		return 2;
	}
	seconds = atof(argv[0]);
	if (v6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *) &sa;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons((uint16_t) atoi(argv[1]));
		s->sin6_addr = in6addr_loopback;
		len = sizeof(*s);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *) &sa;

		s->sin_family = AF_INET;
		s->sin_port = htons((uint16_t) atoi(argv[1]));
		s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*s);
	}
	rx = socket(sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	tx = socket(sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *) &sa, len) < 0 ||
	    connect(tx, (struct sockaddr *) &sa, len) < 0) {
		perror("pps: socket");
		return 2;
	}
	setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < BATCH; i++)
		msgs[i] = (struct mmsghdr) { .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
	if (pthread_create(&thread, NULL, drain, &rx) != 0)
		return 2;

	start = now();
	end = start + seconds;
	while (now() < end) {
		int n = sendmmsg(tx, msgs, BATCH, 0);

		if (n > 0)
			sent += (unsigned) n;
		else
			errors++;
	}
	end = now();
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	printf("sent %llu received %llu errors %llu seconds %.3f sent_pps %.0f received_pps %.0f\n", sent,
	       received, errors, end - start, sent / (end - start), received / (end - start));
	return errors > 0 && sent == 0 ? 1 : 0;
}
