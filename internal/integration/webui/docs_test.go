package webui_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestAPIReferenceOffline loads /docs with every request to another host
// refused, as on a machine without the internet: the reference lists the
// server's operations, OTLP ingest among them, from the server's own files.
func TestAPIReferenceOffline(t *testing.T) {
	if noBrowser != "" {
		t.Skip(noBrowser)
	}
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t)})
	server, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, srv.URL)
	var mu sync.Mutex
	var offHost []string
	target := chromedp.FromContext(tb.ctx).Target
	_ = chromedp.Listen(tb.ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		go func() {
			u, err := url.Parse(e.Request.URL)
			if err == nil && (u.Host == server.Host || u.Scheme == "data") {
				_, _ = cdp.Call(tb.ctx, target, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
				return
			}
			mu.Lock()
			offHost = append(offHost, e.Request.URL)
			mu.Unlock()
			_, _ = cdp.Call(tb.ctx, target, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		}()
	})
	tb.run(chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, fetch.Enable, fetch.EnableParams{})
		return err
	}))
	tb.open("/docs")
	// Past 150 tags and operations Swagger UI renders only the rows near the
	// viewport, so the page is read by scrolling it from top to bottom.
	tb.poll(`document.querySelectorAll('.opblock').length > 0`)
	paths := value(tb, chromedp.Evaluate[[]string](`(async () => {
		const seen = new Set();
		const collect = () => document.querySelectorAll('.opblock-summary [data-path]').forEach(p => seen.add(p.dataset.path));
		for (let y = 0, last = -1; y !== last; ) {
			collect();
			last = y;
			window.scrollBy(0, window.innerHeight / 4);
			await new Promise(r => setTimeout(r, 50));
			y = window.scrollY;
		}
		collect();
		return [...seen];
	})()`, chromedp.EvalAwaitPromise))
	for _, want := range specPaths(t, srv.URL) {
		if !slices.Contains(paths, want) {
			t.Errorf("the reference does not list %s", want)
		}
	}
	for _, want := range []string{"/otel/v1/traces", "/call/start", "/v1/chat/completions", "/v1/preview/training-jobs"} {
		if !slices.Contains(paths, want) {
			t.Errorf("the reference does not list %s: %s", want, strings.Join(paths, " "))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offHost) > 0 {
		t.Errorf("the reference asked other hosts for %v", offHost)
	}
}

// specPaths returns the paths the server's OpenAPI document names.
func specPaths(t *testing.T, base string) []string {
	t.Helper()
	resp, err := http.Get(base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Paths) == 0 {
		t.Fatal("the OpenAPI document names no paths")
	}
	return slices.Sorted(maps.Keys(doc.Paths))
}
