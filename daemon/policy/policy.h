/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * The policy model: what policy.yaml and its drop-ins say, merged, with
 * the position every value came from.  Plain data; no I/O here.
 *
 * The parser fills it (policy-parse.c), the loader feeds it files in order
 * (policy-load.c), the validator judges it against the kernel's features
 * (policy-validate.c).  A model with parse errors is incomplete: values
 * that failed to parse are left at their defaults and their positions
 * unset, so that the validator can still look at the rest.
 *
 * Arrays are owned by their parent and grown with array_append(); every
 * string is owned by the struct that holds it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "macro.h"
#include "util.h"

#define CGF_POLICY_VERSION 1
#define CGF_FILTER_NAME_MAX 32
#define CGF_PROG_PREFIX "cgf_"
#define CGF_PROG_NAME_MAX 15 /* BPF_OBJ_NAME_LEN - 1: what the kernel keeps */
#define CGF_MAX_PROGS 64     /* BPF_CGROUP_MAX_PROGS: per cgroup and attach type */

enum cgf_filter_type {
	CGF_FILTER_RULES,
	CGF_FILTER_DENY_ALL,
	CGF_FILTER_COUNT_ONLY,
	CGF_FILTER_OBJECT,
	_CGF_FILTER_TYPE_MAX,
};

enum cgf_direction {
	CGF_INGRESS,
	CGF_EGRESS,
	_CGF_DIRECTION_MAX,
};

enum cgf_verdict {
	CGF_ALLOW,
	CGF_DENY,
	_CGF_VERDICT_MAX,
};

enum cgf_protocol {
	CGF_PROTO_ANY, /* no `protocol:` key */
	CGF_PROTO_TCP,
	CGF_PROTO_UDP,
	CGF_PROTO_ICMP,
	CGF_PROTO_ICMPV6,
	_CGF_PROTO_MAX,
};

enum cgf_mode {
	CGF_MODE_NONE,     /* BPF_PROG_ATTACH without flags: descendants may not attach */
	CGF_MODE_OVERRIDE, /* BPF_F_ALLOW_OVERRIDE: a descendant's program replaces ours there */
	CGF_MODE_MULTI,    /* BPF_F_ALLOW_MULTI: descendants add theirs, all run */
	_CGF_MODE_MAX,
};

/* What a `mode: none` attachment may do to the programs other controllers
 * (systemd's IPAddressDeny=, another agent) attach below it: the kernel
 * refuses every attach below a none (EPERM), and systemd then starts the
 * unit without its firewall. */
enum cgf_foreign_below {
	CGF_FOREIGN_BELOW_KEEP,     /* the default: a none that would lock them out is refused (coexist.h) */
	CGF_FOREIGN_BELOW_LOCK_OUT, /* locking them out is meant (a container host's tenants) */
	_CGF_FOREIGN_BELOW_MAX,
};

enum cgf_anchor {
	CGF_ANCHOR_NONE,
	CGF_ANCHOR_BEFORE, /* BPF_F_BEFORE */
	CGF_ANCHOR_AFTER,  /* BPF_F_AFTER */
};

const char *cgf_filter_type_to_string(enum cgf_filter_type t);
int cgf_filter_type_from_string(const char *s);
const char *cgf_direction_to_string(enum cgf_direction d);
int cgf_direction_from_string(const char *s);
const char *cgf_verdict_to_string(enum cgf_verdict v);
int cgf_verdict_from_string(const char *s);
const char *cgf_protocol_to_string(enum cgf_protocol p); /* "any" for CGF_PROTO_ANY */
int cgf_protocol_from_string(const char *s);              /* never CGF_PROTO_ANY */
const char *cgf_mode_to_string(enum cgf_mode m);
int cgf_mode_from_string(const char *s);
const char *cgf_anchor_to_string(enum cgf_anchor a);
const char *cgf_foreign_below_to_string(enum cgf_foreign_below f);
int cgf_foreign_below_from_string(const char *s);

struct cgf_port_range {
	struct cgf_pos pos;
	uint16_t lo, hi; /* 1..65535, lo <= hi */
};

/* One entry of a rules filter's allow: or deny: list. */
struct cgf_rule {
	struct cgf_pos pos;   /* the rule's mapping */
	char *cidr;           /* as written */
	struct cgf_pos cidr_pos;
	int family;           /* AF_INET or AF_INET6; 0 if cidr: did not parse */
	uint8_t addr[16];     /* network order, as written: the validator refuses host bits */
	uint8_t prefixlen;
	enum cgf_protocol protocol;
	struct cgf_pos protocol_pos;
	struct cgf_port_range *ports; /* empty: every port */
	size_t n_ports;
	struct cgf_pos ports_pos;
};

