// SPDX-License-Identifier: GPL-2.0-only
/*
 * filtertool: the guest-side loader of the filters' VM test and benchmark.
 * It loads a built-in filter object with libbpf and fills its maps from a
 * policy read by the project's own parser and validator, through
 * cgf_filter_maps_sync(), the encoder the daemon uses.
 *
 *   filtertool load OBJ PINDIR
 *       load OBJ, pin its programs (PINDIR/egress, PINDIR/ingress) and its
 *       maps (PINDIR/map_NAME)
 *   filtertool sync PINDIR POLICY FILTER [--host CGROUP]...
 *                   [--tenant CGROUP=F1,F2,...]... [--fail-closed]
 *       make the maps say FILTER of POLICY (a file or a configuration
 *       directory), with tenant hosts and children; prints
 *       "updates U deletes D barriers B"
 *   filtertool attach|detach PINDIR egress|ingress CGROUP
 *       BPF_PROG_ATTACH (BPF_F_ALLOW_MULTI) / BPF_PROG_DETACH
 *   filtertool counters PINDIR CGROUP
 *       "pass_packets N pass_bytes N drop_packets N drop_bytes N" for the
 *       sockets of CGROUP itself (zeros when nothing was counted)
 *   filtertool counters-all PINDIR
 *       one line "CGROUP_ID pass_packets pass_bytes drop_packets drop_bytes"
 *       per counted cgroup (cgf_counters_foreach())
 *   filtertool cgroup-id CGROUP
 *   filtertool prog-id PINDIR egress|ingress
 *
 * CGROUP is a cgroup2 directory.  Exit status: 0 done, 1 the operation
 * failed, 2 usage or set-up error; the reason on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "filter-maps-sync.h"
#include "policy-load.h"
#include "policy-validate.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static int cgroup_id_level(const char *path, uint64_t *ret_id, unsigned *ret_level) {
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	char real[PATH_MAX];
	unsigned level = 0;
	int mount_id;

	if (!realpath(path, real))
		return -errno;
	if (strncmp(real, CGROUP_ROOT, strlen(CGROUP_ROOT)) != 0)
		return -EINVAL;
	for (const char *s = real + strlen(CGROUP_ROOT); *s; s++)
		if (*s == '/' && s[1])
			level++;
	/* The kernfs file handle of a cgroup2 directory is its 64-bit id,
	 * what bpf_skb_cgroup_id() returns. */
	if (name_to_handle_at(AT_FDCWD, real, &h.fh, &mount_id, 0) < 0)
		return -errno;
	*ret_id = h.id;
	*ret_level = level;
	return 0;
}

static int cmd_load(const char *obj_path, const char *pindir) {
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *map;
	char path[PATH_MAX];
	int r;

	obj = bpf_object__open_file(obj_path, NULL);
	if (!obj) {
		fprintf(stderr, "filtertool: open %s: %s\n", obj_path, strerror(errno));
		return 2;
	}
	r = bpf_object__load(obj);
	if (r < 0) {
		fprintf(stderr, "filtertool: load %s: %s\n", obj_path, strerror(-r));
		bpf_object__close(obj);
		return 1;
	}
	if (mkdir(pindir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "filtertool: mkdir %s: %m\n", pindir);
		bpf_object__close(obj);
		return 2;
	}
	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog);
		const char *dir = strcmp(sec, "cgroup_skb/egress") == 0 ? "egress" :
				  strcmp(sec, "cgroup_skb/ingress") == 0 ? "ingress" : NULL;

		if (!dir) {
			fprintf(stderr, "filtertool: %s: unexpected section %s\n", obj_path, sec);
			bpf_object__close(obj);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/%s", pindir, dir);
		r = bpf_program__pin(prog, path);
		if (r < 0) {
			fprintf(stderr, "filtertool: pin %s: %s\n", path, strerror(-r));
			bpf_object__close(obj);
			return 1;
		}
	}
	bpf_object__for_each_map(map, obj) {
		snprintf(path, sizeof(path), "%s/map_%s", pindir, bpf_map__name(map));
		r = bpf_map__pin(map, path);
		if (r < 0) {
			fprintf(stderr, "filtertool: pin %s: %s\n", path, strerror(-r));
			bpf_object__close(obj);
			return 1;
		}
	}
	bpf_object__close(obj);
	return 0;
}

struct pinned_maps {
	const char *pindir;
	int fds[16];
	size_t n;
};

