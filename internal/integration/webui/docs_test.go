package webui_test

import (
	"context"
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
	tb.poll(`document.querySelectorAll('.opblock').length > 20`)
	paths := eval[[]string](tb, `[...document.querySelectorAll('.opblock-summary-path')].map(p => p.textContent.replace(/\u200b/g, ''))`)
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
