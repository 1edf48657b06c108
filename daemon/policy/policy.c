/* SPDX-License-Identifier: GPL-2.0-only */
#include <arpa/inet.h>
#include <errno.h>

#include "policy.h"
#include "util.h"

static const char *const filter_type_table[_CGF_FILTER_TYPE_MAX] = {
	[CGF_FILTER_RULES] = "rules",
	[CGF_FILTER_DENY_ALL] = "deny-all",
	[CGF_FILTER_COUNT_ONLY] = "count-only",
	[CGF_FILTER_OBJECT] = "object",
};

static const char *const direction_table[_CGF_DIRECTION_MAX] = {
	[CGF_INGRESS] = "ingress",
	[CGF_EGRESS] = "egress",
};

static const char *const verdict_table[_CGF_VERDICT_MAX] = {
	[CGF_ALLOW] = "allow",
	[CGF_DENY] = "deny",
};

static const char *const protocol_table[_CGF_PROTO_MAX] = {
	[CGF_PROTO_ANY] = "any",
	[CGF_PROTO_TCP] = "tcp",
	[CGF_PROTO_UDP] = "udp",
	[CGF_PROTO_ICMP] = "icmp",
	[CGF_PROTO_ICMPV6] = "icmpv6",
};

static const char *const mode_table[_CGF_MODE_MAX] = {
	[CGF_MODE_NONE] = "none",
	[CGF_MODE_OVERRIDE] = "override",
	[CGF_MODE_MULTI] = "multi",
};

static const char *const foreign_below_table[_CGF_FOREIGN_BELOW_MAX] = {
	[CGF_FOREIGN_BELOW_KEEP] = "keep",
	[CGF_FOREIGN_BELOW_LOCK_OUT] = "lock-out",
};

static const char *table_to_string(const char *const *table, size_t n, unsigned i) {
	return i < n ? table[i] : NULL;
}

static int table_from_string(const char *const *table, size_t n, size_t first, const char *s) {
	for (size_t i = first; s && i < n; i++)
		if (streq(table[i], s))
			return (int) i;
	return -EINVAL;
}

#define DEFINE_STRING_TABLE(name, type, table, first)                               \
	const char *name##_to_string(type v) {                                    \
		return table_to_string(table, ELEMENTSOF(table), v);              \
	}                                                                         \
	int name##_from_string(const char *s) {                                   \
		return table_from_string(table, ELEMENTSOF(table), first, s);     \
	}

DEFINE_STRING_TABLE(cgf_filter_type, enum cgf_filter_type, filter_type_table, 0)
DEFINE_STRING_TABLE(cgf_direction, enum cgf_direction, direction_table, 0)
DEFINE_STRING_TABLE(cgf_verdict, enum cgf_verdict, verdict_table, 0)
DEFINE_STRING_TABLE(cgf_protocol, enum cgf_protocol, protocol_table, CGF_PROTO_TCP)
DEFINE_STRING_TABLE(cgf_mode, enum cgf_mode, mode_table, 0)
DEFINE_STRING_TABLE(cgf_foreign_below, enum cgf_foreign_below, foreign_below_table, 0)

const char *cgf_anchor_to_string(enum cgf_anchor a) {
	switch (a) {
	case CGF_ANCHOR_BEFORE:
		return "before";
	case CGF_ANCHOR_AFTER:
		return "after";
	case CGF_ANCHOR_NONE:
		break;
	}
	return NULL;
}

struct cgf_policy *cgf_policy_new(void) {
	return calloc(1, sizeof(struct cgf_policy));
}

void cgf_filter_ref_clear(struct cgf_filter_ref *r) {
	if (!r)
		return;
	free(r->filter);
	free(r->anchor_filter);
	*r = (struct cgf_filter_ref) {};
}

void cgf_tenant_clear(struct cgf_tenant *t) {
	if (!t)
		return;
	free(t->pattern);
	for (size_t i = 0; i < t->n_filters; i++)
		cgf_filter_ref_clear(&t->filters[i]);
	free(t->filters);
	*t = (struct cgf_tenant) {};
}

static void rules_free(struct cgf_rule *rules, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(rules[i].cidr);
		free(rules[i].ports);
	}
	free(rules);
}

void cgf_filter_clear(struct cgf_filter *f) {
	if (!f)
		return;
	free(f->name);
	rules_free(f->allow, f->n_allow);
	rules_free(f->deny, f->n_deny);
	free(f->object);
	free(f->program);
	*f = (struct cgf_filter) {};
}

void cgf_attachment_clear(struct cgf_attachment *a) {
	if (!a)
		return;
	free(a->cgroup);
	for (size_t i = 0; i < a->n_filters; i++)
		cgf_filter_ref_clear(&a->filters[i]);
	free(a->filters);
	for (size_t i = 0; i < a->n_tenants; i++)
		cgf_tenant_clear(&a->tenants[i]);
	free(a->tenants);
	*a = (struct cgf_attachment) {};
}

