package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// The tests of this file replay cases of Weave's own client tests
// (tests/trace/test_client_trace.py) as the Python SDK sends them over HTTP:
// the same calls, the same requests, the same expected answers.

// weaveFixture serves the trace, objects and feedback routes, as a Weave
// client sees them.
func newWeaveFixture(t *testing.T, db *weft.DB) fixture {
	t.Helper()
	traceStore, err := trace.New(trace.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	objectStore, err := objects.New(objects.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	feedbackStore, err := feedback.New(feedback.Config{DB: db, Calls: feedback.TraceCalls(traceStore)})
	if err != nil {
		t.Fatal(err)
	}
	return newFixture(t, db, 8<<20, func(cfg *Config) {
		cfg.Trace, cfg.Objects, cfg.Feedback = traceStore, objectStore, feedbackStore
	})
}

// sdkCall is one call as a Weave SDK writes it: a start and an end.
type sdkCall struct {
	id, traceID, parentID, opName, threadID, turnID, runID string
	inputs, output                                         string
	startedAt                                              time.Time
}

func (c sdkCall) items(project string) []string {
	start := map[string]any{"project_id": project, "id": c.id, "trace_id": c.traceID, "op_name": c.opName,
		"started_at": c.startedAt.Format(time.RFC3339Nano), "attributes": map[string]any{"weave": map[string]any{"source": "python-sdk"}},
		"inputs": json.RawMessage(c.inputs)}
	for key, v := range map[string]string{"parent_id": c.parentID, "thread_id": c.threadID, "turn_id": c.turnID, "wb_run_id": c.runID} {
		if v != "" {
			start[key] = v
		}
	}
	end := map[string]any{"project_id": project, "id": c.id, "ended_at": c.startedAt.Add(time.Millisecond).Format(time.RFC3339Nano),
		"output": json.RawMessage(c.output), "summary": map[string]any{"status_counts": map[string]int{"success": 1, "error": 0}}}
	s, _ := json.Marshal(map[string]any{"mode": "start", "req": map[string]any{"start": start}})
	e, _ := json.Marshal(map[string]any{"mode": "end", "req": map[string]any{"end": end}})
	return []string{string(s), string(e)}
}

// sendCalls writes calls through /call/upsert_batch as auth.
func sendCalls(t *testing.T, f fixture, auth, project string, calls []sdkCall) {
	t.Helper()
	var items []string
	for _, c := range calls {
		items = append(items, c.items(project)...)
	}
	status, body := post(t, f, auth, "/call/upsert_batch", `{"batch":[`+strings.Join(items, ",")+`]}`)
	if status != 200 || bytes.Contains(body, []byte(`"error"`)) {
		t.Fatalf("upsert_batch: %d %s", status, body)
	}
}

// lineCallBootstrap is Weave's simple_line_call_bootstrap: adder_v0 once,
// adder twice, subtractor 3 times, multiplier 4 times and liner 5 times (each
// liner calling multiplier and adder): 25 calls, 15 of them roots. Ops are
// named by refs of project, adder in two versions.
type lineCallBootstrap struct {
	calls                                []sdkCall
	adderV0, adder, subtractor, multiply string
}

func newLineCallBootstrap(project, runID, threadID string, at time.Time) lineCallBootstrap {
	op := func(name, digest string) string { return "weave:///" + project + "/op/" + name + ":" + digest }
	b := lineCallBootstrap{adderV0: op("adder", "v0digest"), adder: op("adder", "v1digest"),
		subtractor: op("subtractor", "d"), multiply: op("multiplier", "d")}
	liner := op("liner", "d")
	add := func(opName, parent, traceID, inputs, output string) string {
		at = at.Add(time.Millisecond)
		c := sdkCall{id: newUUID(), traceID: traceID, parentID: parent, opName: opName, runID: runID, threadID: threadID,
			inputs: inputs, output: output, startedAt: at}
		if threadID != "" && parent == "" {
			c.turnID = c.id
		}
		b.calls = append(b.calls, c)
		return c.id
	}
	root := func(opName string, i int) {
		add(opName, "", newUUID(), fmt.Sprintf(`{"a":{"value":%d},"b":%d}`, i, i), fmt.Sprintf(`{"value":%d}`, 2*i))
	}
	root(b.adderV0, 0)
	for i := range 2 {
		root(b.adder, i)
	}
	for i := range 3 {
		root(b.subtractor, i)
	}
	for i := range 4 {
		root(b.multiply, i)
	}
	for i := range 5 {
		traceID := newUUID()
		id := add(liner, "", traceID, fmt.Sprintf(`{"m":{"value":%d},"b":%d,"x":%d}`, i, i, i), fmt.Sprintf(`{"value":%d}`, i*i+i))
		add(b.multiply, id, traceID, fmt.Sprintf(`{"a":{"value":%d},"b":%d}`, i, i), fmt.Sprint(i*i))
		add(b.adder, id, traceID, fmt.Sprintf(`{"a":{"value":%d},"b":%d}`, i*i, i), fmt.Sprintf(`{"value":%d}`, i*i+i))
	}
	return b
}

// streamCount runs a /calls/stream_query and counts its lines.
func streamLines(t *testing.T, f fixture, auth, body string) [][]byte {
	t.Helper()
	status, res := post(t, f, auth, "/calls/stream_query", body)
	if status != 200 {
		t.Fatalf("stream_query %s: %d %s", body, status, res)
	}
	res = bytes.TrimSpace(res)
	if len(res) == 0 {
		return nil
	}
	return bytes.Split(res, []byte("\n"))
}

func statsCount(t *testing.T, f fixture, auth, body string) int {
	t.Helper()
	status, res := post(t, f, auth, "/calls/query_stats", body)
	var out struct {
		Count int `json:"count"`
	}
	if status != 200 || json.Unmarshal(res, &out) != nil {
		t.Fatalf("query_stats %s: %d %s", body, status, res)
	}
	return out.Count
}

// TestWeaveCallsFilter: test_trace_call_query_filter_op_version_refs,
// _wb_run_ids, _wb_user_ids, the thread and turn filters and the empty lists
// that match nothing (test_calls_query_stats_thread_ids_filter_not_minimal).
func TestWeaveCallsFilter(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newWeaveFixture(t, db)
		ctx := context.Background()
		identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := identity.CreateUser(ctx, "carol", false); err != nil {
			t.Fatal(err)
		}
		if err := identity.AddMember(ctx, "alice", "carol", "member"); err != nil {
			t.Fatal(err)
		}
		carolKey, err := identity.CreateAPIKey(ctx, "carol", "test")
		if err != nil {
			t.Fatal(err)
		}
		userIDs, err := identity.UserIDs(ctx, []string{"alice", "carol"})
		if err != nil {
			t.Fatal(err)
		}
		alice, carol := basic("api", f.aliceKey), basic("api", carolKey)
		at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		run1 := newLineCallBootstrap("alice/p", "alice/p/test-run-1", "", at)
		run2 := newLineCallBootstrap("alice/p", "alice/p/test-run-2", "thread-2", at.Add(time.Minute))
		plain := newLineCallBootstrap("alice/p", "", "", at.Add(2*time.Minute))
		sendCalls(t, f, alice, "alice/p", run1.calls)
		sendCalls(t, f, alice, "alice/p", run2.calls)
		sendCalls(t, f, carol, "alice/p", plain.calls)

		count := func(filter string) int {
			t.Helper()
			lines := streamLines(t, f, alice, `{"project_id":"alice/p","filter":`+filter+`}`)
			if stats := statsCount(t, f, alice, `{"project_id":"alice/p","filter":`+filter+`}`); stats != len(lines) {
				t.Fatalf("filter %s: %d lines, query_stats %d", filter, len(lines), stats)
			}
			return len(lines)
		}
		list := func(values ...string) string {
			b, _ := json.Marshal(values)
			return string(b)
		}
		b := run1
		for _, tc := range []struct {
			filter string
			want   int
		}{
			{`{"op_names":null,"wb_run_ids":["alice/p/test-run-1"]}`, 25},
			{`{"op_names":[],"wb_run_ids":["alice/p/test-run-1"]}`, 25},
			{`{"op_names":` + list(b.adder) + `,"wb_run_ids":["alice/p/test-run-1"]}`, 7},
			{`{"op_names":` + list(b.adderV0) + `,"wb_run_ids":["alice/p/test-run-1"]}`, 1},
			{`{"op_names":` + list(b.adder, b.subtractor) + `,"wb_run_ids":["alice/p/test-run-1"]}`, 10},
			{`{"op_names":["weave:///alice/p/op/adder:*"],"wb_run_ids":["alice/p/test-run-1"]}`, 8},
			{`{"op_names":["weave:///alice/p/op/adder:*",` + list(b.subtractor)[1:] + `,"wb_run_ids":["alice/p/test-run-1"]}`, 11},
			{`{"op_names":["weave:///alice/p/op/add:*"],"wb_run_ids":["alice/p/test-run-1"]}`, 0},

			{`{"wb_run_ids":null}`, 75},
			{`{"wb_run_ids":[]}`, 75},
			{`{"wb_run_ids":["alice/p/test-run-1"]}`, 25},
			{`{"wb_run_ids":["alice/p/test-run-1","alice/p/test-run-2"]}`, 50},
			{`{"wb_run_ids":["alice/p/NOT_A_RUN"]}`, 0},
			{`{"wb_run_ids":["test-run-1"]}`, 25},
			{`{"wb_run_ids":["test-run-1","alice/p/test-run-2"]}`, 50},

			{`{"wb_user_ids":[]}`, 75},
			{`{"wb_user_ids":` + list(userIDs["carol"]) + `}`, 25},
			{`{"wb_user_ids":` + list(userIDs["alice"], userIDs["carol"]) + `}`, 75},
			{`{"wb_user_ids":["NOT_A_USER"]}`, 0},
			{`{"pf_user_ids":` + list(userIDs["alice"]) + `}`, 50},

			{`{"thread_ids":["thread-2"]}`, 25},
			{`{"thread_ids":["thread_does_not_exist"]}`, 0},
			{`{"thread_ids":[]}`, 0},
			{`{"turn_ids":[]}`, 0},
			{`{"turn_ids":` + list(run2.calls[0].id, run2.calls[1].id) + `}`, 2},
			{`{"turn_ids":null}`, 75},
		} {
			if got := count(tc.filter); got != tc.want {
				t.Errorf("filter %s: %d calls, want %d", tc.filter, got, tc.want)
			}
		}
	})
}

