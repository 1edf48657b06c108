/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <inttypes.h>

#include "attach-flags.h"
#include "util.h"

uint32_t cgf_mode_to_flags(enum cgf_mode m) {
	switch (m) {
	case CGF_MODE_OVERRIDE:
		return CGF_ATTACH_OVERRIDE;
	case CGF_MODE_MULTI:
		return CGF_ATTACH_MULTI;
	default:
		return 0;
	}
}

const char *cgf_mode_flags_to_string(uint32_t flags) {
	if (flags & CGF_ATTACH_MULTI)
		return "multi";
	if (flags & CGF_ATTACH_OVERRIDE)
		return "override";
	return "none";
}

int cgf_attach_flags_to_string(uint32_t flags, char **ret) {
	static const struct {
		uint32_t flag;
		const char *name;
	} names[] = {
		{ CGF_ATTACH_OVERRIDE, "override" }, { CGF_ATTACH_MULTI, "multi" },
		{ CGF_ATTACH_REPLACE, "replace" },   { CGF_ATTACH_PREORDER, "preorder" },
		{ CGF_ATTACH_BEFORE, "before" },     { CGF_ATTACH_AFTER, "after" },
		{ CGF_ATTACH_ID, "id" },
	};
	char buf[128] = "";
	size_t len = 0;
	uint32_t left = flags;

	if (!(flags & CGF_ATTACH_MODE_MASK))
		len += (size_t) snprintf(buf, sizeof(buf), "none");
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (flags & names[i].flag) {
			len += (size_t) snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? "|" : "", names[i].name);
			left &= ~names[i].flag;
		}
	if (left)
		snprintf(buf + len, sizeof(buf) - len, "%sunknown(0x%" PRIx32 ")", len ? "|" : "", left);
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
}

void cgf_json_field_attach_flags(struct cgf_json *j, const char *key, uint32_t flags) {
	_cleanup_free_ char *names = NULL;
	char *save = NULL;
	int r;

	r = cgf_attach_flags_to_string(flags, &names);
	if (r < 0) {
		cgf_json_set_error(j, r);
		return;
	}
	cgf_json_field_array_begin(j, key);
	for (char *t = strtok_r(names, "|", &save); t; t = strtok_r(NULL, "|", &save))
		if (!streq(t, "none"))
			cgf_json_string(j, t);
	cgf_json_array_end(j);
}
