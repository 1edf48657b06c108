/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The planner, table-driven: each case is an actual state, a desired
 * state and the kernel's features, and the exact plan: every action and
 * every report line.  Each plan is also run through the simulator and
 * checked against the invariants of plan-test.h (the kernel accepts every
 * step, nothing foreign is touched, no unreported gap, the result is the
 * policy, planning again gives nothing).
 *
 * The state notation is described in plan-test.h.  Set CGF_TEST_PRINT=1
 * to print every plan.
 */
#include "plan-test.h"

#define STOCK CGF_FEATURES_STOCK
#define PATCHED CGF_FEATURES_PATCHED
#define PREORDER_ONLY ((struct cgf_features) { .preorder = true })
#define ORDERING_ONLY ((struct cgf_features) { .ordering = true })

static const struct {
	const char *name;
	struct cgf_features features;
	const char *actual;
	const char *desired;
	const char *expected;
} cases[] = {
	/* ---- nothing to do ---- */
	{ "matches: no actions", PATCHED,
	  "a egress multi 5: 11:w@1 12:v@1",
	  "a egress multi: w@1 v@1", "" },
	{ "matches with a foreign program between ours", PATCHED,
	  "a egress multi 5: 11:w@1 13:x 12:v@1",
	  "a egress multi: w@1 v@1",
	  "foreign: a egress: foreign program 'x' (id 13): left alone\n" },
	{ "matches in mode none", STOCK,
	  "a egress none 0: 11:g@1",
	  "a egress none: g@1", "" },
	{ "only the order within a preorder class counts", PATCHED,
	  "a egress multi 5: 11:w@1/p 12:v@1",
	  "a egress multi: v@1 w@1/p", "" },
	{ "nothing desired, nothing of ours: nothing at all", PATCHED,
	  "a egress multi 5: 13:x",
	  "", "" },

	/* ---- attach ---- */
	{ "attach to an empty list, stock kernel", STOCK,
	  "a egress - 0:",
	  "a egress multi: w@1 v@1",
	  "#0 attach a egress w@1 multi (new)\n"
	  "#1 attach a egress v@1 multi (new)\n" },
	{ "attach to an empty list, revisions", PATCHED,
	  "a egress - 3:",
	  "a egress multi: w@1 v@1",
	  "#0 attach a egress w@1 multi rev 3 (new)\n"
	  "#1 attach a egress v@1 multi rev 4 (new)\n" },
	{ "a list the kernel was not asked about: no revision", PATCHED,
	  "",
	  "a ingress none: g@1",
	  "#0 attach a ingress g@1 none (new)\n" },
	{ "preorder on a kernel without it: reported, attached without", STOCK,
	  "a egress - 0:",
	  "a egress multi: w@1/p",
	  "#0 attach a egress w@1 multi (new)\n"
	  "unsupported: a egress: preorder: the kernel lacks BPF_F_PREORDER; attached without it\n" },

	/* ---- changed filters: never a moment without them ---- */
	{ "multi: a changed program is REPLACEd in place", PATCHED,
	  "a egress multi 5: 11:w@1 12:v@1",
	  "a egress multi: w@2 v@1",
	  "#0 attach a egress w@2 multi|replace replaces prog 11 rev 5 (changed)\n" },
	{ "multi: REPLACE on a stock kernel", STOCK,
	  "a egress multi 0: 11:w@1 13:x 12:v@1",
	  "a egress multi: w@1 v@2",
	  "#0 attach a egress v@2 multi|replace replaces prog 12 (changed)\n"
	  "foreign: a egress: foreign program 'x' (id 13): left alone\n" },
	{ "none: attaching to the single slot swaps atomically", PATCHED,
	  "a egress none 4: 11:g@1",
	  "a egress none: g@2",
	  "#0 attach a egress g@2 none swaps out prog 11 rev 4 (changed)\n" },
	{ "override: another filter in the single slot", STOCK,
	  "a egress override 0: 11:g@1",
	  "a egress override: h@1",
	  "#0 attach a egress h@1 override swaps out prog 11 (new)\n" },
	{ "none: only the preorder bit changes", PATCHED,
	  "a egress none 4: 11:g@1",
	  "a egress none: g@1/p",
	  "#0 attach a egress g@1 none|preorder swaps out prog 11 rev 4 (changed)\n" },
	{ "multi: preorder changes: a new instance in the other class, then the old one goes", PATCHED,
	  "a egress multi 5: 11:w@1 12:v@1",
	  "a egress multi: w@1/p v@1",
	  "#0 attach a egress w@1 multi|preorder new-instance rev 5 (moved)\n"
	  "#1 detach a egress prog 11 'cgf_w' rev 6 (superseded)\n" },

	/* ---- inserts at their final position ---- */
	{ "insert between two: BEFORE the next that stays", PATCHED,
	  "a egress multi 5: 11:a@1 12:c@1",
	  "a egress multi: a@1 b@1 c@1",
	  "#0 attach a egress b@1 multi|before|id before prog 12 rev 5 (new)\n" },
	{ "insert at the head", PATCHED,
	  "a egress multi 5: 11:b@1",
	  "a egress multi: a@1 b@1",
	  "#0 attach a egress a@1 multi|before|id before prog 11 rev 5 (new)\n" },
	{ "inserts after the last that stays are appended", PATCHED,
	  "a egress multi 5: 11:a@1 13:x",
	  "a egress multi: a@1 b@1 c@1",
	  "#0 attach a egress b@1 multi rev 5 (new)\n"
	  "#1 attach a egress c@1 multi rev 6 (new)\n"
	  "foreign: a egress: foreign program 'x' (id 13): left alone\n" },
	{ "insert before a program that is REPLACEd first", PATCHED,
	  "a egress multi 5: 11:a@1 12:c@1",
	  "a egress multi: a@1 b@1 c@2",
	  "#0 attach a egress c@2 multi|replace replaces prog 12 rev 5 (changed)\n"
	  "#1 attach a egress b@1 multi|before|id before #0 rev 6 (new)\n" },
	{ "inserts in both preorder classes", PATCHED,
	  "a egress multi 5: 11:a@1 12:p@1/p",
	  "a egress multi: o@1/p b@1 a@1 p@1/p",
	  "#0 attach a egress o@1 multi|preorder|before|id before prog 12 rev 5 (new)\n"
	  "#1 attach a egress b@1 multi|before|id before prog 11 rev 6 (new)\n" },
	{ "stock: inserts only append, which is right here", STOCK,
	  "a egress multi 0: 11:a@1",
	  "a egress multi: a@1 b@1 c@1",
	  "#0 attach a egress b@1 multi (new)\n"
	  "#1 attach a egress c@1 multi (new)\n" },
	{ "stock: an insert in the middle re-appends what follows", STOCK,
	  "a egress multi 0: 11:a@1 12:c@1",
	  "a egress multi: a@1 b@1 c@1",
	  "#0 attach a egress b@1 multi (new)\n"
	  "#1 attach a egress c@1 multi new-instance (moved)\n"
	  "#2 detach a egress prog 12 'cgf_c' (superseded)\n"
	  "reorder: a egress: the kernel lacks BPF_F_BEFORE/BPF_F_AFTER: 'c' is attached again at the end to restore the order, and its old instance detached\n" },
	{ "stock: two swapped: the first stays, the other is attached again at the end", STOCK,
	  "a egress multi 0: 11:b@1 12:a@1",
	  "a egress multi: a@1 b@1",
	  "#0 attach a egress b@1 multi new-instance (moved)\n"
	  "#1 detach a egress prog 11 'cgf_b' (superseded)\n"
	  "reorder: a egress: the kernel lacks BPF_F_BEFORE/BPF_F_AFTER: 'b' is attached again at the end to restore the order, and its old instance detached\n" },
	{ "ordering: two swapped: one new instance before the other", PATCHED,
	  "a egress multi 5: 11:b@1 12:a@1",
	  "a egress multi: a@1 b@1",
	  "#0 attach a egress a@1 multi|before|id before prog 11 new-instance rev 5 (moved)\n"
	  "#1 detach a egress prog 12 'cgf_a' rev 6 (superseded)\n" },
	{ "ordering: a reversed list keeps the longest ordered part", ORDERING_ONLY,
	  "a egress multi 0: 11:c@1 12:b@1 13:a@1 14:d@1",
	  "a egress multi: a@1 b@1 c@1 d@1",
	  "#0 attach a egress a@1 multi|before|id before prog 11 new-instance (moved)\n"
	  "#1 attach a egress b@1 multi|before|id before prog 11 new-instance (moved)\n"
	  "#2 detach a egress prog 12 'cgf_b' (superseded)\n"
	  "#3 detach a egress prog 13 'cgf_a' (superseded)\n" },
	{ "ordering: an unchanged program outweighs a changed one", PATCHED,
	  "a egress multi 5: 11:b@1 12:a@2",
	  "a egress multi: a@1 b@1",
	  "#0 attach a egress a@1 multi|before|id before prog 11 rev 5 (moved)\n"
	  "#1 detach a egress prog 12 'cgf_a' rev 6 (superseded)\n" },

	/* ---- removals ---- */
	{ "a filter leaves: detached", PATCHED,
	  "a egress multi 5: 11:a@1 12:b@1",
	  "a egress multi: a@1",
	  "#0 detach a egress prog 12 'cgf_b' rev 5 (removed)\n" },
	{ "a filter is renamed: the new one first, then the old one goes", PATCHED,
	  "a egress multi 5: 11:a@1",
	  "a egress multi: b@1",
	  "#0 attach a egress b@1 multi rev 5 (new)\n"
	  "#1 detach a egress prog 11 'cgf_a' rev 6 (removed)\n" },
	{ "the policy leaves a list: ours go, the foreign one stays", PATCHED,
	  "a egress multi 5: 11:a@1 13:x 12:b@1",
	  "",
	  "#0 detach a egress prog 11 'cgf_a' rev 5 (removed)\n"
	  "#1 detach a egress prog 12 'cgf_b' rev 6 (removed)\n"
	  "foreign: a egress: foreign program 'x' (id 13): left alone\n" },
	{ "two instances of one program: the extra one goes", PATCHED,
	  "a egress multi 5: 11:a@1 12:a@1",
	  "a egress multi: a@1",
	  "#0 detach a egress prog 12 'cgf_a' rev 5 (superseded)\n" },
	{ "our program with unknown pin metadata is replaced", PATCHED,
	  "a egress multi 5: 11:a@?",
	  "a egress multi: a@1",
	  "#0 attach a egress a@1 multi|replace replaces prog 11 rev 5 (changed)\n" },

	/* ---- foreign programs ---- */
	{ "a foreign program holds the single slot: blocked", PATCHED,
	  "a egress none 4: 13:x",
	  "a egress none: g@1",
	  "blocked: a egress: foreign program 'x' (id 13) holds the single slot (mode none): attaching 'g' would replace it, and cgfilterd never replaces a foreign program; nothing planned here\n" },
	{ "a foreign program in a multi list: no mode change", PATCHED,
	  "a egress multi 5: 13:x 11:g@1",
	  "a egress none: g@1",
	  "blocked: a egress: mode multi -> none needs an empty list, and foreign program 'x' (id 13) stays; nothing planned here\n" },
	{ "a foreign override program: multi is impossible", STOCK,
	  "a egress override 0: 13:x",
	  "a egress multi: w@1",
	  "blocked: a egress: mode override -> multi needs an empty list, and foreign program 'x' (id 13) stays; nothing planned here\n" },
	{ "a foreign none above: blocked", PATCHED,
	  "p egress none 2: 13:x\np/c egress - 1:",
	  "p/c egress multi: w@1",
	  "blocked: p/c egress: cannot attach: foreign program 'x' (id 13) on 'p' has mode none, and the kernel refuses any egress program below it (EPERM); nothing planned here\n" },
	{ "a foreign none above ours, attached after ours: no change possible", PATCHED,
	  "p egress none 2: 13:x\np/c egress multi 3: 11:w@1",
	  "p/c egress multi: w@2",
	  "blocked: p/c egress: cannot attach: foreign program 'x' (id 13) on 'p' has mode none, and the kernel refuses any egress program below it (EPERM); nothing planned here\n" },
	{ "... but removing ours is still possible", PATCHED,
	  "p egress none 2: 13:x\np/c egress multi 3: 11:w@1",
	  "",
	  "#0 detach p/c egress prog 11 'cgf_w' rev 3 (removed)\n" },
	{ "a foreign override above allows ours below", PATCHED,
	  "p egress override 2: 13:x\np/c egress - 1:",
	  "p/c egress multi: w@1",
	  "#0 attach p/c egress w@1 multi rev 1 (new)\n" },
	{ "a foreign multi above allows ours below", PATCHED,
	  "p egress multi 2: 13:x\np/c egress - 1:",
	  "p/c egress none: w@1",
	  "#0 attach p/c egress w@1 none rev 1 (new)\n" },
	{ "a foreign program below our none", PATCHED,
	  "p egress - 1:\np/c egress multi 2: 13:x",
	  "p egress none: g@1",
	  "#0 attach p egress g@1 none rev 1 (new)\n"
	  "foreign-below-none: p/c egress: foreign program 'x' (id 13) lies below 'p', where ours has mode none: attached before ours, it still overrides ours here and below; it cannot be changed anymore, but can be cleared (detach it)\n" },
	{ "a foreign program below our none, in the other direction: nothing to say", PATCHED,
	  "p egress - 1:\np/c ingress multi 2: 13:x",
	  "p egress none: g@1",
	  "#0 attach p egress g@1 none rev 1 (new)\n" },

	/* ---- our own none ---- */
	{ "our none above (unchanged) refuses a new child", PATCHED,
	  "p egress none 2: 11:g@1\np/c egress - 1:",
	  "p egress none: g@1\np/c egress multi: w@1",
	  "blocked: p/c egress: cannot attach: our program 'cgf_g' (id 11) on 'p' has mode none, and the kernel refuses any egress program below it (EPERM); nothing planned here\n" },
	{ "our none in the policy above a child (an invalid policy)", PATCHED,
	  "p egress - 1:\np/c egress - 1:",
	  "p egress none: g@1\np/c egress multi: w@1",
	  "#0 attach p egress g@1 none rev 1 (new)\n"
	  "blocked: p/c egress: cannot attach: 'p' gets mode none (filter 'g'), and the kernel refuses any egress program below it (EPERM); the policy is invalid (see cgfilterctl check); nothing planned here\n" },
	{ "ours below our none: reported, left alone", PATCHED,
	  "p egress none 2: 11:g@1\np/c egress multi 3: 12:w@1",
	  "p egress none: g@1\np/c egress multi: w@1",
	  "ours-below-none: p/c egress: our program 'cgf_w' (id 12) lies below 'p', where ours has mode none: the kernel keeps it (it overrides 'p' here and below) but refuses any change (EPERM); left as it is\n" },
	{ "ours below our none, leaving the policy: detached", PATCHED,
	  "p egress none 2: 11:g@1\np/c egress multi 3: 12:w@1",
	  "p egress none: g@1",
	  "#0 detach p/c egress prog 12 'cgf_w' rev 3 (removed)\n" },
	{ "our none leaves the policy and a child gets a filter: the none goes first", PATCHED,
	  "p egress none 2: 11:g@1\np/c egress - 1:",
	  "p/c egress multi: w@1",
	  "#0 detach p egress prog 11 'cgf_g' rev 2 (removed)\n"
	  "#1 attach p/c egress w@1 multi rev 1 (new)\n" },
	{ "a new none: what leaves below it goes first", PATCHED,
	  "p egress multi 2: 11:g@1\np/c egress multi 3: 12:w@1",
	  "p egress none: g@1",
	  "#0 detach p/c egress prog 12 'cgf_w' rev 3 (removed)\n"
	  "#1 detach p egress prog 11 'cgf_g' rev 2 (mode change)\n"
	  "#2 attach p egress g@1 none rev 3 (mode change)\n"
	  "mode-gap: p egress: mode multi -> none: the kernel changes the mode of an empty list only: 1 detach call before the first attach (programs are loaded beforehand)\n" },

	{ "a new none clears what leaves below it, so an attach further down is refused (an invalid policy)", PATCHED,
	  "l egress - 1:\nl/x egress multi 2: 12:m@1\nl/x/y egress - 1:",
	  "l egress none: g@1\nl/x/y egress multi: w@1",
	  "#0 detach l/x egress prog 12 'cgf_m' rev 2 (removed)\n"
	  "#1 attach l egress g@1 none rev 1 (new)\n"
	  "blocked: l/x/y egress: cannot attach: 'l' gets mode none (filter 'g'), and the kernel refuses any egress program below it (EPERM); the policy is invalid (see cgfilterctl check); nothing planned here\n" },
	{ "a multi of ours that stays below a new none still lets a child attach", PATCHED,
	  "l egress - 1:\nl/x egress multi 2: 12:m@1\nl/x/y egress - 1:",
	  "l egress none: g@1\nl/x egress multi: m@1\nl/x/y egress multi: w@1",
	  "#0 attach l egress g@1 none rev 1 (new)\n"
	  "#1 attach l/x/y egress w@1 multi rev 1 (new)\n"
	  "ours-below-none: l/x egress: our program 'cgf_m' (id 12) lies below 'l', where ours has mode none: the kernel keeps it (it overrides 'l' here and below) but refuses any change (EPERM); left as it is\n" },

	/* ---- mode changes ---- */
	{ "multi -> none: detach all, then attach; the one that stays goes last", PATCHED,
	  "a egress multi 5: 11:g@1 12:a@1",
	  "a egress none: g@1",
	  "#0 detach a egress prog 12 'cgf_a' rev 5 (mode change)\n"
	  "#1 detach a egress prog 11 'cgf_g' rev 6 (mode change)\n"
	  "#2 attach a egress g@1 none rev 7 (mode change)\n"
	  "mode-gap: a egress: mode multi -> none: the kernel changes the mode of an empty list only: 2 detach calls before the first attach (programs are loaded beforehand)\n" },
	{ "none -> multi", PATCHED,
	  "a egress none 4: 11:g@1",
	  "a egress multi: g@1 w@1",
	  "#0 detach a egress prog 11 'cgf_g' rev 4 (mode change)\n"
	  "#1 attach a egress g@1 multi rev 5 (mode change)\n"
	  "#2 attach a egress w@1 multi rev 6 (mode change)\n"
	  "mode-gap: a egress: mode none -> multi: the kernel changes the mode of an empty list only: 1 detach call before the first attach (programs are loaded beforehand)\n" },
	{ "override -> none, stock", STOCK,
	  "a egress override 0: 11:g@1",
	  "a egress none: g@2",
	  "#0 detach a egress prog 11 'cgf_g' (mode change)\n"
	  "#1 attach a egress g@2 none (mode change)\n"
	  "mode-gap: a egress: mode override -> none: the kernel changes the mode of an empty list only: 1 detach call before the first attach (programs are loaded beforehand)\n" },
	{ "a parent's mode change comes before its child's attach", PATCHED,
	  "p egress none 2: 11:g@1\np/c egress - 1:",
	  "p egress multi: g@1\np/c egress multi: w@1",
	  "#0 detach p egress prog 11 'cgf_g' rev 2 (mode change)\n"
	  "#1 attach p egress g@1 multi rev 3 (mode change)\n"
	  "#2 attach p/c egress w@1 multi rev 1 (new)\n"
	  "mode-gap: p egress: mode none -> multi: the kernel changes the mode of an empty list only: 1 detach call before the first attach (programs are loaded beforehand)\n" },

	/* ---- the hierarchy ---- */
	{ "attach parents first, detach children first", PATCHED,
	  "p egress multi 2: 11:g@1\np/c egress multi 3: 12:w@1\nq egress - 1:\nq/c egress - 1:",
	  "q egress multi: g@1\nq/c egress multi: w@1",
	  "#0 attach q egress g@1 multi rev 1 (new)\n"
	  "#1 attach q/c egress w@1 multi rev 1 (new)\n"
	  "#2 detach p/c egress prog 12 'cgf_w' rev 3 (removed)\n"
	  "#3 detach p egress prog 11 'cgf_g' rev 2 (removed)\n" },
	{ "directions are separate lists", PATCHED,
	  "a egress multi 5: 11:w@1\na ingress none 2: 12:i@1",
	  "a egress multi: w@1 v@1\na ingress none: i@2",
	  "#0 attach a ingress i@2 none swaps out prog 12 rev 2 (changed)\n"
	  "#1 attach a egress v@1 multi rev 5 (new)\n" },

	/* ---- links ---- */
	{ "a link that stays, an insert appended after it", PATCHED,
	  "a egress multi 5: 11~7:a@1",
	  "a egress multi: a@1 b@1",
	  "#0 attach a egress b@1 multi rev 5 (new)\n" },
	{ "a link cannot be an anchor: it is attached again directly", PATCHED,
	  "a egress multi 5: 11~7:b@1",
	  "a egress multi: a@1 b@1",
	  "#0 attach a egress a@1 multi rev 5 (new)\n"
	  "#1 attach a egress b@1 multi new-instance rev 6 (moved)\n"
	  "#2 detach a egress prog 11 'cgf_b' link 7 rev 7 (superseded)\n" },
	{ "a changed link cannot be REPLACEd: insert, then detach the link", PATCHED,
	  "a egress multi 5: 11~7:a@1 12:b@1",
	  "a egress multi: a@2 b@1",
	  "#0 attach a egress a@2 multi|before|id before prog 12 rev 5 (moved)\n"
	  "#1 detach a egress prog 11 'cgf_a' link 7 rev 6 (superseded)\n" },
	{ "stock: a changed link goes to the end, with what follows it", STOCK,
	  "a egress multi 0: 11~7:a@1 12:b@1",
	  "a egress multi: a@2 b@1",
	  "#0 attach a egress a@2 multi (moved)\n"
	  "#1 attach a egress b@1 multi new-instance (moved)\n"
	  "#2 detach a egress prog 11 'cgf_a' link 7 (superseded)\n"
	  "#3 detach a egress prog 12 'cgf_b' (superseded)\n"
	  "reorder: a egress: the kernel lacks BPF_F_BEFORE/BPF_F_AFTER: 'b' is attached again at the end to restore the order, and its old instance detached\n" },
};

