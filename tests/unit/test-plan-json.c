/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A plan as JSON: a plan made by cgf_plan() from hand-made states (in the
 * notation of plan-test.h), pinned as exact text next to its text form,
 * so that both say the same; an empty plan; and a hand-built plan with
 * the fields the planner rarely sets (unknown flag bits, anchors by id,
 * links, missing names).
 */
#include "diag.h"
#include "json.h"
#include "plan-json.h"
#include "plan-test.h"

static char *render_json(const struct cgf_plan *p, unsigned flags) {
	_cleanup_(cgf_json_freep) struct cgf_json *j = NULL;
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	REQUIRE(f);
	REQUIRE(cgf_json_new(f, flags, &j) == 0);
	REQUIRE(cgf_plan_render_json(p, j) == 0);
	REQUIRE(cgf_json_finish(j) == 0);
	REQUIRE(fclose(f) == 0);
	return s;
}

static void test_planned(struct test_state *t) {
	static const char policy[] = "filters:\n  b: {}\nattachments:\n  - cgroup: a\n";
	_cleanup_(cgf_source_freep) struct cgf_source *src = cgf_source_new("policy.d/10-a.yaml", policy, sizeof(policy) - 1);
	_cleanup_(cgf_actual_freep) struct cgf_actual *actual =
		parse_actual("a egress multi 5: 11:a@1 13:x 12:c@1 14~7:d@1");
	_cleanup_(cgf_desired_freep) struct cgf_desired *desired = parse_desired("a egress multi: a@1 b@1 c@2");
	_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL;
	_cleanup_free_ char *text = NULL, *json = NULL;
	const struct cgf_features features = CGF_FEATURES_PATCHED;

	REQUIRE(src);
	/* The report's position is that of the list's first cgroup: key. */
	desired->lists[0].pos = (struct cgf_pos) { .source = src, .line = 4, .column = 5, .width = 6 };
	REQUIRE(cgf_plan(desired, actual, &features, &plan) == 0);

	text = format_plan(plan);
	CHECK_STREQ(t, text,
		    "#0 attach a egress c@2 multi|replace replaces prog 12 rev 5 (changed)\n"
		    "#1 attach a egress b@1 multi|before|id before #0 rev 6 (new)\n"
		    "#2 detach a egress prog 14 'cgf_d' link 7 rev 7 (removed)\n"
		    "foreign: a egress: foreign program 'x' (id 13): left alone\n",
		    "the plan, as text");

	json = render_json(plan, CGF_JSON_PRETTY);
	CHECK_STREQ(t, json,
		    "{\n"
		    "  \"actions\": [\n"
		    "    {\n"
		    "      \"index\": 0,\n"
		    "      \"kind\": \"attach\",\n"
		    "      \"reason\": \"changed\",\n"
		    "      \"cgroup\": \"a\",\n"
		    "      \"direction\": \"egress\",\n"
		    "      \"filter\": \"c\",\n"
		    "      \"identity\": \"2\",\n"
		    "      \"new_instance\": false,\n"
		    "      \"attach_flags\": [\n"
		    "        \"multi\",\n"
		    "        \"replace\"\n"
		    "      ],\n"
		    "      \"attach_flags_raw\": 6,\n"
		    "      \"anchor_prog_id\": null,\n"
		    "      \"anchor_action\": null,\n"
		    "      \"prog_id\": 12,\n"
		    "      \"link_id\": null,\n"
		    "      \"prog_name\": \"cgf_c\",\n"
		    "      \"expected_revision\": 5\n"
		    "    },\n"
		    "    {\n"
		    "      \"index\": 1,\n"
		    "      \"kind\": \"attach\",\n"
		    "      \"reason\": \"new\",\n"
		    "      \"cgroup\": \"a\",\n"
		    "      \"direction\": \"egress\",\n"
		    "      \"filter\": \"b\",\n"
		    "      \"identity\": \"1\",\n"
		    "      \"new_instance\": false,\n"
		    "      \"attach_flags\": [\n"
		    "        \"multi\",\n"
		    "        \"before\",\n"
		    "        \"id\"\n"
		    "      ],\n"
		    "      \"attach_flags_raw\": 42,\n"
		    "      \"anchor_prog_id\": null,\n"
		    "      \"anchor_action\": 0,\n"
		    "      \"prog_id\": null,\n"
		    "      \"link_id\": null,\n"
		    "      \"prog_name\": null,\n"
		    "      \"expected_revision\": 6\n"
		    "    },\n"
		    "    {\n"
		    "      \"index\": 2,\n"
		    "      \"kind\": \"detach\",\n"
		    "      \"reason\": \"removed\",\n"
		    "      \"cgroup\": \"a\",\n"
		    "      \"direction\": \"egress\",\n"
		    "      \"filter\": null,\n"
		    "      \"identity\": null,\n"
		    "      \"new_instance\": false,\n"
		    "      \"attach_flags\": [],\n"
		    "      \"attach_flags_raw\": 0,\n"
		    "      \"anchor_prog_id\": null,\n"
		    "      \"anchor_action\": null,\n"
		    "      \"prog_id\": 14,\n"
		    "      \"link_id\": 7,\n"
		    "      \"prog_name\": \"cgf_d\",\n"
		    "      \"expected_revision\": 7\n"
		    "    }\n"
		    "  ],\n"
		    "  \"reports\": [\n"
		    "    {\n"
		    "      \"kind\": \"foreign\",\n"
		    "      \"cgroup\": \"a\",\n"
		    "      \"direction\": \"egress\",\n"
		    "      \"message\": \"foreign program 'x' (id 13): left alone\",\n"
		    "      \"prog_id\": 13,\n"
		    "      \"calls\": 0,\n"
		    "      \"position\": {\n"
		    "        \"file\": \"policy.d/10-a.yaml\",\n"
		    "        \"line\": 4,\n"
		    "        \"column\": 5\n"
		    "      }\n"
		    "    }\n"
		    "  ],\n"
		    "  \"summary\": {\n"
		    "    \"actions\": 3,\n"
		    "    \"attaches\": 2,\n"
		    "    \"detaches\": 1,\n"
		    "    \"reports\": 1\n"
		    "  }\n"
		    "}\n",
		    "the plan, as JSON");
}

