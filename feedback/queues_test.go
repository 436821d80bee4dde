package feedback_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
)

// queueCalls makes n calls c0..c(n-1) of project: started one minute apart in
// reverse order (so start order differs from insertion order), op "op-even" or
// "op-odd", trace "t<i%3>".
func queueCalls(n int) fakeCalls {
	calls := fakeCalls{}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		ended := base.Add(time.Duration(n-i)*time.Minute + time.Second)
		calls[project+"/"+id] = feedback.CallInfo{ID: id, OpName: []string{"op-even", "op-odd"}[i%2], TraceID: fmt.Sprintf("t%d", i%3),
			StartedAt: base.Add(time.Duration(n-i) * time.Minute), EndedAt: &ended}
	}
	return calls
}

func callIDs(items []feedback.QueueItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.CallID
	}
	return out
}

func TestAnnotationQueues(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, queueCalls(6))
		ctx := userCtx("u1")

		t.Run("queue crud", func(t *testing.T) {
			created, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: project, Name: "Error Review Queue", Description: "d", ScorerRefs: []string{objectRef("a:1"), objectRef("b:2")}, PFUserID: str("spoof")})
			if err != nil || len(created.ID) != 36 {
				t.Fatalf("create: %+v %v", created, err)
			}
			q, err := svc.ReadQueue(ctx, project, created.ID)
			if err != nil || q.Name != "Error Review Queue" || q.Description != "d" || len(q.ScorerRefs) != 2 || q.CreatedBy != "u1" || q.DeletedAt != nil {
				t.Fatalf("read: %+v %v", q, err)
			}
			unchanged, err := svc.UpdateQueue(ctx, feedback.UpdateQueueReq{ProjectID: project, QueueID: q.ID})
			if err != nil || !unchanged.UpdatedAt.Equal(q.UpdatedAt) || unchanged.Name != q.Name {
				t.Fatalf("empty update: %+v %v", unchanged, err)
			}
			partial, err := svc.UpdateQueue(ctx, feedback.UpdateQueueReq{ProjectID: project, QueueID: q.ID, Name: str("Renamed")})
			if err != nil || partial.Name != "Renamed" || partial.Description != "d" || len(partial.ScorerRefs) != 2 || partial.UpdatedAt.Before(q.UpdatedAt) {
				t.Fatalf("partial update: %+v %v", partial, err)
			}
			all, err := svc.UpdateQueue(ctx, feedback.UpdateQueueReq{ProjectID: project, QueueID: q.ID, Name: str("Error Review Queue"), Description: str("d2"), ScorerRefs: []string{objectRef("c:3")}})
			if err != nil || all.Description != "d2" || !slices.Equal(all.ScorerRefs, []string{objectRef("c:3")}) {
				t.Fatalf("full update: %+v %v", all, err)
			}
			if _, err := svc.UpdateQueue(ctx, feedback.UpdateQueueReq{ProjectID: project, QueueID: "0192f3a4-0000-7000-8000-00000000dead", Name: str("x")}); !errors.Is(err, weft.ErrNotFound) {
				t.Fatalf("update unknown: %v", err)
			}
			if _, err := svc.ReadQueue(ctx, "team/other", q.ID); !errors.Is(err, weft.ErrNotFound) {
				t.Fatalf("read from other project: %v", err)
			}
			gone, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: project, Name: "to delete"})
			if err != nil {
				t.Fatal(err)
			}
			deleted, err := svc.DeleteQueue(ctx, project, gone.ID)
			if err != nil || deleted.DeletedAt == nil {
				t.Fatalf("delete: %+v %v", deleted, err)
			}
			for _, err := range []error{
				func() error { _, err := svc.ReadQueue(ctx, project, gone.ID); return err }(),
				func() error { _, err := svc.DeleteQueue(ctx, project, gone.ID); return err }(),
			} {
				if !errors.Is(err, feedback.ErrQueueNotFound) {
					t.Fatalf("deleted queue: %v", err)
				}
			}
		})

		t.Run("list", func(t *testing.T) {
			const p = "team/list"
			var ids []string
			for _, name := range []string{"Alpha", "Error Review Queue", "Gamma", "Delta", "Epsilon"} {
				q, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: p, Name: name})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, q.ID)
			}
			list, err := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: p})
			if err != nil || len(list.Queues) != 5 || list.Queues[0].ID != ids[4] || list.Queues[4].ID != ids[0] {
				t.Fatalf("newest first: %+v %v", list.Queues, err)
			}
			named, _ := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: p, Name: str("error")})
			if len(named.Queues) != 1 || named.Queues[0].Name != "Error Review Queue" {
				t.Fatalf("name filter: %+v", named.Queues)
			}
			if none, _ := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: p, Name: str("%")}); len(none.Queues) != 0 {
				t.Fatalf("%% is literal: %+v", none.Queues)
			}
			two, zero := 2, 0
			first, _ := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: p, Limit: &two, Offset: &zero})
			second, _ := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: p, Limit: &two, Offset: &two})
			if len(first.Queues) != 2 || len(second.Queues) != 2 || first.Queues[1].ID == second.Queues[0].ID || first.Queues[0].ID == second.Queues[1].ID {
				t.Fatalf("pages overlap: %v / %v", first.Queues, second.Queues)
			}
			byName, _ := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: p, SortBy: []feedback.SortBy{{Field: "name", Direction: "asc"}, {Field: "bogus"}}})
			if byName.Queues[0].Name != "Alpha" || byName.Queues[4].Name != "Gamma" {
				t.Fatalf("sort by name: %+v", byName.Queues)
			}
		})

		t.Run("items", func(t *testing.T) {
			q, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: project, Name: "items"})
			if err != nil {
				t.Fatal(err)
			}
			query := func(req feedback.QueryQueueItemsReq) []feedback.QueueItem {
				t.Helper()
				req.ProjectID, req.QueueID = project, q.ID
				res, err := svc.QueryQueueItems(ctx, req)
				if err != nil {
					t.Fatalf("items query: %v", err)
				}
				return res.Items
			}
			if items := query(feedback.QueryQueueItemsReq{}); len(items) != 0 {
				t.Fatalf("empty queue: %v", items)
			}
			added, err := svc.AddQueueItems(ctx, feedback.AddQueueItemsReq{ProjectID: project, QueueID: q.ID, CallIDs: []string{"c0", "c1", "c2"}, DisplayFields: []string{"inputs.x"}})
			if err != nil || added.AddedCount != 3 || added.Duplicates != 0 {
				t.Fatalf("add: %+v %v", added, err)
			}
			added, err = userCtxAdd(svc, "u2", q.ID, []string{"c1", "c3", "c4", "c5", "c5", "unknown"})
			if err != nil || added.AddedCount != 3 || added.Duplicates != 2 {
				t.Fatalf("add with duplicates: %+v %v", added, err)
			}
			if _, err := svc.AddQueueItems(ctx, feedback.AddQueueItemsReq{ProjectID: project, QueueID: "0192f3a4-0000-7000-8000-00000000dead", CallIDs: []string{"c0"}}); !errors.Is(err, feedback.ErrQueueNotFound) {
				t.Fatalf("add to unknown queue: %v", err)
			}

			all := query(feedback.QueryQueueItemsReq{})
			if got := callIDs(all); !slices.Equal(got, []string{"c0", "c1", "c2", "c3", "c4", "c5"}) {
				t.Fatalf("default order: %v", got)
			}
			first := all[0]
			if first.CallOpName != "op-even" || first.CallTraceID != "t0" || first.CallEndedAt == nil || first.AnnotationState != "unstarted" ||
				first.AnnotatorUserID != nil || *first.AddedBy != "u1" || first.CreatedBy != "u1" || !slices.Equal(first.DisplayFields, []string{"inputs.x"}) ||
				first.PositionInQueue != nil || first.DeletedAt != nil {
				t.Fatalf("item fields: %+v", first)
			}
			if got := callIDs(query(feedback.QueryQueueItemsReq{SortBy: []feedback.SortBy{{Field: "call_started_at", Direction: "desc"}}})); !slices.Equal(got, []string{"c0", "c1", "c2", "c3", "c4", "c5"}) {
				t.Fatalf("call_started_at desc: %v", got)
			}
			if got := callIDs(query(feedback.QueryQueueItemsReq{SortBy: []feedback.SortBy{{Field: "call_started_at", Direction: "asc"}}})); !slices.Equal(got, []string{"c5", "c4", "c3", "c2", "c1", "c0"}) {
				t.Fatalf("call_started_at asc: %v", got)
			}
			multi := query(feedback.QueryQueueItemsReq{SortBy: []feedback.SortBy{{Field: "call_op_name", Direction: "desc"}, {Field: "call_started_at", Direction: "asc"}, {Field: "drop me"}}})
			if got := callIDs(multi); !slices.Equal(got, []string{"c5", "c3", "c1", "c4", "c2", "c0"}) {
				t.Fatalf("multi-field sort: %v", got)
			}
			filters := []struct {
				name   string
				filter feedback.QueueItemsFilter
				want   []string
			}{
				{"call_id", feedback.QueueItemsFilter{CallID: str("c2")}, []string{"c2"}},
				{"id", feedback.QueueItemsFilter{ID: str(first.ID)}, []string{"c0"}},
				{"op name", feedback.QueueItemsFilter{CallOpName: str("op-odd")}, []string{"c1", "c3", "c5"}},
				{"trace id", feedback.QueueItemsFilter{CallTraceID: str("t1")}, []string{"c1", "c4"}},
				{"added_by match", feedback.QueueItemsFilter{AddedBy: str("u2")}, []string{"c3", "c4", "c5"}},
				{"added_by no match", feedback.QueueItemsFilter{AddedBy: str("nobody")}, nil},
				{"unstarted", feedback.QueueItemsFilter{AnnotationStates: []string{"unstarted"}}, []string{"c0", "c1", "c2", "c3", "c4", "c5"}},
				{"completed", feedback.QueueItemsFilter{AnnotationStates: []string{"completed"}}, nil},
				{"combined", feedback.QueueItemsFilter{CallOpName: str("op-odd"), AddedBy: str("u2"), CallTraceID: str("t0")}, []string{"c3"}},
			}
			for _, tc := range filters {
				if got := callIDs(query(feedback.QueryQueueItemsReq{Filter: &tc.filter})); !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
					t.Errorf("filter %s: %v, want %v", tc.name, got, tc.want)
				}
			}
			three, zero := 3, 0
			p1 := callIDs(query(feedback.QueryQueueItemsReq{Limit: &three, Offset: &zero}))
			p2 := callIDs(query(feedback.QueryQueueItemsReq{Limit: &three, Offset: &three}))
			if !slices.Equal(append(p1, p2...), []string{"c0", "c1", "c2", "c3", "c4", "c5"}) {
				t.Fatalf("pages: %v %v", p1, p2)
			}
			positioned := query(feedback.QueryQueueItemsReq{IncludePosition: true})
			for i, it := range positioned {
				if it.PositionInQueue == nil || *it.PositionInQueue != int64(i+1) {
					t.Fatalf("position of %d: %v", i, it.PositionInQueue)
				}
			}
			custom := query(feedback.QueryQueueItemsReq{IncludePosition: true, SortBy: []feedback.SortBy{{Field: "call_started_at", Direction: "asc"}}, Limit: &three, Offset: &three})
			if got := callIDs(custom); !slices.Equal(got, []string{"c2", "c1", "c0"}) || *custom[0].PositionInQueue != 4 || *custom[2].PositionInQueue != 6 {
				t.Fatalf("position with custom sort and offset: %v", custom)
			}

			// Progress: states, transitions, latest record of any annotator.
			byCall := map[string]string{}
			for _, it := range all {
				byCall[it.CallID] = it.ID
			}
			progress := func(user, call, state string) (feedback.QueueItem, error) {
				return svc.UpdateItemProgress(userCtx(user), feedback.ItemProgressReq{ProjectID: project, QueueID: q.ID, ItemID: byCall[call], AnnotationState: state})
			}
			steps := []struct {
				user, call, state string
				ok                bool
				wantState         string
			}{
				{"u1", "c1", "unstarted", false, ""},
				{"u1", "c1", "bogus", false, ""},
				{"u1", "c1", "in_progress", true, "in_progress"},
				{"u1", "c1", "in_progress", false, ""},
				{"u1", "c1", "completed", true, "completed"},
				{"u1", "c1", "skipped", false, ""},
				{"u1", "c1", "in_progress", false, ""},
				{"u2", "c1", "in_progress", true, "in_progress"},
				{"u1", "c2", "skipped", true, "skipped"},
				{"u2", "c3", "completed", true, "completed"},
			}
			for i, st := range steps {
				item, err := progress(st.user, st.call, st.state)
				if st.ok != (err == nil) || (!st.ok && !errors.Is(err, weft.ErrInvalid)) {
					t.Fatalf("step %d %+v: %v", i, st, err)
				}
				if st.ok && (item.AnnotationState != st.wantState || *item.AnnotatorUserID != st.user || item.PositionInQueue != nil || item.CallID != st.call) {
					t.Fatalf("step %d %+v: item %+v", i, st, item)
				}
			}
			if _, err := svc.UpdateItemProgress(ctx, feedback.ItemProgressReq{ProjectID: project, QueueID: q.ID, ItemID: "0192f3a4-0000-7000-8000-00000000dead", AnnotationState: "completed"}); !errors.Is(err, weft.ErrInvalid) {
				t.Fatalf("unknown item: %v", err)
			}
			other, _ := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: project, Name: "other"})
			if _, err := svc.UpdateItemProgress(ctx, feedback.ItemProgressReq{ProjectID: project, QueueID: other.ID, ItemID: byCall["c0"], AnnotationState: "completed"}); !errors.Is(err, weft.ErrInvalid) {
				t.Fatalf("item of another queue: %v", err)
			}
			states := map[string]string{}
			for _, it := range query(feedback.QueryQueueItemsReq{}) {
				states[it.CallID] = it.AnnotationState
			}
			want := map[string]string{"c0": "unstarted", "c1": "in_progress", "c2": "skipped", "c3": "completed", "c4": "unstarted", "c5": "unstarted"}
			if fmt.Sprint(states) != fmt.Sprint(want) {
				t.Fatalf("states %v, want %v", states, want)
			}
			// c1 counts as completed in the stats: u1 completed it, though u2 is
			// still at it. Positions ignore the state filter.
			done := query(feedback.QueryQueueItemsReq{IncludePosition: true, Filter: &feedback.QueueItemsFilter{AnnotationStates: []string{"completed", "skipped"}}})
			if got := callIDs(done); !slices.Equal(got, []string{"c2", "c3"}) || *done[0].PositionInQueue != 3 || *done[1].PositionInQueue != 4 {
				t.Fatalf("state filter with positions: %v", done)
			}
			odd := query(feedback.QueryQueueItemsReq{IncludePosition: true, Filter: &feedback.QueueItemsFilter{CallOpName: str("op-odd")}, Limit: &three, Offset: &zero})
			if *odd[0].PositionInQueue != 2 || *odd[1].PositionInQueue != 4 {
				t.Fatalf("positions are over the whole queue: %v", odd)
			}

			stats, err := svc.QueueStats(ctx, feedback.QueueStatsReq{ProjectID: project, QueueIDs: []string{q.ID, "0192f3a4-0000-7000-8000-00000000dead", other.ID}})
			if err != nil || len(stats.Stats) != 3 || stats.Stats[0] != (feedback.QueueStats{QueueID: q.ID, TotalItems: 6, CompletedItems: 3}) ||
				stats.Stats[1].TotalItems != 0 || stats.Stats[2] != (feedback.QueueStats{QueueID: other.ID}) {
				t.Fatalf("stats: %+v %v", stats, err)
			}
			empty, err := svc.QueueStats(ctx, feedback.QueueStatsReq{ProjectID: project})
			if err != nil || len(empty.Stats) != 0 {
				t.Fatalf("empty stats: %+v %v", empty, err)
			}
		})

		t.Run("no call lookup", func(t *testing.T) {
			bare := newService(t, db, nil)
			q, _ := bare.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: project, Name: "bare"})
			if _, err := bare.AddQueueItems(ctx, feedback.AddQueueItemsReq{ProjectID: project, QueueID: q.ID, CallIDs: []string{"c0"}}); !errors.Is(err, weft.ErrUnavailable) {
				t.Fatalf("without lookup: %v", err)
			}
		})
	})
}

func userCtxAdd(svc feedback.Service, user, queueID string, ids []string) (feedback.AddQueueItemsRes, error) {
	return svc.AddQueueItems(userCtx(user), feedback.AddQueueItemsReq{ProjectID: project, QueueID: queueID, CallIDs: ids})
}
