package webui_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// createUsers makes users with one API key each in the database behind
// dbURL, as the admin commands make them, and returns the keys in order.
func createUsers(tb testing.TB, dbURL string, names ...string) []string {
	tb.Helper()
	ctx := context.Background()
	db, err := weft.Open(ctx, dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		tb.Fatal(err)
	}
	var keys []string
	for _, name := range names {
		if _, err := identity.CreateUser(ctx, name, false); err != nil {
			tb.Fatal(err)
		}
		key, err := identity.CreateAPIKey(ctx, name, "browser test")
		if err != nil {
			tb.Fatal(err)
		}
		keys = append(keys, key)
	}
	return keys
}

// bigTraceCalls is the size of the benchmark's trace: a root, 99 children
// and 100 grandchildren under each child.
const bigTraceCalls = 1 + 99 + 99*100

// BenchmarkTraceFirstPaint measures, in Chromium, how long a 10,000-call
// trace takes from navigation to its first contentful paint (the Paint
// Timing API's first-contentful-paint, in the page's own clock), on SQLite
// and PostgreSQL. Run with:
//
//	cd internal/integration && go test -run '^$' -bench TraceFirstPaint -benchtime 20x ./webui/
func BenchmarkTraceFirstPaint(b *testing.B) {
	if noBrowser != "" {
		b.Skip(noBrowser)
	}
	for _, backend := range testdb.Backends[:2] {
		b.Run(backend.Name, func(b *testing.B) {
			dbURL := backend.URL(b)
			srv := serverproc.Start(b, serverproc.Options{DatabaseURL: dbURL})
			e := &env{srv: srv}
			e.aliceKey = createUsers(b, dbURL, "alice")[0]
			traceID := seedBigTrace(b, e)
			tb := newTab(b, srv.URL)
			tb.signIn("", e.aliceKey)
			path := "/ui/p/" + viewProject + "/traces/" + traceID
			var paint, server float64
			for b.Loop() {
				tb.open(path)
				got := value(tb, chromedp.Poll[[]float64](`(() => {
					const fcp = performance.getEntriesByName('first-contentful-paint')[0];
					const nav = performance.getEntriesByType('navigation')[0];
					return fcp && nav && nav.responseEnd > 0 ? [fcp.startTime, nav.responseEnd - nav.requestStart] : null;
				})()`))
				paint += got[0]
				server += got[1]
			}
			if n := eval[int](tb, `document.querySelectorAll('li.node').length`); n != 1+99 {
				b.Fatalf("the first paint shows %d calls, want the root and its 99 children", n)
			}
			b.ReportMetric(paint/float64(b.N), "ms/first-paint")
			b.ReportMetric(server/float64(b.N), "ms/response")
		})
	}
}

// seedBigTrace stores a trace of bigTraceCalls calls in alice/views through
// the API and returns its id.
func seedBigTrace(tb testing.TB, e *env) string {
	tb.Helper()
	traceID := id('9', 1)
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	root := id('9', 0)
	var batch []map[string]any
	add := func(callID, parent, op string, offset time.Duration) {
		start := map[string]any{
			"project_id": viewProject, "id": callID, "trace_id": traceID, "op_name": op,
			"started_at": t0.Add(offset).Format(time.RFC3339Nano), "inputs": map[string]any{"q": op},
		}
		if parent != "" {
			start["parent_id"] = parent
		}
		end := map[string]any{
			"project_id": viewProject, "id": callID, "ended_at": t0.Add(offset + time.Millisecond).Format(time.RFC3339Nano),
			"output": "ok", "summary": map[string]any{},
		}
		batch = append(batch, map[string]any{"mode": "start", "req": map[string]any{"start": start}}, map[string]any{"mode": "end", "req": map[string]any{"end": end}})
		if len(batch) >= 2000 {
			e.apiJSON(tb, e.aliceKey, "/call/upsert_batch", map[string]any{"batch": batch}, nil)
			batch = batch[:0]
		}
	}
	add(root, "", "agent", 0)
	for c := range 99 {
		child := fmt.Sprintf("0000000a-0000-7000-8000-%012d", c)
		add(child, root, fmt.Sprintf("step_%02d", c), time.Duration(c+1)*time.Second)
		for g := range 100 {
			add(fmt.Sprintf("0000000b-0000-7000-8000-%06d%06d", c, g), child, "tool", time.Duration(c+1)*time.Second+time.Duration(g+1)*time.Millisecond)
		}
	}
	if len(batch) > 0 {
		e.apiJSON(tb, e.aliceKey, "/call/upsert_batch", map[string]any{"batch": batch}, nil)
	}
	return traceID
}
