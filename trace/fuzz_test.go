package trace_test

import (
	"context"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// Any sort field, direction, column list and filter value either runs or is
// refused with a weft error class: never a raw database error, which would mean
// client text reached the SQL.
func FuzzCallsQuery(f *testing.F) {
	for _, seed := range []struct{ sort, dir, column, value string }{
		{"started_at", "asc", "inputs", "op"},
		{"summary.weave.latency_ms", "desc", "output", "weave:///e/p/op/x:1"},
		{"inputs.prompt", "DESC", "attributes.x", "0190b0f2-0000-7000-8000-000000000001"},
		{"id; DROP TABLE calls", "asc'", "inputs') --", "' OR '1'='1"},
		{"", "", "", ""}, {"summary.", "sideways", "?", "\x00"},
	} {
		f.Add(seed.sort, seed.dir, seed.column, seed.value)
	}
	db := testdb.SQLite(f)
	store, err := trace.New(trace.Config{DB: db.DB})
	if err != nil {
		f.Fatal(err)
	}
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "fuzzer", Username: "fuzzer", Entities: []string{"e"}})
	f.Fuzz(func(t *testing.T, sortField, direction, column, value string) {
		// NUL bytes never get this far: the HTTP layer refuses them (transport/httpapi/nul.go).
		if strings.ContainsRune(sortField+direction+column+value, 0) {
			return
		}
		req := &trace.CallsQueryReq{
			ProjectID: "e/p",
			SortBy:    []trace.SortBy{{Field: sortField, Direction: direction}},
			Columns:   []string{column},
			Filter:    trace.CallsFilter{OpNames: []string{value}, InputRefs: []string{value}, TraceIDs: []string{value}},
			Limit:     5,
		}
		err := store.CallsQuery(ctx, req, func(*trace.Call) error { return nil })
		if err != nil && weft.ClassOf(err) == nil {
			t.Fatalf("unclassified error for sort %q %q, column %q, value %q: %v", sortField, direction, column, value, err)
		}
		_, err = store.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: "e/p", Filter: req.Filter})
		if err != nil && weft.ClassOf(err) == nil {
			t.Fatalf("unclassified stats error for value %q: %v", value, err)
		}
	})
}
