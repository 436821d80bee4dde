package trace_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// fuzzValues are the JSON values the fuzzed calls hold and their queries
// compare with: numbers as clients write them, numeric and other strings,
// booleans, null, arrays and objects.
var fuzzValues = []string{`1`, `2`, `10`, `-3`, `0`, `1.50`, `2.5`, `1e3`, `0.1`, `12345678901234567890`,
	`"1"`, `"10"`, `"2"`, `"5"`, `" 5"`, `"+7"`, `"007"`, `"1e2"`, `"abc"`, `"ABC"`, `"Abc d"`, `""`, `"true"`, `"ünï"`,
	`"caf\u00e9"`, `"a\/b"`, `"q\"x"`, `"line\nnext"`,
	`true`, `false`, `null`, `[1,2]`, `["x", "y"]`, `{"x": 1}`, `{"x":"abc"}`}

// fuzzLiterals are the literals of fuzzed queries.
var fuzzLiterals = []any{int64(1), int64(2), int64(10), int64(-3), int64(0), int64(3), int64(1000), 1.5, 2.5, 0.1, 1000.0,
	"1", "10", "abc", "ABC", "", "true", "x", "ünï", "a", "t1", "boom", "alpha", "Zed", "success", "error", "running",
	"café", "a/b", "é", "next", "AF", "1000", "1e3", "1.5", "0.1",
	"descendant_error", "2026-05-01T12:00:05Z", "2026-05-01", true, false, nil}

// fuzzFields are the fields fuzzed queries read and sort by.
var fuzzFields = []string{"inputs.a", "inputs.b", "inputs.arr.0", "inputs.arr.1", "inputs.o.x", "inputs.missing", "inputs",
	"output", "output.x", "output.0", "attributes.k", "summary.s", "summary.status_counts.error",
	"summary.weave.status", "summary.weave.latency_ms", "summary.weave.trace_name",
	"op_name", "display_name", "exception", "thread_id", "wb_run_step", "wb_run_step_end", "started_at", "ended_at", "id",
	"feedback.[wandb.runnable.t1].payload.output.v", "feedback.[t2].payload.o.x", "feedback.[*].payload.v", "feedback.[wandb.runnable.t1].runnable_ref", "feedback.[t2].payload"}

// fuzzCalls are the calls the fuzzer queries: every kind of value in every
// member, finished and running calls, feedback rows of two types.
func fuzzCalls() []*memCall {
	rng := rand.New(rand.NewPCG(33, 1))
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	maybe := func(list ...string) *string {
		if i := rng.IntN(len(list) + 1); i < len(list) {
			return ptr(list[i])
		}
		return nil
	}
	var calls []*memCall
	for i := range 24 {
		started := t0.Add(time.Duration(i)*time.Second + time.Duration(rng.IntN(1000))*time.Microsecond)
		c := &memCall{userID: "u-alice"}
		c.ProjectID, c.ID, c.TraceID = project, fmt.Sprintf("0196b000-0000-7000-8000-%012d", i), fmt.Sprintf("0196b000-0000-7000-9000-%012d", i%5)
		c.OpName = pick([]string{"weave:///alice/p/op/alpha:v1", "weave:///alice/p/op/beta:v2", "trace:///alice/p/op/alpha:v2", "plain_op", "weave:///alice/p/op/Gamma:v3"})
		c.DisplayName, c.Exception, c.ThreadID = maybe("", "Zed", "alpha"), maybe("", "boom"), maybe("t1", "t2")
		c.StartedAt, c.EndedAt = started, started.Add(time.Duration(rng.IntN(40))*time.Millisecond)
		c.PfRunStep, c.PfRunStepEnd = ptr(int64(rng.IntN(5))), ptr(int64(rng.IntN(5)))
		inputs := `{"a":` + pick(fuzzValues) + `,"b":` + pick(fuzzValues) + `,"arr":[` + pick(fuzzValues) + `,` + pick(fuzzValues) + `],"o":{"x":` + pick(fuzzValues) + `}}`
		if i%7 == 3 {
			inputs = `{"b":` + pick(fuzzValues) + `}`
		}
		c.Inputs, c.Attributes = json.RawMessage(inputs), json.RawMessage(`{"k":`+pick(fuzzValues)+`}`)
		c.Output = json.RawMessage(pick(fuzzValues))
		if i%3 == 0 {
			c.Output = json.RawMessage(`{"x":` + pick(fuzzValues) + `}`)
		}
		c.Summary = json.RawMessage(fmt.Sprintf(`{"status_counts":{"error":%d},"s":%s}`, rng.IntN(2), pick(fuzzValues)))
		if c.running = i%6 == 5; c.running {
			c.Exception, c.Output, c.Summary, c.PfRunStepEnd = nil, nil, nil, nil
		}
		for j := range rng.IntN(4) {
			row := memFeedback{id: fmt.Sprintf("0196c000-0000-7000-8000-%06d%06d", i, j), kind: "t2",
				payload:   `{"v":` + pick(fuzzValues) + `,"o":{"x":` + pick(fuzzValues) + `}}`,
				createdAt: t0.Add(time.Duration(100*i+j) * time.Second)}
			if rng.IntN(2) == 0 {
				row.kind, row.payload = "wandb.runnable.t1", `{"output":`+row.payload+`}`
				row.runnableRef = ptr("weave:///alice/p/object/t1:" + pick([]string{"a", "b"}))
			}
			c.feedback = append(c.feedback, row)
		}
		calls = append(calls, c)
	}
	return calls
}