/* " ID:fI@1" or " fI@N" for I in [from, to): lists near the limit. */
static char *many(unsigned from, unsigned to, bool actual, const char *changed, const char *changed2) {
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	REQUIRE(f);
	for (unsigned i = from; i < to; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%u", i);
		if (actual)
			fprintf(f, " %u:%s@1", 100 + i, name);
		else
			fprintf(f, " %s@%s", name, streq_ptr(changed, name) || streq_ptr(changed2, name) ? "2" : "1");
	}
	REQUIRE(fclose(f) == 0);
	return s;
}

static char *join(const char *a, const char *b, const char *c) {
	char *s;

	REQUIRE(asprintf(&s, "%s%s%s", a, b ?: "", c ?: "") >= 0);
	return s;
}

static void run_case(struct test_state *t, const char *name, const struct cgf_features *features,
		     const char *actual_text, const char *desired_text, const char *expected) {
	_cleanup_(cgf_actual_freep) struct cgf_actual *actual = parse_actual(actual_text);
	_cleanup_(cgf_desired_freep) struct cgf_desired *desired = parse_desired(desired_text);
	_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL;
	_cleanup_free_ char *got = NULL;
	struct invariant_stats stats = {};
	const char *violation;
	char buf[4096];

	REQUIRE(cgf_plan(desired, actual, features, &plan) == 0);
	got = format_plan(plan);
	if (getenv("CGF_TEST_PRINT"))
		printf("== %s [%s]\n%s", name, features_name(features), got);
	if (expected)
		CHECK_STREQ(t, got, expected, name);
	violation = check_invariants(actual, desired, features, plan, &stats, buf, sizeof(buf));
	CHECK(t, !violation, "%s: %s\n%s", name, violation, got);
}

