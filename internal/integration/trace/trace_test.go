package trace_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// jsClient is how the Weave JS SDK introduces itself.
var jsClient = map[string]string{"User-Agent": "W&B Weave JS Client 0.11.1"}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// The admin key the server prints on first start authenticates against a
// protected route; no key or a wrong one is refused.
func TestPrintedAdminKeyAuthenticates(t *testing.T) {
	t.Parallel()
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t)})
	if srv.Key == "" {
		t.Fatalf("no key printed:\n%s", srv.Output())
	}
	body := `{"project_id":"admin/first"}`
	for _, tc := range []struct {
		auth string
		want int
	}{
		{e2e.Basic(srv.Key), 200},
		{e2e.Bearer(srv.Key), 200},
		{"", 401},
		{e2e.Basic(srv.Key + "x"), 401},
	} {
		status, b := e2e.Client{URL: srv.URL, Auth: tc.auth, Header: jsClient}.Post(t, "/calls/query_stats", body)
		if status != tc.want {
			t.Fatalf("auth %q: %d %s, want %d", tc.auth, status, b, tc.want)
		}
		if status == 200 && strings.TrimSpace(string(b)) != `{"count":0}` {
			t.Fatalf("stats: %s", b)
		}
	}
}

// Drives the real server as the Weave SDKs do: Basic api:<key>, a rename sent
// before the batch that creates the call, /call/upsert_batch with starts and
// ends (children end before parents, summaries rolled up into the parent),
// then /calls/stream_query NDJSON and /calls/usage.
func TestSDKTraffic(t *testing.T) {
	t.Parallel()
	testdb.EachURL(t, testSDKTraffic)
}

func testSDKTraffic(t *testing.T, dbURL string) {
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL})
	c := e2e.Client{URL: srv.URL, Auth: e2e.Basic(srv.Key), Header: jsClient}
	const project = "admin/e2e"
	traceID, root, llm := newID(), newID(), newID()
	at := time.Now().UTC().Truncate(time.Millisecond)
	ts := func(d time.Duration) string { return at.Add(d).Format("2006-01-02T15:04:05.000Z") }

	if status, b := c.Post(t, "/call/update", fmt.Sprintf(`{"project_id":%q,"call_id":%q,"display_name":"My run"}`, project, root)); status != 200 {
		t.Fatalf("early rename: %d %s", status, b)
	}
	attrs := `{"weave":{"client_version":"0.11.1","source":"js-sdk"},"env":"test"}`
	usage := `{"usage":{"gpt-4o-mini":{"requests":1,"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}}`
	batch := fmt.Sprintf(`{"batch":[
		{"mode":"start","req":{"start":{"project_id":%[1]q,"id":%[2]q,"trace_id":%[3]q,"op_name":"weave:///admin/e2e/op/pipeline:abc","started_at":%[5]q,"attributes":%[7]s,"inputs":{"question":"¿Qué tal? 日本語 🚀","n":1e3}}}},
		{"mode":"start","req":{"start":{"project_id":%[1]q,"id":%[4]q,"trace_id":%[3]q,"parent_id":%[2]q,"op_name":"weave:///admin/e2e/op/openai.chat.completions.create:def","started_at":%[5]q,"attributes":%[7]s,"inputs":{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}}}},
		{"mode":"end","req":{"end":{"project_id":%[1]q,"id":%[4]q,"ended_at":%[6]q,"output":{"model":"gpt-4o-mini","choices":[{"message":{"content":"hello"}}]},"summary":%[8]s}}},
		{"mode":"end","req":{"end":{"project_id":%[1]q,"id":%[2]q,"ended_at":%[6]q,"output":"hello","summary":%[8]s}}}
	]}`, project, root, traceID, llm, ts(0), ts(750*time.Millisecond), attrs, usage)
	status, b := c.Post(t, "/call/upsert_batch", batch)
	if status != 200 || !strings.Contains(string(b), `"res":[{"id":"`+root+`","trace_id":"`+traceID+`"}`) {
		t.Fatalf("upsert_batch: %d %s", status, b)
	}

	status, b = c.Post(t, "/calls/stream_query", fmt.Sprintf(`{"project_id":%q,"filter":{"trace_ids":[%q]},"include_costs":false,"limit":1000}`, project, traceID))
	if status != 200 {
		t.Fatalf("stream_query: %d %s", status, b)
	}
	var calls []map[string]json.RawMessage
	scanner := bufio.NewScanner(bytes.NewReader(b))
	for scanner.Scan() {
		var call map[string]json.RawMessage
		if err := json.Unmarshal(scanner.Bytes(), &call); err != nil {
			t.Fatalf("line %q: %v", scanner.Bytes(), err)
		}
		calls = append(calls, call)
	}
	if len(calls) != 2 {
		t.Fatalf("%d calls: %s", len(calls), b)
	}
	got := calls[0] // same started_at: ordered by id, root's id was made first
	if string(got["id"]) != `"`+root+`"` || string(got["attributes"]) != attrs || string(got["display_name"]) != `"My run"` ||
		string(got["inputs"]) != `{"question":"¿Qué tal? 日本語 🚀","n":1e3}` || string(got["output"]) != `"hello"` {
		t.Fatalf("root call: %s", b)
	}
	var summary struct {
		Weave struct {
			Status      string `json:"status"`
			LatencyMS   int64  `json:"latency_ms"`
			DisplayName string `json:"display_name"`
		} `json:"weave"`
	}
	if err := json.Unmarshal(got["summary"], &summary); err != nil || summary.Weave.Status != "success" || summary.Weave.LatencyMS != 750 || summary.Weave.DisplayName != "My run" {
		t.Fatalf("summary: %s", got["summary"])
	}

	// The SDK rolled the child's usage into the root: the root reports it once.
	status, b = c.Post(t, "/calls/usage", fmt.Sprintf(`{"project_id":%q,"call_ids":[%q],"include_costs":true}`, project, root))
	var u struct {
		CallUsage map[string]map[string]struct {
			Requests     int64    `json:"requests"`
			PromptTokens int64    `json:"prompt_tokens"`
			TotalTokens  int64    `json:"total_tokens"`
			PromptCost   *float64 `json:"prompt_tokens_total_cost"`
		} `json:"call_usage"`
	}
	if err := json.Unmarshal(b, &u); status != 200 || err != nil {
		t.Fatalf("usage: %d %s", status, b)
	}
	if m := u.CallUsage[root]["gpt-4o-mini"]; m.Requests != 1 || m.PromptTokens != 12 || m.TotalTokens != 17 || m.PromptCost == nil || *m.PromptCost <= 0 {
		t.Fatalf("usage: %s", b)
	}

	// Deleting the root removes the whole trace from reads.
	if status, b = c.Post(t, "/calls/delete", fmt.Sprintf(`{"project_id":%q,"call_ids":[%q]}`, project, root)); status != 200 || strings.TrimSpace(string(b)) != `{"num_deleted":2}` {
		t.Fatalf("delete: %d %s", status, b)
	}
	if status, b = c.Post(t, "/calls/stream_query", fmt.Sprintf(`{"project_id":%q,"filter":{"trace_ids":[%q]}}`, project, traceID)); status != 200 || len(b) != 0 {
		t.Fatalf("after delete: %d %s", status, b)
	}
}
