/* SPDX-License-Identifier: GPL-2.0-only */
#pragma once

/*
 * A plan as JSON, for `cgfilterctl plan --json`: the same facts as
 * cgf_plan_format(), with every field of every action and report, under
 * stable snake_case keys:
 *
 *   {
 *     "actions": [
 *       { "index": 0, "kind": "attach", "reason": "new", "cgroup": "a",
 *         "direction": "egress", "filter": "web", "identity": "...",
 *         "new_instance": false, "attach_flags": ["multi", "before", "id"],
 *         "attach_flags_raw": 42, "anchor_prog_id": 12, "anchor_action": null,
 *         "prog_id": null, "link_id": null, "prog_name": null,
 *         "expected_revision": 5 }, ...
 *     ],
 *     "reports": [
 *       { "kind": "foreign", "cgroup": "a", "direction": "egress",
 *         "message": "...", "prog_id": 13, "calls": 0,
 *         "position": { "file": "policy.yaml", "line": 3, "column": 5 } }, ...
 *     ],
 *     "summary": { "actions": 1, "attaches": 1, "detaches": 0, "reports": 1 }
 *   }
 *
 * Every key is always there.  What the C struct says with 0 ("none") is
 * null here: anchor_prog_id, prog_id, link_id and expected_revision when 0,
 * anchor_action when CGF_NO_ACTION, strings when NULL, position when unset;
 * so a reader needs no knowledge of our sentinels.  The words (kind,
 * reason, direction, flag names) are those of the text form.
 */

#include <stdint.h>

#include "attach-flags.h"
#include "diag.h"
#include "json.h"
#include "plan.h"

/* Writes the plan as one value at the writer's current place; returns
 * cgf_json_status(j). */
int cgf_plan_render_json(const struct cgf_plan *p, struct cgf_json *j);

/* "key": { "file", "line", "column" } of a policy position, or null when unset. */
void cgf_json_field_pos(struct cgf_json *j, const char *key, struct cgf_pos pos);
