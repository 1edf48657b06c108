/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/* Routes libbpf's messages to our log: warnings as warnings, the rest (its
 * verifier logs and probes) only with CGF_DEBUG.  Here rather than in
 * basic/log.c, so that the pure layers do not depend on libbpf. */
void cgf_log_setup_libbpf(void);