static void run_limit_cases(struct test_state *t, size_t *n) {
	const struct cgf_features patched = PATCHED, stock = STOCK;
	_cleanup_free_ char *a63 = many(0, 63, true, NULL, NULL), *a64 = many(0, 64, true, NULL, NULL);
	_cleanup_free_ char *d63 = many(0, 63, false, NULL, NULL), *d64 = many(0, 64, false, NULL, NULL);
	_cleanup_free_ char *d64_f5 = many(0, 64, false, "f5", NULL), *d64_f5_f9 = many(0, 64, false, "f5", "f9");
	_cleanup_free_ char *d64_f62 = many(0, 64, false, "f62", NULL);
	struct {
		const char *name;
		const struct cgf_features *features;
		char *actual, *desired;
		const char *expected;
	} c[] = {
		{ "at the limit, an insert: what leaves goes first", &patched,
		  join("a egress multi 5:", a63, " 300:z@1"), join("a egress multi:", d63, " n@1"),
		  "#0 detach a egress prog 300 'cgf_z' rev 5 (removed)\n"
		  "#1 attach a egress n@1 multi rev 6 (new)\n"
		  "limit: a egress: at the kernel's limit of 64 programs: 'cgf_z' (id 300) is detached early to make room\n" },
		{ "a full list with a changed program: no room for REPLACE", &patched,
		  join("a egress multi 5:", a64, NULL), join("a egress multi:", d64_f5, NULL),
		  "#0 detach a egress prog 105 'cgf_f5' rev 5 (superseded)\n"
		  "#1 attach a egress f5@2 multi|before|id before prog 106 rev 6 (moved)\n"
		  "limit-gap: a egress: at the kernel's limit of 64 programs: 'f5' is detached 1 call before its successor is attached\n" },
		{ "a full list with two changed programs: one gap, one REPLACE", &patched,
		  join("a egress multi 5:", a64, NULL), join("a egress multi:", d64_f5_f9, NULL),
		  "#0 detach a egress prog 105 'cgf_f5' rev 5 (superseded)\n"
		  "#1 attach a egress f9@2 multi|replace replaces prog 109 rev 6 (changed)\n"
		  "#2 attach a egress f5@2 multi|before|id before prog 106 rev 7 (moved)\n"
		  "limit-gap: a egress: at the kernel's limit of 64 programs: 'f5' is detached 2 calls before its successor is attached\n" },
		{ "stock: a full list with a changed program near the end", &stock,
		  join("a egress multi 0:", a64, NULL), join("a egress multi:", d64_f62, NULL),
		  "#0 detach a egress prog 162 'cgf_f62' (superseded)\n"
		  "#1 attach a egress f62@2 multi (moved)\n"
		  "#2 detach a egress prog 163 'cgf_f63' (superseded)\n"
		  "#3 attach a egress f63@1 multi (moved)\n"
		  "limit-gap: a egress: at the kernel's limit of 64 programs: 'f62' is detached 1 call before its successor is attached\n"
		  "limit-gap: a egress: at the kernel's limit of 64 programs: 'f63' is detached 1 call before its successor is attached\n"
		  "reorder: a egress: the kernel lacks BPF_F_BEFORE/BPF_F_AFTER: 'f63' is attached again at the end to restore the order, and its old instance detached\n" },
		{ "foreign programs and the policy exceed 64: blocked", &patched,
		  join("a egress multi 5: 13:x 14:y", NULL, NULL), join("a egress multi:", d63, NULL),
		  "blocked: a egress: 2 foreign and 63 policy programs exceed the kernel's limit of 64 (E2BIG); nothing planned here\n"
		  "foreign: a egress: foreign program 'x' (id 13): left alone\n"
		  "foreign: a egress: foreign program 'y' (id 14): left alone\n" },
		{ "64 with nothing changed: nothing to do", &patched,
		  join("a egress multi 5:", a64, NULL), join("a egress multi:", d64, NULL), "" },
	};

	for (size_t i = 0; i < ELEMENTSOF(c); i++) {
		run_case(t, c[i].name, c[i].features, c[i].actual, c[i].desired, c[i].expected);
		free(c[i].actual);
		free(c[i].desired);
	}
	*n += ELEMENTSOF(c);
}

