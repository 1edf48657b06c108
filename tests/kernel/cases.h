/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

#include "fixture.h"

/* What every case file writes: the attach type, the mode, option literals. */
#define EGRESS BPF_CGROUP_INET_EGRESS
#define MU BPF_F_ALLOW_MULTI
#define AO(...) (&(struct cgbpf_attach_opts){ .sz = sizeof(struct cgbpf_attach_opts), __VA_ARGS__ })
#define DO(...) (&(struct cgbpf_detach_opts){ .sz = sizeof(struct cgbpf_detach_opts), __VA_ARGS__ })
#define LO(...) (&(struct cgbpf_link_opts){ .sz = sizeof(struct cgbpf_link_opts), __VA_ARGS__ })

/* The directed cases (a)-(d); which run depends on f->patched. */
void cases_run(struct fixture *f);

/* The fault sweeps (f), on both kernels: every allocation made to fail. */
void faults_run(struct fixture *f);

/* The races (g), patched kernel: anchors that go away during an attach. */
void races_run(struct fixture *f);

/* The BPF_LSM_CGROUP cases (h): need BTF and the BPF LSM (the debug kernel). */
void lsm_run(struct fixture *f);

/* The randomized model test (e): `ops` operations from `seed`. */
void fuzz_run(struct fixture *f, uint64_t seed, unsigned ops);
