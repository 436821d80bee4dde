package webui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// BenchmarkLiveListLoad measures what open live trace lists cost other
// tenants: the median and 90th-percentile latency of another tenant's
// /calls/query_stats, first with no stream open (the same-run baseline),
// then while WEFT_BENCH_STREAMS (default 20) live streams of a project of
// WEFT_BENCH_CALLS calls (default 30,000), sorted by cost, are open and the
// project takes WEFT_BENCH_WRITES calls a second (default 3). Each stream
// signs in on its own, so a per-session cap on streams does not hide their
// cost. "same view" streams all show one view; "distinct views" each add a
// column of their own, so no two share a refresh. It reports the loaded
// median as a ratio of the quiet one, and the list refreshes the streams
// received a second. Run it, on SQLite and PostgreSQL, with
//
//	go test ./transport/webui -run '^$' -bench LiveListLoad -benchtime 1x
func BenchmarkLiveListLoad(b *testing.B) {
	streams := benchEnv(b, "WEFT_BENCH_STREAMS", 20)
	calls := benchEnv(b, "WEFT_BENCH_CALLS", 30_000)
	writes := benchEnv(b, "WEFT_BENCH_WRITES", 3)
	for _, database := range []struct {
		name string
		open func(testing.TB) *weft.DB
	}{{"sqlite", testdb.SQLite}, {"postgres", testdb.Postgres}} {
		b.Run(database.name, func(b *testing.B) {
			s := newLoadServer(b, database.open(b), calls)
			for _, views := range []string{"same view", "distinct views"} {
				b.Run(views, func(b *testing.B) {
					for b.Loop() {
						s.measure(b, streams, writes, views == "distinct views")
					}
				})
			}
		})
	}
}

// benchEnv reads a positive whole number from the environment.
func benchEnv(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q", name, s)
	}
	return n
}

// loadServer is the UI and API over one database: the tenant "bench" with
// a big project bench/big and the tenant "other" with a small other/p.
type loadServer struct {
	*httptest.Server
	traces    *trace.Store
	benchCtx  context.Context // as the tenant "bench"
	benchKey  string
	otherKey  string
	nextWrite atomic.Int64
}

func newLoadServer(b *testing.B, db *weft.DB, calls int) *loadServer {
	ctx := context.Background()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	s := &loadServer{}
	for _, user := range []struct {
		name string
		key  *string
	}{{"bench", &s.benchKey}, {"other", &s.otherKey}} {
		if _, err := identity.CreateUser(ctx, user.name, false); err != nil {
			b.Fatal(err)
		}
		if *user.key, err = identity.CreateAPIKey(ctx, user.name, "load"); err != nil {
			b.Fatal(err)
		}
	}
	principal, err := identity.Authenticate(ctx, "", s.benchKey)
	if err != nil {
		b.Fatal(err)
	}
	s.benchCtx = weft.WithPrincipal(ctx, principal)
	feed := trace.NewFeed()
	if s.traces, err = trace.New(trace.Config{DB: db, Feed: feed}); err != nil {
		b.Fatal(err)
	}
	started := time.Now()
	seedBench(b, s.benchCtx, s.traces, calls)
	b.Logf("seeded %d calls in %s", calls, time.Since(started).Round(time.Millisecond))
	other, err := identity.Authenticate(ctx, "", s.otherKey)
	if err != nil {
		b.Fatal(err)
	}
	otherCtx := weft.WithPrincipal(ctx, other)
	for n := range 100 {
		s.write(b, otherCtx, "other/p", n)
	}
	api, err := httpapi.New(httpapi.Config{Identity: identity, Trace: s.traces})
	if err != nil {
		b.Fatal(err)
	}
	ui, err := webui.New(webui.Config{Identity: identity, Trace: s.traces, Feed: feed, Fallback: api, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	s.Server = httptest.NewServer(ui)
	b.Cleanup(func() { ui.CloseStreams(); s.Close() })
	return s
}

// write stores one finished call of project, with usage (so a cost).
func (s *loadServer) write(b *testing.B, ctx context.Context, project string, n int) {
	id := fmt.Sprintf("01900000-0000-7000-a000-%012d", n)
	at := time.Now().UTC()
	res, err := s.traces.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: []trace.BatchItem{
		{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: project, ID: id, TraceID: id, OpName: "live_write", StartedAt: at,
			Inputs: json.RawMessage(`{"question":"live"}`)}},
		{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: id, EndedAt: at.Add(time.Millisecond),
			Summary: json.RawMessage(`{"usage":{"gpt-4o":{"prompt_tokens":` + strconv.Itoa(100+n%5000) + `,"completion_tokens":20}}}`)}},
	}})
	if err == nil {
		for _, r := range res.Res {
			if r.Err != nil {
				err = r.Err
			}
		}
	}
	if err != nil {
		b.Fatal(err)
	}
}

