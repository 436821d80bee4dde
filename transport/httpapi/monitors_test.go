package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// newMonitorFixture serves the trace, objects and feedback routes with
// monitors as the stores' hooks, and the monitor routes, over a job queue
// that works the monitor jobs.
func newMonitorFixture(t *testing.T, db *weft.DB) fixture {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(db)(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(db, jobs.Config{PollInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	mons, err := monitor.New(monitor.Config{DB: db, Jobs: q, Principals: identity, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	traceStore, err := trace.New(trace.Config{DB: db, Hook: mons})
	if err != nil {
		t.Fatal(err)
	}
	objectStore, err := objects.New(objects.Config{DB: db, Hook: mons})
	if err != nil {
		t.Fatal(err)
	}
	feedbackStore, err := feedback.New(feedback.Config{DB: db, Calls: feedback.TraceCalls(traceStore)})
	if err != nil {
		t.Fatal(err)
	}
	mons.SetServices(traceStore, objectStore, feedbackStore)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = q.Stop(stopCtx)
	})
	return newFixture(t, db, 8<<20, func(cfg *Config) {
		cfg.Trace, cfg.Objects, cfg.Feedback, cfg.Monitors = traceStore, objectStore, feedbackStore, mons
	})
}

// TestMonitorBackfillRoutes: a backfill started over HTTP scores the
// project's past calls and reports its progress until done; a listing
// shows it, and the monitor's stats count its verdicts; bad requests get 4xx naming the fault, and another user may
// neither start, read, list nor cancel a backfill of the project, nor read
// its monitor's stats, nor score with its scorers.
func TestMonitorBackfillRoutes(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	f := newMonitorFixture(t, db)
	alice := objectsClient{t: t, base: f.server.URL, auth: basic("api", f.aliceKey)}
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := identity.CreateUser(context.Background(), "bob", false); err != nil {
		t.Fatal(err)
	}
	bobKey, err := identity.CreateAPIKey(context.Background(), "bob", "test")
	if err != nil {
		t.Fatal(err)
	}
	bob := objectsClient{t: t, base: f.server.URL, auth: basic("api", bobKey)}

	past := time.Now().UTC().Add(-time.Hour)
	var calls []sdkCall
	for i := range 5 {
		id := uuid.Must(uuid.NewV7()).String()
		calls = append(calls, sdkCall{id: id, traceID: id, opName: "weave:///alice/p/op/answer:abc", inputs: `{"q":"?"}`,
			output: `"42"`, startedAt: past.Add(time.Duration(i) * time.Second)})
	}
	sendCalls(t, f, basic("api", f.aliceKey), "alice/p", calls)
	var scorer struct{ Digest string }
	if err := json.Unmarshal(alice.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"json_valid","val":`+
		`{"_type":"ValidJSONScorer","_class_name":"ValidJSONScorer","_bases":["Scorer","Object","BaseModel"]}}}`, 200, "digest"), &scorer); err != nil {
		t.Fatal(err)
	}
	alice.post("/obj/create", fmt.Sprintf(`{"obj":{"project_id":"alice/p","object_id":"m","val":{"_type":"Monitor","_class_name":"Monitor",`+
		`"_bases":["Object","BaseModel"],"sampling_rate":1,"scorers":["weave:///alice/p/object/json_valid:%s"],`+
		`"call_filter":{"op_names":[],"query":null},"active":false}}}`, scorer.Digest), 200, "digest")

	var b monitor.Backfill
	if err := json.Unmarshal(alice.post("/v2/alice/p/monitor_backfills", `{"monitor_id":"m"}`, 200, `"state":"running"`), &b); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for b.State == monitor.BackfillRunning && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if err := json.Unmarshal(alice.do(http.MethodGet, "/v2/alice/p/monitor_backfills/"+b.ID, "", nil, 200, ""), &b); err != nil {
			t.Fatal(err)
		}
	}
	if b.State != monitor.BackfillDone || b.CallsSampled != 5 || b.Verdicts.Done != 5 {
		t.Fatalf("backfill %+v, want done with 5 calls sampled and 5 verdicts", b)
	}
	alice.do(http.MethodGet, "/v2/alice/p/monitor_backfills?monitor_id=m", "", nil, 200, `"id":"`+b.ID+`"`)
	alice.do(http.MethodGet, "/v2/alice/p/monitors/m/stats", "", nil, 200, `"verdicts":{"pending":0,"done":5,"error":0}`)
	alice.do(http.MethodGet, "/v2/alice/p/monitors/m/stats?before="+url.QueryEscape(past.Format(time.RFC3339)), "", nil, 200, `"done":0`)
	alice.do(http.MethodGet, "/v2/alice/p/monitors/m/stats?from=yesterday", "", nil, 422, "from")
	alice.post("/v2/alice/p/monitor_backfills/"+b.ID+"/cancel", ``, 200, `"state":"done"`)

	for _, c := range []struct {
		name, body string
		status     int
		fragment   string
	}{
		{"unknown monitor", `{"monitor_id":"nothing"}`, 404, "MonitorNotFound"},
		{"range ends first", `{"monitor_id":"m","started_from":"2026-01-02T00:00:00Z","started_before":"2026-01-01T00:00:00Z"}`, 400, "started_from"},
		{"no monitor", `{}`, 422, "monitor_id"},
		{"bad time", `{"monitor_id":"m","started_from":"yesterday"}`, 422, "started_from"},
		{"not JSON", `{"monitor_id":`, 422, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			alice := alice
			alice.t = t
			alice.post("/v2/alice/p/monitor_backfills", c.body, c.status, c.fragment)
		})
	}
	alice.do(http.MethodGet, "/v2/alice/p/monitor_backfills/nothing", "", nil, 404, "BackfillNotFound")

	bob.post("/v2/alice/p/monitor_backfills", `{"monitor_id":"m"}`, 403, "")
	bob.do(http.MethodGet, "/v2/alice/p/monitor_backfills/"+b.ID, "", nil, 403, "")
	bob.do(http.MethodGet, "/v2/alice/p/monitor_backfills", "", nil, 403, "")
	bob.post("/v2/alice/p/monitor_backfills/"+b.ID+"/cancel", ``, 403, "")
	bob.do(http.MethodGet, "/v2/alice/p/monitors/m/stats", "", nil, 403, "")
	// A scorer gives verdicts and rewards on answers that are no calls.
	score := `{"scorer":"weave:///alice/p/object/json_valid:` + scorer.Digest + `","items":[{"output":"{}"},{"output":"{"}],"reward":"json_valid"}`
	alice.post("/v2/alice/p/scorers/score", score, 200, `{"results":[{"output":{"json_valid":true},"reward":1},{"output":{"json_valid":false},"reward":0}]}`)
	alice.post("/v2/alice/p/scorers/score", `{"scorer":"weave:///alice/p/object/json_valid:`+scorer.Digest+`","items":[]}`, 422, "items")
	alice.post("/v2/alice/p/scorers/score", `{"scorer":"weave:///bob/p/object/json_valid:`+scorer.Digest+`","items":[{"output":1}]}`, 400, "InvalidScore")
	bob.post("/v2/alice/p/scorers/score", score, 403, "")
	(objectsClient{t: t, base: f.server.URL}).post("/v2/alice/p/monitor_backfills", `{"monitor_id":"m"}`, 401, "")
}
