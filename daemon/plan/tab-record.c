/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <string.h>

#include "escape.h"
#include "list-failures.h"
#include "macro.h"
#include "tab-record.h"
#include "util.h"

int cgf_tab_put_text(FILE *f, const char *s, size_t max) {
	_cleanup_free_ char *cut = cgf_truncate_utf8(s ?: "", max), *shown = NULL;

	if (!cut || !(shown = cgf_escape(cut)))
		return -ENOMEM;
	fputs(shown, f);
	return 0;
}

int cgf_tab_fields(char *line, char **ret, size_t n) {
	for (size_t i = 0; i < n; i++) {
		char *tab = strchr(line, '\t');

		ret[i] = line;
		if (i + 1 == n)
			return tab ? -EBADMSG : 0;
		if (!tab)
			return -EBADMSG;
		*tab = '\0';
		line = tab + 1;
	}
	return 0;
}
