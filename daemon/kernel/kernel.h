/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The kernel edge: the part of cgfilterd that reads and changes the
 * kernel's cgroup-BPF lists.  Its bpf() calls are in kernel.c (probe,
 * query, attach and detach through lib/cgbpf-sys.c, which has the fields
 * libbpf 1.1 lacks; names and links through libbpf) and kernel-progs.c
 * (load, pin, adopt, prune counters; libbpf).  The only other bpf()
 * calls are map element reads and writes in filter-maps-sync.c (and a
 * counters map's info, for its value size), on map fds this edge hands
 * out (cgf_kernel_map_fd(): maps-sync.c's rules, kernel-status.c's
 * counters and config); filter-object.c uses libbpf to parse
 * objects only, libbpf-log.c to take its messages.  It reads the lists
 * into an actual state, runs a plan's actions, and keeps our programs
 * pinned under the pin root (/sys/fs/bpf/cgfilterd):
 *
 *   <pin root>/<filter>@<identity>/prog-<n>      an instance of the program
 *   <pin root>/<filter>@<identity>/prog-pre-<n>  ... attached with BPF_F_PREORDER
 *   <pin root>/<filter>@<identity>/map-<name>    the object's maps, shared
 *                                                by its instances
 *
 * Ours are exactly the programs pinned there: the pins say which filter
 * and identity a program in a kernel list belongs to, survive restarts
 * and crashes, and let a new daemon adopt what an old one attached.
 * Everything else is foreign: read and reported, never detached.
 *
 * The kernel edge does not know why it is asked to attach; the planner
 * does not know that a kernel exists.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup-tree.h"
#include "filter-object.h"
#include "kernel-features.h"
#include "kernel-progs.h"
#include "list-failures.h"
#include "macro.h"
#include "plan.h"
#include "state.h"

#define CGF_CGROUP_ROOT "/sys/fs/cgroup"
#define CGF_PIN_ROOT "/sys/fs/bpf/cgfilterd"

struct cgf_kernel;

enum cgf_kernel_mode {
	CGF_KERNEL_READ,  /* read and plan only: no lock, nothing created */
	CGF_KERNEL_APPLY, /* the pin root created when missing, locked */
};

/*
 * Opens the cgroup2 mount and the pin root (pin-root.h: root's and 0700,
 * else refused with -EPERM; APPLY creates it when missing and takes its
 * lock, -EBUSY when another process holds it), probes what the kernel
 * offers (once: the answer is cached), and adopts the programs pinned
 * there whose identity record matches (kernel-progs.c); the others are
 * foreign, each with a line in cgf_kernel_warnings().  NULL roots: the
 * defaults above.  On failure *ret_message says what failed and the fix.
 */
int cgf_kernel_open(const char *cgroup_root, const char *pin_root, enum cgf_kernel_mode mode,
		    struct cgf_kernel **ret, char **ret_message);
/* Opened for APPLY (we hold the lock): cgf_kernel_load() refuses otherwise. */
bool cgf_kernel_can_apply(const struct cgf_kernel *k);
/* What the caller should log once: pins not adopted and why, a pin
 * root whose mode was tightened.  The array stays k's. */
size_t cgf_kernel_warnings(const struct cgf_kernel *k, const char *const **ret);
struct cgf_kernel *cgf_kernel_free(struct cgf_kernel *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_kernel *, cgf_kernel_free);

const struct cgf_features *cgf_kernel_features(const struct cgf_kernel *k);
/* The O_DIRECTORY fd of the cgroup2 mount (owned by k). */
int cgf_kernel_cgroup_root_fd(const struct cgf_kernel *k);
const char *cgf_kernel_cgroup_root(const struct cgf_kernel *k);

/*
 * The actual state of every cgroup of the snapshot, both directions,
 * empty lists included (the planner needs their revisions).  A cgroup
 * that vanished since the snapshot is left out.
 */
int cgf_kernel_read(struct cgf_kernel *k, const struct cgf_cgroup_tree *tree, struct cgf_actual **ret);

/* What runs for a packet of the cgroup, in execution order
 * (BPF_F_QUERY_EFFECTIVE); *ret_ids is malloc()ed. */
int cgf_kernel_effective(struct cgf_kernel *k, const char *cgroup, enum cgf_direction direction,
			 uint32_t **ret_ids, size_t *ret_n);

/* The cgroup id (as bpf_skb_cgroup_id() sees it) of a path, or -errno. */
int cgf_kernel_cgroup_id(struct cgf_kernel *k, const char *cgroup, uint64_t *ret);

/* Our instance with that id, or NULL: a foreign program. */
const struct cgf_kernel_prog *cgf_kernel_find_prog(const struct cgf_kernel *k, uint32_t prog_id);

/*
 * Unpins the instances that no list of "actual" (a read of the whole
 * tree) holds, removes their directories once no instance is left, and
 * drops the counters of cgroups no longer in the tree.  Returns the
 * number of instances removed, or -errno.
 */
int cgf_kernel_gc(struct cgf_kernel *k, const struct cgf_actual *actual, const struct cgf_cgroup_tree *tree);

/* The fd of a map of our object for (filter, identity), from its pin, or
 * -errno (-ENOENT: no such map). */
int cgf_kernel_map_fd(struct cgf_kernel *k, const char *filter, const char *identity, const char *map_name);

/*
 * Running a plan made against "actual" takes two calls, with the caller's
 * own step between them: cgf_kernel_load() loads (and pins) every
 * program the plan attaches and chooses the instance of each attach, so
 * that no gap waits for the verifier; the caller then fills the maps of
 * what was loaded (marking in "failures" the lists whose maps could not
 * be written), before cgf_kernel_attach() runs the actions in order,
 * each with its expected_revision when the kernel checks revisions.
 */
struct cgf_kernel_apply;

/*
 * The first step.  -EROFS when the kernel edge was opened read-only;
 * another -errno, with *ret_message, when a program did not load (then
 * nothing is to run).  The plan, objects and actual must outlive *ret.
 */
int cgf_kernel_load(struct cgf_kernel *k, const struct cgf_objects *objects, const struct cgf_plan *plan,
		    const struct cgf_actual *actual, struct cgf_kernel_apply **ret, char **ret_message);

/*
 * The actions.  Each (cgroup, direction) list on its own: the actions of a
 * list already in "failures" are skipped; an action that fails adds its
 * list there (its -errno and a message naming cgroup, direction, filter
 * and program) and the list's remaining actions are skipped, while the
 * other lists go on.  A list whose cgroup went (ENOENT / ENODEV, and the
 * path no longer opens to it) is done, not failed.
 *
 * Returns 0 when every list ran or failed on its own (see "failures");
 * -ESTALE when some list was changed by someone else (it is in
 * "failures" with -ESTALE, every other list ran): read again and plan
 * again; another -errno, with *ret_message, when nothing more could run
 * (out of memory).  *ret_done is the number of actions that took effect,
 * and ret_ran (optional, plan->n_actions entries) says which.
 */
int cgf_kernel_attach(struct cgf_kernel_apply *ap, const struct cgf_actual *actual,
		      struct cgf_list_failures *failures, bool *ret_ran, size_t *ret_done, char **ret_message);

struct cgf_kernel_apply *cgf_kernel_apply_free(struct cgf_kernel_apply *ap);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_kernel_apply *, cgf_kernel_apply_free);

