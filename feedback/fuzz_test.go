package feedback_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
)

// Any filter, sort, field list, purge and queue name search either runs or is
// refused with a weft error class (a 4xx), on SQLite and on PostgreSQL: never
// a raw database error, which would mean client text reached the SQL. NUL
// (raw or as \u0000 in the expression) and invalid UTF-8 are fuzzed too: a
// service embedded without the HTTP layer gets them.
func FuzzQuery(f *testing.F) {
	for _, seed := range []struct{ expr, sort, field string }{
		{`{"$eq":[{"$getField":"payload.score"},{"$literal":1}]}`, "created_at", "id"},
		{`{"$and":[{"$gt":[{"$getField":"payload.a.b"},{"$literal":0.5}]},{"$not":[{"$in":[{"$getField":"feedback_type"},[{"$literal":"x"}]]}]}]}`, "payload.x", "payload"},
		{`{"$or":[{"$lte":[{"$getField":"created_at"},{"$literal":"2026"}]}]}`, "id", "feedback_type"},
		{`{"$eq":[{"$getField":"payload.x'); DROP TABLE feedback; --"},{"$literal":"'"}]}`, "payload.\"", "creator"},
		{`{"$eq":[{"$getField":"id"},{"$literal":"a\u0000b"}]}`, "payload.n\x00ul", "%_\\"},
		{`{"$or":[{"$eq":[{"$getField":"id"},{"$literal":"\u0000"}]}]}`, "payload.note", "name\x00"},
		{`{"$eq":[{"$getField":"payload.note"},{"$literal":"\ud800"}]}`, "payload.\xff", "\xff\xfe"},
		{`{}`, "", ""}, {`[]`, "?", "?"}, {`null`, "payload.", "payload.a"},
	} {
		f.Add(seed.expr, seed.sort, seed.field)
	}
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "fuzzer", Username: "fuzzer", Entities: []string{"e"}})
	var services []feedback.Service
	for _, db := range []*weft.DB{testdb.SQLite(f), testdb.Postgres(f)} {
		svc, err := feedback.New(feedback.Config{DB: db})
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range []string{`{"score":1,"a":{"b":2}}`, `{"note":"a\u0000b","\\u0000":"\\\u0000"}`} {
			if _, err := svc.Create(ctx, feedback.CreateReq{ProjectID: "e/p", TraceRef: "trace:///e/p/call/0190b0f2-0000-7000-8000-000000000001",
				FeedbackType: "custom", Payload: json.RawMessage(p)}); err != nil {
				f.Fatal(err)
			}
		}
		if _, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: "e/p", Name: "100% a_b"}); err != nil {
			f.Fatal(err)
		}
		services = append(services, svc)
	}
	f.Fuzz(func(t *testing.T, expr, sortField, field string) {
		req := feedback.QueryReq{ProjectID: "e/p", Query: &feedback.Query{Expr: json.RawMessage(expr)},
			SortBy: []feedback.SortBy{{Field: sortField, Direction: "desc"}}, Fields: []string{field}}
		if !json.Valid([]byte(expr)) {
			req.Query = nil
		}
		for _, svc := range services {
			if _, err := svc.Query(ctx, req); err != nil && weft.ClassOf(err) == nil {
				t.Fatalf("unclassified error for expr %q sort %q field %q: %v", expr, sortField, field, err)
			}
			if req.Query != nil {
				if _, err := svc.Purge(ctx, feedback.PurgeReq{ProjectID: "e/p", Query: *req.Query}); err != nil && weft.ClassOf(err) == nil {
					t.Fatalf("unclassified purge error for expr %q: %v", expr, err)
				}
			}
			name := strings.Repeat(field, 1+50000/(len(field)+1)) // long searches too
			for _, search := range []string{field, name} {
				if _, err := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: "e/p", Name: &search}); err != nil && weft.ClassOf(err) == nil {
					t.Fatalf("unclassified queue search error for %q: %v", truncated(search), err)
				}
			}
		}
	})
}

func truncated(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
