/* SPDX-License-Identifier: GPL-2.0-only */
#include <errno.h>
#include <inttypes.h>

#include "identity.h"
#include "util.h"

int cgf_filter_identity(const struct cgf_filter *f, void *userdata _unused_, char **ret) {
	const char *parts[] = {
		"cgfilterd-identity-1",
		cgf_filter_type_to_string(f->type),
		cgf_direction_to_string(f->direction),
		f->type == CGF_FILTER_OBJECT && f->object ? f->object : "",
		f->type == CGF_FILTER_OBJECT && f->program ? f->program : "",
	};
	uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a, 64 bit */
	char *s;

	if (!parts[1] || !parts[2])
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(parts); i++)
		for (const char *c = parts[i];; c++) {
			h ^= (unsigned char) *c; /* the NUL too: a separator */
			h *= UINT64_C(1099511628211);
			if (!*c)
				break;
		}
	if (asprintf(&s, "%s:%016llx", parts[1], (unsigned long long) h) < 0)
		return -ENOMEM;
	*ret = s;
	return 0;
}

/* FNV-1a over the bytes: a digest against accidents (a rebuilt file),
 * not against someone who can write our object files anyway. */
static uint64_t digest(const void *bytes, size_t size) {
	const unsigned char *p = bytes;
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < size; i++) {
		h ^= p[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

int cgf_filter_identity_of_bytes(const struct cgf_filter *f, const void *bytes, size_t size, char **ret) {
	_cleanup_free_ char *model = NULL;
	int r;

	r = cgf_filter_identity(f, NULL, &model);
	if (r < 0)
		return r;
	if (asprintf(ret, "%s-%016" PRIx64, model, digest(bytes, size)) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}
