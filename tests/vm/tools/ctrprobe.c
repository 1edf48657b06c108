// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctrprobe: what a process inside a real container tries, for
 * tests/vm/containers.test and demo/container-host.  It runs from the
 * container's own tree (tests/vm/containers.sh copies it to /opt/cgf),
 * so it needs nothing but libc: the container sees no library of the
 * build.
 *
 *   ctrprobe first LABEL TIMEOUT_MS ALLOW DENY...
 *   ctrprobe detach CGROUP_DIR
 *   ctrprobe attach CGROUP_DIR
 *
 * first: the container's first network action, ALLOW and DENY written
 * ADDR:PORT (IPv4).  One UDP socket; at once one datagram to each DENY
 * (the container's very first packets), then one to ALLOW every
 * millisecond until one leaves, then one more to each DENY.  A datagram
 * "leaves" when sendto() succeeds: a drop by a cgroup egress program
 * fails it with EPERM, and until cgfilterd has bound a new container the
 * host's guard drops everything from it.  Payloads are "LABEL deny N"
 * and "LABEL allow N", so that a receiver outside can count who got
 * through.  Prints one line,
 *   label L first_deny E,... bound_ms B allow_tries N after_deny E,...
 * (E the errno name of each DENY datagram, "sent" if one left; B "-" if
 * ALLOW never left) and exits 0 when every DENY datagram was dropped by
 * the filters (EPERM) and ALLOW left within TIMEOUT_MS, 1 otherwise.
 *
 * detach: BPF_PROG_DETACH of CGROUP_DIR's egress and ingress program
 * without naming one, which the kernel accepts for a list in mode none
 * or override (its one program goes): what root in a container would
 * try against a guard it could reach.  Prints each answer; exits 0 if a
 * detach succeeded, 1 if each was refused.
 *
 * attach: loads a cgroup_skb program that passes everything, and
 * attaches it to CGROUP_DIR's egress in each mode (none, override,
 * multi, and as a bpf_link).  Prints each answer; exits 0 if one
 * attached, 1 if each was refused (a refused load included).
 *
 * Exit status 2: usage or set-up error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_REFUSED = 1, EXIT_SETUP = 2 };
enum { MAX_DENY = 8 };

static long now_ms(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The errno's name ("EPERM"), or its number where glibc has none. */
static const char *errno_name(int e) {
	static char buf[16];
	const char *name = strerrorname_np(e);

	if (name)
		return name;
	snprintf(buf, sizeof(buf), "%d", e);
	return buf;
}

static int usage(void) {
	fputs("usage: ctrprobe first LABEL TIMEOUT_MS ALLOW_ADDR:PORT DENY_ADDR:PORT...\n"
	      "       ctrprobe detach CGROUP_DIR\n"
	      "       ctrprobe attach CGROUP_DIR\n",
	      stderr);
	return EXIT_SETUP;
}

static int parse_target(const char *text, struct sockaddr_in *ret) {
	char addr[64];
	const char *colon = strrchr(text, ':');
	char *end;
	unsigned long port;
	size_t n;

	if (!colon || (size_t) (colon - text) >= sizeof(addr))
		return -EINVAL;
	n = (size_t) (colon - text);
	memcpy(addr, text, n);
	addr[n] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port == 0 || port > 65535)
		return -EINVAL;
	*ret = (struct sockaddr_in) { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
	return inet_pton(AF_INET, addr, &ret->sin_addr) == 1 ? 0 : -EINVAL;
}

/* One datagram "LABEL WHAT SEQ" to sa: 0 if it left, else -errno. */
static int send_one(int fd, const struct sockaddr_in *sa, const char *label, const char *what,
		    unsigned long seq) {
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "%s %s %lu", label, what, seq);

	if (n < 0 || (size_t) n >= sizeof(buf))
		return -EINVAL;
	return sendto(fd, buf, (size_t) n, 0, (const struct sockaddr *) sa, sizeof(*sa)) == n ? 0 : -errno;
}

/* One datagram to each DENY; appends each answer to out.  True if the
 * filters dropped every one. */
static bool send_denied(int fd, const struct sockaddr_in *deny, int n_deny, const char *label,
			unsigned long seq, char *out, size_t out_size) {
	bool all_dropped = true;

	for (int i = 0; i < n_deny; i++) {
		int r = send_one(fd, &deny[i], label, "deny", seq);
		size_t len = strlen(out);

		snprintf(out + len, out_size - len, "%s%s", i ? "," : "", r == 0 ? "sent" : errno_name(-r));
		if (r != -EPERM)
			all_dropped = false;
	}
	return all_dropped;
}

