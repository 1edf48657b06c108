/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

#include "fixture.h"

/* The directed cases (a)-(d); which run depends on f->patched. */
void cases_run(struct fixture *f);

/* The randomized model test (e): `ops` operations from `seed`. */
void fuzz_run(struct fixture *f, uint64_t seed, unsigned ops);