static int pinned_map_fd(const char *name, void *userdata) {
	struct pinned_maps *m = userdata;
	char path[PATH_MAX];
	int fd;

	if (m->n >= sizeof(m->fds) / sizeof(m->fds[0]))
		return -EMFILE;
	snprintf(path, sizeof(path), "%s/map_%s", m->pindir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	m->fds[m->n++] = fd;
	return fd;
}

#define MAX_TENANTS 64

static int cmd_sync(int argc, char **argv) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = cgf_policy_new();
	struct cgf_diags diags = CGF_DIAGS_INIT;
	const struct cgf_features features = CGF_FEATURES_PATCHED;
	struct cgf_tenant_host hosts[MAX_TENANTS];
	struct cgf_tenant_binding bindings[MAX_TENANTS];
	const struct cgf_filter *lists[MAX_TENANTS][CGF_TENANT_RULESETS_MAX + 1];
	struct cgf_filter_maps_want want = {};
	struct cgf_filter_maps_stats stats = {};
	struct pinned_maps maps = { .pindir = argv[0] };
	int r;

	if (!p)
		return 2;
	cgf_policy_load_path(p, argv[1], CGF_TRUST_TYPE, &diags);
	if (cgf_policy_validate(p, &features, &diags) < 0 || diags.n_errors > 0) {
		cgf_diags_render(&diags, stderr, 0);
		cgf_diags_done(&diags);
		return 2;
	}
	cgf_diags_done(&diags);
	want.filter = cgf_policy_find_filter(p, argv[2]);
	if (!want.filter) {
		fprintf(stderr, "filtertool: no filter %s in %s\n", argv[2], argv[1]);
		return 2;
	}
	want.hosts = hosts;
	want.bindings = bindings;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--fail-closed") == 0) {
			want.fail_closed_unknown_children = true;
		} else if (strcmp(argv[i], "--host") == 0 && i + 1 < argc && want.n_hosts < MAX_TENANTS) {
			struct cgf_tenant_host *h = &hosts[want.n_hosts];

			r = cgroup_id_level(argv[++i], &h->cgroup_id, &h->level);
			if (r < 0) {
				fprintf(stderr, "filtertool: cgroup %s: %s\n", argv[i], strerror(-r));
				return 2;
			}
			want.n_hosts++;
		} else if (strcmp(argv[i], "--tenant") == 0 && i + 1 < argc && want.n_bindings < MAX_TENANTS) {
			struct cgf_tenant_binding *b = &bindings[want.n_bindings];
			const struct cgf_filter **list = lists[want.n_bindings];
			char *spec = argv[++i], *eq = strchr(spec, '='), *name, *save = NULL;

			if (!eq) {
				fprintf(stderr, "filtertool: --tenant CGROUP=FILTER,...: %s\n", spec);
				return 2;
			}
			*eq = '\0';
			r = cgroup_id_level(spec, &b->cgroup_id, &b->level);
			if (r < 0) {
				fprintf(stderr, "filtertool: cgroup %s: %s\n", spec, strerror(-r));
				return 2;
			}
			b->n_filters = 0;
			for (name = strtok_r(eq + 1, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
				if (b->n_filters > CGF_TENANT_RULESETS_MAX) {
					fprintf(stderr, "filtertool: too many tenant filters\n");
					return 2;
				}
				list[b->n_filters] = cgf_policy_find_filter(p, name);
				if (!list[b->n_filters]) {
					fprintf(stderr, "filtertool: no filter %s\n", name);
					return 2;
				}
				b->n_filters++;
			}
			b->filters = list;
			want.n_bindings++;
		} else {
			fprintf(stderr, "filtertool: unknown sync option %s\n", argv[i]);
			return 2;
		}
	}
	r = cgf_filter_maps_sync_want(&want, pinned_map_fd, &maps, &stats);
	for (size_t i = 0; i < maps.n; i++)
		close(maps.fds[i]);
	if (r < 0) {
		fprintf(stderr, "filtertool: sync %s: %s\n", argv[2], strerror(-r));
		return 1;
	}
	printf("updates %u deletes %u barriers %u\n", stats.updates, stats.deletes, stats.barriers);
	return 0;
}

static int open_prog(const char *pindir, const char *dir, enum bpf_attach_type *ret_type) {
	char path[PATH_MAX];
	int fd;

	if (strcmp(dir, "egress") == 0)
		*ret_type = BPF_CGROUP_INET_EGRESS;
	else if (strcmp(dir, "ingress") == 0)
		*ret_type = BPF_CGROUP_INET_INGRESS;
	else
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", pindir, dir);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

static int cmd_attach(bool attach, const char *pindir, const char *dir, const char *cgroup) {
	_cleanup_close_ int prog = -EBADF, cg = -EBADF;
	enum bpf_attach_type type;
	int r;

	prog = open_prog(pindir, dir, &type);
	if (prog < 0) {
		fprintf(stderr, "filtertool: program %s/%s: %s\n", pindir, dir, strerror(-prog));
		return 2;
	}
	cg = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0) {
		fprintf(stderr, "filtertool: cgroup %s: %m\n", cgroup);
		return 2;
	}
	r = attach ? bpf_prog_attach(prog, cg, type, BPF_F_ALLOW_MULTI) : bpf_prog_detach2(prog, cg, type);
	if (r < 0) {
		fprintf(stderr, "filtertool: %s %s: %s\n", attach ? "attach to" : "detach from", cgroup, strerror(errno));
		return 1;
	}
	return 0;
}