static void test_empty(struct test_state *t) {
	_cleanup_(cgf_actual_freep) struct cgf_actual *actual = parse_actual("a egress multi 5: 11:w@1");
	_cleanup_(cgf_desired_freep) struct cgf_desired *desired = parse_desired("a egress multi: w@1");
	_cleanup_(cgf_plan_freep) struct cgf_plan *plan = NULL;
	_cleanup_free_ char *json = NULL;
	const struct cgf_features features = CGF_FEATURES_PATCHED;

	REQUIRE(cgf_plan(desired, actual, &features, &plan) == 0);
	json = render_json(plan, 0);
	CHECK_STREQ(t, json,
		    "{\"actions\":[],\"reports\":[],\"summary\":{\"actions\":0,\"attaches\":0,\"detaches\":0,\"reports\":0}}\n",
		    "nothing to do");
}

static void test_hand_built(struct test_state *t) {
	struct cgf_action actions[] = {
		{
			.kind = CGF_ACTION_ATTACH, .reason = CGF_REASON_MOVED, .cgroup = (char *) "web.slice/\"q\"",
			.direction = CGF_INGRESS, .filter = (char *) "web", .identity = (char *) "obj:abc",
			.new_instance = true, .flags = CGF_ATTACH_PREORDER | CGF_ATTACH_AFTER | CGF_ATTACH_ID | (1U << 9),
			.anchor_prog_id = 4000000000U, .anchor_action = CGF_NO_ACTION,
		},
		{
			/* A detach whose program has no name: null, not "?". */
			.kind = CGF_ACTION_DETACH, .reason = CGF_REASON_MODE, .cgroup = (char *) ".",
			.direction = CGF_EGRESS, .anchor_action = CGF_NO_ACTION, .prog_id = 9,
		},
	};
	struct cgf_report reports[] = {
		{ .kind = CGF_REPORT_MODE_GAP, .cgroup = (char *) ".", .direction = CGF_EGRESS,
		  .message = (char *) "mode none -> multi:\n1 detach call first", .calls = 1 },
	};
	const struct cgf_plan plan = {
		.actions = actions, .n_actions = ELEMENTSOF(actions),
		.reports = reports, .n_reports = ELEMENTSOF(reports),
	};
	_cleanup_free_ char *json = render_json(&plan, 0);

	CHECK_STREQ(t, json,
		    "{\"actions\":["
		    "{\"index\":0,\"kind\":\"attach\",\"reason\":\"moved\",\"cgroup\":\"web.slice/\\\"q\\\"\","
		    "\"direction\":\"ingress\",\"filter\":\"web\",\"identity\":\"obj:abc\",\"new_instance\":true,"
		    "\"attach_flags\":[\"preorder\",\"after\",\"id\",\"unknown(0x200)\"],\"attach_flags_raw\":624,"
		    "\"anchor_prog_id\":4000000000,\"anchor_action\":null,\"prog_id\":null,\"link_id\":null,"
		    "\"prog_name\":null,\"expected_revision\":null},"
		    "{\"index\":1,\"kind\":\"detach\",\"reason\":\"mode change\",\"cgroup\":\".\","
		    "\"direction\":\"egress\",\"filter\":null,\"identity\":null,\"new_instance\":false,"
		    "\"attach_flags\":[],\"attach_flags_raw\":0,\"anchor_prog_id\":null,\"anchor_action\":null,"
		    "\"prog_id\":9,\"link_id\":null,\"prog_name\":null,\"expected_revision\":null}],"
		    "\"reports\":["
		    "{\"kind\":\"mode-gap\",\"cgroup\":\".\",\"direction\":\"egress\","
		    "\"message\":\"mode none -> multi:\\n1 detach call first\",\"prog_id\":null,\"calls\":1,"
		    "\"position\":null}],"
		    "\"summary\":{\"actions\":2,\"attaches\":1,\"detaches\":1,\"reports\":1}}\n",
		    "a hand-built plan");
}

int main(void) {
	struct test_state t = {};

	test_planned(&t);
	test_empty(&t);
	test_hand_built(&t);
	return test_finish(&t, "test-plan-json");
}
