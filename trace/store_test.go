package trace_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

const project = "alice/p"

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func newStore(t *testing.T, db *weft.DB) (*trace.Store, context.Context) {
	t.Helper()
	s, err := trace.New(trace.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	return s, weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u-alice", Username: "alice"})
}

func id() string { return uuid.Must(uuid.NewV7()).String() }

func ptr[T any](v T) *T { return &v }

func start(callID, traceID string, parent *string, at time.Time, inputs string) trace.BatchItem {
	return trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{
		ProjectID: project, ID: callID, TraceID: traceID, ParentID: parent, OpName: "weave:///alice/p/op/step:abc",
		StartedAt: at, Inputs: json.RawMessage(inputs),
	}}
}

func end(callID string, at time.Time, summary string) trace.BatchItem {
	return trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{
		ProjectID: project, ID: callID, EndedAt: at, Summary: json.RawMessage(summary), Output: json.RawMessage(`"ok"`),
	}}
}

func upsert(t *testing.T, ctx context.Context, s trace.Service, items ...trace.BatchItem) *trace.UpsertBatchRes {
	t.Helper()
	res, err := s.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: items})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Res {
		if r.Err != nil {
			t.Fatalf("item %d: %v", i, r.Err)
		}
	}
	return res
}

func read(t *testing.T, ctx context.Context, s trace.Service, callID string) *trace.Call {
	t.Helper()
	res, err := s.CallRead(ctx, &trace.CallReadReq{ProjectID: project, ID: callID})
	if err != nil {
		t.Fatal(err)
	}
	return res.Call
}

