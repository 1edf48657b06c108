/* SPDX-License-Identifier: GPL-2.0-only */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/* The table of RFC 3629, section 4, as ranges of the second byte. */
size_t cgf_utf8_length(const char *s, size_t n) {
	const unsigned char *p = (const unsigned char *) s;
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		len = 2;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
		len = 3;
		if (p[0] == 0xE0)
			lo = 0xA0; /* below: overlong */
		else if (p[0] == 0xED)
			hi = 0x9F; /* above: UTF-16 surrogates */
	} else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
		len = 4;
		if (p[0] == 0xF0)
			lo = 0x90; /* below: overlong */
		else if (p[0] == 0xF4)
			hi = 0x8F; /* above: beyond U+10FFFF */
	} else
		return 0;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return len;
}

/* Is the valid sequence p of len bytes one that is acted on, not shown? */
static bool is_control(const unsigned char *p, size_t len) {
	uint32_t c;

	switch (len) {
	case 1:
		return p[0] < 0x20 || p[0] == 0x7f;
	case 2:
		c = (uint32_t) (p[0] & 0x1f) << 6 | (p[1] & 0x3f);
		return c <= 0x9f; /* C1 */
	case 3:
		c = (uint32_t) (p[0] & 0x0f) << 12 | (uint32_t) (p[1] & 0x3f) << 6 | (p[2] & 0x3f);
		return c == 0x2028 || c == 0x2029 ||      /* line, paragraph separator */
		       (c >= 0x202a && c <= 0x202e) ||    /* bidi embeddings, overrides */
		       (c >= 0x2066 && c <= 0x2069);      /* bidi isolates */
	default:
		return false;
	}
}

size_t cgf_escape_char(const char *s, size_t n, char shown[CGF_ESCAPE_CHAR_MAX], size_t *ret_columns) {
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *) s;
	size_t len = cgf_utf8_length(s, n), out = 0;

	if (len > 0 && !is_control(p, len)) {
		memcpy(shown, s, len);
		shown[len] = 0;
		if (ret_columns)
			*ret_columns = 1;
		return len;
	}
	if (len == 0)
		len = 1; /* not UTF-8: this byte alone, the next one is looked at afresh */
	for (size_t i = 0; i < len; i++) {
		shown[out++] = '\\';
		shown[out++] = 'x';
		shown[out++] = hex[p[i] >> 4];
		shown[out++] = hex[p[i] & 0xf];
	}
	shown[out] = 0;
	if (ret_columns)
		*ret_columns = out;
	return len;
}

char *cgf_escape_mem(const char *s, size_t n) {
	char *e, *q;

	/* At most 4 bytes shown per byte. */
	if (n > (SIZE_MAX - 1) / 4)
		return NULL;
	e = malloc(n * 4 + 1);
	if (!e)
		return NULL;
	q = e;
	for (size_t i = 0; i < n;) {
		char shown[CGF_ESCAPE_CHAR_MAX];
		size_t k;

		i += cgf_escape_char(s + i, n - i, shown, NULL);
		k = strlen(shown);
		memcpy(q, shown, k);
		q += k;
	}
	*q = 0;
	return e;
}

char *cgf_escape(const char *s) {
	return cgf_escape_mem(s, strlen(s));
}

void cgf_escape_write(FILE *f, const char *s, size_t n) {
	size_t run = 0; /* bytes before s[i] that pass unchanged, not written yet */

	if (n == 0)
		return;
	/* Runs of what passes are written at once: one fwrite() per run, not
	 * one per byte, on an unbuffered stderr too. */
	for (size_t i = 0; i < n;) {
		char shown[CGF_ESCAPE_CHAR_MAX];
		size_t len = cgf_escape_char(s + i, n - i, shown, NULL);

		/* Kept: shown is the len bytes themselves (an escape is longer). */
		if (shown[len] == 0) {
			run += len;
			i += len;
			continue;
		}
		fwrite(s + i - run, 1, run, f);
		run = 0;
		fputs(shown, f);
		i += len;
	}
	fwrite(s + n - run, 1, run, f);
}
