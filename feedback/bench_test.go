package feedback_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
)

// benchDatabases runs a benchmark on PostgreSQL and SQLite.
func benchDatabases(b *testing.B, body func(b *testing.B, db *weft.DB)) {
	for _, name := range []string{"postgres", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			if name == "postgres" {
				body(b, testdb.Postgres(b))
			} else {
				body(b, testdb.SQLite(b))
			}
		})
	}
}

// BenchmarkQueueItemsWithPosition pages through a 100,000-item queue with
// include_position (goal: ≤ 50 ms per query on PostgreSQL).
//
//	go test ./feedback -run '^$' -bench QueueItemsWithPosition -benchtime 20x
func BenchmarkQueueItemsWithPosition(b *testing.B) {
	const size = 100_000
	benchDatabases(b, func(b *testing.B, db *weft.DB) {
		svc := newService(b, db, queueCalls(size))
		ctx := userCtx("u1")
		q, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: project, Name: "big"})
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, 0, 10_000)
		for i := range size {
			ids = append(ids, fmt.Sprintf("c%d", i))
			if len(ids) == cap(ids) {
				if _, err := svc.AddQueueItems(ctx, feedback.AddQueueItemsReq{ProjectID: project, QueueID: q.ID, CallIDs: ids}); err != nil {
					b.Fatal(err)
				}
				ids = ids[:0]
			}
		}
		if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
		cases := []struct {
			name string
			req  feedback.QueryQueueItemsReq
		}{
			{"default-order-page-50", feedback.QueryQueueItemsReq{}},
			{"default-order-offset-50000", feedback.QueryQueueItemsReq{Offset: ptr(50_000)}},
			{"started-desc-page-50", feedback.QueryQueueItemsReq{SortBy: []feedback.SortBy{{Field: "call_started_at", Direction: "desc"}}}},
			{"state-filter-page-50", feedback.QueryQueueItemsReq{Filter: &feedback.QueueItemsFilter{AnnotationStates: []string{"unstarted"}}}},
		}
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				c.req.ProjectID, c.req.QueueID, c.req.IncludePosition = project, q.ID, true
				start := time.Now()
				for b.Loop() {
					res, err := svc.QueryQueueItems(ctx, c.req)
					if err != nil || len(res.Items) != 50 || res.Items[0].PositionInQueue == nil {
						b.Fatalf("query: %d items, %v", len(res.Items), err)
					}
				}
				b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/query")
			})
		}
	})
}

// BenchmarkBatchCreate1000 stores 1,000 feedback rows in one batch (goal:
// ≤ 200 ms).
//
//	go test ./feedback -run '^$' -bench BatchCreate1000 -benchtime 10x
func BenchmarkBatchCreate1000(b *testing.B) {
	benchDatabases(b, func(b *testing.B, db *weft.DB) {
		svc := newService(b, db, nil)
		ctx := userCtx("u1")
		batch := make([]feedback.CreateReq, 1000)
		for i := range batch {
			batch[i] = feedback.CreateReq{ProjectID: project, TraceRef: callRef(fmt.Sprintf("c%d", i)), FeedbackType: "wandb.reaction.1",
				Payload: json.RawMessage(`{"emoji":"👍"}`)}
			if i%2 == 1 {
				batch[i].FeedbackType, batch[i].Payload = "score", json.RawMessage(fmt.Sprintf(`{"score":%d,"comment":"row %d"}`, i, i))
			}
		}
		start := time.Now()
		for b.Loop() {
			res, err := svc.BatchCreate(ctx, feedback.BatchCreateReq{Batch: batch})
			if err != nil || len(res.Res) != len(batch) {
				b.Fatalf("batch: %v", err)
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/batch")
	})
}

func ptr[T any](v T) *T { return &v }