func query(t *testing.T, ctx context.Context, s trace.Service, req trace.CallsQueryReq) []*trace.Call {
	t.Helper()
	req.ProjectID = project
	var out []*trace.Call
	if err := s.CallsQuery(ctx, &req, func(c *trace.Call) error { out = append(out, c); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func ids(calls []*trace.Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.ID
	}
	return out
}

// weaveSummary decodes summary.weave of a call.
func weaveSummary(t *testing.T, c *trace.Call) map[string]any {
	t.Helper()
	var s struct {
		Weave map[string]any `json:"weave"`
	}
	if err := json.Unmarshal(c.Summary, &s); err != nil {
		t.Fatalf("summary %s: %v", c.Summary, err)
	}
	return s.Weave
}

func TestStore(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)

		t.Run("exact round trip and derived summary", func(t *testing.T) {
			callID, traceID := id(), id()
			inputs := `{"z":1,"a":{"nested":[1,2,{"x":null}]},"big":123456789012345678901234567890,"f":1.50,"u":"héllo 👋 \u00e9 \"q\""}`
			attrs := `{"weave":{"client_version":"0.11.1","source":"js-sdk"},"k":[true,false]}`
			summary := `{"usage":{"gpt-4":{"requests":1,"prompt_tokens":3}},"weave":{"status":"bogus","keep":1,"latency_ms":-5},"z":1e400}`
			var startReq trace.CallStartReq
			body := fmt.Sprintf(`{"start":{"project_id":%q,"id":%q,"trace_id":%q,"op_name":"weave:///alice/p/op/my_op:dig","started_at":"2026-05-01T12:00:00.000Z","inputs":%s,"attributes":%s,"wb_user_id":"intruder","wb_run_id":"run-1","wb_run_step":7}}`,
				project, callID, traceID, inputs, attrs)
			if err := json.Unmarshal([]byte(body), &startReq); err != nil {
				t.Fatal(err)
			}
			res, err := s.CallStart(ctx, &startReq)
			if err != nil || res.ID != callID || res.TraceID != traceID {
				t.Fatalf("start: %+v %v", res, err)
			}
			var endReq trace.CallEndReq
			body = fmt.Sprintf(`{"end":{"project_id":%q,"id":%q,"ended_at":"2026-05-01T12:00:01.234567Z","summary":%s,"output":null,"wb_run_step_end":9}}`, project, callID, summary)
			if err := json.Unmarshal([]byte(body), &endReq); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CallEnd(ctx, &endReq); err != nil {
				t.Fatal(err)
			}
			c := read(t, ctx, s, callID)
			if c == nil {
				t.Fatal("call not found")
			}
			if string(c.Inputs) != inputs || string(c.Attributes) != attrs || string(c.Output) != "null" {
				t.Fatalf("not exact:\ninputs %s\nattrs %s\noutput %s", c.Inputs, c.Attributes, c.Output)
			}
			if *c.PfUserID != "u-alice" || *c.PfRunID != "run-1" || *c.PfRunStep != 7 || *c.PfRunStepEnd != 9 {
				t.Fatalf("user/run fields: %v %v %v %v", *c.PfUserID, *c.PfRunID, *c.PfRunStep, *c.PfRunStepEnd)
			}
			want := `{"usage":{"gpt-4":{"requests":1,"prompt_tokens":3}},"weave":{"keep":1,"status":"success","trace_name":"my_op","latency_ms":1234},"z":1e400}`
			if string(c.Summary) != want {
				t.Fatalf("summary\n got %s\nwant %s", c.Summary, want)
			}
			if !c.StartedAt.Equal(t0) || !c.EndedAt.Equal(t0.Add(1234567*time.Microsecond)) {
				t.Fatalf("times %v %v", c.StartedAt, c.EndedAt)
			}
			// The encoded call carries the raw JSON verbatim too.
			enc, _ := json.Marshal(c)
			if !strings.Contains(string(enc), `"inputs":`+inputs) {
				t.Fatalf("encoded call changed inputs: %s", enc)
			}
		})

		t.Run("op refs of either scheme name the trace", func(t *testing.T) {
			for _, op := range []string{"trace:///alice/p/op/my_op:dig", "weave:///alice/p/op/my_op:dig"} {
				res, err := s.CallStart(ctx, &trace.CallStartReq{Start: trace.StartedCall{ProjectID: project, OpName: op, StartedAt: t0}})
				if err != nil {
					t.Fatalf("%s: %v", op, err)
				}
				c := read(t, ctx, s, res.ID)
				if got := weaveSummary(t, c)["trace_name"]; got != "my_op" || c.OpName != op {
					t.Fatalf("%s: trace_name %v, op_name %q", op, got, c.OpName)
				}
			}
		})

		t.Run("generated ids are lowercase UUIDv7", func(t *testing.T) {
			res, err := s.CallStart(ctx, &trace.CallStartReq{Start: trace.StartedCall{ProjectID: project, OpName: "plain op", StartedAt: t0}})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{res.ID, res.TraceID} {
				u, err := uuid.Parse(v)
				if err != nil || u.Version() != 7 || v != strings.ToLower(v) {
					t.Fatalf("id %q is not a lowercase UUIDv7", v)
				}
			}
			if res.ID == res.TraceID {
				t.Fatal("call id and trace id must be independent")
			}
			if c := read(t, ctx, s, res.ID); weaveSummary(t, c)["trace_name"] != "plain op" || weaveSummary(t, c)["status"] != "running" {
				t.Fatalf("summary %s", c.Summary)
			}
		})

		t.Run("id validation", func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				id      string
				traceID string
				parent  *string
				ok      bool
			}{
				{"uuid", id(), id(), nil, true},
				{"otel hex", "0123456789abcdef", "0123456789abcdef0123456789abcdef", ptr("fedcba9876543210"), true},
				{"uppercase uuid", strings.ToUpper(id()), id(), nil, false},
				{"short hex", "abc", id(), nil, false},
				{"span id as trace id", id(), "0123456789abcdef", nil, false},
				{"bad parent", id(), id(), ptr("not-an-id"), false},
				{"uppercase hex", "0123456789ABCDEF", id(), nil, false},
			} {
				_, err := s.CallStart(ctx, &trace.CallStartReq{Start: trace.StartedCall{ProjectID: project, ID: tc.id, TraceID: tc.traceID, ParentID: tc.parent, OpName: "op", StartedAt: t0}})
				if tc.ok != (err == nil) || (err != nil && !errors.Is(err, trace.ErrInvalidID)) {
					t.Errorf("%s: err = %v", tc.name, err)
				}
			}
			_, err := s.CallEnd(ctx, &trace.CallEndReq{End: trace.EndedCall{ProjectID: project, ID: "nope", EndedAt: t0}})
			if !errors.Is(err, trace.ErrInvalidID) || !errors.Is(err, weft.ErrInvalid) {
				t.Fatalf("end with bad id: %v", err)
			}
		})

		t.Run("other start and end rules", func(t *testing.T) {
			for name, st := range map[string]trace.StartedCall{
				"missing op":       {ProjectID: project, StartedAt: t0},
				"missing time":     {ProjectID: project, OpName: "op"},
				"bad project":      {ProjectID: "noslash", OpName: "op", StartedAt: t0},
				"inputs array":     {ProjectID: project, OpName: "op", StartedAt: t0, Inputs: json.RawMessage(`[1]`)},
				"long op":          {ProjectID: project, OpName: strings.Repeat("x", 129), StartedAt: t0},
				"bad op ref":       {ProjectID: project, OpName: "weave:///alice/p/object/x:1", StartedAt: t0},
				"bad trace op ref": {ProjectID: project, OpName: "trace:///alice/p/object/x:1", StartedAt: t0},
				"negative step":    {ProjectID: project, OpName: "op", StartedAt: t0, PfRunStep: ptr(int64(-1))},
				"nul in name":      {ProjectID: project, OpName: "op", StartedAt: t0, DisplayName: ptr("a\x00b")},
				"long name":        {ProjectID: project, OpName: "op", StartedAt: t0, DisplayName: ptr(strings.Repeat("n", 1025))},
				"invalid inputs":   {ProjectID: project, OpName: "op", StartedAt: t0, Inputs: json.RawMessage(`{"a":`)},
				"invalid attribs":  {ProjectID: project, OpName: "op", StartedAt: t0, Attributes: json.RawMessage(`"s"`)},
			} {
				if _, err := s.CallStart(ctx, &trace.CallStartReq{Start: st}); !errors.Is(err, weft.ErrInvalid) {
					t.Errorf("%s: err = %v, want an ErrInvalid", name, err)
				}
			}
			if _, err := s.CallEnd(ctx, &trace.CallEndReq{End: trace.EndedCall{ProjectID: project, ID: id(), EndedAt: t0, Summary: json.RawMessage(`[]`)}}); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("summary array: %v", err)
			}
			if _, err := s.CallEnd(ctx, &trace.CallEndReq{End: trace.EndedCall{ProjectID: project, ID: id()}}); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("missing ended_at: %v", err)
			}
			// Calls built in Go (not decoded from JSON) get their raw members checked.
			for name, end := range map[string]trace.EndedCall{
				"invalid output":  {ProjectID: project, ID: id(), EndedAt: t0, Output: json.RawMessage(`{"a":`)},
				"invalid summary": {ProjectID: project, ID: id(), EndedAt: t0, Summary: json.RawMessage(`{"usage":`)},
			} {
				if _, err := s.CallEnd(ctx, &trace.CallEndReq{End: end}); !errors.Is(err, weft.ErrInvalid) {
					t.Errorf("%s: err = %v, want an ErrInvalid", name, err)
				}
			}
		})

		t.Run("end before start is merged when the start comes", func(t *testing.T) {
			callID, traceID := id(), id()
			upsert(t, ctx, s, end(callID, t0.Add(2*time.Second), `{"a":1}`))
			if c := read(t, ctx, s, callID); c != nil {
				t.Fatalf("end-only call is visible: %+v", c)
			}
			if got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{TraceIDs: []string{traceID}, CallIDs: []string{callID}}}); len(got) != 0 {
				t.Fatalf("end-only call returned by a query")
			}
			if n, _ := s.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: project, Filter: trace.CallsFilter{CallIDs: []string{callID}}}); n.Count != 0 {
				t.Fatalf("end-only call counted")
			}
			upsert(t, ctx, s, start(callID, traceID, nil, t0, `{"x":1}`))
			c := read(t, ctx, s, callID)
			if c == nil || string(c.Output) != `"ok"` || weaveSummary(t, c)["status"] != "success" || weaveSummary(t, c)["latency_ms"] != 2000.0 {
				t.Fatalf("merged call: %+v", c)
			}
		})

		t.Run("last write wins and renames merge", func(t *testing.T) {
			callID, traceID := id(), id()
			// A rename before anything else (the TS SDK does that).
			if _, err := s.CallUpdate(ctx, &trace.CallUpdateReq{ProjectID: project, CallID: callID, DisplayName: "early"}); err != nil {
				t.Fatal(err)
			}
			first := start(callID, traceID, nil, t0, `{"v":1}`)
			second := start(callID, traceID, nil, t0.Add(time.Second), `{"v":2}`)
			second.Start.OpName = "second-op"
			upsert(t, ctx, s, first)
			upsert(t, ctx, s, second, end(callID, t0.Add(3*time.Second), `{"n":1}`))
			upsert(t, ctx, s, end(callID, t0.Add(5*time.Second), `{"n":2}`))
			c := read(t, ctx, s, callID)
			if c.OpName != "second-op" || string(c.Inputs) != `{"v":2}` || !c.StartedAt.Equal(t0.Add(time.Second)) {
				t.Fatalf("start not last-write-wins: %s %s %v", c.OpName, c.Inputs, c.StartedAt)
			}
			if *c.DisplayName != "early" || weaveSummary(t, c)["display_name"] != "early" || weaveSummary(t, c)["trace_name"] != nil {
				t.Fatalf("early rename lost: %v %s", c.DisplayName, c.Summary)
			}
			if !strings.HasPrefix(string(c.Summary), `{"n":2,`) || weaveSummary(t, c)["latency_ms"] != 4000.0 {
				t.Fatalf("end not last-write-wins: %s", c.Summary)
			}
			if _, err := s.CallUpdate(ctx, &trace.CallUpdateReq{ProjectID: project, CallID: callID, DisplayName: "late"}); err != nil {
				t.Fatal(err)
			}
			if c := read(t, ctx, s, callID); *c.DisplayName != "late" {
				t.Fatalf("rename after start: %v", *c.DisplayName)
			}
			if _, err := s.CallUpdate(ctx, &trace.CallUpdateReq{ProjectID: project, CallID: callID}); !errors.Is(err, weft.ErrInvalid) {
				t.Fatalf("rename without name: %v", err)
			}
		})

		t.Run("a retried batch is idempotent", func(t *testing.T) {
			// A client that lost the answer sends the same batch again: the
			// second write takes the upsert path after the bulk load finds
			// the calls there (on Citus the duplicate key comes back as
			// SQLSTATE XX000, not 23505).
			traceID := id()
			var batch []trace.BatchItem
			var ids []string
			for i := range 20 {
				callID := id()
				ids = append(ids, callID)
				batch = append(batch, start(callID, traceID, nil, t0.Add(time.Duration(i)*time.Millisecond), `{"i":1}`),
					end(callID, t0.Add(time.Second), `{"n":1}`))
			}
			upsert(t, ctx, s, batch...)
			upsert(t, ctx, s, batch...)
			for _, callID := range ids {
				c := read(t, ctx, s, callID)
				if string(c.Inputs) != `{"i":1}` || c.EndedAt == nil || !strings.HasPrefix(string(c.Summary), `{"n":1`) {
					t.Fatalf("after a retry: %s %s %v", c.Inputs, c.Summary, c.EndedAt)
				}
			}
		})

		t.Run("batch items fail on their own", func(t *testing.T) {
			good, traceID := id(), id()
			bad := start("BAD", traceID, nil, t0, `{}`)
			res, err := s.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: []trace.BatchItem{
				start(good, traceID, nil, t0, `{}`),
				bad,
				{Mode: "middle"},
				{Mode: trace.ModeStart, Err: errors.New("could not decode")},
				end(good, t0.Add(time.Second), `{}`),
				end("nope", t0, `{}`),
			}})
			if err != nil {
				t.Fatal(err)
			}
			wantErr := []bool{false, true, true, true, false, true}
			for i, r := range res.Res {
				if (r.Err != nil) != wantErr[i] {
					t.Errorf("item %d: err = %v", i, r.Err)
				}
			}
			if res.Res[0].ID != good || res.Res[0].TraceID != traceID {
				t.Errorf("start result: %+v", res.Res[0])
			}
			if c := read(t, ctx, s, good); c == nil || c.EndedAt == nil {
				t.Fatalf("good item not stored: %+v", c)
			}
		})

		t.Run("status", func(t *testing.T) {
			traceID := id()
			okID, errID, runID, descID := id(), id(), id(), id()
			failed := end(errID, t0.Add(time.Second), `{}`)
			failed.End.Exception = ptr("boom")
			upsert(t, ctx, s,
				start(okID, traceID, nil, t0, `{}`), start(errID, traceID, nil, t0, `{}`),
				start(runID, traceID, nil, t0, `{}`), start(descID, traceID, nil, t0, `{}`),
				end(okID, t0.Add(time.Second), `{"status_counts":{"success":2,"error":0}}`), failed,
				end(descID, t0.Add(time.Second), `{"status_counts":{"success":1,"error":1}}`))
			for callID, want := range map[string]string{okID: "success", errID: "error", runID: "running", descID: "descendant_error"} {
				c := read(t, ctx, s, callID)
				if got := weaveSummary(t, c)["status"]; got != want {
					t.Errorf("status = %v, want %s", got, want)
				}
				if _, has := weaveSummary(t, c)["latency_ms"]; has == (want == "running") {
					t.Errorf("%s: latency_ms presence wrong: %s", want, c.Summary)
				}
			}
		})

		t.Run("calls complete", func(t *testing.T) {
			callID, traceID := id(), id()
			res, err := s.CallsComplete(ctx, &trace.CallsCompleteReq{ProjectID: project, Batch: []trace.CompletedCall{
				{ID: callID, TraceID: traceID, OpName: "op", StartedAt: t0, EndedAt: t0.Add(time.Second), Output: json.RawMessage(`[1]`)},
				{ID: id(), OpName: "op", StartedAt: t0, EndedAt: t0},
				{ProjectID: "other/p", ID: id(), TraceID: id(), OpName: "op", StartedAt: t0, EndedAt: t0},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Res[0].Err != nil || res.Res[1].Err == nil || res.Res[2].Err == nil {
				t.Fatalf("results: %+v", res.Res)
			}
			if c := read(t, ctx, s, callID); c == nil || string(c.Output) != `[1]` || weaveSummary(t, c)["status"] != "success" {
				t.Fatalf("completed call: %+v", c)
			}
		})

		// Without a project of the request (OTLP ingest, the chat gateway)
		// each call is written to its own; one that names none fails alone.
		t.Run("calls complete, a project each", func(t *testing.T) {
			here, there := id(), id()
			res, err := s.CallsComplete(ctx, &trace.CallsCompleteReq{Batch: []trace.CompletedCall{
				{ProjectID: project, ID: here, TraceID: id(), OpName: "op", StartedAt: t0, EndedAt: t0.Add(time.Second)},
				{ID: id(), TraceID: id(), OpName: "op", StartedAt: t0, EndedAt: t0},
				{ProjectID: "other/p", ID: there, TraceID: id(), OpName: "op", StartedAt: t0, EndedAt: t0},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Res[0].Err != nil || !errors.Is(res.Res[1].Err, weft.ErrInvalid) || res.Res[2].Err != nil {
				t.Fatalf("results: %+v", res.Res)
			}
			for callID, projectID := range map[string]string{here: project, there: "other/p"} {
				got, err := s.CallRead(ctx, &trace.CallReadReq{ProjectID: projectID, ID: callID})
				if err != nil || got.Call == nil || got.Call.EndedAt == nil {
					t.Fatalf("call of %s: %+v, %v", projectID, got, err)
				}
			}
		})
	})
}

func TestStoreQuery(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		traceA, traceB := id(), id()
		root, child, grandchild, other := id(), id(), id(), id()
		tied1, tied2 := "00000000-0000-7000-8000-000000000001", "00000000-0000-7000-8000-000000000002"
		ref, traceRef := "weave:///alice/p/object/doc:abc", "trace:///alice/p/object/doc:abc"
		c := start(child, traceA, &root, t0.Add(time.Second), `{"doc":"`+ref+`"}`)
		c.Start.OpName = "weave:///alice/p/op/child:1"
		c.Start.ThreadID = ptr("thread-1")
		g := start(grandchild, traceA, &child, t0.Add(2*time.Second), `{}`)
		gEnd := end(grandchild, t0.Add(3*time.Second), `{}`)
		gEnd.End.Output = json.RawMessage(`{"out":["` + ref + `"]}`)
		upsert(t, ctx, s,
			start(tied2, traceB, nil, t0.Add(5*time.Second), `{}`), start(tied1, traceB, nil, t0.Add(5*time.Second), `{}`),
			g, gEnd, c, start(root, traceA, nil, t0, `{"doc":"`+traceRef+`"}`), start(other, traceB, nil, t0.Add(4*time.Second), `{}`))

		for _, tc := range []struct {
			name string
			req  trace.CallsQueryReq
			want []string
		}{
			{"default order started_at then id", trace.CallsQueryReq{}, []string{root, child, grandchild, other, tied1, tied2}},
			{"trace ids", trace.CallsQueryReq{Filter: trace.CallsFilter{TraceIDs: []string{traceA}}}, []string{root, child, grandchild}},
			{"call ids", trace.CallsQueryReq{Filter: trace.CallsFilter{CallIDs: []string{other, root}}}, []string{root, other}},
			{"parent ids", trace.CallsQueryReq{Filter: trace.CallsFilter{ParentIDs: []string{root, child}}}, []string{child, grandchild}},
			{"op names", trace.CallsQueryReq{Filter: trace.CallsFilter{OpNames: []string{"weave:///alice/p/op/child:1"}}}, []string{child}},
			{"roots only", trace.CallsQueryReq{Filter: trace.CallsFilter{TraceRootsOnly: true}}, []string{root, other, tied1, tied2}},
			{"input refs", trace.CallsQueryReq{Filter: trace.CallsFilter{InputRefs: []string{ref}}}, []string{child}},
			{"output refs", trace.CallsQueryReq{Filter: trace.CallsFilter{OutputRefs: []string{ref}}}, []string{grandchild}},
			{"input refs of the trace scheme", trace.CallsQueryReq{Filter: trace.CallsFilter{InputRefs: []string{traceRef}}}, []string{root}},
			{"thread ids", trace.CallsQueryReq{Filter: trace.CallsFilter{ThreadIDs: []string{"thread-1"}}}, []string{child}},
			{"combined filters", trace.CallsQueryReq{Filter: trace.CallsFilter{TraceIDs: []string{traceA}, TraceRootsOnly: true}}, []string{root}},
			{"has children", trace.CallsQueryReq{Filter: trace.CallsFilter{HasChildren: true}}, []string{root, child}},
			{"has children among ids", trace.CallsQueryReq{Filter: trace.CallsFilter{CallIDs: []string{child, grandchild, other}, HasChildren: true}}, []string{child}},
			{"sort desc, id asc breaks ties", trace.CallsQueryReq{SortBy: []trace.SortBy{{Field: "started_at", Direction: "desc"}}}, []string{tied1, tied2, other, grandchild, child, root}},
			{"limit and offset", trace.CallsQueryReq{Limit: 2, Offset: 1}, []string{child, grandchild}},
			{"offset alone", trace.CallsQueryReq{Offset: 4}, []string{tied1, tied2}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := ids(query(t, ctx, s, tc.req)); !slices.Equal(got, tc.want) {
					t.Fatalf("got %v\nwant %v", got, tc.want)
				}
			})
		}

		t.Run("columns", func(t *testing.T) {
			got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{CallIDs: []string{root}}, Columns: []string{"inputs"}})
			var fields map[string]any
			b, _ := json.Marshal(got[0])
			_ = json.Unmarshal(b, &fields)
			keys := slices.Sorted(func(yield func(string) bool) {
				for k := range fields {
					if !yield(k) {
						return
					}
				}
			})
			// attributes, which Weave's call schema requires, comes as {}.
			if !slices.Equal(keys, []string{"attributes", "id", "inputs", "op_name", "project_id", "started_at", "trace_id"}) || len(fields["attributes"].(map[string]any)) != 0 {
				t.Fatalf("columns: %v", keys)
			}
		})

		t.Run("bad queries", func(t *testing.T) {
			for _, req := range []trace.CallsQueryReq{
				{ProjectID: project, SortBy: []trace.SortBy{{Field: "nope"}}},
				{ProjectID: project, SortBy: []trace.SortBy{{Field: "id", Direction: "up"}}},
				{ProjectID: project, Limit: -1},
				{ProjectID: "bad"},
			} {
				called := false
				err := s.CallsQuery(ctx, &req, func(*trace.Call) error { called = true; return nil })
				if !errors.Is(err, weft.ErrInvalid) || called {
					t.Errorf("%+v: err = %v", req, err)
				}
			}
		})

		t.Run("stats", func(t *testing.T) {
			for _, tc := range []struct {
				req  trace.CallsQueryStatsReq
				want int64
			}{
				{trace.CallsQueryStatsReq{}, 6},
				{trace.CallsQueryStatsReq{Filter: trace.CallsFilter{TraceIDs: []string{traceA}}}, 3},
				{trace.CallsQueryStatsReq{Limit: 4}, 4},
			} {
				tc.req.ProjectID = project
				res, err := s.CallsQueryStats(ctx, &tc.req)
				if err != nil || res.Count != tc.want {
					t.Errorf("%+v: %v %v, want %d", tc.req, res, err, tc.want)
				}
			}
		})

		t.Run("another project sees nothing", func(t *testing.T) {
			n, err := s.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: "bob/p"})
			if err != nil || n.Count != 0 {
				t.Fatalf("%v %v", n, err)
			}
			if res, _ := s.CallRead(ctx, &trace.CallReadReq{ProjectID: "bob/p", ID: root}); res.Call != nil {
				t.Fatal("read across projects")
			}
		})
	})
}

