package httpapi

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/testdb"
)

// /calls/stats over raw HTTP, in the shapes Weave's CallStatsReq and
// CallStatsRes have: a call's latency and usage in their buckets, a bad
// window a 400 in Weave's error shape, an unknown member a 422, another
// project a 403.
func TestCallStatsRoute(t *testing.T) {
	t.Parallel()
	f := newWeaveFixture(t, testdb.SQLite(t))
	alice := basic("api", f.aliceKey)
	id := newUUID()
	items := fmt.Sprintf(`{"batch":[{"mode":"start","req":{"start":{"project_id":"alice/p","id":%q,"trace_id":%q,"op_name":"op","started_at":"2026-05-01T12:01:00Z","inputs":{},"attributes":{}}}},`+
		`{"mode":"end","req":{"end":{"project_id":"alice/p","id":%q,"ended_at":"2026-05-01T12:01:01.5Z","output":"ok","summary":{"usage":{"gpt-4o":{"prompt_tokens":7,"completion_tokens":3}}}}}}]}`, id, id, id)
	if status, body := post(t, f, alice, "/call/upsert_batch", items); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	status, body := post(t, f, alice, "/calls/stats", `{"project_id":"alice/p","start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:05:00Z",`+
		`"usage_metrics":[{"metric":"input_tokens"},{"metric":"output_tokens"}],"call_metrics":[{"metric":"latency_ms","aggregations":["sum"],"percentiles":[95]}]}`)
	want := `{"start":"2026-05-01T12:00:00Z","end":"2026-05-01T12:05:00Z","granularity":300,"timezone":"UTC",` +
		`"usage_buckets":[{"timestamp":"2026-05-01T12:00:00+00:00","model":"gpt-4o","sum_input_tokens":7,"sum_output_tokens":3,"count":1}],` +
		`"call_buckets":[{"timestamp":"2026-05-01T12:00:00+00:00","sum_latency_ms":1500,"p95_latency_ms":1500,"count":1}]}`
	if status != 200 || strings.TrimSpace(string(body)) != want {
		t.Errorf("stats: %d\n got %s\nwant %s", status, body, want)
	}
	for _, tc := range []struct {
		body   string
		status int
		has    string
	}{
		{`{"project_id":"alice/p","start":"2026-05-01T12:00:00Z","end":"2026-04-01T12:00:00Z"}`, 400, `"error_type":"InvalidRequest"`},
		{`{"project_id":"alice/p","start":"2026-05-01T12:00:00Z","call_metrics":[{"metric":"tokens"}]}`, 422, "metric"},
		{`{"project_id":"alice/p","start":"2026-05-01T12:00:00Z","bucket":1}`, 422, "bucket"},
		{`{"project_id":"alice/p"}`, 422, "start"},
		{`{"project_id":"admin/p","start":"2026-05-01T12:00:00Z"}`, 403, ""},
	} {
		status, body := post(t, f, alice, "/calls/stats", tc.body)
		if status != tc.status || !strings.Contains(string(body), tc.has) {
			t.Errorf("%s: %d %s", tc.body, status, body)
		}
	}
}

