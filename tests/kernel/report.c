// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "cgbpf-uapi.h"
#include "report.h"

static unsigned passed, failed;

static void vline(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	/* The VM streams our output; keep it in order with children's. */
	fflush(stdout);
}

bool report_check(bool cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(cond ? "ok - " : "not ok - ", fmt, ap);
	va_end(ap);
	if (cond)
		passed++;
	else
		failed++;
	return cond;
}

void report_ok(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("ok - ", fmt, ap);
	va_end(ap);
	passed++;
}

void report_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("not ok - ", fmt, ap);
	va_end(ap);
	failed++;
}

void report_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("# ", fmt, ap);
	va_end(ap);
}

void report_detail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("    ", fmt, ap);
	va_end(ap);
}

unsigned report_failed(void)
{
	return failed;
}

int report_finish(void)
{
	printf("%u passed, %u failed\n", passed, failed);
	fflush(stdout);
	return failed == 0 && passed > 0 ? 0 : 1;
}

const char *report_errno(int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ 0, "0" },
		{ -EPERM, "-EPERM" },
		{ -ENOENT, "-ENOENT" },
		{ -EBADF, "-EBADF" },
		{ -E2BIG, "-E2BIG" },
		{ -EINVAL, "-EINVAL" },
		{ -ENOSPC, "-ENOSPC" },
		{ -ESTALE, "-ESTALE" },
		{ -ENOLINK, "-ENOLINK" },
		{ -EBUSY, "-EBUSY" },
		{ -EOPNOTSUPP, "-EOPNOTSUPP" },
		{ -EFAULT, "-EFAULT" },
		{ -ENOMEM, "-ENOMEM" },
	};
	static char buf[4][16];
	static unsigned next;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	/* A few rotating buffers: two unknown values in one printf work. */
	next = (next + 1) % 4;
	snprintf(buf[next], sizeof(buf[next]), "%d", err);
	return buf[next];
}

const char *report_flags_str(uint32_t flags, char *buf, size_t size)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} bits[] = {
		{ BPF_F_ALLOW_OVERRIDE, "OVERRIDE" },
		{ BPF_F_ALLOW_MULTI, "MULTI" },
		{ BPF_F_REPLACE, "REPLACE" },
		{ BPF_F_PREORDER, "PREORDER" },
		{ BPF_F_BEFORE, "BEFORE" },
		{ BPF_F_AFTER, "AFTER" },
		{ BPF_F_ID, "ID" },
		{ BPF_F_LINK, "LINK" },
	};
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (!(flags & bits[i].bit))
			continue;
		off += (size_t)snprintf(buf + off, size > off ? size - off : 0, "%s%s", off ? "|" : "", bits[i].name);
		flags &= ~bits[i].bit;
	}
	if (flags)
		off += (size_t)snprintf(buf + off, size > off ? size - off : 0, "%sunknown(0x%x)", off ? "|" : "", flags);
	if (off == 0)
		snprintf(buf, size, "0");
	return buf;
}