func TestStoreQueryStatusAndTime(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		ok, failed, running, childFailed, countedAsText := id(), id(), id(), id(), id()
		failedEnd := end(failed, t0.Add(2*time.Second), `{}`)
		failedEnd.End.Exception = ptr("ValueError: boom")
		upsert(t, ctx, s,
			start(ok, id(), nil, t0, `{}`), end(ok, t0.Add(time.Second), `{"status_counts":{"success":2,"error":0}}`),
			start(failed, id(), nil, t0.Add(time.Second), `{}`), failedEnd,
			start(running, id(), nil, t0.Add(2*time.Second), `{}`),
			start(childFailed, id(), nil, t0.Add(3*time.Second), `{}`), end(childFailed, t0.Add(4*time.Second), `{"status_counts":{"error":1.5}}`),
			// A count that is not a number is no error count, as reads derive it.
			start(countedAsText, id(), nil, t0.Add(4*time.Second), `{}`), end(countedAsText, t0.Add(5*time.Second), `{"status_counts":{"error":"3"}}`),
		)
		for _, tc := range []struct {
			name   string
			filter trace.CallsFilter
			want   []string
		}{
			{"success", trace.CallsFilter{Statuses: []string{trace.StatusSuccess}}, []string{ok, countedAsText}},
			{"error", trace.CallsFilter{Statuses: []string{trace.StatusError}}, []string{failed}},
			{"running", trace.CallsFilter{Statuses: []string{trace.StatusRunning}}, []string{running}},
			{"descendant error", trace.CallsFilter{Statuses: []string{trace.StatusDescendantError}}, []string{childFailed}},
			{"any of two", trace.CallsFilter{Statuses: []string{trace.StatusError, trace.StatusRunning}}, []string{failed, running}},
			{"started from", trace.CallsFilter{StartedFrom: ptr(t0.Add(2 * time.Second))}, []string{running, childFailed, countedAsText}},
			{"started before", trace.CallsFilter{StartedBefore: ptr(t0.Add(time.Second))}, []string{ok}},
			{"a window in another zone", trace.CallsFilter{
				StartedFrom:   ptr(t0.Add(time.Second).In(time.FixedZone("x", 5*3600))),
				StartedBefore: ptr(t0.Add(3 * time.Second)),
			}, []string{failed, running}},
			{"time and status", trace.CallsFilter{StartedFrom: ptr(t0.Add(time.Second)), Statuses: []string{trace.StatusSuccess}}, []string{countedAsText}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				// Every status is derived the same way reads show it.
				got := query(t, ctx, s, trace.CallsQueryReq{Filter: tc.filter})
				if !slices.Equal(ids(got), tc.want) {
					t.Fatalf("got %v\nwant %v", ids(got), tc.want)
				}
				for _, c := range got {
					if status := weaveSummary(t, c)["status"]; len(tc.filter.Statuses) > 0 && !slices.Contains(tc.filter.Statuses, status.(string)) {
						t.Errorf("%s has status %v", c.ID, status)
					}
				}
				stats, err := s.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: project, Filter: tc.filter})
				if err != nil || stats.Count != int64(len(tc.want)) {
					t.Fatalf("stats: %v %v", stats, err)
				}
			})
		}
		err := s.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: project, Filter: trace.CallsFilter{Statuses: []string{"ok'; DROP TABLE calls; --"}}},
			func(*trace.Call) error { return nil })
		if !errors.Is(err, trace.ErrInvalidQuery) {
			t.Fatalf("unknown status: %v", err)
		}
	})
}

