package trace_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestCallsOverTimeByFeedback: traces grouped by a scorer's verdict (the
// output of their root's newest wandb.runnable.<scorer> feedback, or a
// member of it), those without one under "", other scorers' verdicts and
// children's ignored; each group holds what a calls query comparing the
// verdict with the group's value finds (which also finds a root by an older
// verdict it was given before its newest); a field that is not feedback is
// refused.
func TestCallsOverTimeByFeedback(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		fb, err := feedback.New(feedback.Config{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		// Each root's verdicts of the scorer "judge", oldest first.
		verdicts := [][]string{
			{`{"correct":true,"score":1}`},
			{`{"correct":true,"score":0.5}`},
			{`{"correct":false,"score":0}`, `{"correct":true,"score":1}`},
			{`{"correct":false,"score":0}`},
			{`{"correct":"maybe","score":0.5}`},
			nil,
		}
		var ids []string
		for i, vs := range verdicts {
			id := fmt.Sprintf("0196e000-0000-7000-c000-%012d", i)
			child := fmt.Sprintf("0196e000-0000-7000-c100-%012d", i)
			at := t0.Add(time.Duration(i) * time.Minute)
			batch := []trace.CompletedCall{
				{ID: id, TraceID: id, OpName: "op", StartedAt: at, EndedAt: at.Add(time.Second), Inputs: json.RawMessage(`{}`), Summary: json.RawMessage(`{}`)},
				{ID: child, TraceID: id, ParentID: &id, OpName: "child", StartedAt: at, EndedAt: at.Add(time.Second), Inputs: json.RawMessage(`{}`), Summary: json.RawMessage(`{}`)},
			}
			if _, err := s.CallsComplete(ctx, &trace.CallsCompleteReq{ProjectID: project, Batch: batch}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
			for _, v := range vs {
				for _, on := range []struct{ call, scorer string }{{id, "judge"}, {child, "judge"}, {id, "other"}} {
					payload := v
					if on.call == child || on.scorer == "other" {
						payload = `{"correct":"elsewhere","score":9}`
					}
					req := feedback.CreateReq{ProjectID: project, WeaveRef: "weave:///" + project + "/call/" + on.call,
						FeedbackType: "wandb.runnable." + on.scorer, Payload: json.RawMessage(`{"output":` + payload + `}`),
						RunnableRef: ptr("weave:///" + project + "/object/" + on.scorer + ":d")}
					if _, err := fb.Create(ctx, req); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(2 * time.Millisecond) // the newest verdict is the one created last
			}
		}
		for _, tc := range []struct {
			path  string
			want  map[string]int64
			older string // the value of the re-scored root's older verdict
		}{
			{"correct", map[string]int64{"": 1, "true": 3, "false": 1, "maybe": 1}, "false"},
			{"score", map[string]int64{"": 1, "1": 2, "0.5": 2, "0": 1}, "0"},
		} {
			field := "feedback.[wandb.runnable.judge].payload.output." + tc.path
			buckets, err := s.CallsOverTime(ctx, &trace.CallsOverTimeReq{ProjectID: project, From: t0, To: t0.Add(time.Hour),
				Width: time.Hour, GroupBy: trace.GroupFeedback, Field: field})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, b := range buckets {
				got[b.Group] += b.Calls
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("by %s: %v, want %v", tc.path, got, tc.want)
			}
			// Each group's value finds its traces (the trace list's verdict
			// filter is this query).
			for value, n := range tc.want {
				if value == "" {
					continue
				}
				var literal any = value
				_ = json.Unmarshal([]byte(value), &literal)
				q, _ := json.Marshal(map[string]any{"$expr": map[string]any{"$eq": []any{map[string]any{"$getField": field}, map[string]any{"$literal": literal}}}})
				if value == tc.older {
					n++
				}
				var found int64
				err := s.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: project, Filter: trace.CallsFilter{TraceRootsOnly: true}, Query: q},
					func(*trace.Call) error { found++; return nil })
				if err != nil || found != n {
					t.Errorf("by %s: %s = %s finds %d traces (%v), the group holds %d", tc.path, field, value, found, err, n)
				}
			}
		}
		for _, field := range []string{"", "inputs.x", "feedback.[wandb.runnable.judge", "summary.weave.status"} {
			_, err := s.CallsOverTime(ctx, &trace.CallsOverTimeReq{ProjectID: project, From: t0, To: t0.Add(time.Hour),
				Width: time.Hour, GroupBy: trace.GroupFeedback, Field: field})
			if !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("field %q: %v", field, err)
			}
		}
	})
}