struct cgf_policy *cgf_policy_free(struct cgf_policy *p) {
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n_filters; i++)
		cgf_filter_clear(&p->filters[i]);
	free(p->filters);
	for (size_t i = 0; i < p->n_attachments; i++)
		cgf_attachment_clear(&p->attachments[i]);
	free(p->attachments);
	for (size_t i = 0; i < p->n_sources; i++)
		cgf_source_free(p->sources[i]);
	free(p->sources);
	free(p);
	return NULL;
}

int cgf_policy_add_source(struct cgf_policy *p, const char *name, const char *text, size_t size,
			  const struct cgf_source **ret) {
	_cleanup_(cgf_source_freep) struct cgf_source *s = NULL;
	struct cgf_source **slot;

	s = cgf_source_new(name, text, size);
	if (!s)
		return -ENOMEM;
	slot = array_append((void **) &p->sources, p->n_sources, sizeof(*p->sources));
	if (!slot)
		return -ENOMEM;
	s->index = p->n_sources;
	*slot = TAKE_PTR(s);
	p->n_sources++;
	if (ret)
		*ret = *slot;
	return 0;
}

struct cgf_filter *cgf_policy_new_filter(struct cgf_policy *p) {
	struct cgf_filter *f;

	f = array_append((void **) &p->filters, p->n_filters, sizeof(*f));
	if (!f)
		return NULL;
	p->n_filters++;
	return f;
}

struct cgf_attachment *cgf_policy_new_attachment(struct cgf_policy *p) {
	struct cgf_attachment *a;

	a = array_append((void **) &p->attachments, p->n_attachments, sizeof(*a));
	if (!a)
		return NULL;
	a->mode = CGF_MODE_MULTI;
	p->n_attachments++;
	return a;
}

const struct cgf_filter *cgf_policy_find_filter(const struct cgf_policy *p, const char *name) {
	for (size_t i = 0; name && i < p->n_filters; i++)
		if (p->filters[i].name && streq(p->filters[i].name, name))
			return &p->filters[i];
	return NULL;
}

bool cgf_filter_name_is_valid(const char *name) {
	size_t n = strlen(name);

	if (n == 0 || n > CGF_FILTER_NAME_MAX || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '-'))
			return false;
	return true;
}

void cgf_filter_prog_name(const char *filter_name, char ret[static CGF_PROG_NAME_MAX + 1]) {
	const size_t room = CGF_PROG_NAME_MAX - strlen(CGF_PROG_PREFIX);
	size_t n = strlen(filter_name), keep = n;
	uint32_t h = 2166136261u; /* FNV-1a, 32 bit */
	char *p;

	p = stpcpy(ret, CGF_PROG_PREFIX);
	if (n > room)
		keep = room - 5; /* 6 characters of the name, then 5 hex digits */

	/* The kernel accepts [A-Za-z0-9_.] in program names: '-' becomes '_'.
	 * Short names map one to one (filter names have no '_'); a hashed long
	 * name may meet another name's result, which the validator refuses. */
	for (size_t i = 0; i < keep; i++)
		*p++ = filter_name[i] == '-' ? '_' : filter_name[i];
	if (n > room) {
		for (size_t i = 0; i < n; i++) {
			h ^= (unsigned char) filter_name[i];
			h *= 16777619u;
		}
		p += sprintf(p, "%05x", (unsigned) ((h ^ (h >> 20)) & 0xfffff));
	}
	*p = 0;
}

int cgf_cidr_parse(const char *s, int *ret_family, uint8_t ret_addr[static 16], uint8_t *ret_prefixlen) {
	char buf[INET6_ADDRSTRLEN];
	uint8_t addr[16] = {};
	const char *slash;
	unsigned len = 0, max;
	size_t n;
	int family;

	slash = strchr(s, '/');
	n = slash ? (size_t) (slash - s) : strlen(s);
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = 0;

	family = strchr(buf, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, buf, addr) != 1)
		return -EINVAL;
	max = family == AF_INET ? 32 : 128;

	if (!slash)
		len = max;
	else {
		const char *p = slash + 1;

		if (*p == 0 || strlen(p) > 3)
			return -ERANGE;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return -ERANGE;
			len = len * 10 + (*p - '0');
		}
		if (len > max)
			return -ERANGE;
	}

	*ret_family = family;
	memcpy(ret_addr, addr, 16);
	*ret_prefixlen = len;
	return 0;
}

bool cgf_cidr_has_host_bits(int family, const uint8_t addr[static 16], uint8_t prefixlen) {
	unsigned bytes = family == AF_INET ? 4 : 16;

	for (unsigned bit = prefixlen; bit < bytes * 8; bit++)
		if (addr[bit / 8] & (0x80 >> (bit % 8)))
			return true;
	return false;
}

void cgf_cidr_format_network(int family, const uint8_t addr[static 16], uint8_t prefixlen,
			     char ret[static CGF_CIDR_STRLEN]) {
	unsigned bytes = family == AF_INET ? 4 : 16;
	uint8_t net[16] = {};

	memcpy(net, addr, bytes);
	for (unsigned bit = prefixlen; bit < bytes * 8; bit++)
		net[bit / 8] &= ~(0x80 >> (bit % 8));
	if (!inet_ntop(family, net, ret, CGF_CIDR_STRLEN))
		strcpy(ret, "?");
	sprintf(ret + strlen(ret), "/%u", prefixlen);
}
