// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fixture.h"
#include "recorder.skel.h"
#include "report.h"

/* The recorder map's value (struct record in recorder.bpf.c). */
struct record {
	uint32_t count;
	uint32_t tags[FIXTURE_MAX_RUN];
};

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* The verifier log of a failed load is what a person needs. */
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int open_receiver(void)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(FIXTURE_TEST_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd, r;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static int root_has_no_egress_progs(void)
{
	struct cgbpf_query q;
	int fd, r;

	fd = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = cgbpf_prog_query_count(fd, BPF_CGROUP_INET_EGRESS, BPF_F_QUERY_EFFECTIVE, &q);
	close(fd);
	if (r < 0)
		return r;
	return q.count ? -EEXIST : 0;
}

int fixture_init(struct fixture *f, bool patched)
{
	int r;

	memset(f, 0, sizeof(*f));
	f->patched = patched;
	f->record_fd = -1;
	f->receiver_fd = -1;
	libbpf_set_print(quiet_libbpf);

	/* Anchor tests use this number as "a closed fd". */
	close(FIXTURE_CLOSED_FD);

	snprintf(f->base, sizeof(f->base), "/sys/fs/cgroup/cgf-ktest-%d", (int)getpid());
	if (mkdir(f->base, 0755) < 0) {
		r = -errno;
		report_fail("set-up: mkdir %s: %s", f->base, strerror(-r));
		return r;
	}
	/* The model's top is a test cgroup: nothing above may hold egress progs. */
	r = root_has_no_egress_progs();
	if (r < 0) {
		report_fail("set-up: /sys/fs/cgroup must have no effective egress programs: %s",
			    r == -EEXIST ? "it has some" : strerror(-r));
		return r;
	}
	f->receiver_fd = open_receiver();
	if (f->receiver_fd < 0) {
		r = f->receiver_fd;
		report_fail("set-up: UDP receiver on 127.0.0.1:%d: %s", FIXTURE_TEST_PORT, strerror(-r));
		return r;
	}
	return 0;
}

void fixture_fini(struct fixture *f)
{
	for (int i = 0; i < f->nprogs; i++)
		cgf_recorder__destroy(f->progs[i].skel);
	f->nprogs = 0;
	if (f->record_fd >= 0)
		close(f->record_fd);
	if (f->receiver_fd >= 0)
		close(f->receiver_fd);
	f->record_fd = f->receiver_fd = -1;
	if (f->base[0]) {
		int r = fixture_rmtree(f->base);

		if (r < 0)
			report_note("could not remove %s: %s", f->base, strerror(-r));
	}
}

uint32_t fixture_prog_id(int fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return 0;
	return info.id;
}

uint32_t fixture_link_id(int link_fd)
{
	struct bpf_link_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(link_fd, &info, &len) < 0)
		return 0;
	return info.id;
}

/* Opens and loads one more copy of the recorder with tag `tag`. */
static int load_recorder(struct fixture *f, struct prog *p, uint32_t verdict, bool ingress)
{
	struct cgf_recorder *skel;
	int r;

	skel = cgf_recorder__open();
	if (!skel)
		return -errno;
	skel->rodata->tag = p->tag;
	skel->rodata->verdict = verdict;
	skel->rodata->test_port = FIXTURE_TEST_PORT;
	bpf_program__set_autoload(skel->progs.cgf_rec_ingress, ingress);
	/* All copies append to the same record. */
	if (f->record_fd >= 0) {
		r = bpf_map__reuse_fd(skel->maps.cgf_record, f->record_fd);
		if (r < 0)
			goto fail;
	}
	r = cgf_recorder__load(skel);
	if (r < 0)
		goto fail;
	if (f->record_fd < 0) {
		f->record_fd = fcntl(bpf_map__fd(skel->maps.cgf_record), F_DUPFD_CLOEXEC, 3);
		if (f->record_fd < 0) {
			r = -errno;
			goto fail;
		}
	}
	p->skel = skel;
	p->fd = bpf_program__fd(skel->progs.cgf_rec_egress);
	p->ingress_fd = ingress ? bpf_program__fd(skel->progs.cgf_rec_ingress) : -1;
	p->id = fixture_prog_id(p->fd);
	return 0;
fail:
	cgf_recorder__destroy(skel);
	return r;
}

struct prog *fixture_prog_ex(struct fixture *f, const char *name, uint32_t verdict, bool ingress)
{
	struct prog *p;
	int r;

	for (int i = 0; i < f->nprogs; i++)
		if (strcmp(f->progs[i].name, name) == 0)
			return &f->progs[i];
	if (f->nprogs >= FIXTURE_MAX_PROGS) {
		report_fail("set-up: more than %d programs", FIXTURE_MAX_PROGS);
		return NULL;
	}
	p = &f->progs[f->nprogs];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->tag = (uint32_t)f->nprogs + 1;	/* 0 is "nothing recorded" */
	r = load_recorder(f, p, verdict, ingress);
	if (r < 0) {
		report_fail("set-up: load recorder '%s': %s", name, strerror(-r));
		return NULL;
	}
	f->nprogs++;
	return p;
}

struct prog *fixture_prog(struct fixture *f, const char *name)
{
	return fixture_prog_ex(f, name, 1, false);
}

