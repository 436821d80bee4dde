package feedback_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
)

// Record a reaction and a note on a call, then query the notes back.
func Example() {
	ctx := context.Background()
	db, err := weft.Open(ctx, "sqlite::memory:")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := weft.Migrate(ctx, db); err != nil {
		panic(err)
	}
	svc, err := feedback.New(feedback.Config{DB: db})
	if err != nil {
		panic(err)
	}
	// The acting user is taken from the context, never from the request.
	ctx = weft.WithPrincipal(ctx, weft.Principal{UserID: "u-1", Username: "alice", Entities: []string{"alice"}})
	call := "trace:///alice/evals/call/0190b0f2-0000-7000-8000-000000000001"

	reaction, err := svc.Create(ctx, feedback.CreateReq{ProjectID: "alice/evals", TraceRef: call,
		FeedbackType: "wandb.reaction.1", Payload: json.RawMessage(`{"emoji":"👍"}`)})
	if err != nil {
		panic(err)
	}
	fmt.Println(reaction.PFUserID, string(reaction.Payload))

	if _, err := svc.Create(ctx, feedback.CreateReq{ProjectID: "alice/evals", TraceRef: call,
		FeedbackType: "wandb.note.1", Payload: json.RawMessage(`{"note":"too verbose"}`)}); err != nil {
		panic(err)
	}
	notes, err := svc.Query(ctx, feedback.QueryReq{ProjectID: "alice/evals", Fields: []string{"feedback_type", "payload"},
		Query: &feedback.Query{Expr: json.RawMessage(`{"$eq":[{"$getField":"feedback_type"},{"$literal":"wandb.note.1"}]}`)}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d %s\n", notes.TotalCount, notes.Result[0]["payload"])
	// Output:
	// u-1 {"alias":":thumbs_up:","detoned":"👍","detoned_alias":":thumbs_up:","emoji":"👍"}
	// 1 {"note":"too verbose"}
}
