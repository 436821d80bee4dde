package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// The million-call project: millionCopies copies of a template of
// templateCalls calls, in traces of traceCalls (a root and its children).
const (
	templateCalls = 1000
	traceCalls    = 10
	millionCopies = 1000
	millionCalls  = templateCalls * millionCopies
)

// millionRare is the text of one template root in templateCalls: what the
// search looks for (a thousand roots of the project hold it).
const millionRare = "今天天气怎么样"

// millionID is the id of the n-th call of the project.
func millionID(n int) string { return fmt.Sprintf("01900000-0000-7000-8000-%012d", n) }

// TestWebUIMillionCalls drives the trace list of a 1,000,000-call project
// in Chromium: the first page with its capped count, paging by cursor, a
// status filter, an op filter and a full-text search. It runs on
// PostgreSQL, where a project that size belongs; the calls are seeded in
// the database: a template of a thousand calls written through the trace
// store's batch insert (so every derived column is the store's own), then
// copied a thousand times by one INSERT … SELECT over generate_series that
// moves only ids and times.
func TestWebUIMillionCalls(t *testing.T) {
	if noBrowser != "" {
		t.Skip(noBrowser)
	}
	t.Parallel()
	dbURL := testdb.PostgresURL(t)
	db, err := weft.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	err = weft.Migrate(context.Background(), db)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	key := createUsers(t, dbURL, "alice")[0]
	seedMillion(t, dbURL, key)
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL})

	tb := newTab(t, srv.URL)
	tb.signIn("", key)
	tb.open("/ui/p/alice/big/")
	if got := tb.text(".count"); !strings.HasPrefix(got, "10,000+ traces") {
		t.Fatalf("count: %q", got)
	}
	// Newest first: the last copy's last trace, then back a trace at a time.
	rows := eval[string](tb, rowIDs)
	newest := millionCalls - traceCalls
	want := []string{millionID(newest), millionID(newest - traceCalls)}
	if !strings.HasPrefix(rows, strings.Join(want, ",")) || strings.Count(rows, ",") != 49 {
		t.Fatalf("first page: %.200s", rows)
	}
	// Two pages on by their links: by cursor, no row twice.
	for page := 1; page <= 2; page++ {
		tb.run(chromedp.Click(chromedp.CSS(`a[rel="next"]`)), chromedp.WaitVisible(chromedp.CSS(`a[rel="first"]`)))
		tb.loaded()
		if p := tb.path(); !strings.Contains(p, "after=") {
			t.Fatalf("page %d is not reached by cursor: %s", page+1, p)
		}
		if got, want := strings.SplitN(eval[string](tb, rowIDs), ",", 2)[0], millionID(newest-traceCalls*50*page); got != want {
			t.Fatalf("page %d starts at %s, want %s", page+1, got, want)
		}
	}
	// Failed traces: three template roots, a thousand times.
	tb.open("/ui/p/alice/big/")
	submitFilters(tb, "status", "error", fill("status", "error"))
	if got := tb.text(".count"); !strings.HasPrefix(got, "3,000 traces") {
		t.Fatalf("failed traces: %q", got)
	}
	if statuses := eval[string](tb, `[...document.querySelectorAll('#traces tbody tr .status')].map(s => s.textContent.trim()).join(',')`); strings.Count(statuses, "error") != 50 {
		t.Fatalf("the failed traces' statuses: %s", statuses)
	}
	// One op of the seven the roots have, in a time window.
	tb.open("/ui/p/alice/big/?from=2026-01-01T00:00&to=2026-01-01T01:00")
	submitFilters(tb, "op", "tool_3", fill("op", "tool_3"))
	for _, op := range strings.Split(eval[string](tb, `[...document.querySelectorAll('#traces tbody tr .trace-link')].map(a => a.textContent.trim()).join(',')`), ",") {
		if op != "tool_3" {
			t.Fatalf("op filter shows %q", op)
		}
	}
	// A search typed in the box, in Chinese.
	tb.open("/ui/p/alice/big/")
	submitFilters(tb, "q", "天气怎么", fill("q", "天气怎么"))
	if got := tb.text(".count"); !strings.HasPrefix(got, "1,000 traces") {
		t.Fatalf("search count: %q", got)
	}
	// The matches are the copies of the one template root, newest first.
	matches := strings.Split(eval[string](tb, rowIDs), ",")
	if len(matches) != 50 || matches[0] != millionID(millionCalls-templateCalls+5*traceCalls) {
		t.Fatalf("search: %d rows, first %s", len(matches), matches[0])
	}
	for _, m := range matches {
		if !strings.HasSuffix(m, fmt.Sprintf("%03d", 5*traceCalls)) {
			t.Fatalf("search: %s holds no %s", m, millionRare)
		}
	}
}

