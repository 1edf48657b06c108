/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdarg.h>
#include <stdio.h>

#include <bpf/libbpf.h>

#include "libbpf-log.h"
#include "log.h"

static int libbpf_print(enum libbpf_print_level level, const char *format, va_list ap) {
	int priority = level == LIBBPF_WARN ? LOG_WARNING : LOG_DEBUG;
	_cleanup_free_ char *text = NULL;

	if (!cgf_log_wanted(priority) || vasprintf(&text, format, ap) < 0)
		return 0;
	/* A verifier log is one message of many lines. */
	cgf_log_text(priority, text);
	return 0;
}

void cgf_log_setup_libbpf(void) {
	libbpf_set_print(libbpf_print);
}