static int cmd_first(int argc, char **argv) {
	struct sockaddr_in allow, deny[MAX_DENY];
	char first[128] = "", after[128] = "", bound[24] = "-";
	const char *label = argv[0];
	long start = now_ms(), timeout_ms = atol(argv[1]);
	int n_deny = argc - 3, fd;
	unsigned long tries = 0;
	bool dropped_first, dropped_after, left = false;

	if (n_deny < 1 || n_deny > MAX_DENY || timeout_ms <= 0 || parse_target(argv[2], &allow) < 0)
		return usage();
	for (int i = 0; i < n_deny; i++)
		if (parse_target(argv[3 + i], &deny[i]) < 0)
			return usage();
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "ctrprobe: socket: %s\n", strerror(errno));
		return EXIT_SETUP;
	}
	dropped_first = send_denied(fd, deny, n_deny, label, 0, first, sizeof(first));
	while (now_ms() - start < timeout_ms) {
		tries++;
		if (send_one(fd, &allow, label, "allow", tries) == 0) {
			left = true;
			snprintf(bound, sizeof(bound), "%ld", now_ms() - start);
			break;
		}
		usleep(1000);
	}
	dropped_after = send_denied(fd, deny, n_deny, label, 1, after, sizeof(after));
	close(fd);
	printf("label %s first_deny %s bound_ms %s allow_tries %lu after_deny %s\n", label, first, bound,
	       tries, after);
	return dropped_first && dropped_after && left ? 0 : EXIT_REFUSED;
}

static int sys_bpf(enum bpf_cmd cmd, union bpf_attr *attr) {
	long r = syscall(__NR_bpf, cmd, attr, sizeof(*attr));

	return r < 0 ? -errno : (int) r;
}

static int open_cgroup(const char *dir) {
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "ctrprobe: %s: %s\n", dir, strerror(errno));
	return fd;
}

static int cmd_detach(const char *dir) {
	static const struct {
		enum bpf_attach_type type;
		const char *name;
	} hooks[] = { { BPF_CGROUP_INET_EGRESS, "egress" }, { BPF_CGROUP_INET_INGRESS, "ingress" } };
	bool any = false;
	int cg = open_cgroup(dir);

	if (cg < 0)
		return EXIT_SETUP;
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		/* No program fd: the legacy detach of a none or override list. */
		union bpf_attr attr = {
			.target_fd = (__u32) cg,
			.attach_bpf_fd = (__u32) -1,
			.attach_type = hooks[i].type,
		};
		int r = sys_bpf(BPF_PROG_DETACH, &attr);

		printf("%sdetach %s %s", i ? " " : "", hooks[i].name, r < 0 ? errno_name(-r) : "done");
		any = any || r >= 0;
	}
	printf("\n");
	close(cg);
	return any ? 0 : EXIT_REFUSED;
}

/* A cgroup_skb egress program that passes everything: r0 = 1; exit. */
static int load_pass_all(void) {
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr = {
		.prog_type = BPF_PROG_TYPE_CGROUP_SKB,
		.expected_attach_type = BPF_CGROUP_INET_EGRESS,
		.insns = (__u64) (unsigned long) insns,
		.insn_cnt = sizeof(insns) / sizeof(insns[0]),
		.license = (__u64) (unsigned long) "GPL",
	};

	return sys_bpf(BPF_PROG_LOAD, &attr);
}

static int cmd_attach(const char *dir) {
	static const struct {
		__u32 flags;
		const char *name;
	} modes[] = { { 0, "none" }, { BPF_F_ALLOW_OVERRIDE, "override" }, { BPF_F_ALLOW_MULTI, "multi" } };
	bool any = false;
	int cg, prog, r;

	cg = open_cgroup(dir);
	if (cg < 0)
		return EXIT_SETUP;
	prog = load_pass_all();
	if (prog < 0) {
		printf("load %s\n", errno_name(-prog));
		close(cg);
		return EXIT_REFUSED;
	}
	printf("load done");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		union bpf_attr attr = {
			.target_fd = (__u32) cg,
			.attach_bpf_fd = (__u32) prog,
			.attach_type = BPF_CGROUP_INET_EGRESS,
			.attach_flags = modes[i].flags,
		};

		r = sys_bpf(BPF_PROG_ATTACH, &attr);
		printf(" attach-%s %s", modes[i].name, r < 0 ? errno_name(-r) : "done");
		any = any || r >= 0;
	}
	union bpf_attr link = {
		.link_create.prog_fd = (__u32) prog,
		.link_create.target_fd = (__u32) cg,
		.link_create.attach_type = BPF_CGROUP_INET_EGRESS,
	};
	r = sys_bpf(BPF_LINK_CREATE, &link);
	printf(" link %s\n", r < 0 ? errno_name(-r) : "done");
	any = any || r >= 0;
	if (r >= 0)
		close(r);
	close(prog);
	close(cg);
	return any ? 0 : EXIT_REFUSED;
}

int main(int argc, char **argv) {
	if (argc >= 6 && strcmp(argv[1], "first") == 0)
		return cmd_first(argc - 2, argv + 2);
	if (argc == 3 && strcmp(argv[1], "detach") == 0)
		return cmd_detach(argv[2]);
	if (argc == 3 && strcmp(argv[1], "attach") == 0)
		return cmd_attach(argv[2]);
	return usage();
}