struct cgf_filter {
	char *name;
	struct cgf_pos pos; /* the name, as a key of filters: */
	enum cgf_filter_type type;
	struct cgf_pos type_pos;
	enum cgf_direction direction;
	struct cgf_pos direction_pos;
	/* type rules */
	enum cgf_verdict default_verdict;
	struct cgf_pos default_pos;
	struct cgf_rule *allow;
	size_t n_allow;
	struct cgf_rule *deny;
	size_t n_deny;
	/* enforce: false.  Its verdicts are counted (would-drop), not
	 * applied; false, the zero value, is the default: enforced. */
	bool audit;
	struct cgf_pos enforce_pos;
	/* type object */
	char *object;   /* absolute path of the BPF object file */
	struct cgf_pos object_pos;
	char *program;  /* program (function) name in it */
	struct cgf_pos program_pos;
};

/* An entry of an attachment's filters: list, or a name in a tenant's. */
struct cgf_filter_ref {
	char *filter;
	struct cgf_pos pos;
	enum cgf_anchor anchor;
	char *anchor_filter;      /* with before: / after: */
	struct cgf_pos anchor_pos;
};

/* tenants: child name or glob -> filter names, applied by the attachment's
 * rules filter of the same direction, keyed by the child's cgroup id. */
struct cgf_tenant {
	char *pattern;
	struct cgf_pos pos;
	struct cgf_filter_ref *filters;
	size_t n_filters;
};

struct cgf_attachment {
	struct cgf_pos pos; /* the list item */
	char *cgroup;       /* relative to the cgroup2 mount, "." for the root; may be a glob */
	struct cgf_pos cgroup_pos;
	struct cgf_filter_ref *filters; /* execution order at this cgroup */
	size_t n_filters;
	struct cgf_pos filters_pos;
	enum cgf_mode mode;
	struct cgf_pos mode_pos;  /* unset: the default (multi) */
	bool preorder;
	struct cgf_pos preorder_pos;
	enum cgf_foreign_below foreign_below; /* mode none only */
	struct cgf_pos foreign_below_pos;     /* unset: the default (keep) */
	struct cgf_tenant *tenants;
	size_t n_tenants;
	struct cgf_pos tenants_pos;
};

struct cgf_policy {
	struct cgf_source **sources; /* in the order read: main file, then drop-ins */
	size_t n_sources;
	struct cgf_filter *filters;  /* in the order read; duplicates are kept for the validator */
	size_t n_filters;
	struct cgf_attachment *attachments;
	size_t n_attachments;
};

struct cgf_policy *cgf_policy_new(void);
struct cgf_policy *cgf_policy_free(struct cgf_policy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgf_policy *, cgf_policy_free);

/* Adds a copy of a file's text as the next source.  The policy owns it. */
int cgf_policy_add_source(struct cgf_policy *p, const char *name, const char *text, size_t size,
			  const struct cgf_source **ret);

/* New zeroed elements at the end of the arrays (NULL when out of memory). */
struct cgf_filter *cgf_policy_new_filter(struct cgf_policy *p);
struct cgf_attachment *cgf_policy_new_attachment(struct cgf_policy *p);

/* The first filter of that name, or NULL. */
const struct cgf_filter *cgf_policy_find_filter(const struct cgf_policy *p, const char *name);

void cgf_filter_clear(struct cgf_filter *f);
void cgf_attachment_clear(struct cgf_attachment *a);
void cgf_filter_ref_clear(struct cgf_filter_ref *r);
void cgf_tenant_clear(struct cgf_tenant *t);

/* Parses "address/length" or a bare address (one host: /32 or /128).
 * -EINVAL: not an IPv4 or IPv6 address; -ERANGE: length out of range.
 * Host bits are kept as written. */
int cgf_cidr_parse(const char *s, int *ret_family, uint8_t ret_addr[static 16], uint8_t *ret_prefixlen);
bool cgf_cidr_has_host_bits(int family, const uint8_t addr[static 16], uint8_t prefixlen);
#define CGF_CIDR_STRLEN 50 /* INET6_ADDRSTRLEN + "/128" */
/* "address/length" with the host bits cleared. */
void cgf_cidr_format_network(int family, const uint8_t addr[static 16], uint8_t prefixlen,
			     char ret[static CGF_CIDR_STRLEN]);

/* Is the string a valid filter name, [a-z0-9][a-z0-9-]{0,31}? */
bool cgf_filter_name_is_valid(const char *name);

/*
 * The BPF program name (what bpftool and `cgfilterctl status` show) of a
 * valid filter name: "cgf_" and the name with '-' as '_' when that fits in
 * the kernel's 15 characters, else "cgf_", the first 6 characters and 5 hex
 * digits of a hash of the whole name.  ret gets at most 15 characters + NUL.
 */
void cgf_filter_prog_name(const char *filter_name, char ret[static CGF_PROG_NAME_MAX + 1]);
