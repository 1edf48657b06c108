/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * cgroup paths and patterns as the policy writes them: relative to the
 * cgroup2 mount, components separated by '/', "." alone for the root
 * cgroup.  A component may be a glob in fnmatch(3) syntax ('*', '?',
 * '[...]', matched with FNM_PATHNAME | FNM_NOESCAPE, so '*' stays inside
 * one component and a backslash is an ordinary character, as in systemd's
 * "\x2d" escapes); a component "**" matches zero or more components.
 *
 * Besides matching, this file answers two questions about patterns alone,
 * without looking at any cgroup tree, exactly for the pattern language:
 * may two patterns match the same cgroup, and may one match a strict
 * ancestor of what the other matches.  The validator uses them to find
 * conflicts that would appear as soon as such cgroups exist.
 *
 * Pure functions, no I/O; they allocate only temporary memory and answer
 * conservatively ("may") when that fails.
 */

#include <stdbool.h>

/* NULL if the string is a valid `cgroup:` pattern, else why not (a fixed
 * English phrase, for "invalid cgroup 'x': <phrase>"). */
const char *cgf_cgroup_pattern_check(const char *pattern);

/* NULL if the string is a valid tenant key: one component, glob allowed. */
const char *cgf_tenant_pattern_check(const char *pattern);

/* Does the string contain glob characters ('*', '?', '[')? */
bool cgf_pattern_is_glob(const char *pattern);

/* Does a valid pattern match a cgroup path ("." or "" is the root)? */
bool cgf_cgroup_pattern_match(const char *pattern, const char *path);

/* May path, or a cgroup below it, match the pattern, or does path lie
 * below a cgroup that matches it?  Which directories a walk for the
 * pattern's cgroups and their subtrees has to enter ("." always).  As
 * conservative as the rest: a glob no name can match counts as a match. */
bool cgf_cgroup_pattern_may_reach(const char *pattern, const char *path);
/* May some cgroup path match both patterns? */
bool cgf_cgroup_patterns_may_overlap(const char *a, const char *b);

/* May a cgroup that matches "ancestor" lie strictly above one that matches
 * "descendant"? */
bool cgf_cgroup_pattern_may_be_ancestor(const char *ancestor, const char *descendant);

/* The same questions for patterns compiled once, for callers that ask
 * about many pairs (the validator). */
struct cgf_pattern;
int cgf_pattern_compile(const char *pattern, struct cgf_pattern **ret);
struct cgf_pattern *cgf_pattern_free(struct cgf_pattern *p);
bool cgf_pattern_may_overlap(const struct cgf_pattern *a, const struct cgf_pattern *b);
bool cgf_pattern_may_be_ancestor(const struct cgf_pattern *ancestor, const struct cgf_pattern *descendant);

/* May some single component match both component globs? */
bool cgf_component_globs_may_overlap(const char *a, const char *b);
