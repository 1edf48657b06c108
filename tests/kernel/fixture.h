/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every kernel test case stands on: a pool of recorder programs
 * (one object, many tags), test cgroups under /sys/fs/cgroup/cgf-ktest-*,
 * real traffic from inside a cgroup, and readable names for prog ids.
 * Only the guest runs this (it loads and attaches BPF programs).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "cgbpf-sys.h"

#define FIXTURE_MAX_PROGS	256
#define FIXTURE_MAX_RUN		256	/* RECORD_MAX in recorder.bpf.c */
#define FIXTURE_TEST_PORT	47813
/* A file descriptor number the tests keep closed: "a bad fd". */
#define FIXTURE_CLOSED_FD	987
/* An id no prog or link has (ids are allocated from 1 upwards). */
#define FIXTURE_UNKNOWN_ID	0x7ffffff0u

struct cgf_recorder;

struct prog {
	char name[16];
	uint32_t tag;
	int fd;			/* the cgroup_skb/egress program */
	uint32_t id;
	int ingress_fd;		/* the cgroup_skb/ingress one, or -1 */
	struct cgf_recorder *skel;
};

struct fixture {
	bool patched;			/* --kernel patched */
	char base[PATH_MAX];		/* /sys/fs/cgroup/cgf-ktest-<pid> */
	int record_fd;			/* the map all recorder copies share */
	int receiver_fd;		/* UDP socket on 127.0.0.1:FIXTURE_TEST_PORT */
	int nprogs;
	struct prog progs[FIXTURE_MAX_PROGS];
};

/* What one datagram sent from inside a cgroup did. */
struct traffic {
	int n;				/* programs that ran */
	uint32_t tags[FIXTURE_MAX_RUN];
	bool delivered;			/* the receiver got it */
	int send_err;			/* sendto's result in the child, 0 or -errno */
};

int fixture_init(struct fixture *f, bool patched);
void fixture_fini(struct fixture *f);

/*
 * The program named `name`, loaded on first use with its own tag.
 * `verdict` 1 passes, 0 drops; `ingress` also loads the ingress copy.
 * Returns NULL (and reports a failed check) when loading fails.
 */
struct prog *fixture_prog_ex(struct fixture *f, const char *name, uint32_t verdict, bool ingress);
struct prog *fixture_prog(struct fixture *f, const char *name);
/*
 * Closes the program's file descriptors, so that the kernel frees it once
 * nothing else holds it (a leak check); its name and tag stay taken.
 */
void fixture_prog_unload(struct fixture *f, const char *name);

/* "name" of a prog id or tag, "id:N" / "tag:N" for strangers. */
const char *fixture_name_of_id(const struct fixture *f, uint32_t id, char *buf, size_t size);
const char *fixture_name_of_tag(const struct fixture *f, uint32_t tag, char *buf, size_t size);
/* "a,b,c": the names of a query's ids, or of the tags a datagram ran. */
void fixture_names_of_ids(const struct fixture *f, const uint32_t *ids, uint32_t n, char *buf, size_t size);
void fixture_names_of_tags(const struct fixture *f, const uint32_t *tags, int n, char *buf, size_t size);

/* Sends one datagram from a child process inside the cgroup at `path`. */
int fixture_traffic(struct fixture *f, const char *path, struct traffic *ret);

/* mkdir under the base folder; rmdir of a whole tree, children first. */
int fixture_mkcg(const struct fixture *f, const char *rel, char *ret_path, size_t size);
int fixture_rmtree(const char *path);
int fixture_open_cg(const char *path);

/* The id of a link fd, or of a program fd; 0 if the fd is neither. */
uint32_t fixture_link_id(int link_fd);
uint32_t fixture_prog_id(int prog_fd);

/* The egress fd of the program `name` (loaded on first use), or -1. */
int fixture_prog_fd(struct fixture *f, const char *name);