// TestWeaveCallsColumns: test_call_query_stream_columns and
// test_calls_query_multiple_dupe_select_columns.
func TestWeaveCallsColumns(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newWeaveFixture(t, db)
		alice := basic("api", f.aliceKey)
		at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		var calls []sdkCall
		for i := range 2 {
			calls = append(calls, sdkCall{id: newUUID(), traceID: newUUID(), opName: "weave:///alice/p/op/calculate:d",
				inputs: fmt.Sprintf(`{"a":%d,"b":%d}`, i, i*i), output: fmt.Sprintf(`{"result":{"a + b":%d},"not result":123}`, i+i*i),
				startedAt: at.Add(time.Duration(i) * time.Second)})
		}
		sendCalls(t, f, alice, "alice/p", calls)
		decode := func(line []byte) map[string]any {
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}

		lines := streamLines(t, f, alice, `{"project_id":"alice/p","columns":["id","inputs"]}`)
		c := decode(lines[0])
		if len(lines) != 2 || c["output"] != nil || c["ended_at"] != nil || fmt.Sprint(c["attributes"]) != "map[]" || fmt.Sprint(c["inputs"]) != "map[a:0 b:0]" {
			t.Fatalf("columns id, inputs: %s", lines[0])
		}

		c = decode(streamLines(t, f, alice, `{"project_id":"alice/p","columns":["id","inputs","output.result"]}`)[0])
		if fmt.Sprint(c["output"].(map[string]any)["result"]) != "map[a + b:0]" || fmt.Sprint(c["attributes"]) != "map[]" {
			t.Fatalf("columns output.result: %v", c)
		}

		c = decode(streamLines(t, f, alice, `{"project_id":"alice/p","columns":["id","summary"]}`)[0])
		weave := c["summary"].(map[string]any)["weave"].(map[string]any)
		if weave["status"] != "success" || weave["latency_ms"] != 1.0 || weave["trace_name"] != "calculate" ||
			c["started_at"] == nil || c["ended_at"] == nil || c["op_name"] == nil ||
			fmt.Sprint(c["attributes"]) != "map[]" || fmt.Sprint(c["inputs"]) != "map[]" || c["output"] != nil {
			t.Fatalf("columns summary: %v", c)
		}

		c = decode(streamLines(t, f, alice, `{"project_id":"alice/p","columns":["output","output.a","output.result","output.result.a + b","summary_dump"]}`)[1])
		if fmt.Sprint(c["output"]) != "map[not result:123 result:map[a + b:2]]" || c["summary"] == nil {
			t.Fatalf("repeated output columns: %v", c)
		}
	})
}

