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

// Any filter, sort and field list either runs or is refused with a weft error
// class (a 4xx): never a raw database error, which would mean client text
// reached the SQL.
func FuzzQuery(f *testing.F) {
	for _, seed := range []struct{ expr, sort, field string }{
		{`{"$eq":[{"$getField":"payload.score"},{"$literal":1}]}`, "created_at", "id"},
		{`{"$and":[{"$gt":[{"$getField":"payload.a.b"},{"$literal":0.5}]},{"$not":[{"$in":[{"$getField":"feedback_type"},[{"$literal":"x"}]]}]}]}`, "payload.x", "payload"},
		{`{"$or":[{"$lte":[{"$getField":"created_at"},{"$literal":"2026"}]}]}`, "id", "feedback_type"},
		{`{"$eq":[{"$getField":"payload.x'); DROP TABLE feedback; --"},{"$literal":"'"}]}`, "payload.\"", "creator"},
		{`{}`, "", ""}, {`[]`, "?", "?"}, {`null`, "payload.", "payload.a"},
	} {
		f.Add(seed.expr, seed.sort, seed.field)
	}
	db := testdb.SQLite(f)
	svc, err := feedback.New(feedback.Config{DB: db.DB})
	if err != nil {
		f.Fatal(err)
	}
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "fuzzer", Username: "fuzzer", Entities: []string{"e"}})
	if _, err := svc.Create(ctx, feedback.CreateReq{ProjectID: "e/p", TraceRef: "trace:///e/p/call/0190b0f2-0000-7000-8000-000000000001",
		FeedbackType: "custom", Payload: json.RawMessage(`{"score":1,"a":{"b":2}}`)}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr, sortField, field string) {
		// NUL bytes never get this far: the HTTP layer refuses them (transport/httpapi/nul.go).
		if strings.ContainsRune(expr+sortField+field, 0) {
			return
		}
		req := feedback.QueryReq{ProjectID: "e/p", Query: &feedback.Query{Expr: json.RawMessage(expr)},
			SortBy: []feedback.SortBy{{Field: sortField, Direction: "desc"}}, Fields: []string{field}}
		if !json.Valid([]byte(expr)) {
			req.Query = nil
		}
		if _, err := svc.Query(ctx, req); err != nil && weft.ClassOf(err) == nil {
			t.Fatalf("unclassified error for expr %q sort %q field %q: %v", expr, sortField, field, err)
		}
	})
}
