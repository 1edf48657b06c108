/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A plan as JSON (see plan-json.h).  The words come from plan.c's own
 * string functions, so the JSON and the text form cannot drift apart.
 */
#include <errno.h>

#include "plan-json.h"

void cgf_json_field_pos(struct cgf_json *j, const char *key, struct cgf_pos pos) {
	if (!cgf_pos_is_set(pos)) {
		cgf_json_field_null(j, key);
		return;
	}
	cgf_json_field_object_begin(j, key);
	cgf_json_field_string(j, "file", pos.source->name);
	cgf_json_field_u64(j, "line", pos.line);
	cgf_json_field_u64(j, "column", pos.column);
	cgf_json_object_end(j);
}

static void render_action(struct cgf_json *j, const struct cgf_action *a, size_t index) {
	cgf_json_object_begin(j);
	cgf_json_field_u64(j, "index", index);
	cgf_json_field_string(j, "kind", a->kind == CGF_ACTION_ATTACH ? "attach" : "detach");
	cgf_json_field_string(j, "reason", cgf_action_reason_to_string(a->reason));
	cgf_json_field_string(j, "cgroup", a->cgroup);
	cgf_json_field_string(j, "direction", cgf_direction_to_string(a->direction));
	cgf_json_field_string(j, "filter", a->filter);
	cgf_json_field_string(j, "identity", a->identity);
	cgf_json_field_bool(j, "new_instance", a->new_instance);
	cgf_json_field_attach_flags(j, "attach_flags", a->flags);
	cgf_json_field_u64(j, "attach_flags_raw", a->flags);
	cgf_json_field_u64_or_null(j, "anchor_prog_id", a->anchor_prog_id);
	if (a->anchor_action != CGF_NO_ACTION)
		cgf_json_field_u64(j, "anchor_action", a->anchor_action);
	else
		cgf_json_field_null(j, "anchor_action");
	cgf_json_field_u64_or_null(j, "prog_id", a->prog_id);
	cgf_json_field_u64_or_null(j, "link_id", a->link_id);
	cgf_json_field_string(j, "prog_name", a->prog_name);
	cgf_json_field_u64_or_null(j, "expected_revision", a->expected_revision);
	cgf_json_object_end(j);
}

static void render_report(struct cgf_json *j, const struct cgf_report *r) {
	cgf_json_object_begin(j);
	cgf_json_field_string(j, "kind", cgf_report_kind_to_string(r->kind));
	cgf_json_field_string(j, "cgroup", r->cgroup);
	cgf_json_field_string(j, "direction", cgf_direction_to_string(r->direction));
	cgf_json_field_string(j, "message", r->message);
	cgf_json_field_u64_or_null(j, "prog_id", r->prog_id);
	cgf_json_field_u64(j, "calls", r->calls);
	cgf_json_field_pos(j, "position", r->pos);
	cgf_json_object_end(j);
}

int cgf_plan_render_json(const struct cgf_plan *p, struct cgf_json *j) {
	size_t n_attaches = 0;

	cgf_json_object_begin(j);
	cgf_json_field_array_begin(j, "actions");
	for (size_t i = 0; i < p->n_actions; i++) {
		render_action(j, &p->actions[i], i);
		n_attaches += p->actions[i].kind == CGF_ACTION_ATTACH;
	}
	cgf_json_array_end(j);

	cgf_json_field_array_begin(j, "reports");
	for (size_t i = 0; i < p->n_reports; i++)
		render_report(j, &p->reports[i]);
	cgf_json_array_end(j);

	cgf_json_field_object_begin(j, "summary");
	cgf_json_field_u64(j, "actions", p->n_actions);
	cgf_json_field_u64(j, "attaches", n_attaches);
	cgf_json_field_u64(j, "detaches", p->n_actions - n_attaches);
	cgf_json_field_u64(j, "reports", p->n_reports);
	cgf_json_object_end(j);
	cgf_json_object_end(j);
	return cgf_json_status(j);
}
