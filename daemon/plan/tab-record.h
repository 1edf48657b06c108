/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The lines of the daemon's runtime files under /run/cgfilterd
 * (pending, missing-firewalls): tab-separated fields, text fields cut
 * and escaped so that no tab or newline of a tenant's name can split a
 * record.
 */
#include <stddef.h>
#include <stdio.h>

/* Writes s (NULL: empty), cut to max bytes of whole UTF-8 characters,
 * then escaped.  0, or -ENOMEM. */
int cgf_tab_put_text(FILE *f, const char *s, size_t max);

/* Splits line at tabs, in place, into exactly n fields; else -EBADMSG. */
int cgf_tab_fields(char *line, char **ret, size_t n);