func TestStoreQueryKeyset(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		// Seven calls, three of them started at the same instant.
		var items []trace.BatchItem
		for i, at := range []time.Duration{0, time.Second, time.Second, time.Second, 2 * time.Second, 3*time.Second + time.Microsecond, 4 * time.Second} {
			items = append(items, start(fmt.Sprintf("00000000-0000-7000-8000-%012d", 7-i), id(), nil, t0.Add(at), `{}`))
		}
		upsert(t, ctx, s, items...)
		for _, dir := range []string{"asc", "desc"} {
			t.Run(dir, func(t *testing.T) {
				sortBy := []trace.SortBy{{Field: "started_at", Direction: dir}}
				want := ids(query(t, ctx, s, trace.CallsQueryReq{SortBy: sortBy}))
				var got []string
				var after *trace.CallsCursor
				for pages := 0; pages < 10; pages++ {
					page := query(t, ctx, s, trace.CallsQueryReq{SortBy: sortBy, Limit: 2, After: after})
					if len(page) == 0 {
						break
					}
					got = append(got, ids(page)...)
					last := page[len(page)-1]
					after = &trace.CallsCursor{StartedAt: last.StartedAt, ID: last.ID}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("pages by cursor: %v\nwant %v", got, want)
				}
			})
		}
		err := s.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: project, SortBy: []trace.SortBy{{Field: "op_name"}}, After: &trace.CallsCursor{StartedAt: t0, ID: "x"}},
			func(*trace.Call) error { return nil })
		if !errors.Is(err, trace.ErrInvalidQuery) {
			t.Fatalf("a cursor with another sort: %v", err)
		}
	})
}