int fixture_prog_fd(struct fixture *f, const char *name)
{
	struct prog *p = fixture_prog(f, name);

	return p ? p->fd : -1;
}

void fixture_prog_unload(struct fixture *f, const char *name)
{
	for (int i = 0; i < f->nprogs; i++) {
		struct prog *p = &f->progs[i];

		if (strcmp(p->name, name) != 0 || !p->skel)
			continue;
		cgf_recorder__destroy(p->skel);
		p->skel = NULL;
		p->fd = p->ingress_fd = -1;
	}
}

const char *fixture_name_of_id(const struct fixture *f, uint32_t id, char *buf, size_t size)
{
	for (int i = 0; i < f->nprogs; i++)
		if (f->progs[i].id == id)
			return f->progs[i].name;
	snprintf(buf, size, "id:%u", id);
	return buf;
}

const char *fixture_name_of_tag(const struct fixture *f, uint32_t tag, char *buf, size_t size)
{
	if (tag >= 1 && tag <= (uint32_t)f->nprogs)
		return f->progs[tag - 1].name;
	snprintf(buf, size, "tag:%u", tag);
	return buf;
}

void fixture_names_of_ids(const struct fixture *f, const uint32_t *ids, uint32_t n, char *buf, size_t size)
{
	size_t off = 0;
	char tmp[32];

	buf[0] = '\0';
	for (uint32_t i = 0; i < n && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? "," : "",
					fixture_name_of_id(f, ids[i], tmp, sizeof(tmp)));
}

void fixture_names_of_tags(const struct fixture *f, const uint32_t *tags, int n, char *buf, size_t size)
{
	size_t off = 0;
	char tmp[32];

	buf[0] = '\0';
	for (int i = 0; i < n && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? "," : "",
					fixture_name_of_tag(f, tags[i], tmp, sizeof(tmp)));
}

static int reset_record(struct fixture *f)
{
	static const struct record zero;
	uint32_t key = 0;

	if (f->record_fd < 0)
		return 0;	/* nothing loaded yet, so nothing can record */
	return bpf_map_update_elem(f->record_fd, &key, &zero, BPF_ANY) < 0 ? -errno : 0;
}

static int read_record(struct fixture *f, struct traffic *ret)
{
	struct record rec;
	uint32_t key = 0;

	ret->n = 0;
	if (f->record_fd < 0)
		return 0;
	if (bpf_map_lookup_elem(f->record_fd, &key, &rec) < 0)
		return -errno;
	ret->n = (int)(rec.count < FIXTURE_MAX_RUN ? rec.count : FIXTURE_MAX_RUN);
	memcpy(ret->tags, rec.tags, (size_t)ret->n * sizeof(rec.tags[0]));
	return rec.count > FIXTURE_MAX_RUN ? -E2BIG : 0;
}

static void drain_receiver(struct fixture *f)
{
	char buf[64];

	while (recv(f->receiver_fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
}

/* In the child: join the cgroup, send one datagram; the errno to the pipe. */
static void __attribute__((noreturn)) send_from(const char *path, int result_fd)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(FIXTURE_TEST_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	char procs[PATH_MAX + 16];
	int fd, err = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1)
		_exit(2);
	close(fd);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		_exit(2);
	if (sendto(fd, "cgf", 3, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		err = errno;
	if (write(result_fd, &err, sizeof(err)) != sizeof(err))
		_exit(2);
	_exit(0);
}

int fixture_traffic(struct fixture *f, const char *path, struct traffic *ret)
{
	struct pollfd pfd = { .fd = f->receiver_fd, .events = POLLIN };
	int pipefd[2], status, err = 0, r;
	pid_t pid;
	char buf[16];

	memset(ret, 0, sizeof(*ret));
	r = reset_record(f);
	if (r < 0)
		return r;
	drain_receiver(f);
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return r;
	}
	if (pid == 0)
		send_from(path, pipefd[1]);
	close(pipefd[1]);
	if (read(pipefd[0], &err, sizeof(err)) != sizeof(err))
		err = -1;
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || err < 0)
		return -ECHILD;
	ret->send_err = -err;
	/* Loopback delivers within sendto; the wait only covers a slow guest. */
	if (poll(&pfd, 1, err ? 0 : 1000) > 0)
		ret->delivered = recv(f->receiver_fd, buf, sizeof(buf), MSG_DONTWAIT) == 3;
	return read_record(f, ret);
}

int fixture_mkcg(const struct fixture *f, const char *rel, char *ret_path, size_t size)
{
	int n = snprintf(ret_path, size, "%s/%s", f->base, rel);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	if (mkdir(ret_path, 0755) < 0)
		return -errno;
	return 0;
}

static int rmdir_retrying(const char *path)
{
	/* A child that just exited may keep its cgroup busy for a moment. */
	for (int i = 0; i < 200; i++) {
		if (rmdir(path) == 0)
			return 0;
		if (errno != EBUSY)
			return -errno;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return -EBUSY;
}

int fixture_rmtree(const char *path)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char sub[PATH_MAX];
		int s;

		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= (int)sizeof(sub))
			continue;
		s = fixture_rmtree(sub);
		if (s < 0 && r == 0)
			r = s;
	}
	closedir(d);
	if (r < 0)
		return r;
	return rmdir_retrying(path);
}

int fixture_open_cg(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}
