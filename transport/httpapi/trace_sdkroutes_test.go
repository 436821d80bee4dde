package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// pythonFilter is CallsFilter as the Python SDK's pydantic model dumps it:
// every member, null unless set.
func pythonFilter(traceID string) string {
	return fmt.Sprintf(`{"op_names":null,"input_refs":null,"output_refs":null,"parent_ids":null,"trace_ids":[%q],"call_ids":null,`+
		`"thread_ids":null,"turn_ids":null,"trace_roots_only":null,"wb_user_ids":null,"wb_run_ids":null}`, traceID)
}

// The routes of Weave's interface added last, sent as the Python SDK's
// RemoteHTTPTraceServer sends them (model_dump_json: every field, nulls
// included): /trace/usage, the deprecated /calls/query, the project TTL
// settings, /table/query_stream, /service/projects_info, and the server-side
// evaluation routes this server refuses. Each checks the caller's project and answers bad input
// with a 4xx.
func TestWeaveSDKRoutes(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newWeaveFixture(t, db)
		alice := basic("api", f.aliceKey)
		traceID, root, child, leaf := newUUID(), newUUID(), newUUID(), newUUID()
		var items []string
		for i, c := range []struct{ id, parent, usage string }{
			{root, "", `{}`},
			{child, root, `{"gpt-4":{"input_tokens":2,"output_tokens":1}}`},
			{leaf, child, `{"gpt-4":{"prompt_tokens":3,"completion_tokens":1,"requests":1}}`},
		} {
			parent := "null"
			if c.parent != "" {
				parent = fmt.Sprintf("%q", c.parent)
			}
			items = append(items,
				fmt.Sprintf(`{"mode":"start","req":{"start":{"project_id":"alice/p","id":%q,"trace_id":%q,"parent_id":%s,"op_name":"weave:///alice/p/op/f:v1","started_at":"2026-05-01T12:00:0%dZ","attributes":{},"inputs":{"i":%d}}}}`,
					c.id, traceID, parent, i, i),
				fmt.Sprintf(`{"mode":"end","req":{"end":{"project_id":"alice/p","id":%q,"ended_at":"2026-05-01T12:01:00Z","output":null,"summary":{"usage":%s}}}}`, c.id, c.usage))
		}
		if status, body := post(t, f, alice, "/call/upsert_batch", `{"batch":[`+strings.Join(items, ",")+`]}`); status != 200 || bytes.Contains(body, []byte(`"error"`)) {
			t.Fatalf("upsert_batch: %d %s", status, body)
		}

		// /trace/usage: every call of the trace, rolled up over its
		// descendants; costs null unless asked for.
		status, body := post(t, f, alice, "/trace/usage", `{"project_id":"alice/p","filter":`+pythonFilter(traceID)+`,"query":null,"include_costs":false,"limit":10000}`)
		var usage struct {
			CallUsage map[string]map[string]map[string]any `json:"call_usage"`
		}
		if status != 200 || json.Unmarshal(body, &usage) != nil || len(usage.CallUsage) != 3 {
			t.Fatalf("trace/usage: %d %s", status, body)
		}
		for callID, want := range map[string]string{root: "5 2 7", child: "5 2 7", leaf: "3 1 4"} {
			u := usage.CallUsage[callID]["gpt-4"]
			if got := fmt.Sprint(u["prompt_tokens"], u["completion_tokens"], u["total_tokens"]); got != want || u["prompt_tokens_total_cost"] != nil {
				t.Errorf("trace/usage of %s: %v, want %s and no cost", callID, u, want)
			}
		}
		if status, body := post(t, f, alice, "/trace/usage", `{"project_id":"alice/p","filter":`+pythonFilter(traceID)+`,"include_costs":true}`); status != 200 || !bytes.Contains(body, []byte(`"prompt_tokens_total_cost":0.`)) {
			t.Errorf("trace/usage with costs: %d %s", status, body)
		}

		// /calls/query: one JSON object, {"calls": [...]}, in the stream's order.
		status, body = post(t, f, alice, "/calls/query", `{"project_id":"alice/p","filter":`+pythonFilter(traceID)+`,"limit":null,"offset":null,"sort_by":null,"query":null,`+
			`"include_costs":false,"include_feedback":false,"columns":null,"expand_columns":null,"return_expanded_column_values":true}`)
		var calls struct {
			Calls []struct {
				ID     string         `json:"id"`
				Inputs map[string]any `json:"inputs"`
			} `json:"calls"`
		}
		if status != 200 || json.Unmarshal(body, &calls) != nil || len(calls.Calls) != 3 {
			t.Fatalf("calls/query: %d %s", status, body)
		}
		if got := []string{calls.Calls[0].ID, calls.Calls[1].ID, calls.Calls[2].ID}; !slices.Equal(got, []string{root, child, leaf}) || calls.Calls[2].Inputs["i"] != 2.0 {
			t.Errorf("calls/query order %v, want %v: %s", got, []string{root, child, leaf}, body)
		}
		if status, body := post(t, f, alice, "/calls/query", `{"project_id":"alice/p","filter":{"trace_ids":["none"]}}`); status != 200 || string(bytes.TrimSpace(body)) != `{"calls":[]}` {
			t.Errorf("calls/query of nothing: %d %s", status, body)
		}

		// The TTL settings: calls are kept until deleted.
		for _, tc := range []struct{ path, body, want string }{
			{"/project/ttl_settings/read", `{"project_id":"alice/p"}`, `{"retention_days":null}`},
			{"/project/ttl_settings/update", `{"project_id":"alice/p","retention_days":null,"wb_user_id":null}`, `{"retention_days":null}`},
		} {
			if status, body := post(t, f, alice, tc.path, tc.body); status != 200 || string(bytes.TrimSpace(body)) != tc.want {
				t.Errorf("%s: %d %s, want %s", tc.path, status, body, tc.want)
			}
		}

		// /table/query_stream: one row per line.
		status, body = post(t, f, alice, "/table/create", `{"table":{"project_id":"alice/p","rows":[{"a":1},{"a":2}]}}`)
		var table struct {
			Digest string `json:"digest"`
		}
		if status != 200 || json.Unmarshal(body, &table) != nil {
			t.Fatalf("table/create: %d %s", status, body)
		}
		status, body = post(t, f, alice, "/table/query_stream", fmt.Sprintf(`{"project_id":"alice/p","digest":%q,"filter":null,"limit":null,"offset":null,"sort_by":[{"field":"a","direction":"desc"}]}`, table.Digest))
		lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
		if status != 200 || len(lines) != 2 || !bytes.Contains(lines[0], []byte(`"val":{"a":2},"original_index":1`)) {
			t.Errorf("table/query_stream: %d %s", status, body)
		}

		for _, tc := range []struct {
			path, body string
			status     int
			want       string
		}{
			{"/trace/usage", `{"project_id":"alice/p","limit":0}`, 400, `limit must be between 1 and`},
			{"/trace/usage", `{"project_id":"alice/p","query":{"$expr":{"$regex":[]}}}`, 400, `$regex is not supported`},
			{"/trace/usage", `{"project_id":"admin/p"}`, 403, `Forbidden`},
			{"/trace/usage", `{"project_id":"alice/p","bogus":1}`, 422, `extra_forbidden`},
			{"/calls/query", `{"project_id":"alice/p","sort_by":[{"field":"nope"}]}`, 400, `cannot sort by`},
			{"/calls/query", `{"project_id":"admin/p"}`, 403, `Forbidden`},
			{"/project/ttl_settings/update", `{"project_id":"alice/p","retention_days":30}`, 400, `retention_days is not supported`},
			{"/project/ttl_settings/update", `{"project_id":"alice/p","retention_days":"x"}`, 422, `retention_days`},
			{"/project/ttl_settings/update", `{"project_id":"admin/p","retention_days":null}`, 403, `Forbidden`},
			{"/project/ttl_settings/read", `{"project_id":"admin/p"}`, 403, `Forbidden`},
			{"/project/ttl_settings/read", `{}`, 422, `project_id`},
			{"/table/query_stream", `{"project_id":"alice/p","digest":"nope"}`, 404, `NotFoundError`},
			{"/table/query_stream", fmt.Sprintf(`{"project_id":"admin/p","digest":%q}`, table.Digest), 403, `Forbidden`},
			{"/evaluations/evaluate_model", `{"project_id":"alice/p","evaluation_ref":"weave:///alice/p/object/e:v1","model_ref":"weave:///alice/p/object/m:v1","wb_user_id":null}`, 400, `server-side evaluations are not supported`},
			{"/evaluations/evaluate_model", `{"project_id":"admin/p","evaluation_ref":"x","model_ref":"y"}`, 403, `Forbidden`},
			{"/evaluations/status", `{"project_id":"alice/p","call_id":"x"}`, 400, `server-side evaluations are not supported`},
			{"/evaluations/rescore", `{"source_evaluation_run_id":"r","scorer_refs":["weave:///alice/p/object/s:v0"],"project_id":"alice/p","wb_user_id":null}`, 400, `server-side evaluations are not supported`},
			{"/evaluations/rescore", `{"source_evaluation_run_id":"r","scorer_refs":[],"project_id":"alice/p"}`, 422, `scorer_refs`},
			{"/evaluations/rescore", `{"source_evaluation_run_id":"r","scorer_refs":["x"],"project_id":"admin/p"}`, 403, `Forbidden`},
			{"/calls/score", `{"project_id":"alice/p","call_ids":["c"],"scorer_refs":["weave:///alice/p/object/s:v0"],"wb_user_id":null}`, 400, `server-side evaluations are not supported`},
			{"/calls/score", `{"project_id":"admin/p","call_ids":["c"],"scorer_refs":["x"]}`, 403, `Forbidden`},
			{"/service/projects_info", `{"project_ids":["alice/p","alice/q"]}`, 200,
				`[{"external_project_id":"alice/p","internal_project_id":"alice/p"},{"external_project_id":"alice/q","internal_project_id":"alice/q"}]`},
			{"/service/projects_info", `{"project_ids":["alice/p","admin/p"]}`, 403, `Forbidden`},
			{"/service/projects_info", `{"project_ids":["no-slash"]}`, 400, `project`},
			{"/service/projects_info", `{"project_ids":"alice/p"}`, 422, `project_ids`},
		} {
			if status, body := post(t, f, alice, tc.path, tc.body); status != tc.status || !bytes.Contains(body, []byte(tc.want)) {
				t.Errorf("%s %s: %d %s, want %d with %s", tc.path, tc.body, status, body, tc.status, tc.want)
			}
		}
	})
}