func TestStoreDelete(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		traceID := id()
		root, child, grandchild, sibling := id(), id(), id(), id()
		upsert(t, ctx, s, start(root, traceID, nil, t0, `{}`), start(child, traceID, &root, t0, `{}`),
			start(grandchild, traceID, &child, t0, `{}`), start(sibling, traceID, &root, t0, `{}`))

		unknown := id()
		res, err := s.CallsDelete(ctx, &trace.CallsDeleteReq{ProjectID: project, CallIDs: []string{child, unknown, child}})
		if err != nil {
			t.Fatal(err)
		}
		// child and the unknown id are counted, plus the grandchild found.
		if res.NumDeleted != 3 {
			t.Fatalf("num_deleted = %d, want 3", res.NumDeleted)
		}
		got := ids(query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{TraceIDs: []string{traceID}}}))
		if slices.Contains(got, child) || slices.Contains(got, grandchild) || len(got) != 2 {
			t.Fatalf("after delete: %v", got)
		}
		if read(t, ctx, s, grandchild) != nil {
			t.Fatal("deleted descendant still readable")
		}
		if u, _ := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project, CallIDs: []string{child}}); len(u.CallUsage[child]) != 0 {
			t.Fatal("deleted call has usage")
		}
		again, err := s.CallsDelete(ctx, &trace.CallsDeleteReq{ProjectID: project, CallIDs: []string{child}})
		if err != nil || again.NumDeleted != 2 {
			t.Fatalf("repeat delete: %+v %v", again, err)
		}
		tooMany := make([]string, trace.MaxDeleteIDs+1)
		for i := range tooMany {
			tooMany[i] = id()
		}
		if _, err := s.CallsDelete(ctx, &trace.CallsDeleteReq{ProjectID: project, CallIDs: tooMany}); !errors.Is(err, weft.ErrTooLarge) {
			t.Fatalf("1001 ids: %v", err)
		}
		if _, err := s.CallsDelete(ctx, &trace.CallsDeleteReq{ProjectID: project, CallIDs: tooMany[:trace.MaxDeleteIDs]}); err != nil {
			t.Fatalf("1000 ids: %v", err)
		}
		// A start arriving after the delete does not bring the call back.
		upsert(t, ctx, s, start(child, traceID, &root, t0, `{}`))
		if read(t, ctx, s, child) != nil {
			t.Fatal("deleted call came back")
		}
	})
}