// seedMillion writes the million-call project alice/big.
func seedMillion(t *testing.T, dbURL, key string) {
	t.Helper()
	started := time.Now()
	ctx := context.Background()
	db, err := weft.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	principal, err := identity.Authenticate(ctx, "", key)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := trace.New(trace.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	// The template: traces a second apart from 2026-01-01, their children a
	// millisecond apart; three roots failed; one holds millionRare.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima")
	var batch []trace.BatchItem
	for n := range templateCalls {
		root := n / traceCalls * traceCalls
		at := t0.Add(time.Duration(root/traceCalls) * time.Second).Add(time.Duration(n-root) * time.Millisecond)
		question := fmt.Sprintf("%s %s %s", words[n%len(words)], words[n/3%len(words)], words[n/7%len(words)])
		if n == 5*traceCalls { // a root
			question += " " + millionRare
		}
		inputs, _ := json.Marshal(map[string]any{"question": question})
		start := &trace.StartedCall{ProjectID: "alice/big", ID: millionID(n), TraceID: strings.Replace(millionID(root), "-8000-", "-9000-", 1),
			OpName: fmt.Sprintf("tool_%d", n/traceCalls%7), StartedAt: at, Inputs: inputs}
		if n != root {
			parent := millionID(root)
			start.ParentID = &parent
		}
		end := &trace.EndedCall{ProjectID: "alice/big", ID: millionID(n), EndedAt: at.Add(time.Duration(n%50) * 10 * time.Millisecond),
			Output:  json.RawMessage(`{"answer":"ok"}`),
			Summary: json.RawMessage(fmt.Sprintf(`{"usage":{"gpt-4o":{"prompt_tokens":%d,"completion_tokens":20}}}`, 100+n))}
		if n == root && n%400 == 0 {
			exception := "ValueError: boom"
			end.Exception = &exception
		}
		batch = append(batch, trace.BatchItem{Mode: trace.ModeStart, Start: start}, trace.BatchItem{Mode: trace.ModeEnd, End: end})
	}
	res, err := traces.UpsertBatch(weft.WithPrincipal(ctx, principal), &trace.UpsertBatchReq{Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	// The copies: copy k moves every id by k·templateCalls and every time by
	// k·templateCalls/traceCalls seconds; every other column is the
	// template's.
	var columns []string
	if err := db.NewRaw(`SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'calls' ORDER BY ordinal_position`).Scan(ctx, &columns); err != nil {
		t.Fatal(err)
	}
	moved := map[string]string{
		"id":         "substr(id, 1, 24) || lpad((substr(id, 25)::bigint + k * ?)::text, 12, '0')",
		"trace_id":   "substr(trace_id, 1, 24) || lpad((substr(trace_id, 25)::bigint + k * ?)::text, 12, '0')",
		"parent_id":  "substr(parent_id, 1, 24) || lpad((substr(parent_id, 25)::bigint + k * ?)::text, 12, '0')",
		"started_at": "started_at + k * ? * interval '1 second'",
		"ended_at":   "ended_at + k * ? * interval '1 second'",
	}
	var selects []string
	var args []any
	for _, c := range columns {
		expr, ok := moved[c]
		if !ok {
			expr = c
		} else if strings.HasSuffix(c, "_at") {
			args = append(args, templateCalls/traceCalls)
		} else {
			args = append(args, templateCalls)
		}
		selects = append(selects, expr)
	}
	args = append(args, millionCopies-1)
	copyAll := "INSERT INTO calls (" + strings.Join(columns, ", ") + ") SELECT " + strings.Join(selects, ", ") +
		" FROM calls, generate_series(1, ?) AS k WHERE project_id = 'alice/big'"
	if _, err := db.ExecContext(ctx, copyAll, args...); err != nil {
		t.Fatal(err)
	}
	// The statistics autovacuum gathers after a bulk load.
	if _, err := db.ExecContext(ctx, "ANALYZE calls"); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d calls in %s", millionCalls, time.Since(started).Round(time.Millisecond))
}
