package webui_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// streamCutter is a reverse proxy in front of the server that ends the
// server-sent event streams passing through it on demand, cleanly, as a
// proxy's idle timeout or a server's restart ends them: the browser sees the
// stream end, and its EventSource reconnects.
type streamCutter struct {
	*httptest.Server
	mu      sync.Mutex
	streams []*cuttableBody
}

func newStreamCutter(t *testing.T, upstream string) *streamCutter {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	c := &streamCutter{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	proxy.ModifyResponse = func(res *http.Response) error {
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			body := &cuttableBody{ReadCloser: res.Body}
			res.Body = body
			c.mu.Lock()
			c.streams = append(c.streams, body)
			c.mu.Unlock()
		}
		return nil
	}
	c.Server = httptest.NewServer(proxy)
	t.Cleanup(c.Close)
	return c
}

// cut ends every stream open now.
func (c *streamCutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.streams {
		s.cut.Store(true)
		_ = s.ReadCloser.Close()
	}
	c.streams = nil
}

// cuttableBody is an upstream stream whose end, once cut, reads as its end
// rather than as an error (which would make the proxy abort the response).
type cuttableBody struct {
	io.ReadCloser
	cut atomic.Bool
}

func (b *cuttableBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && b.cut.Load() {
		return n, io.EOF
	}
	return n, err
}

// TestLiveStreamsEndQuietly: the live trace list, model page and job page
// lose their streams (ended by a proxy) and are left: none logs an error to
// the console, each shows that it reconnects, and each follows its data
// again once reconnected, the job page without repeating an event.
func TestLiveStreamsEndQuietly(t *testing.T) {
	if noBrowser != "" {
		t.Skip(noBrowser)
	}
	dbURL := testdb.SQLiteURL(t)
	args, trainerEnv, hold := trainerArgs(t)
	e := seedEnv(t, dbURL, &env{srv: serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: args, Env: trainerEnv}), holdFile: hold})
	proxy := newStreamCutter(t, e.srv.URL)
	c := e2e.Client{URL: e.srv.URL, Auth: e2e.Bearer(e.aliceKey)}
	var model artModel
	c.Call(t, http.MethodPost, "/v1/preview/models", map[string]any{"entity": "alice", "project": "art", "name": "agent", "base_model": "Qwen/Qwen3-14B"}, &model)

	tb := newTab(t, proxy.URL)
	tb.signIn("", e.aliceKey)

	// The trace list: its stream ends, the list says so and reconnects,
	// then shows a new trace.
	tb.open("/ui/p/alice/app/")
	tb.poll(`document.querySelector('#results')?.dataset.live === 'open'`)
	tb.run(chromedp.Evaluate[chromedp.Void](`window.__states = [];
	  new MutationObserver(() => window.__states.push(document.querySelector('#results').dataset.live))
	    .observe(document.querySelector('#results'), {attributes: true, attributeFilter: ['data-live']})`))
	proxy.cut()
	tb.poll(`window.__states.includes('closed') && document.querySelector('#results').dataset.live === 'open'`)
	e.start(t, e.aliceKey, "alice/app", id('7', 1), id('6', 1), "", "after_the_cut", time.Now().UTC(), map[string]any{})
	tb.poll(`document.querySelector('#traces').textContent.includes('after_the_cut')`)

	// The model page: its stream ends, it reconnects, and the metrics logged
	// then reach its chart.
	modelURL := "/ui/p/alice/art/models/" + model.ID
	tb.open(modelURL)
	tb.poll(`document.querySelector('#model-live')?.dataset.following === 'true'`)
	tb.run(chromedp.Evaluate[chromedp.Void](`window.__states = [];
	  new MutationObserver(() => window.__states.push(document.querySelector('#model-live').dataset.following))
	    .observe(document.querySelector('#model-live'), {attributes: true, attributeFilter: ['data-following']})`))
	proxy.cut()
	tb.poll(`window.__states.includes('reconnecting') && document.querySelector('#model-live').dataset.following === 'true'`)
	c.Call(t, http.MethodPost, "/v1/preview/models/"+model.ID+"/log", map[string]any{"split": "val", "trajectory_groups": artGroups(1, "after the cut")}, nil)
	tb.poll(`!!document.querySelector('.charts[data-chart]').charts.get('val/reward')`)

	// A running job's page: its stream ends after the first step, and the
	// steps that follow arrive once each.
	release := holdJobs(t, e)
	job := artFlow(t, c, model.ID, 2, "cut")
	jobURL := "/ui/p/alice/art/training-jobs/" + job
	tb.open(jobURL)
	tb.poll(`document.querySelector('#job-live')?.dataset.following === 'true' && document.querySelectorAll('#events tr.event-gradient_step').length > 0`)
	tb.run(chromedp.Evaluate[chromedp.Void](`window.__states = [];
	  new MutationObserver(() => window.__states.push(document.querySelector('#job-live').dataset.following))
	    .observe(document.querySelector('#job-live'), {attributes: true, attributeFilter: ['data-following']})`))
	proxy.cut()
	tb.poll(`window.__states.includes('reconnecting') && document.querySelector('#job-live').dataset.following === 'true'`)
	release()
	tb.poll(`document.querySelector('#job-live').dataset.following === 'ended'`)
	events := artEvents(t, c, job, time.Minute)
	steps := 0
	for _, ev := range events {
		if ev.Type == "gradient_step" {
			steps++
		}
	}
	if rows, shown := eval[int](tb, `document.querySelectorAll('#events tbody tr').length`), tb.text("#job-steps"); rows != len(events) || shown != fmt.Sprint(steps) {
		t.Fatalf("after the stream was cut: %d event rows and %s steps shown; the job has %d events, %d steps", rows, shown, len(events), steps)
	}
	checkSteps(t, "job page after the cut", chartOf(tb, "loss"), 0, events, "loss")

	// Leaving either page, by a link or by the address bar, while it
	// follows its stream.
	tb.run(chromedp.Click(chromedp.CSS(`a[data-nav=project]`)))
	tb.waitPath(func(p string) bool { return p == "/ui/p/alice/art/" })
	tb.open("/ui/p/alice/app/")
	tb.poll(`document.querySelector('#results')?.dataset.live === 'open'`)
	tb.open(modelURL)
	tb.poll(`document.querySelector('#model-live')?.dataset.following === 'true'`)
	tb.run(chromedp.Click(chromedp.CSS(`a[data-nav=evaluations]`)))
	tb.waitPath(func(p string) bool { return strings.HasSuffix(p, "/evaluations") })
	tb.open("/ui/p/alice/app/")
	tb.poll(`document.querySelector('#results')?.dataset.live === 'open'`)
	tb.open("/")
}