// measure runs one quiet and one loaded measurement and reports them.
func (s *loadServer) measure(b *testing.B, streams, writesPerSecond int, distinct bool) {
	const window = 8 * time.Second
	quiet := s.statsLatencies(b, window)

	ctx, cancel := context.WithCancel(context.Background())
	var refreshes atomic.Int64
	var open sync.WaitGroup
	var done sync.WaitGroup
	for i := range streams {
		cookie := benchSignIn(b, s.Config.Handler, s.benchKey)
		view := url.Values{"sort": {"summary.weave.costs"}}
		if distinct {
			view.Set("cols", "inputs.f"+strconv.Itoa(i))
		}
		open.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			s.follow(ctx, cookie, "/ui/p/bench/big/live?"+view.Encode(), &open, &refreshes)
		}()
	}
	open.Wait()
	done.Add(1)
	go func() {
		defer done.Done()
		tick := time.NewTicker(time.Second / time.Duration(writesPerSecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				s.write(b, s.benchCtx, "bench/big", int(s.nextWrite.Add(1)))
			}
		}
	}()
	time.Sleep(2 * time.Second) // the streams' first refreshes
	before := refreshes.Load()
	loaded := s.statsLatencies(b, window)
	got := refreshes.Load() - before
	cancel()
	done.Wait()

	quietMedian, loadedMedian := percentile(quiet, 50), percentile(loaded, 50)
	b.ReportMetric(ms(quietMedian), "quiet-median-ms")
	b.ReportMetric(ms(loadedMedian), "loaded-median-ms")
	b.ReportMetric(ms(percentile(loaded, 90)), "loaded-p90-ms")
	b.ReportMetric(float64(loadedMedian)/float64(quietMedian), "loaded/quiet")
	b.ReportMetric(float64(got)/window.Seconds(), "refreshes/s")
}

// follow opens a live stream and counts its refreshes until ctx ends; open
// is done once the stream answered (or failed to).
func (s *loadServer) follow(ctx context.Context, cookie *http.Cookie, path string, open *sync.WaitGroup, refreshes *atomic.Int64) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	req.AddCookie(cookie)
	res, err := s.Client().Do(req)
	open.Done()
	if err != nil {
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return
	}
	lines := bufio.NewScanner(res.Body)
	lines.Buffer(make([]byte, 1<<20), 64<<20)
	for lines.Scan() {
		if lines.Text() == "event: results" {
			refreshes.Add(1)
		}
	}
}

// statsLatencies sends the other tenant's /calls/query_stats one after
// another for window and returns each one's latency.
func (s *loadServer) statsLatencies(b *testing.B, window time.Duration) []time.Duration {
	var latencies []time.Duration
	for end := time.Now().Add(window); time.Now().Before(end); {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/calls/query_stats", strings.NewReader(`{"project_id":"other/p"}`))
		req.SetBasicAuth("api", s.otherKey)
		req.Header.Set("Content-Type", "application/json")
		started := time.Now()
		res, err := s.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var stats struct{ Count int }
		err = json.NewDecoder(res.Body).Decode(&stats)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || stats.Count != 100 {
			b.Fatalf("query_stats: %d, %d calls, %v", res.StatusCode, stats.Count, err)
		}
		latencies = append(latencies, time.Since(started))
	}
	return latencies
}

func percentile(d []time.Duration, p int) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[(len(d)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