static int cmd_counters(const char *pindir, const char *cgroup) {
	_cleanup_close_ int fd = -EBADF;
	struct cgf_counters c = {};
	char path[PATH_MAX];
	uint64_t id;
	unsigned level;
	int r;

	r = cgroup_id_level(cgroup, &id, &level);
	if (r < 0) {
		fprintf(stderr, "filtertool: cgroup %s: %s\n", cgroup, strerror(-r));
		return 2;
	}
	snprintf(path, sizeof(path), "%s/map_%s", pindir, CGF_COUNTERS_MAP);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		fprintf(stderr, "filtertool: %s: %m\n", path);
		return 2;
	}
	r = cgf_counters_read(fd, id, &c);
	if (r < 0 && r != -ENOENT) {
		fprintf(stderr, "filtertool: counters: %s\n", strerror(-r));
		return 1;
	}
	printf("pass_packets %llu pass_bytes %llu drop_packets %llu drop_bytes %llu\n",
	       (unsigned long long) c.pass_packets, (unsigned long long) c.pass_bytes,
	       (unsigned long long) c.drop_packets, (unsigned long long) c.drop_bytes);
	return 0;
}

static int print_counters(uint64_t id, const struct cgf_counters *c, void *userdata) {
	(void) userdata;
	printf("%llu %llu %llu %llu %llu\n", (unsigned long long) id, (unsigned long long) c->pass_packets,
	       (unsigned long long) c->pass_bytes, (unsigned long long) c->drop_packets,
	       (unsigned long long) c->drop_bytes);
	return 0;
}

static int cmd_counters_all(const char *pindir) {
	_cleanup_close_ int fd = -EBADF;
	char path[PATH_MAX];
	int r;

	snprintf(path, sizeof(path), "%s/map_%s", pindir, CGF_COUNTERS_MAP);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		fprintf(stderr, "filtertool: %s: %m\n", path);
		return 2;
	}
	r = cgf_counters_foreach(fd, print_counters, NULL);
	if (r < 0) {
		fprintf(stderr, "filtertool: counters: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}

static int cmd_cgroup_id(const char *cgroup) {
	uint64_t id;
	unsigned level;
	int r;

	r = cgroup_id_level(cgroup, &id, &level);
	if (r < 0) {
		fprintf(stderr, "filtertool: cgroup %s: %s\n", cgroup, strerror(-r));
		return 2;
	}
	printf("%llu\n", (unsigned long long) id);
	return 0;
}

static int cmd_prog_id(const char *pindir, const char *dir) {
	_cleanup_close_ int fd = -EBADF;
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	enum bpf_attach_type type;

	fd = open_prog(pindir, dir, &type);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0) {
		fprintf(stderr, "filtertool: program %s/%s: %m\n", pindir, dir);
		return 2;
	}
	printf("%u\n", info.id);
	return 0;
}

static int usage(void) {
	fputs("usage: filtertool load OBJ PINDIR\n"
	      "       filtertool sync PINDIR POLICY FILTER [--host CG]... [--tenant CG=F,...]... [--fail-closed]\n"
	      "       filtertool attach|detach PINDIR egress|ingress CGROUP\n"
	      "       filtertool counters PINDIR CGROUP\n"
	      "       filtertool counters-all PINDIR\n"
	      "       filtertool cgroup-id CGROUP\n"
	      "       filtertool prog-id PINDIR egress|ingress\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv) {
	if (argc < 2)
		return usage();
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	if (strcmp(argv[1], "load") == 0 && argc == 4)
		return cmd_load(argv[2], argv[3]);
	if (strcmp(argv[1], "sync") == 0 && argc >= 5)
		return cmd_sync(argc - 2, argv + 2);
	if ((strcmp(argv[1], "attach") == 0 || strcmp(argv[1], "detach") == 0) && argc == 5)
		return cmd_attach(argv[1][0] == 'a', argv[2], argv[3], argv[4]);
	if (strcmp(argv[1], "counters") == 0 && argc == 4)
		return cmd_counters(argv[2], argv[3]);
	if (strcmp(argv[1], "counters-all") == 0 && argc == 3)
		return cmd_counters_all(argv[2]);
	if (strcmp(argv[1], "cgroup-id") == 0 && argc == 3)
		return cmd_cgroup_id(argv[2]);
	if (strcmp(argv[1], "prog-id") == 0 && argc == 4)
		return cmd_prog_id(argv[2], argv[3]);
	return usage();
}