// /feedback/payload_schema over raw HTTP in Weave's shapes.
func TestFeedbackPayloadSchemaRoute(t *testing.T) {
	t.Parallel()
	f := newWeaveFixture(t, testdb.SQLite(t))
	alice := basic("api", f.aliceKey)
	if status, body := post(t, f, alice, "/feedback/create", `{"project_id":"alice/p","weave_ref":"weave:///alice/p/call/`+newUUID()+`","feedback_type":"custom","payload":{"output":{"score":0.9,"ok":true}}}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	status, body := post(t, f, alice, "/feedback/payload_schema", `{"project_id":"alice/p","start":"2020-01-01T00:00:00Z"}`)
	want := `{"paths":[{"json_path":"output.ok","value_type":"boolean"},{"json_path":"output.score","value_type":"numeric"}]}`
	if status != 200 || strings.TrimSpace(string(body)) != want {
		t.Errorf("%d\n got %s\nwant %s", status, body, want)
	}
	for body, want := range map[string]int{
		`{"project_id":"alice/p","start":"2020-01-01T00:00:00Z","sample_limit":5001}`: 422,
		`{"project_id":"alice/p"}`:                                422,
		`{"project_id":"admin/p","start":"2020-01-01T00:00:00Z"}`: 403,
	} {
		if status, raw := post(t, f, alice, "/feedback/payload_schema", body); status != want {
			t.Errorf("%s: %d %s", body, status, raw)
		}
	}
}

// /feedback/stats over raw HTTP in Weave's shapes.
func TestFeedbackStatsRoute(t *testing.T) {
	t.Parallel()
	f := newWeaveFixture(t, testdb.SQLite(t))
	alice := basic("api", f.aliceKey)
	if status, body := post(t, f, alice, "/feedback/create", `{"project_id":"alice/p","weave_ref":"weave:///alice/p/call/`+newUUID()+`","feedback_type":"custom","payload":{"output":{"score":0.5}}}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	start := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	status, body := post(t, f, alice, "/feedback/stats", `{"project_id":"alice/p","start":"`+start+`","granularity":86400,"metrics":[{"json_path":"output.score","aggregations":["max"]}]}`)
	if status != 200 || !strings.Contains(string(body), `"max_output_score":0.5,"count":1}`) || !strings.Contains(string(body), `"window_stats":{"output_score":{"max":0.5}}`) {
		t.Errorf("%d %s", status, body)
	}
	for body, want := range map[string]int{
		`{"project_id":"alice/p","start":"2020-01-01T00:00:00Z","metrics":[{"json_path":"a;b"}]}`:                   400,
		`{"project_id":"alice/p","start":"2020-01-01T00:00:00Z","metrics":[{"json_path":"a","value_type":"text"}]}`: 422,
		`{"project_id":"admin/p","start":"2020-01-01T00:00:00Z"}`:                                                   403,
	} {
		if status, raw := post(t, f, alice, "/feedback/stats", body); status != want {
			t.Errorf("%s: %d %s", body, status, raw)
		}
	}
}

// TestFeedbackAggregateRoute serves POST /feedback/aggregate with the body
// of Weave's generated client (feedback.TestAggregate checks the tallies on
// every database).
func TestFeedbackAggregateRoute(t *testing.T) {
	t.Parallel()
	f := newWeaveFixture(t, testdb.SQLite(t))
	alice := basic("api", f.aliceKey)
	if status, body := post(t, f, alice, "/feedback/create", `{"project_id":"alice/p","weave_ref":"weave:///alice/p/call/`+newUUID()+`","feedback_type":"wandb.agent_monitor","payload":{},"scorer_tags":["good"],"scorer_ratings":{"_rating_":0.5}}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	now := time.Now().UnixMilli()
	window := `"after_ms":` + strconv.FormatInt(now-60_000, 10) + `,"before_ms":` + strconv.FormatInt(now+60_000, 10)
	status, body := post(t, f, alice, "/feedback/aggregate", `{"project_id":"alice/p",`+window+`,"feedback_types":["wandb.agent_*"],"tags":["good"],"rating_min":0.5,"group_by":[]}`)
	if status != 200 || !strings.Contains(string(body), `"total_count":1,"scored_count":1,"tag_counts":{"good":1},"rating_counts":{"_rating_":1},"rating_sums":{"_rating_":0.5}}]`) ||
		!strings.Contains(string(body), `"time_bucket_seconds":null`) {
		t.Errorf("%d %s", status, body)
	}
	for body, want := range map[string]int{
		`{"project_id":"alice/p","after_ms":10,"before_ms":5}`:                400,
		`{"project_id":"alice/p",` + window + `,"group_by":["weave_ref"]}`:    422,
		`{"project_id":"alice/p",` + window + `,"span_types":["agent_step"]}`: 422,
		`{"project_id":"alice/p","after_ms":-1,"before_ms":5}`:                422,
		`{"project_id":"admin/p",` + window + `}`:                             403,
	} {
		if status, raw := post(t, f, alice, "/feedback/aggregate", body); status != want {
			t.Errorf("%s: %d %s", body, status, raw)
		}
	}
}