// usageOf returns the gpt-4 usage of a call id in res.
func usageOf(res *trace.CallsUsageRes, callID, model string) trace.Usage {
	if u := res.CallUsage[callID][model]; u != nil {
		return *u
	}
	return trace.Usage{}
}

func TestStoreUsage(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)

		// The upstream acceptance case: two traces of four calls each — a root whose
		// parent is outside the trace, a child (2/1 tokens), a leaf under the child
		// (3/1) and an unfinished child of the root.
		type tr struct{ root, child, leaf, unfinished string }
		makeTrace := func() tr {
			traceID := id()
			x := tr{id(), id(), id(), id()}
			outside := id()
			upsert(t, ctx, s,
				start(x.root, traceID, &outside, t0, `{}`),
				start(x.child, traceID, &x.root, t0, `{}`),
				start(x.leaf, traceID, &x.child, t0, `{}`),
				start(x.unfinished, traceID, &x.root, t0, `{}`),
				end(x.leaf, t0.Add(time.Second), `{"usage":{"gpt-4":{"prompt_tokens":3,"completion_tokens":1}}}`),
				end(x.child, t0.Add(time.Second), `{"usage":{"gpt-4":{"prompt_tokens":2,"completion_tokens":1}}}`),
				end(x.root, t0.Add(time.Second), `{}`))
			return x
		}
		tr1, tr2 := makeTrace(), makeTrace()
		random := id()
		requested := []string{tr1.root, tr1.child, tr2.root, random, tr1.root}
		var reference *trace.CallsUsageRes
		for _, limit := range []int{8, 4, 5} {
			for _, costs := range []bool{false, true} {
				res, err := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project, CallIDs: requested, Limit: &limit, IncludeCosts: costs})
				if err != nil {
					t.Fatalf("limit %d: %v", limit, err)
				}
				if len(res.CallUsage) != 4 || res.CallUsage[random] == nil || len(res.CallUsage[random]) != 0 {
					t.Fatalf("limit %d: keys %v", limit, res.CallUsage)
				}
				wantUnfinished := []string{tr1.unfinished, tr2.unfinished}
				slices.Sort(wantUnfinished)
				if !slices.Equal(res.UnfinishedCallIDs, wantUnfinished) {
					t.Fatalf("unfinished %v", res.UnfinishedCallIDs)
				}
				for _, callID := range []string{tr1.root, tr1.child, tr2.root} {
					u := usageOf(res, callID, "gpt-4")
					if u.PromptTokens != 5 || u.CompletionTokens != 2 || u.TotalTokens != 7 {
						t.Fatalf("limit %d: %s usage %+v", limit, callID, u)
					}
					if costs != (u.PromptTokensTotalCost != nil) || (costs && *u.PromptTokensTotalCost <= 0) {
						t.Fatalf("costs=%v: cost %v", costs, u.PromptTokensTotalCost)
					}
				}
				if !costs {
					if reference == nil {
						reference = res
					} else if !reflect.DeepEqual(res, reference) {
						t.Fatalf("limit %d differs from limit 8", limit)
					}
				}
			}
		}
		if _, err := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project, CallIDs: requested, Limit: ptr(3)}); !errors.Is(err, trace.ErrTraceTooLarge) || !errors.Is(err, weft.ErrTooLarge) {
			t.Fatalf("limit 3: %v", err)
		}
		for _, limit := range []int{-1, 0} {
			if _, err := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project, CallIDs: requested, Limit: &limit}); !errors.Is(err, weft.ErrInvalid) {
				t.Fatalf("limit %d: %v", limit, err)
			}
			if _, err := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project, Limit: &limit}); !errors.Is(err, weft.ErrInvalid) {
				t.Fatalf("limit %d without ids: %v", limit, err)
			}
		}
		if res, err := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project}); err != nil || len(res.CallUsage) != 0 {
			t.Fatalf("no ids: %v %v", res, err)
		}

		t.Run("SDK rolled-up summaries count once", func(t *testing.T) {
			// As the SDKs send: the parent's summary already holds its children's usage.
			traceID, root, mid, a, b := id(), id(), id(), id(), id()
			upsert(t, ctx, s,
				start(root, traceID, nil, t0, `{}`), start(mid, traceID, &root, t0, `{}`),
				start(a, traceID, &mid, t0, `{}`), start(b, traceID, &mid, t0, `{}`),
				end(a, t0, `{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}}`),
				end(b, t0, `{"usage":{"gpt-4o":{"requests":1,"input_tokens":20,"output_tokens":4}}}`),
				end(mid, t0, `{"usage":{"gpt-4o":{"requests":2,"prompt_tokens":30,"completion_tokens":9,"total_tokens":39}}}`),
				end(root, t0, `{"usage":{"gpt-4o":{"requests":2,"prompt_tokens":30,"completion_tokens":9,"total_tokens":39}}}`))
			res, err := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project, CallIDs: []string{root, mid, b}})
			if err != nil {
				t.Fatal(err)
			}
			for _, callID := range []string{root, mid} {
				if u := usageOf(res, callID, "gpt-4o"); u.Requests != 2 || u.PromptTokens != 30 || u.CompletionTokens != 9 || u.TotalTokens != 39 {
					t.Fatalf("rolled-up %s: %+v", callID, u)
				}
			}
			// input/output tokens fold into prompt/completion, total filled in.
			if u := usageOf(res, b, "gpt-4o"); u.PromptTokens != 20 || u.CompletionTokens != 4 || u.TotalTokens != 24 {
				t.Fatalf("leaf b: %+v", u)
			}
		})

		t.Run("SDK case: parent equal to one child counts once", func(t *testing.T) {
			traceID, parent, child := id(), id(), id()
			usage := `{"usage":{"gpt-4o":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}}`
			upsert(t, ctx, s,
				start(parent, traceID, nil, t0, `{}`), start(child, traceID, &parent, t0, `{}`),
				end(child, t0, usage), end(parent, t0, usage))
			res, err := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project, CallIDs: []string{parent}})
			if err != nil {
				t.Fatal(err)
			}
			if u := usageOf(res, parent, "gpt-4o"); u.PromptTokens != 10 || u.CompletionTokens != 5 || u.TotalTokens != 15 {
				t.Fatalf("parent: %+v", u)
			}
		})

		t.Run("a parent that covers but does not equal its children adds to them", func(t *testing.T) {
			// The child's own usage exceeds its grandchild's in every counter, yet
			// is not its roll-up: both were spent. input/output fold into
			// prompt/completion, so the root's total is 7/9/16.
			traceID, root, child, grandchild := id(), id(), id(), id()
			upsert(t, ctx, s,
				start(root, traceID, nil, t0, `{}`), start(child, traceID, &root, t0, `{}`), start(grandchild, traceID, &child, t0, `{}`),
				end(grandchild, t0, `{"usage":{"gpt-4o":{"prompt_tokens":1,"input_tokens":2,"completion_tokens":3}}}`),
				end(child, t0, `{"usage":{"gpt-4o":{"input_tokens":4,"output_tokens":6}}}`),
				end(root, t0, `{}`))
			res, err := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project, CallIDs: []string{root, child}, IncludeCosts: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, callID := range []string{root, child} {
				u := usageOf(res, callID, "gpt-4o")
				if u.PromptTokens != 7 || u.CompletionTokens != 9 || u.TotalTokens != 16 {
					t.Fatalf("%s: %+v", callID, u)
				}
				// Costs follow the counters: gpt-4o is $2.50 / $10 per million tokens.
				if !near(*u.PromptTokensTotalCost, 7*2.5/1e6) || !near(*u.CompletionTokensTotalCost, 9*10/1e6) {
					t.Fatalf("%s costs %v %v", callID, *u.PromptTokensTotalCost, *u.CompletionTokensTotalCost)
				}
			}
		})

		t.Run("leaf-only usage is summed", func(t *testing.T) {
			traceID, root, mid, a, b := id(), id(), id(), id(), id()
			upsert(t, ctx, s,
				start(root, traceID, nil, t0, `{}`), start(mid, traceID, &root, t0, `{}`),
				start(a, traceID, &mid, t0, `{}`), start(b, traceID, &root, t0, `{}`),
				end(a, t0, `{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":10,"completion_tokens":5}}}`),
				end(b, t0, `{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":7,"completion_tokens":1},"claude-3-5-haiku":{"requests":1,"prompt_tokens":4}}}`),
				end(mid, t0, `{}`), end(root, t0, `{}`))
			res, err := s.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: project, CallIDs: []string{root, mid}, IncludeCosts: true})
			if err != nil {
				t.Fatal(err)
			}
			if u := usageOf(res, root, "gpt-4o"); u.Requests != 2 || u.PromptTokens != 17 || u.CompletionTokens != 6 || u.TotalTokens != 23 {
				t.Fatalf("root: %+v", u)
			}
			if u := usageOf(res, root, "claude-3-5-haiku"); u.PromptTokens != 4 {
				t.Fatalf("root claude: %+v", u)
			}
			if u := usageOf(res, mid, "gpt-4o"); u.PromptTokens != 10 || len(res.CallUsage[mid]) != 1 {
				t.Fatalf("mid: %+v", res.CallUsage[mid])
			}
			// Built-in gpt-4o price: $2.50 / $10 per million tokens.
			u := usageOf(res, root, "gpt-4o")
			if !near(*u.PromptTokensTotalCost, 17*2.5/1e6) || !near(*u.CompletionTokensTotalCost, 6*10/1e6) {
				t.Fatalf("root costs %v %v", *u.PromptTokensTotalCost, *u.CompletionTokensTotalCost)
			}
		})

		t.Run("rows without derived usage read their summaries", func(t *testing.T) {
			// Usage numbers are derived when an end is written; rows stored before
			// that (usage NULL) must give the same answer from their summaries.
			traceID, root, a, b := id(), id(), id(), id()
			upsert(t, ctx, s,
				start(root, traceID, nil, t0, `{}`), start(a, traceID, &root, t0, `{}`), start(b, traceID, &root, t0, `{}`),
				end(a, t0, `{"usage":{"gpt-4o":{"requests":1,"input_tokens":123456789012,"output_tokens":0.5,"cache_read_input_tokens":7},"m \"x\" <&>":{"requests":2,"prompt_tokens":"n/a"}}}`),
				end(b, t0, `{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":1e3,"completion_tokens":2,"total_tokens":9,"cache_creation_input_tokens":4}}}`),
				end(root, t0, `{"status_counts":{"success":3}}`))
			req := &trace.CallsUsageReq{ProjectID: project, CallIDs: []string{root, a, b}, IncludeCosts: true}
			derived, err := s.CallsUsage(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if u := usageOf(derived, root, "gpt-4o"); u.Requests != 2 || u.PromptTokens != 123456790012 || u.CacheReadInputTokens != 7 || u.CacheCreationInputTokens != 4 {
				t.Fatalf("root: %+v", u)
			}
			if u := usageOf(derived, root, `m "x" <&>`); u.Requests != 2 || u.PromptTokens != 0 {
				t.Fatalf("odd model name: %+v", derived.CallUsage[root])
			}
			if _, err := db.NewUpdate().Table("calls").Set("usage = NULL").Where("project_id = ? AND trace_id = ?", project, traceID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			fromSummaries, err := s.CallsUsage(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fromSummaries, derived) {
				t.Fatalf("from summaries %+v, derived %+v", fromSummaries.CallUsage, derived.CallUsage)
			}
		})
	})
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