// storeMemCalls writes calls and their feedback.
func storeMemCalls(tb testing.TB, db *weft.DB, calls []*memCall) *trace.Store {
	tb.Helper()
	s, err := trace.New(trace.Config{DB: db})
	if err != nil {
		tb.Fatal(err)
	}
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u-alice", Username: "alice"})
	var now time.Time
	fb, err := feedback.New(feedback.Config{DB: db, Now: func() time.Time { return now }})
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range calls {
		var items []trace.BatchItem
		items = append(items, trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: c.ProjectID, ID: c.ID, TraceID: c.TraceID,
			OpName: c.OpName, DisplayName: c.DisplayName, ThreadID: c.ThreadID, StartedAt: c.StartedAt, Inputs: c.Inputs, Attributes: c.Attributes,
			PfRunStep: c.PfRunStep}})
		if !c.running {
			items = append(items, trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: c.ProjectID, ID: c.ID, EndedAt: c.EndedAt,
				Output: c.Output, Summary: c.Summary, Exception: c.Exception, PfRunStepEnd: c.PfRunStepEnd}})
		}
		res, err := s.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: items})
		if err != nil || res.Res[0].Err != nil || res.Res[len(res.Res)-1].Err != nil {
			tb.Fatalf("storing %s: %v %+v", c.ID, err, res)
		}
		for _, row := range c.feedback {
			now = row.createdAt
			_, err := fb.Create(ctx, feedback.CreateReq{ProjectID: c.ProjectID, TraceRef: "weave:///" + c.ProjectID + "/call/" + c.ID,
				FeedbackType: row.kind, Payload: json.RawMessage(row.payload), ID: ptr(row.id), RunnableRef: row.runnableRef})
			if err != nil {
				tb.Fatal(err)
			}
		}
	}
	return s
}

// queryGen makes a query of the language from fuzz bytes.
type queryGen struct {
	data []byte
	at   int
}

func (g *queryGen) pick(n int) int {
	if g.at >= len(g.data) {
		return 0
	}
	g.at++
	return int(g.data[g.at-1]) % n
}

func (g *queryGen) operation(depth int) any {
	ops := 9
	if depth >= 3 {
		ops = 6 // no $not, $and or $or
	}
	comparison := func() string { return []string{"$eq", "$gt", "$gte", "$lt", "$lte"}[g.pick(5)] }
	switch g.pick(ops) {
	case 0, 1:
		return map[string]any{comparison(): []any{g.field(depth), g.literal()}}
	case 2:
		return map[string]any{comparison(): []any{g.operand(depth), g.operand(depth)}}
	case 3:
		list := []any{g.literal()}
		for range g.pick(4) {
			list = append(list, g.literal())
		}
		return map[string]any{"$in": []any{g.field(depth), list}}
	case 4:
		var list []any
		for range g.pick(4) {
			list = append(list, g.operand(depth))
		}
		return map[string]any{"$in": []any{g.operand(depth), list}}
	case 5:
		return map[string]any{"$contains": map[string]any{"input": g.field(depth), "substr": g.operand(depth), "case_insensitive": g.pick(2) == 1}}
	case 6:
		return map[string]any{"$not": []any{g.operation(depth + 1)}}
	}
	terms := []any{g.operation(depth + 1)}
	for range g.pick(3) {
		terms = append(terms, g.operation(depth+1))
	}
	return map[string]any{[]string{"$and", "$or"}[g.pick(2)]: terms}
}

