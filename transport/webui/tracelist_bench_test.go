package webui_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun/dialect"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/webui"
)

// benchWords is the vocabulary of the benchmark's generated questions.
var benchWords = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike
november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu weather travel invoice
refund password account order shipping delivery payment balance transfer report summary translate explain
compare recipe schedule meeting calendar reminder contract policy insurance claim doctor symptom diagnosis`)

// benchRareTexts are texts each in one call of a thousand: what a search
// looks for.
var benchRareTexts = []string{"今天天气怎么样", "ما هو الطقس اليوم", "ship it 🚀 now", "quarterly growth 100% target"}

// BenchmarkTraceList1M measures the server time of trace list pages over a
// project of WEFT_BENCH_CALLS calls (default 1,000,000: a quarter of them
// roots, each with three children) on PostgreSQL: the first page, a filtered
// page (errors; an op), and full-text searches for rare text in three
// scripts. Seeding goes through the trace store's batch upsert (COPY) in
// batches of 10,000 calls. Run it with
//
//	TEST_DATABASE_URL=postgres://… go test ./transport/webui -run '^$' -bench TraceList1M -benchtime 20x
//
// With WEFT_BENCH_DATABASE_URL the project is kept in that database between
// runs (seeded only when empty) instead of a schema dropped at the end.
func BenchmarkTraceList1M(b *testing.B) {
	identity, traces, key := benchProject(b)
	ui, err := webui.New(webui.Config{Identity: identity, Trace: traces})
	if err != nil {
		b.Fatal(err)
	}
	cookie := benchSignIn(b, ui, key)
	for _, page := range []struct{ name, query string }{
		{"first page", ""},
		{"second page by cursor", "__next__"},
		{"filtered: errors", "?status=error"},
		{"filtered: child errors", "?status=descendant_error"},
		{"filtered: op and time", "?op=tool_3&from=2026-01-01T00:00"},
		{"search CJK", "?q=" + url.QueryEscape("天气怎么")},
		{"search Arabic", "?q=" + url.QueryEscape("الطقس")},
		{"search emoji", "?q=" + url.QueryEscape("🚀")},
		{"search word", "?q=" + url.QueryEscape("growth 100%")},
		{"search common word", "?q=weather"},
		{"sort by latency", "?sort=summary.weave.latency_ms"},
		{"sort by latency, shortest first", "?sort=summary.weave.latency_ms&dir=asc"},
		{"sort by cost", "?sort=summary.weave.costs"},
		{"sort by feedback", "?sort=feedback.reactions"},
	} {
		path := "/ui/p/bench/big/" + page.query
		if page.query == "__next__" {
			path = nextLink(b, ui, cookie, "/ui/p/bench/big/")
		}
		b.Run(page.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.AddCookie(cookie)
				ui.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
				}
			}
		})
	}
}

// benchProject is the benchmarks' project bench/big of WEFT_BENCH_CALLS
// calls (default 1,000,000; see seedBench) on PostgreSQL (or the SQLite of
// WEFT_BENCH_DATABASE_URL), seeded when empty and vacuumed, with a user
// "bench" and a new API key of it.
func benchProject(b *testing.B) (*weft.Identity, *trace.Store, string) {
	b.Helper()
	total := 1_000_000
	if s := os.Getenv("WEFT_BENCH_CALLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 4 {
			b.Fatalf("WEFT_BENCH_CALLS=%q", s)
		}
		total = n
	}
	ctx := context.Background()
	db := benchDB(b)
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := identity.CreateUser(ctx, "bench", false); err != nil && !errors.Is(err, weft.ErrUserExists) {
		b.Fatal(err)
	}
	key, err := identity.CreateAPIKey(ctx, "bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	principal, err := identity.Authenticate(ctx, "", key)
	if err != nil {
		b.Fatal(err)
	}
	traces, err := trace.New(trace.Config{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	stats, err := traces.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: "bench/big"})
	if err != nil {
		b.Fatal(err)
	}
	if stats.Count == 0 {
		started := time.Now()
		seedBench(b, weft.WithPrincipal(ctx, principal), traces, total)
		b.Logf("seeded %d calls in %s", total, time.Since(started).Round(time.Millisecond))
	} else {
		b.Logf("the project has %d calls already", stats.Count)
	}
	// What autovacuum does after a bulk load: statistics and the visibility
	// map that lets counts read the index alone (SQLite: statistics).
	analyze := "VACUUM ANALYZE calls"
	if db.Dialect().Name() == dialect.SQLite {
		analyze = "ANALYZE"
	}
	if _, err := db.ExecContext(ctx, analyze); err != nil {
		b.Fatal(err)
	}
	return identity, traces, key
}

// benchDB is WEFT_BENCH_DATABASE_URL's database (PostgreSQL, or SQLite as
// sqlite:<file>), migrated, or else a fresh schema of the test PostgreSQL
// server.
func benchDB(b *testing.B) *weft.DB {
	b.Helper()
	url := os.Getenv("WEFT_BENCH_DATABASE_URL")
	if url == "" {
		return testdb.Postgres(b)
	}
	db, err := weft.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := weft.Migrate(context.Background(), db); err != nil {
		b.Fatal(err)
	}
	return db
}

// seedBench writes total calls to bench/big through UpsertBatch: traces of
// four calls (a root and three children) a second apart, one root in a
// hundred failed, questions of eight words and, in one call of a thousand,
// one of benchRareTexts.
func seedBench(b *testing.B, ctx context.Context, traces *trace.Store, total int) {
	b.Helper()
	const batchCalls = 10_000
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var batch []trace.BatchItem
	flush := func() {
		res, err := traces.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: batch})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res.Res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		batch = batch[:0]
	}
	var question strings.Builder
	for n := range total {
		root := n / 4 * 4
		at := t0.Add(time.Duration(root/4) * time.Second).Add(time.Duration(n-root) * time.Millisecond)
		question.Reset()
		for w := range 8 {
			if w > 0 {
				question.WriteByte(' ')
			}
			question.WriteString(benchWords[rng.IntN(len(benchWords))])
		}
		if n%1000 == 8 { // a root
			question.WriteString(" " + benchRareTexts[n/1000%len(benchRareTexts)])
		}
		inputs, _ := json.Marshal(map[string]any{"question": question.String(), "n": n})
		start := &trace.StartedCall{ProjectID: "bench/big", ID: benchID(n), TraceID: strings.Replace(benchID(root), "-8000-", "-9000-", 1),
			OpName: fmt.Sprintf("tool_%d", n%7), StartedAt: at, Inputs: inputs}
		if n != root {
			parent := benchID(root)
			start.ParentID = &parent
		}
		end := &trace.EndedCall{ProjectID: "bench/big", ID: benchID(n), EndedAt: at.Add(time.Duration(rng.IntN(5000)) * time.Millisecond),
			Output:  json.RawMessage(`{"answer":"ok ` + strconv.Itoa(n) + `"}`),
			Summary: json.RawMessage(`{"usage":{"gpt-4o":{"prompt_tokens":` + strconv.Itoa(100+n%900) + `,"completion_tokens":20}}}`)}
		if n == root && n%400 == 0 {
			exception := "ValueError: boom"
			end.Exception = &exception
		}
		batch = append(batch, trace.BatchItem{Mode: trace.ModeStart, Start: start}, trace.BatchItem{Mode: trace.ModeEnd, End: end})
		if len(batch) == 2*batchCalls {
			flush()
		}
	}
	if len(batch) > 0 {
		flush()
	}
}

func benchID(n int) string { return fmt.Sprintf("01900000-0000-7000-8000-%012d", n) }

// benchSignIn signs in through the UI and returns the session cookie.
func benchSignIn(b *testing.B, ui http.Handler, key string) *http.Cookie {
	b.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/ui/signin", strings.NewReader(url.Values{"key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	ui.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.Value != "" {
			return c
		}
	}
	b.Fatalf("sign-in: %d %s", rec.Code, rec.Body.String())
	return nil
}

// nextLink is the "next page" link of a list page.
func nextLink(b *testing.B, ui http.Handler, cookie *http.Cookie, path string) string {
	b.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.AddCookie(cookie)
	ui.ServeHTTP(rec, req)
	body := rec.Body.String()
	i := strings.Index(body, `" rel="next"`)
	j := strings.LastIndex(body[:max(i, 0)], `href="`)
	if i < 0 || j < 0 {
		b.Fatalf("no next link on %s", path)
	}
	return strings.ReplaceAll(body[j+len(`href="`):i], "&amp;", "&")
}