// TestWeaveCallsExpandAndFeedback: test_calls_stream_column_expansion,
// test_dedupe_ref_in_calls_stream and test_calls_stream_feedback.
func TestWeaveCallsExpandAndFeedback(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newWeaveFixture(t, db)
		alice := basic("api", f.aliceKey)
		publish := func(name, val string) string {
			t.Helper()
			status, body := post(t, f, alice, "/obj/create", `{"obj":{"project_id":"alice/p","object_id":"`+name+`","val":`+val+`}}`)
			var res struct {
				Digest string `json:"digest"`
			}
			if status != 200 || json.Unmarshal(body, &res) != nil {
				t.Fatalf("obj/create: %d %s", status, body)
			}
			return "weave:///alice/p/object/" + name + ":" + res.Digest
		}
		ref := publish("ObjectRef", `{"_type":"ObjectRef","id":"123","_class_name":"ObjectRef","_bases":["Object","BaseModel"]}`)
		simple := publish("SimpleObject", `{"_type":"SimpleObject","a":"`+ref+`","_class_name":"SimpleObject","_bases":["Object","BaseModel"]}`)
		nested := publish("NestedObject", `{"_type":"NestedObject","b":"`+simple+`","_class_name":"NestedObject","_bases":["Object","BaseModel"]}`)
		at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		call := sdkCall{id: newUUID(), traceID: newUUID(), opName: "weave:///alice/p/op/return_nested_object:d",
			inputs: `{"nested_obj":"` + nested + `"}`, output: `"` + nested + `"`, startedAt: at}
		sendCalls(t, f, alice, "alice/p", []sdkCall{call})
		output := func(columns, expand string) string {
			t.Helper()
			lines := streamLines(t, f, alice, `{"project_id":"alice/p","columns":`+columns+`,"expand_columns":`+expand+`}`)
			var c struct {
				Output json.RawMessage `json:"output"`
			}
			if len(lines) != 1 || json.Unmarshal(lines[0], &c) != nil {
				t.Fatalf("stream: %q", lines)
			}
			return string(c.Output)
		}
		for _, tc := range []struct{ columns, expand, want string }{
			{`["output"]`, `[]`, `"` + nested + `"`},
			{`["output"]`, `["output"]`, `{"_type":"NestedObject","b":"` + simple + `","_class_name":"NestedObject","_bases":["Object","BaseModel"],"_ref":"` + nested + `"}`},
			{`["output.b"]`, `["output","output.b"]`, `{"_type":"NestedObject","b":{"_type":"SimpleObject","a":"` + ref + `","_class_name":"SimpleObject","_bases":["Object","BaseModel"],"_ref":"` + simple + `"},"_class_name":"NestedObject","_bases":["Object","BaseModel"],"_ref":"` + nested + `"}`},
			{`["output.b.a"]`, `["output.b.a","output","output.b"]`, `{"_type":"NestedObject","b":{"_type":"SimpleObject","a":{"_type":"ObjectRef","id":"123","_class_name":"ObjectRef","_bases":["Object","BaseModel"],"_ref":"` + ref + `"},"_class_name":"SimpleObject","_bases":["Object","BaseModel"],"_ref":"` + simple + `"},"_class_name":"NestedObject","_bases":["Object","BaseModel"],"_ref":"` + nested + `"}`},
			{`["output"]`, `["output.b"]`, `"` + nested + `"`},
			{`["output.b.a"]`, `["output.b","output.zzzz"]`, `"` + nested + `"`},
		} {
			if got := output(tc.columns, tc.expand); got != tc.want {
				t.Errorf("columns %s, expand %s:\n got %s\nwant %s", tc.columns, tc.expand, got, tc.want)
			}
		}

		// Feedback: 11 calls; a note, two 👍 and a 👎 on the first, a 👍 on
		// the second.
		var calls []sdkCall
		for i := range 11 {
			calls = append(calls, sdkCall{id: newUUID(), traceID: newUUID(), opName: "weave:///alice/fb/op/test_call:d",
				inputs: fmt.Sprintf(`{"x":%d}`, i), output: `"ello chap"`, startedAt: at.Add(time.Duration(i) * time.Second)})
		}
		sendCalls(t, f, alice, "alice/fb", calls)
		for _, fb := range []struct {
			call          int
			kind, payload string
		}{{0, "wandb.note.1", `{"note":"this is a note on call1"}`}, {0, "wandb.reaction.1", `{"emoji":"👍"}`},
			{0, "wandb.reaction.1", `{"emoji":"👍"}`}, {0, "wandb.reaction.1", `{"emoji":"👎"}`}, {1, "wandb.reaction.1", `{"emoji":"👍"}`}} {
			status, body := post(t, f, alice, "/feedback/create", `{"project_id":"alice/fb","weave_ref":"weave:///alice/fb/call/`+calls[fb.call].id+`","feedback_type":"`+fb.kind+`","payload":`+fb.payload+`}`)
			if status != 200 {
				t.Fatalf("feedback/create: %d %s", status, body)
			}
		}
		lines := streamLines(t, f, alice, `{"project_id":"alice/fb","include_feedback":true}`)
		if len(lines) != 11 {
			t.Fatalf("%d calls", len(lines))
		}
		feedbackOf := func(line []byte) []map[string]any {
			var c struct {
				Summary struct {
					Weave struct {
						Feedback []map[string]any `json:"feedback"`
					} `json:"weave"`
				} `json:"summary"`
			}
			if err := json.Unmarshal(line, &c); err != nil {
				t.Fatal(err)
			}
			return c.Summary.Weave.Feedback
		}
		first, second := feedbackOf(lines[0]), feedbackOf(lines[1])
		if len(first) != 4 || len(second) != 1 || len(feedbackOf(lines[2])) != 0 || !bytes.Contains(lines[2], []byte(`"feedback":[]`)) {
			t.Fatalf("feedback counts: %d %d\n%s", len(first), len(second), lines[2])
		}
		payloads, _ := json.Marshal([]any{first[0]["payload"], first[3]["payload"], second[0]["payload"]})
		if string(payloads) != `[{"note":"this is a note on call1"},{"alias":":thumbs_down:","detoned":"👎","detoned_alias":":thumbs_down:","emoji":"👎"},{"alias":":thumbs_up:","detoned":"👍","detoned_alias":":thumbs_up:","emoji":"👍"}]` {
			t.Fatalf("payloads: %s", payloads)
		}
		if first[1]["feedback_type"] != "wandb.reaction.1" || first[1]["weave_ref"] != "weave:///alice/fb/call/"+calls[0].id {
			t.Fatalf("feedback row: %v", first[1])
		}
	})
}

// TestWeaveFilesPlural: the Python SDK uploads op source with /files/create
// and reads it with /files/content.
func TestWeaveFilesPlural(t *testing.T) {
	t.Parallel()
	f := newWeaveFixture(t, testdb.SQLite(t))
	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	_ = w.WriteField("project_id", "alice/p")
	part, _ := w.CreateFormFile("file", "obj.py")
	_, _ = part.Write([]byte("def f():\n    return 1\n"))
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, f.server.URL+"/files/create", &form)
	req.Header.Set("Authorization", basic("api", f.aliceKey))
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Digest string `json:"digest"`
	}
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil || res.StatusCode != 200 {
		t.Fatalf("files/create: %d %v", res.StatusCode, err)
	}
	res.Body.Close()
	for _, path := range []string{"/files/content", "/file/content"} {
		status, body := post(t, f, basic("api", f.aliceKey), path, `{"project_id":"alice/p","digest":"`+created.Digest+`"}`)
		if status != 200 || string(body) != "def f():\n    return 1\n" {
			t.Fatalf("%s: %d %q", path, status, body)
		}
	}
}
