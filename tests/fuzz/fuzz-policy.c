/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target: the policy front half as the daemon runs it on a file
 * it did not write: load (parse) -> validate -> render the diagnostics ->
 * expand over a cgroup tree -> plan against an empty kernel -> simulate
 * the plan -> plan again.
 *
 * The input is policy text.  A line "#cgf-fuzz: next file" (a YAML
 * comment) starts another file, as a drop-in does; a first line
 * "#cgf-fuzz: stock" validates for a kernel without the attach series.
 *
 * Besides the sanitizers, it aborts when the pipeline breaks a promise:
 * expand refusing a policy the validator passed, a plan the simulated
 * kernel refuses, or a second plan that still has work to do.
 *
 * Built by tests/fuzz/build, run by tests/fuzz/run.
 */
#include <errno.h>

#include "expand.h"
#include "plan.h"
#include "policy-load.h"
#include "policy-validate.h"

#define NEXT_FILE "#cgf-fuzz: next file\n"
#define STOCK "#cgf-fuzz: stock\n"
#define MAX_FILES 4
#define MAX_CGROUPS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, int r) {
	fprintf(stderr, "fuzz-policy: %s: %s\n", what, r < 0 ? strerror(-r) : "broken promise");
	abort();
}

/* Adds a cgroup path (copied) unless the tree is full or has it. */
static void tree_add(char **tree, size_t *n, const char *path) {
	if (*n >= MAX_CGROUPS)
		return;
	for (size_t i = 0; i < *n; i++)
		if (streq(tree[i], path))
			return;
	tree[*n] = strdup(path);
	if (!tree[*n])
		fail("strdup", -ENOMEM);
	(*n)++;
}

/* A tree in which the policy finds something to do: a fixed one, every
 * literal cgroup of an attachment with its parents, a child of each and,
 * under an attachment with tenants, the literal tenant names. */
static size_t make_tree(const struct cgf_policy *p, char **tree) {
	static const char *const fixed[] = { ".", "a", "a/b", "a/b/c", "machine.slice", "machine.slice/web-1.scope",
					     "system.slice", "system.slice/x.service" };
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
		tree_add(tree, &n, fixed[i]);
	for (size_t i = 0; i < p->n_attachments; i++) {
		const struct cgf_attachment *a = &p->attachments[i];
		char buf[512];

		if (!a->cgroup || strpbrk(a->cgroup, "*?[") || strlen(a->cgroup) > 200)
			continue;
		/* The parents first: "x/y/z" adds "x" and "x/y". */
		for (const char *s = a->cgroup; (s = strchr(s, '/')); s++) {
			snprintf(buf, sizeof(buf), "%.*s", (int) (s - a->cgroup), a->cgroup);
			tree_add(tree, &n, buf);
		}
		tree_add(tree, &n, a->cgroup);
		snprintf(buf, sizeof(buf), "%s/child", streq(a->cgroup, ".") ? "" : a->cgroup);
		tree_add(tree, &n, streq(a->cgroup, ".") ? "child" : buf);
		for (size_t t = 0; t < a->n_tenants; t++) {
			const char *name = a->tenants[t].pattern;

			if (!name || strpbrk(name, "*?[/") || strlen(name) > 200)
				continue;
			if (streq(a->cgroup, "."))
				snprintf(buf, sizeof(buf), "%s", name);
			else
				snprintf(buf, sizeof(buf), "%s/%s", a->cgroup, name);
			tree_add(tree, &n, buf);
		}
	}
	return n;
}

static void expand_and_plan(const struct cgf_policy *p, const struct cgf_features *features) {
	_cleanup_(cgf_desired_freep) struct cgf_desired *desired = NULL;
	_cleanup_(cgf_actual_freep) struct cgf_actual *empty = NULL, *after = NULL;
	_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL, *again = NULL;
	_cleanup_free_ char *text = NULL;
	char *tree[MAX_CGROUPS];
	size_t n_tree, failed = 0;
	const char *why = NULL;
	int r;

	n_tree = make_tree(p, tree);
	r = cgf_expand(p, (const char *const *) tree, n_tree, NULL, NULL, &desired);
	for (size_t i = 0; i < n_tree; i++)
		free(tree[i]);
	if (r == -ENOMEM)
		return;
	if (r < 0)
		fail("expand refused a policy the validator passed", r);

	/* An empty kernel that holds a list for every desired one. */
	empty = cgf_actual_new();
	if (!empty)
		fail("cgf_actual_new", -ENOMEM);
	for (size_t i = 0; i < desired->n_lists; i++) {
		r = cgf_actual_add_list(empty, desired->lists[i].cgroup, desired->lists[i].direction, 0, 1, NULL);
		if (r < 0)
			fail("cgf_actual_add_list", r);
	}
	cgf_actual_sort(empty);

	r = cgf_plan(desired, empty, features, &plan);
	if (r < 0)
		fail("cgf_plan", r);
	r = cgf_plan_format(plan, &text);
	if (r < 0)
		fail("cgf_plan_format", r);

	r = cgf_plan_apply_to_state(empty, plan, features, &after, &failed, &why);
	if (r < 0) {
		fprintf(stderr, "fuzz-policy: action #%zu: %s\n%s", failed, why ?: "?", text);
		fail("the simulated kernel refused the plan", r);
	}
	r = cgf_plan(desired, after, features, &again);
	if (r < 0)
		fail("cgf_plan (again)", r);
	if (plan->n_reports == 0 && again->n_actions > 0) {
		fprintf(stderr, "fuzz-policy: first plan:\n%s", text);
		fail("a second plan after a complete one still has actions", 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	_cleanup_(cgf_policy_freep) struct cgf_policy *p = NULL;
	struct cgf_features features = CGF_FEATURES_PATCHED;
	struct cgf_diags diags = CGF_DIAGS_INIT;
	const char *text = (const char *) data, *end = text + size;
	_cleanup_free_ char *rendered = NULL;
	unsigned files = 0;
	int r;

	if (size >= strlen(STOCK) && memcmp(text, STOCK, strlen(STOCK)) == 0)
		features = CGF_FEATURES_STOCK;

	p = cgf_policy_new();
	if (!p)
		return 0;
	while (text <= end && files < MAX_FILES) {
		const char *next = memmem(text, end - text, NEXT_FILE, strlen(NEXT_FILE));
		size_t len = next ? (size_t) (next - text) : (size_t) (end - text);
		char name[32];

		snprintf(name, sizeof(name), files == 0 ? "policy.yaml" : "policy.d/%u.yaml", files);
		r = cgf_policy_load_text(p, name, text, len, &diags);
		if (r < 0)
			goto finish;
		files++;
		if (!next)
			break;
		text = next + strlen(NEXT_FILE);
	}

	r = cgf_policy_validate(p, &features, &diags);
	if (r < 0)
		goto finish;
	cgf_diags_sort(&diags);
	r = cgf_diags_render_string(&diags, CGF_RENDER_SOURCE, &rendered);
	if (r < 0)
		goto finish;
	if (diags.n_errors > 0 && rendered[0] == 0)
		fail("errors rendered as nothing", 0);
	if (diags.n_errors == 0)
		expand_and_plan(p, &features);

finish:
	if (r < 0 && r != -ENOMEM)
		fail("unexpected error", r);
	cgf_diags_done(&diags);
	return 0;
}
