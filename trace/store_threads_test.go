package trace_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestThreadsQuery replays Weave's test_threads_query_endpoint and
// test_threads_query_aggregation_fields: three threads of two turns each (one
// turn with nested calls), calls outside any thread, and a thread of five
// turns of 10, 50, 100, 10 and 50 ms.
func TestThreadsQuery(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		at := t0
		n := 0
		call := func(thread, turn string, parent *string, d time.Duration) string {
			n++
			callID := fmt.Sprintf("0196d000-0000-7000-8000-%012d", n)
			if turn == "self" {
				turn = callID
			}
			c := trace.CompletedCall{ID: callID, TraceID: callID, OpName: "weave:///alice/p/op/thread_test_op:d", ParentID: parent,
				StartedAt: at, EndedAt: at.Add(d), Inputs: json.RawMessage(`{}`), Output: json.RawMessage(`"x"`)}
			if thread != "" {
				c.ThreadID, c.TurnID = ptr(thread), ptr(turn)
			}
			if parent != nil {
				c.TraceID = *parent
			}
			res, err := s.CallsComplete(ctx, &trace.CallsCompleteReq{ProjectID: project, Batch: []trace.CompletedCall{c}})
			if err != nil || res.Res[0].Err != nil {
				t.Fatalf("%v %+v", err, res)
			}
			at = at.Add(time.Second)
			return callID
		}
		for _, thread := range []string{"analytics_thread", "processing_thread", "validation_thread"} {
			multi := call(thread, "self", nil, 30*time.Millisecond)
			for range 3 {
				call(thread, multi, &multi, time.Millisecond)
			}
			call(thread, "self", nil, 5*time.Millisecond)
		}
		call("", "", nil, time.Millisecond)
		call("", "", nil, time.Millisecond)
		var timing []string
		for _, ms := range []int{10, 50, 100, 10, 50} {
			timing = append(timing, call("timing_test_thread", "self", nil, time.Duration(ms)*time.Millisecond))
		}
		threads := func(req trace.ThreadsQueryReq) []*trace.Thread {
			t.Helper()
			req.ProjectID = project
			var out []*trace.Thread
			if err := s.ThreadsQuery(ctx, &req, func(th *trace.Thread) error { out = append(out, th); return nil }); err != nil {
				t.Fatal(err)
			}
			return out
		}
		names := func(ts []*trace.Thread) []string {
			var out []string
			for _, th := range ts {
				out = append(out, th.ThreadID)
			}
			return out
		}

		all := threads(trace.ThreadsQueryReq{})
		// last_updated descending: the timing thread ended last.
		if got := names(all); !slices.Equal(got, []string{"timing_test_thread", "validation_thread", "processing_thread", "analytics_thread"}) {
			t.Fatalf("threads: %v", got)
		}
		for _, th := range all[1:] {
			if th.TurnCount != 2 || th.LastUpdated == nil || th.StartTime.After(*th.LastUpdated) {
				t.Errorf("thread %+v", th)
			}
		}
		timed := all[0]
		if timed.TurnCount != 5 || *timed.FirstTurnID != timing[0] || *timed.LastTurnID != timing[4] ||
			*timed.P50TurnDurationMS != 50 || *timed.P99TurnDurationMS != 98 {
			t.Errorf("timing thread: %+v p50 %v p99 %v", timed, *timed.P50TurnDurationMS, *timed.P99TurnDurationMS)
		}
		if got := len(threads(trace.ThreadsQueryReq{Limit: ptr(2)})); got != 2 {
			t.Errorf("limit 2: %d", got)
		}
		if got := names(threads(trace.ThreadsQueryReq{Limit: ptr(1), Offset: ptr(1)})); !slices.Equal(got, []string{"validation_thread"}) {
			t.Errorf("limit 1 offset 1: %v", got)
		}
		if got := names(threads(trace.ThreadsQueryReq{SortBy: []trace.SortBy{{Field: "thread_id", Direction: "asc"}}})); !slices.IsSorted(got) {
			t.Errorf("by thread_id: %v", got)
		}
		if got := names(threads(trace.ThreadsQueryReq{SortBy: []trace.SortBy{{Field: "turn_count", Direction: "desc"}}})); got[0] != "timing_test_thread" || !slices.IsSorted(got[1:]) {
			t.Errorf("by turn_count: %v", got)
		}
		if got := names(threads(trace.ThreadsQueryReq{SortBy: []trace.SortBy{{Field: "p99_turn_duration_ms", Direction: "asc"}}})); got[0] != "analytics_thread" || got[3] != "timing_test_thread" {
			t.Errorf("by p99: %v", got)
		}
		middle := t0.Add(7 * time.Second)
		if got := names(threads(trace.ThreadsQueryReq{Filter: &trace.ThreadsFilter{AfterDatetime: &middle}})); !slices.Equal(got, []string{"timing_test_thread", "validation_thread", "processing_thread"}) {
			t.Errorf("after: %v", got)
		}
		if got := names(threads(trace.ThreadsQueryReq{Filter: &trace.ThreadsFilter{BeforeDatetime: &middle}})); !slices.Equal(got, []string{"processing_thread", "analytics_thread"}) {
			t.Errorf("before: %v", got)
		}
		for _, tc := range []struct {
			ids  []string
			want []string
		}{
			{[]string{"analytics_thread"}, []string{"analytics_thread"}},
			{[]string{"analytics_thread", "processing_thread"}, []string{"processing_thread", "analytics_thread"}},
			{[]string{"nonexistent_thread_id"}, nil},
			{[]string{}, names(all)},
		} {
			if got := names(threads(trace.ThreadsQueryReq{Filter: &trace.ThreadsFilter{ThreadIDs: tc.ids}})); !slices.Equal(got, tc.want) {
				t.Errorf("thread_ids %v: %v", tc.ids, got)
			}
		}
		err := s.ThreadsQuery(ctx, &trace.ThreadsQueryReq{ProjectID: project, SortBy: []trace.SortBy{{Field: "nope"}}}, func(*trace.Thread) error { return nil })
		if !errors.Is(err, trace.ErrInvalidQuery) {
			t.Errorf("bad sort: %v", err)
		}
	})
}
