package trace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// An end may arrive before its start; the call shows up once both are there,
// with its summary's weave member derived at read time.
func ExampleStore_UpsertBatch() {
	dir, _ := os.MkdirTemp("", "weft-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := weft.Open(ctx, "sqlite:"+filepath.Join(dir, "weft.db"))
	defer db.Close()
	_ = weft.Migrate(ctx, db)
	calls, _ := trace.New(trace.Config{DB: db})
	ctx = weft.WithPrincipal(ctx, weft.Principal{UserID: "u1"})

	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	callID, traceID := "0190c7a0-0000-7000-8000-000000000001", "0190c7a0-0000-7000-8000-0000000000aa"
	_, _ = calls.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: []trace.BatchItem{
		{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: "acme/demo", ID: callID, EndedAt: at.Add(1500 * time.Millisecond),
			Output: json.RawMessage(`{"answer": 42}`), Summary: json.RawMessage(`{"usage":{"gpt-4o":{"prompt_tokens":9,"completion_tokens":3}}}`)}},
	}})
	read, _ := calls.CallRead(ctx, &trace.CallReadReq{ProjectID: "acme/demo", ID: callID})
	fmt.Println("before the start:", read.Call)

	_, _ = calls.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: []trace.BatchItem{
		{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: "acme/demo", ID: callID, TraceID: traceID,
			OpName: "weave:///acme/demo/op/answer:v1", StartedAt: at, Inputs: json.RawMessage(`{"q": "life"}`)}},
	}})
	read, _ = calls.CallRead(ctx, &trace.CallReadReq{ProjectID: "acme/demo", ID: callID})
	fmt.Println(string(read.Call.Inputs), string(read.Call.Output))
	fmt.Println(string(read.Call.Summary))
	// Output:
	// before the start: <nil>
	// {"q": "life"} {"answer": 42}
	// {"usage":{"gpt-4o":{"prompt_tokens":9,"completion_tokens":3}},"weave":{"status":"success","trace_name":"answer","latency_ms":1500}}
}