/* What the kernel edge does for a cgroup removed between the open and
 * the query: the lists it had added for it go again, the others stay. */
static void test_actual_truncate(struct test_state *t) {
	_cleanup_(cgf_actual_freep) struct cgf_actual *a = cgf_actual_new();
	struct cgf_actual_entry e = { .prog_id = 7 };
	struct cgf_actual_list *l;

	REQUIRE(a);
	REQUIRE(cgf_actual_add_list(a, "a", CGF_EGRESS, 0, 0, &l) == 0);
	REQUIRE(cgf_actual_add_list(a, "gone", CGF_EGRESS, 0, 0, &l) == 0);
	REQUIRE(cgf_actual_list_insert(l, 0, &e) == 0);
	REQUIRE(cgf_actual_add_list(a, "gone", CGF_INGRESS, 0, 0, &l) == 0);
	cgf_actual_truncate(a, 1);
	CHECK(t, a->n_lists == 1, "lists left: %zu", a->n_lists);
	CHECK_STREQ(t, a->lists[0].cgroup, "a", "the list kept");
	cgf_actual_truncate(a, 5);
	CHECK(t, a->n_lists == 1, "truncating to more than there is: %zu", a->n_lists);
}

int main(void) {
	struct test_state t = {};
	size_t n = ELEMENTSOF(cases);

	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		run_case(&t, cases[i].name, &cases[i].features, cases[i].actual, cases[i].desired, cases[i].expected);
	run_limit_cases(&t, &n);
	test_actual_truncate(&t);
	printf("test-plan: %zu table cases\n", n);
	return test_finish(&t, "test-plan");
}
