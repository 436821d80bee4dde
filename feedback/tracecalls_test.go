package feedback_test

import (
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// Items added to a queue take their call fields from the trace store.
func TestTraceCalls(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := userCtx("u1")
		calls, err := trace.New(trace.Config{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		started := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
		res, err := calls.CallStart(ctx, &trace.CallStartReq{Start: trace.StartedCall{ProjectID: project, OpName: "weave:///team/proj/op/predict:abc", StartedAt: started}})
		if err != nil {
			t.Fatal(err)
		}
		svc := newService(t, db, feedback.TraceCalls(calls))
		q, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: project, Name: "traced"})
		if err != nil {
			t.Fatal(err)
		}
		added, err := svc.AddQueueItems(ctx, feedback.AddQueueItemsReq{ProjectID: project, QueueID: q.ID, CallIDs: []string{res.ID, "0192f3a4-0000-7000-8000-00000000dead"}})
		if err != nil || added.AddedCount != 1 {
			t.Fatalf("add: %+v %v", added, err)
		}
		items, err := svc.QueryQueueItems(ctx, feedback.QueryQueueItemsReq{ProjectID: project, QueueID: q.ID})
		if err != nil || len(items.Items) != 1 {
			t.Fatalf("items: %+v %v", items, err)
		}
		it := items.Items[0]
		if it.CallID != res.ID || it.CallTraceID != res.TraceID || it.CallOpName != "weave:///team/proj/op/predict:abc" || !it.CallStartedAt.Equal(started) || it.CallEndedAt != nil {
			t.Fatalf("item %+v, call %+v", it, res)
		}
	})
}
