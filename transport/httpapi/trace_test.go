package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

func newTraceFixture(t testing.TB, db *weft.DB) fixture {
	t.Helper()
	store, err := trace.New(trace.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	return newFixture(t, db, 1<<20, func(cfg *Config) { cfg.Trace = store })
}

func post(t testing.TB, f fixture, auth, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.server.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func newUUID() string { return uuid.Must(uuid.NewV7()).String() }

func TestTraceRoutes(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newTraceFixture(t, db)
		alice := basic("api", f.aliceKey)
		root, child, traceID := newUUID(), newUUID(), newUUID()
		startJSON := func(id, parent string) string {
			p := ""
			if parent != "" {
				p = fmt.Sprintf(`,"parent_id":%q`, parent)
			}
			return fmt.Sprintf(`{"start":{"project_id":"alice/p","id":%q,"trace_id":%q%s,"op_name":"weave:///alice/p/op/f:1","started_at":"2026-05-01T12:00:00.000Z","attributes":{},"inputs":{"q":"ünïcode","n":12345678901234567890},"unknown_nested":1}}`, id, traceID, p)
		}
		endJSON := func(id, summary string) string {
			return fmt.Sprintf(`{"end":{"project_id":"alice/p","id":%q,"ended_at":"2026-05-01T12:00:01.500Z","summary":%s,"output":{"a":[1,2]}}}`, id, summary)
		}
		batch := fmt.Sprintf(`{"batch":[{"mode":"start","req":%s},{"mode":"start","req":%s},{"mode":"end","req":%s},{"mode":"end","req":%s},{"mode":"start","req":{"start":{"project_id":"alice/p","id":"BAD","op_name":"x","started_at":"2026-05-01T12:00:00Z"}}},{"mode":"end","req":{"end":"not an object"}},{"mode":"sideways","req":{}}]}`,
			startJSON(root, ""), startJSON(child, root),
			endJSON(child, `{"usage":{"gpt-4":{"requests":1,"prompt_tokens":4,"completion_tokens":2}}}`),
			endJSON(root, `{"usage":{"gpt-4":{"requests":1,"prompt_tokens":4,"completion_tokens":2}}}`))
		status, body := post(t, f, alice, "/call/upsert_batch", batch)
		if status != 200 {
			t.Fatalf("upsert_batch: %d %s", status, body)
		}
		var res struct {
			Res []struct {
				ID      string `json:"id"`
				TraceID string `json:"trace_id"`
				Error   *struct {
					Status int `json:"status"`
				} `json:"error"`
			} `json:"res"`
		}
		if err := json.Unmarshal(body, &res); err != nil || len(res.Res) != 7 {
			t.Fatalf("upsert_batch answer: %s", body)
		}
		if res.Res[0].ID != root || res.Res[0].TraceID != traceID || res.Res[2].Error != nil {
			t.Fatalf("good items: %s", body)
		}
		for _, i := range []int{4, 5, 6} {
			if res.Res[i].Error == nil || res.Res[i].Error.Status != 400 {
				t.Fatalf("item %d should fail with 400: %s", i, body)
			}
		}

		// NDJSON, one call per line, default order.
		status, body = post(t, f, alice, "/calls/stream_query", fmt.Sprintf(`{"project_id":"alice/p","filter":{"trace_ids":[%q]},"include_costs":false,"limit":1000}`, traceID))
		lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
		if status != 200 || len(lines) != 2 {
			t.Fatalf("stream_query: %d %s", status, body)
		}
		var first trace.Call
		if err := json.Unmarshal(lines[0], &first); err != nil || first.ID != root && first.ID != child {
			t.Fatalf("line: %s", lines[0])
		}
		if !bytes.Contains(lines[0], []byte(`"inputs":{"q":"ünïcode","n":12345678901234567890}`)) {
			t.Fatalf("inputs not exact: %s", lines[0])
		}

		id := newUUID()
		for _, tc := range []struct {
			name, auth, path, body string
			status                 int
			want                   string
		}{
			{"start", alice, "/call/start", fmt.Sprintf(`{"start":{"project_id":"alice/p","id":%q,"op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, id), 200, `"id":"` + id + `"`},
			{"start generates ids", alice, "/call/start", `{"start":{"project_id":"alice/p","op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, 200, `"trace_id":"`},
			{"end", alice, "/call/end", fmt.Sprintf(`{"end":{"project_id":"alice/p","id":%q,"ended_at":"2026-05-01T12:00:02Z","summary":{},"wb_run_step_end":3}}`, id), 200, `{}`},
			{"v2 start", alice, "/v2/alice/p/call/start", `{"start":{"op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, 200, `"trace_id":"`},
			{"v2 end", alice, "/v2/alice/p/call/end", fmt.Sprintf(`{"end":{"id":%q,"ended_at":"2026-05-01T12:00:03Z"}}`, id), 200, `{}`},
			{"v2 wrong project in body", alice, "/v2/alice/p/call/start", `{"start":{"project_id":"alice/q","op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, 400, `InvalidRequest`},
			{"v2 malformed record", alice, "/v2/alice/p/call/start", `{"start":{"op_name":"op","started_at":"soon"}}`, 422, `"loc":["body","start","started_at"]`},
			{"v2 complete", alice, "/v2/alice/p/calls/complete", fmt.Sprintf(`{"batch":[{"id":%q,"trace_id":%q,"op_name":"op","started_at":"2026-05-01T12:00:00Z","ended_at":"2026-05-01T12:00:01Z","output":null,"summary":{}}]}`, newUUID(), traceID), 200, `"res":[{"id":`},
			{"update", alice, "/call/update", fmt.Sprintf(`{"project_id":"alice/p","call_id":%q,"display_name":"renamed","wb_user_id":"x"}`, id), 200, `{}`},
			{"read", alice, "/call/read", fmt.Sprintf(`{"project_id":"alice/p","id":%q}`, id), 200, `"display_name":"renamed"`},
			{"read unknown", alice, "/call/read", fmt.Sprintf(`{"project_id":"alice/p","id":%q}`, newUUID()), 200, `{"call":null}`},
			{"read with costs", alice, "/call/read", fmt.Sprintf(`{"project_id":"alice/p","id":%q,"include_costs":true}`, root), 200, `"costs":{"gpt-4":{`},
			{"stats", alice, "/calls/query_stats", fmt.Sprintf(`{"project_id":"alice/p","filter":{"trace_ids":[%q]}}`, traceID), 200, `{"count":3}`},
			{"usage", alice, "/calls/usage", fmt.Sprintf(`{"project_id":"alice/p","call_ids":[%q]}`, root), 200, `"prompt_tokens":4,"completion_tokens":2,"total_tokens":6`},
			{"usage limit too small", alice, "/calls/usage", fmt.Sprintf(`{"project_id":"alice/p","call_ids":[%q],"limit":1}`, root), 413, `"error_type":"RequestTooLarge"`},
			{"cost create", alice, "/cost/create", `{"project_id":"alice/p","costs":{"my-llm":{"prompt_token_cost":0.1,"completion_token_cost":0.2}}}`, 200, `"ids":[["my-llm","`},
			{"cost query", alice, "/cost/query", `{"project_id":"alice/p"}`, 200, `"llm_id":"my-llm"`},
			{"cost purge", alice, "/cost/purge", `{"project_id":"alice/p","llm_ids":["my-llm"]}`, 200, `{"num_deleted":1}`},
			{"delete cascades", alice, "/calls/delete", fmt.Sprintf(`{"project_id":"alice/p","call_ids":[%q]}`, root), 200, `{"num_deleted":2}`},
			{"deleted child gone", alice, "/call/read", fmt.Sprintf(`{"project_id":"alice/p","id":%q}`, child), 200, `{"call":null}`},
			{"delete too many", alice, "/calls/delete", fmt.Sprintf(`{"project_id":"alice/p","call_ids":[%s]}`, strings.TrimSuffix(strings.Repeat(`"`+id+`",`, 1001), ",")), 413, `"reason":"Request too large"`},

			// Bad input: never a 500.
			{"no credentials", "", "/call/start", `{}`, 401, `AuthenticationError`},
			{"bad key", basic("api", "wf_nope_nope"), "/calls/stream_query", `{"project_id":"alice/p"}`, 401, `AuthenticationError`},
			{"foreign project write", alice, "/call/start", `{"start":{"project_id":"admin/p","op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, 403, `Forbidden`},
			{"foreign project batch", alice, "/call/upsert_batch", `{"batch":[{"mode":"start","req":{"start":{"project_id":"admin/p","op_name":"op","started_at":"2026-05-01T12:00:00Z"}}}]}`, 403, `Forbidden`},
			{"foreign project read", alice, "/calls/stream_query", `{"project_id":"admin/p"}`, 403, `Forbidden`},
			{"foreign project usage", alice, "/calls/usage", `{"project_id":"admin/p","call_ids":[]}`, 403, `Forbidden`},
			{"foreign v2", alice, "/v2/admin/p/calls/complete", `{"batch":[]}`, 403, `Forbidden`},
			{"malformed json", alice, "/call/start", `{"start":`, 422, `json_invalid`},
			{"malformed batch", alice, "/call/upsert_batch", `{"batch":{}}`, 422, `"loc":["body","batch"]`},
			{"wrong type", alice, "/call/end", `{"end":{"project_id":"alice/p","id":"x","ended_at":"yesterday"}}`, 422, `"detail":[`},
			{"unknown top-level field", alice, "/calls/query_stats", `{"project_id":"alice/p","bogus":1}`, 422, `extra_forbidden`},
			{"missing started_at", alice, "/call/start", `{"start":{"project_id":"alice/p","op_name":"op"}}`, 422, `missing`},
			{"bad id", alice, "/call/start", `{"start":{"project_id":"alice/p","id":"ABC","op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, 400, `InvalidIdFormat`},
			{"bad project id", alice, "/calls/query_stats", `{"project_id":"nope"}`, 400, `InvalidRequest`},
			{"bad sort", alice, "/calls/stream_query", `{"project_id":"alice/p","sort_by":[{"field":"nope"}]}`, 400, `cannot sort by`},
			{"query", alice, "/calls/query_stats", `{"project_id":"alice/p","query":{"$expr":{"$eq":[{"$getField":"op_name"},{"$literal":"op"}]}}}`, 200, `"count":`},
			{"unsupported query operator", alice, "/calls/stream_query", `{"project_id":"alice/p","query":{"$expr":{"$regex":[{"$getField":"op_name"},{"$literal":"x"}]}}}`, 400, `$regex is not supported`},
			{"query through an expanded ref", alice, "/calls/stream_query", `{"project_id":"alice/p","expand_columns":["inputs.x"],"query":{"$expr":{"$eq":[{"$getField":"inputs.x.y"},{"$literal":"z"}]}}}`, 400, `expanded ref`},
			{"update without name", alice, "/call/update", fmt.Sprintf(`{"project_id":"alice/p","call_id":%q,"display_name":""}`, id), 400, `display_name is required`},
			{"usage bad limit", alice, "/calls/usage", `{"project_id":"alice/p","call_ids":["x"],"limit":-2}`, 400, `limit must be between 1 and 100000`},
			// Fields the reference types as dict[str, Any] answer a non-object
			// as pydantic does; a nested record not an object likewise.
			{"inputs not an object", alice, "/call/start", `{"start":{"project_id":"alice/p","op_name":"op","started_at":"2026-05-01T12:00:00Z","inputs":[1],"attributes":{}}}`, 422,
				`{"detail":[{"loc":["body","start","inputs"],"msg":"Input should be a valid dictionary","type":"dict_type","input":[1]}]}`},
			{"attributes not an object", alice, "/call/start", `{"start":{"project_id":"alice/p","op_name":"op","started_at":"2026-05-01T12:00:00Z","attributes":"x"}}`, 422,
				`{"loc":["body","start","attributes"],"msg":"Input should be a valid dictionary","type":"dict_type","input":"x"}`},
			{"otel_dump not an object", alice, "/call/start", `{"start":{"project_id":"alice/p","op_name":"op","started_at":"2026-05-01T12:00:00Z","otel_dump":5}}`, 422,
				`{"loc":["body","start","otel_dump"],"msg":"Input should be a valid dictionary","type":"dict_type","input":5}`},
			{"summary not an object", alice, "/call/end", fmt.Sprintf(`{"end":{"project_id":"alice/p","id":%q,"ended_at":"2026-05-01T12:00:00Z","summary":[]}}`, newUUID()), 422,
				`{"loc":["body","end","summary"],"msg":"Input should be a valid dictionary","type":"dict_type","input":[]}`},
			{"complete inputs not an object", alice, "/v2/alice/p/calls/complete", fmt.Sprintf(`{"batch":[{"id":%q,"trace_id":%q,"op_name":"op","started_at":"2026-05-01T12:00:00Z","ended_at":"2026-05-01T12:00:01Z","inputs":"s","summary":{}}]}`, newUUID(), traceID), 422,
				`{"loc":["body","batch",0,"inputs"],"msg":"Input should be a valid dictionary","type":"dict_type","input":"s"}`},
			{"v2 start inputs not an object", alice, "/v2/alice/p/call/start", `{"start":{"op_name":"op","started_at":"2026-05-01T12:00:00Z","inputs":[1]}}`, 422,
				`{"loc":["body","start","inputs"],"msg":"Input should be a valid dictionary","type":"dict_type","input":[1]}`},
			{"start not an object", alice, "/call/start", `{"start":"x"}`, 422,
				`{"loc":["body","start"],"msg":"Input should be a valid dictionary or instance of StartedCall","type":"model_type","input":"x"}`},
			{"usage zero limit", alice, "/calls/usage", `{"project_id":"alice/p","call_ids":["x"],"limit":0}`, 400, `limit must be between 1 and 100000`},
			{"usage limit past the bound", alice, "/calls/usage", `{"project_id":"alice/p","call_ids":["x"],"limit":100001}`, 400, `limit must be between 1 and 100000`},
			{"usage zero limit, no ids", alice, "/calls/usage", `{"project_id":"alice/p","call_ids":[],"limit":0}`, 400, `"error_type":"InvalidRequest"`},
			{"purge nothing named", alice, "/cost/purge", `{"project_id":"alice/p"}`, 400, `InvalidRequest`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, body := post(t, f, tc.auth, tc.path, tc.body)
				if status != tc.status || !bytes.Contains(body, []byte(tc.want)) {
					t.Fatalf("%s: %d %s; want %d with %s", tc.path, status, body, tc.status, tc.want)
				}
			})
		}
	})
}

// The stream writes rows as they come: a reader sees lines before the end of
// a large answer, and every line is one complete call.
func TestStreamQueryStreams(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	f := newTraceFixture(t, db)
	traceID := newUUID()
	var items []string
	for i := range 300 {
		items = append(items, fmt.Sprintf(`{"mode":"start","req":{"start":{"project_id":"alice/p","id":%q,"trace_id":%q,"op_name":"op","started_at":"2026-05-01T12:00:%02d.%03dZ","inputs":{"pad":%q}}}}`,
			newUUID(), traceID, i/60, i%1000, strings.Repeat("x", 1000)))
	}
	if status, body := post(t, f, "Bearer "+f.aliceKey, "/call/upsert_batch", `{"batch":[`+strings.Join(items, ",")+`]}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	req, _ := http.NewRequest(http.MethodPost, f.server.URL+"/calls/stream_query", strings.NewReader(`{"project_id":"alice/p","columns":["inputs"]}`))
	req.Header.Set("Authorization", "Bearer "+f.aliceKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != "application/jsonl" {
		t.Fatalf("content type %q", res.Header.Get("Content-Type"))
	}
	scanner := bufio.NewScanner(res.Body)
	scanner.Buffer(nil, 1<<20)
	n := 0
	for scanner.Scan() {
		var c map[string]json.RawMessage
		if err := json.Unmarshal(scanner.Bytes(), &c); err != nil || c["inputs"] == nil || c["output"] != nil {
			t.Fatalf("line %d: %s", n, scanner.Bytes())
		}
		n++
	}
	if n != 300 {
		t.Fatalf("%d lines", n)
	}
}

// upsert_batch decodes the usual body in one pass and anything else the
// general way; both must answer alike, and odd bodies stay 4xx.
func TestUpsertBatchBodies(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	f := newTraceFixture(t, db)
	alice := basic("api", f.aliceKey)
	traceID, a, b := newUUID(), newUUID(), newUUID()
	items := func(project string, reqFirst bool) string {
		item := func(mode, req string) string {
			if reqFirst {
				return fmt.Sprintf(`{"req":%s,"mode":%q}`, req, mode)
			}
			return fmt.Sprintf(`{"mode":%q,"req":%s}`, mode, req)
		}
		return `{"batch":[` + strings.Join([]string{
			item("start", fmt.Sprintf(`{"start":{"project_id":%q,"id":%q,"trace_id":%q,"op_name":"op","started_at":"2026-05-01T12:00:00Z","wb_run_id":"r1","inputs":{"x":"\u00e9\u0000","n":12345678901234567890},"extra":true}}`, project, a, traceID)),
			item("start", fmt.Sprintf(`{"start":{"project_id":%q,"id":%q,"trace_id":%q,"parent_id":%q,"op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, project, b, traceID, a)),
			item("end", fmt.Sprintf(`{"end":{"project_id":%q,"id":%q,"ended_at":"2026-05-01T12:00:01Z","output":null,"summary":{"usage":{"m":{"requests":1}}},"wb_run_step_end":4}}`, project, a)),
			item("start", fmt.Sprintf(`{"start":{"project_id":%q,"id":"BAD","op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, project)),
			item("start", fmt.Sprintf(`{"start":{"project_id":%q,"id":%q,"op_name":"op\u0000","started_at":"2026-05-01T12:00:00Z"}}`, project, newUUID())),
			item("start", fmt.Sprintf(`{"start":{"project_id":%q,"id":"\u0000","op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, project)),
			item("end", fmt.Sprintf(`{"end":{"project_id":"%s\u0000","id":%q,"ended_at":"2026-05-01T12:00:01Z"}}`, project, b)),
			item("end", fmt.Sprintf(`{"end":{"project_id":%q,"id":%q,"ended_at":"2026-05-01T12:00:01Z","display_name":"n\u0000"}}`, project, b)),
		}, ",") + `]}`
	}
	onePass, general := items("alice/one", false), items("alice/two", true)
	status1, body1 := post(t, f, alice, "/call/upsert_batch", onePass)
	status2, body2 := post(t, f, alice, "/call/upsert_batch", general)
	if status1 != 200 || status2 != 200 || !bytes.Equal(bytes.ReplaceAll(body1, []byte("alice/one"), []byte("alice/two")), body2) {
		t.Fatalf("answers differ:\n%d %s\n%d %s", status1, body1, status2, body2)
	}
	if n := bytes.Count(body1, []byte(`"status":400`)); n != 5 {
		t.Fatalf("want 5 failed items (bad id, NUL in op_name, id, project_id, display_name): %s", body1)
	}
	for _, id := range []string{a, b} {
		_, read1 := post(t, f, alice, "/call/read", fmt.Sprintf(`{"project_id":"alice/one","id":%q}`, id))
		_, read2 := post(t, f, alice, "/call/read", fmt.Sprintf(`{"project_id":"alice/two","id":%q}`, id))
		if !bytes.Equal(bytes.ReplaceAll(read1, []byte("alice/one"), []byte("alice/two")), read2) || (id == a) != bytes.Contains(read1, []byte(`"pf_run_id":"r1"`)) {
			t.Fatalf("stored calls differ:\n%s\n%s", read1, read2)
		}
	}

	start := `{"mode":"start","req":{"start":{"project_id":"alice/p","op_name":"op","started_at":"2026-05-01T12:00:00Z"}}}`
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		want                    string
	}{
		{"empty batch", "application/json", `{"batch":[]}`, 200, `{"res":[]}`},
		{"charset", "application/json; charset=utf-8", `{"batch":[` + start + `]}`, 200, `"trace_id"`},
		{"no content type", "", `{"batch":[` + start + `]}`, 200, `"trace_id"`},
		{"unknown top-level field", "application/json", `{"batch":[` + start + `],"x":1}`, 422, `extra_forbidden`},
		{"unknown item field", "application/json", `{"batch":[{"mode":"start","req":{},"x":1}]}`, 422, `extra_forbidden`},
		{"other spelling", "application/json", `{"Batch":[` + start + `]}`, 200, `"trace_id"`},
		{"null batch", "application/json", `{"batch":null}`, 200, `{"res":[]}`},
		{"null item", "application/json", `{"batch":[null]}`, 422, `"detail":[`},
		{"NUL in mode", "application/json", `{"batch":[{"mode":"start\u0000","req":{}}]}`, 422, `NUL`},
		{"trailing data", "application/json", `{"batch":[` + start + `]} {}`, 422, `"detail":[`},
		{"truncated", "application/json", `{"batch":[` + start, 422, `"detail":[`},
		{"empty body", "application/json", ``, 422, `"detail":[`},
		{"not json", "text/plain", `{"batch":[` + start + `]}`, 415, `"reason"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, f.server.URL+"/call/upsert_batch", strings.NewReader(tc.body))
			req.Header.Set("Authorization", alice)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status || !bytes.Contains(body, []byte(tc.want)) {
				t.Fatalf("%d %s; want %d with %s", res.StatusCode, body, tc.status, tc.want)
			}
		})
	}
}

// TestRefusedWritesCreateNothing: a write the service refuses creates no
// project, and an entity that does not exist is not found for every caller,
// an admin included, so a mistyped entity is never created.
func TestRefusedWritesCreateNothing(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newTraceFixture(t, db)
		alice, admin := basic("api", f.aliceKey), basic("api", f.adminKey)
		start := func(project, id string) string {
			return fmt.Sprintf(`{"start":{"project_id":%q,"id":%q,"op_name":"op","started_at":"2026-05-01T12:00:00Z"}}`, project, id)
		}
		projects := func() []string {
			t.Helper()
			list, err := f.handler.cfg.Identity.Projects(context.Background(), weft.Principal{Admin: true})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, p := range list {
				ids = append(ids, p.ID())
			}
			return ids
		}
		for _, tc := range []struct {
			name, auth, body string
			status           int
			want             string
		}{
			{"rejected write", alice, start("alice/proj", "ABC"), 400, `InvalidIdFormat`},
			{"admin, no such entity", admin, start("ghost/proj", newUUID()), 404, `entity \"ghost\" not found`},
			{"user, no such entity", alice, start("ghost/proj", newUUID()), 404, `entity \"ghost\" not found`},
			{"admin reads no such entity", admin, `{"project_id":"ghost/proj"}`, 404, `NotFoundError`},
		} {
			path := "/call/start"
			if !strings.Contains(tc.body, `"start"`) {
				path = "/calls/query_stats"
			}
			if status, body := post(t, f, tc.auth, path, tc.body); status != tc.status || !bytes.Contains(body, []byte(tc.want)) {
				t.Errorf("%s: %d %s; want %d with %s", tc.name, status, body, tc.status, tc.want)
			}
		}
		if got := projects(); len(got) != 0 {
			t.Fatalf("projects after refused writes: %v", got)
		}
		var ghosts int
		if err := db.NewSelect().Table("entities").ColumnExpr("COUNT(*)").Where("name = 'ghost'").Scan(context.Background(), &ghosts); err != nil || ghosts != 0 {
			t.Fatalf("entity ghost stored %d times (%v)", ghosts, err)
		}
		// Writes that succeed create their projects, an admin's in another
		// entity that exists included.
		for _, w := range []struct{ auth, project string }{{alice, "alice/proj"}, {admin, "alice/admins"}} {
			if status, body := post(t, f, w.auth, "/call/start", start(w.project, newUUID())); status != 200 {
				t.Fatalf("%s: %d %s", w.project, status, body)
			}
		}
		if got := strings.Join(projects(), ","); got != "alice/admins,alice/proj" {
			t.Fatalf("projects = %s", got)
		}
	})
}
