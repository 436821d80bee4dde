package webui_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// TestLiveStreamsPerSession: a session has at most MaxLiveStreams live
// streams open, trace lists and training charts alike; one more is a 429
// that says why, another session of the same user is not held back, and a
// closed stream frees its place.
func TestLiveStreamsPerSession(t *testing.T) {
	t.Parallel()
	s, ts := newTrainingServer(t, testdb.SQLite(t), func(_ *httpapi.Config, ui *webui.Config) { ui.MaxLiveStreams = 2 })
	alice, err := s.identity.Authenticate(context.Background(), "", s.aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	model, err := ts.CreateModel(weft.WithPrincipal(context.Background(), alice), &training.CreateModelReq{Entity: new("alice"), Project: "p", Name: "agent", BaseModel: "base"})
	if err != nil {
		t.Fatal(err)
	}
	b := s.browser(t)
	b.signIn("", s.aliceKey)
	first, _ := openLive(t, b, "/ui/p/alice/p/live")
	if second, _ := openLive(t, b, "/ui/p/alice/p/live?op=chat"); first.StatusCode != http.StatusOK || second.StatusCode != http.StatusOK {
		t.Fatalf("streams within the bound: %d, %d", first.StatusCode, second.StatusCode)
	}
	if over := b.get("/ui/p/alice/p/live?op=tool"); over.status != http.StatusTooManyRequests || !strings.Contains(over.body, "already follows 2 live pages") {
		t.Fatalf("a stream past the bound: %d\n%s", over.status, over.body)
	}
	if over := b.get("/ui/p/alice/p/models/" + model.ID + "/live?from=0"); over.status != http.StatusTooManyRequests {
		t.Fatalf("a model chart's stream past the bound: %d\n%s", over.status, over.body)
	}
	other := s.browser(t)
	other.signIn("", s.aliceKey)
	if res, _ := openLive(t, other, "/ui/p/alice/p/live"); res.StatusCode != http.StatusOK {
		t.Fatalf("another session's stream: %d", res.StatusCode)
	}
	first.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		res, _ := openLive(t, b, "/ui/p/alice/p/models/"+model.ID+"/live?from=0")
		if res.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream after one closed: %d", res.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// countingTrace counts the trace list readings (CallsQuery) and the most
// that ran at once; each takes delay.
type countingTrace struct {
	trace.Service
	delay                    time.Duration
	queries, now, mostAtOnce atomic.Int64
}

func (c *countingTrace) CallsQuery(ctx context.Context, req *trace.CallsQueryReq, yield func(*trace.Call) error) error {
	if len(req.Filter.CallIDs) > 0 {
		// The probe of a page's roots for errored descendants is part of
		// the reading it completes, not a reading of its own.
		return c.Service.CallsQuery(ctx, req, yield)
	}
	c.queries.Add(1)
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for {
		most := c.mostAtOnce.Load()
		if n <= most || c.mostAtOnce.CompareAndSwap(most, n) {
			break
		}
	}
	time.Sleep(c.delay)
	return c.Service.CallsQuery(ctx, req, yield)
}

// TestLiveListSharesRefreshes: the live streams of one project and view
// share their readings of it — the first and the one after each write —
// whatever their number and sessions; another view is read on its own.
func TestLiveListSharesRefreshes(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		counting := &countingTrace{}
		s := newServer(t, db, func(_ *httpapi.Config, ui *webui.Config) { counting.Service = ui.Trace; ui.Trace = counting })
		t0 := seedList(t, s)
		var streams []*sseReader
		for i, path := range []string{"/ui/p/alice/p/live?sort=summary.weave.costs", "/ui/p/alice/p/live?sort=summary.weave.costs",
			"/ui/p/alice/p/live?sort=summary.weave.costs", "/ui/p/alice/p/live?op=chat"} {
			b := s.browser(t)
			b.signIn("", []string{s.aliceKey, s.bobKey}[i%2])
			res, live := openLive(t, b, path)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", path, res.StatusCode)
			}
			streams = append(streams, live)
		}
		if got := counting.queries.Load(); got != 2 {
			t.Fatalf("four streams of two views read the list %d times, want 2", got)
		}
		s.callStart(t, s.aliceKey, "alice/p", uuidN('b', 1), uuidN('e', 1), "", "chat", t0.Add(time.Hour), map[string]any{})
		for _, live := range streams {
			if ev := live.next(); ev.name != "results" || !strings.Contains(ev.data, uuidN('b', 1)) {
				t.Fatalf("event %q:\n%s", ev.name, ev.data)
			}
		}
		if got := counting.queries.Load(); got != 4 {
			t.Fatalf("after a write the four streams read the list %d times in all, want 4 (two per view)", got)
		}
	})
}

// TestLiveRefreshesAtOnce: however many views are followed, at most
// LiveRefreshes of their readings run at once.
func TestLiveRefreshesAtOnce(t *testing.T) {
	t.Parallel()
	counting := &countingTrace{delay: 100 * time.Millisecond}
	s := newServer(t, testdb.SQLite(t), func(_ *httpapi.Config, ui *webui.Config) {
		counting.Service, ui.Trace, ui.LiveRefreshes = ui.Trace, counting, 1
	})
	t0 := seedList(t, s)
	b := s.browser(t)
	b.signIn("", s.aliceKey)
	var streams []*sseReader
	for _, col := range []string{"inputs.a", "inputs.b", "inputs.c"} {
		res, live := openLive(t, b, "/ui/p/alice/p/live?cols="+col)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", col, res.StatusCode)
		}
		streams = append(streams, live)
	}
	s.callStart(t, s.aliceKey, "alice/p", uuidN('b', 1), uuidN('e', 1), "", "chat", t0.Add(time.Hour), map[string]any{})
	for _, live := range streams {
		if ev := live.next(); ev.name != "results" {
			t.Fatalf("event %q", ev.name)
		}
	}
	if got := counting.mostAtOnce.Load(); got != 1 {
		t.Fatalf("%d list readings ran at once, want at most 1", got)
	}
}
