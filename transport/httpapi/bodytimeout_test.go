package httpapi

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/slowclient"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestSlowBodiesGet408: a body that trickles in is refused with 408 once
// Config.BodyReadTimeout has passed, on a raw route (OTLP) as on a huma one,
// long before the client would have finished; a request whose body arrived
// in time may answer for longer than the timeout.
func TestSlowBodiesGet408(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	traces, err := trace.New(trace.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 300 * time.Millisecond
	f := newFixture(t, db, 1<<20, func(cfg *Config) { cfg.Trace, cfg.BodyReadTimeout = traces, timeout })
	f.handler.router.Post("/test/slow-answer", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(3 * timeout):
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done(): // the connection's deadline cancelled the request
			w.WriteHeader(http.StatusGone)
		}
	})

	body := []byte(`{"resourceSpans":[],"project_id":"alice/p"` + strings.Repeat(" ", 100) + `}`)
	for _, path := range []string{"/otel/v1/traces", "/probe"} {
		c, err := slowclient.Dial(f.server.URL)
		if err != nil {
			t.Fatal(err)
		}
		header := http.Header{"Authorization": {basic("api", f.aliceKey)}, "Content-Type": {"application/json"}}
		res, err := c.Send(http.MethodPost, path, header, body, timeout/10)
		c.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if res.Status != http.StatusRequestTimeout || res.Sent == len(body) {
			t.Errorf("%s: %d %s after %d of %d bytes; want 408 before the body ends", path, res.Status, res.Body, res.Sent, len(body))
		}
	}

	c, err := slowclient.Dial(f.server.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Send(http.MethodPost, "/test/slow-answer", nil, []byte("{}"), time.Millisecond)
	if err != nil || res.Status != http.StatusNoContent {
		t.Fatalf("an answer longer than the body timeout: %d %v", res.Status, err)
	}
}
