package trace_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// Any sort field, direction, column list and filter value, and any text inside
// a call's free-form members, either works or is refused with a weft error
// class, on SQLite and on PostgreSQL: never a raw database error, which would
// mean client text reached the SQL or text the database cannot keep reached
// it. NUL and invalid UTF-8 are fuzzed too: a store embedded without the HTTP
// layer gets them.
func FuzzCallsQuery(f *testing.F) {
	for _, seed := range []struct{ sort, dir, column, value string }{
		{"started_at", "asc", "inputs", "op"},
		{"summary.weave.latency_ms", "desc", "output", "weave:///e/p/op/x:1"},
		{"inputs.prompt", "DESC", "attributes.x", "0190b0f2-0000-7000-8000-000000000001"},
		{"inputs.\xff", "desc", "output", "🚀 100%_\\"}, {"output.a.b", "asc", "output", "天气"},
		{"id; DROP TABLE calls", "asc'", "inputs') --", "' OR '1'='1"},
		{"", "", "", ""}, {"summary.", "sideways", "?", "\x00"},
		{"id\x00", "asc", "inputs\x00", "weave:///e/p/object/n\x00ul:0"},
		{"started_at", "asc", "\xff", "\xff\xfe"}, {"id", "asc", "inputs", `\ud800`}, {"id", "asc", "inputs", `\u0000`},
	} {
		f.Add(seed.sort, seed.dir, seed.column, seed.value)
	}
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "fuzzer", Username: "fuzzer", Entities: []string{"e"}})
	var stores []*trace.Store
	for _, db := range []*weft.DB{testdb.SQLite(f), testdb.Postgres(f)} {
		store, err := trace.New(trace.Config{DB: db})
		if err != nil {
			f.Fatal(err)
		}
		stores = append(stores, store)
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, sortField, direction, column, value string) {
		req := &trace.CallsQueryReq{
			ProjectID: "e/p",
			SortBy:    []trace.SortBy{{Field: sortField, Direction: direction}},
			Columns:   []string{column},
			Filter: trace.CallsFilter{OpNames: []string{value}, InputRefs: []string{value}, TraceIDs: []string{value},
				UserIDs: []string{value}, Search: value},
			Limit: 5,
		}
		quoted, _ := json.Marshal(value)
		// The value as sent, inside a string: a JSON escape (\u0000, \ud800) or
		// raw bytes (invalid UTF-8), which encoding/json would have replaced.
		raw := json.RawMessage(`{"v":"` + value + `","ref":` + string(quoted) + `}`)
		for _, store := range stores {
			err := store.CallsQuery(ctx, req, func(*trace.Call) error { return nil })
			if err != nil && weft.ClassOf(err) == nil {
				t.Fatalf("unclassified error for sort %q %q, column %q, value %q: %v", sortField, direction, column, value, err)
			}
			_, err = store.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: "e/p", Filter: req.Filter})
			if err != nil && weft.ClassOf(err) == nil {
				t.Fatalf("unclassified stats error for value %q: %v", value, err)
			}
			res, err := store.CallsComplete(ctx, &trace.CallsCompleteReq{ProjectID: "e/p", Batch: []trace.CompletedCall{{
				ID: "0190b0f2-0000-7000-8000-000000000001", TraceID: "0190b0f2-0000-7000-8000-000000000002", OpName: "f",
				StartedAt: at, EndedAt: at, Inputs: raw, Output: raw, Attributes: raw, Summary: raw,
			}}})
			if err == nil && res.Res[0].Err != nil {
				err = res.Res[0].Err
			}
			if err != nil && weft.ClassOf(err) == nil {
				t.Fatalf("unclassified error storing %q: %v", raw, err)
			}
		}
	})
}