func TestStoreCosts(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		callID, traceID := id(), id()
		upsert(t, ctx, s, start(callID, traceID, nil, t0, `{}`),
			end(callID, t0.Add(time.Second), `{"usage":{"gpt-4":{"requests":1,"prompt_tokens":1000,"completion_tokens":100}}}`))

		costOf := func() map[string]any {
			res, err := s.CallRead(ctx, &trace.CallReadReq{ProjectID: project, ID: callID, IncludeCosts: true})
			if err != nil {
				t.Fatal(err)
			}
			costs, _ := weaveSummary(t, res.Call)["costs"].(map[string]any)
			entry, _ := costs["gpt-4"].(map[string]any)
			return entry
		}
		if read(t, ctx, s, callID) == nil || weaveSummary(t, read(t, ctx, s, callID))["costs"] != nil {
			t.Fatal("costs without include_costs")
		}
		if e := costOf(); e["pricing_level"] != "default" || !near(e["prompt_tokens_total_cost"].(float64), 1000*30/1e6) {
			t.Fatalf("default price: %v", e)
		}
		created, err := s.CostCreate(ctx, &trace.CostCreateReq{ProjectID: project, Costs: map[string]trace.PriceInput{
			"gpt-4":   {PromptTokenCost: 0.001, CompletionTokenCost: 0.002, EffectiveDate: ptr(t0.Add(-time.Hour))},
			"private": {PromptTokenCost: 1, CompletionTokenCost: 1},
		}})
		if err != nil || len(created.IDs) != 2 || created.IDs[0][0] != "gpt-4" {
			t.Fatalf("create: %+v %v", created, err)
		}
		if e := costOf(); e["pricing_level"] != "project" || !near(e["prompt_tokens_total_cost"].(float64), 1) || !near(e["completion_tokens_total_cost"].(float64), 0.2) {
			t.Fatalf("project price: %v", e)
		}
		// A price that takes effect after the call started does not apply to it.
		if _, err := s.CostCreate(ctx, &trace.CostCreateReq{ProjectID: project, Costs: map[string]trace.PriceInput{
			"gpt-4": {PromptTokenCost: 5, CompletionTokenCost: 5, EffectiveDate: ptr(t0.Add(time.Hour))},
		}}); err != nil {
			t.Fatal(err)
		}
		if e := costOf(); !near(e["prompt_tokens_total_cost"].(float64), 1) {
			t.Fatalf("future price applied: %v", e)
		}
		q, err := s.CostQuery(ctx, &trace.CostQueryReq{ProjectID: project})
		if err != nil || len(q.Results) != 3 || q.Results[0].LLMID != "gpt-4" || q.Results[0].PromptTokenCost != 5 || q.Results[0].CreatedBy != "u-alice" {
			t.Fatalf("query: %+v %v", q, err)
		}
		purged, err := s.CostPurge(ctx, &trace.CostPurgeReq{ProjectID: project, LLMIDs: []string{"gpt-4"}})
		if err != nil || purged.NumDeleted != 2 {
			t.Fatalf("purge: %+v %v", purged, err)
		}
		if e := costOf(); e["pricing_level"] != "default" {
			t.Fatalf("after purge: %v", e)
		}
		if _, err := s.CostPurge(ctx, &trace.CostPurgeReq{ProjectID: project}); !errors.Is(err, weft.ErrInvalid) {
			t.Fatalf("purge everything: %v", err)
		}
		if _, err := s.CostCreate(ctx, &trace.CostCreateReq{ProjectID: project, Costs: map[string]trace.PriceInput{"x": {PromptTokenCost: -1}}}); !errors.Is(err, weft.ErrInvalid) {
			t.Fatalf("negative price: %v", err)
		}
	})
}