// field is mostly a bare field, sometimes converted.
func (g *queryGen) field(depth int) any {
	f := map[string]any{"$getField": fuzzFields[g.pick(len(fuzzFields))]}
	if g.pick(4) == 0 {
		return map[string]any{"$convert": map[string]any{"input": f, "to": []string{"int", "double", "bool", "string", "exists"}[g.pick(5)]}}
	}
	return f
}

func (g *queryGen) literal() any {
	return map[string]any{"$literal": fuzzLiterals[g.pick(len(fuzzLiterals))]}
}

func (g *queryGen) operand(depth int) any {
	switch g.pick(6) {
	case 0, 1:
		return map[string]any{"$getField": fuzzFields[g.pick(len(fuzzFields))]}
	case 2, 3:
		return g.literal()
	case 4:
		return map[string]any{"$convert": map[string]any{"input": g.operand(depth + 1),
			"to": []string{"int", "double", "bool", "string", "exists"}[g.pick(5)]}}
	}
	if depth >= 3 {
		return g.literal()
	}
	return g.operation(depth + 1)
}

func (g *queryGen) sort() []trace.SortBy {
	var out []trace.SortBy
	for range g.pick(3) {
		out = append(out, trace.SortBy{Field: fuzzFields[g.pick(len(fuzzFields))], Direction: []string{"asc", "desc"}[g.pick(2)]})
	}
	return out
}

// runQuery is the ids CallsQuery returns, and the count of CallsQueryStats.
func runQuery(ctx context.Context, s *trace.Store, query []byte, sortBy []trace.SortBy) ([]string, int64, error) {
	var got []string
	req := &trace.CallsQueryReq{ProjectID: project, Query: query, SortBy: sortBy}
	if err := s.CallsQuery(ctx, req, func(c *trace.Call) error { got = append(got, c.ID); return nil }); err != nil {
		return nil, 0, err
	}
	stats, err := s.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: project, Query: query})
	if err != nil {
		return nil, 0, err
	}
	return got, stats.Count, nil
}

// FuzzCallsQueryLanguage compares what SQLite and PostgreSQL answer a query of
// the language, matches and order, with the evaluator of query_eval_test.go;
// a query the evaluator refuses must be ErrInvalidQuery, and nothing else may
// fail.
func FuzzCallsQueryLanguage(f *testing.F) {
	for _, seed := range []string{"\x00\x00\x00\x00\x00", "\x01\x02\x03\x04\x05\x06", "\x05\x00\x00\x02\x01\x07", "\x06\x00\x01\x02\x03\x00\x04\x05\x02",
		"\x02\x00\x10\x00\x05", "\x00\x04\x12\x02\x19", "\x03\x01\x1a\x00", "\x01\x00\x1b\x03\x00\x05\x00\x02"} {
		f.Add([]byte(seed))
	}
	calls := fuzzCalls()
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u-alice", Username: "alice"})
	stores := map[string]*trace.Store{"sqlite": storeMemCalls(f, testdb.SQLite(f), calls), "postgres": storeMemCalls(f, testdb.Postgres(f), calls)}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &queryGen{data: data}
		query, _ := json.Marshal(map[string]any{"$expr": g.operation(0)})
		sortBy := g.sort()
		want, wantErr := evalQuery(calls, query, sortBy)
		for name, s := range stores {
			got, count, err := runQuery(ctx, s, query, sortBy)
			switch {
			case errors.Is(wantErr, errEvalInvalid):
				if !errors.Is(err, trace.ErrInvalidQuery) {
					t.Fatalf("%s: %s sorted by %v: %v, want an invalid query", name, query, sortBy, err)
				}
			case err != nil:
				t.Fatalf("%s: %s sorted by %v: %v", name, query, sortBy, err)
			case !slices.Equal(got, want) || int(count) != len(want):
				t.Fatalf("%s: %s sorted by %v:\n got %v (count %d)\nwant %v", name, query, sortBy, got, count, want)
			}
		}
	})
}
