package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/slowclient"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestSlowOTLPExportsHoldOnlyTheirKey: connections that send their OTLP
// bodies one byte at a time, as many as the server serves exports at once,
// take no place from another key: its export is stored (200) while they
// trickle. The slow key itself is held to its own exports in progress (429
// with Retry-After).
func TestSlowOTLPExportsHoldOnlyTheirKey(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	traces, err := trace.New(trace.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	const maxInFlight = 4
	f := newFixture(t, db, 1<<20, func(cfg *Config) {
		cfg.Trace = traces
		cfg.OTLP = OTLPConfig{MaxInFlight: maxInFlight, MaxInFlightPerKey: 2}
	})
	export := func(key string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, f.server.URL+"/otel/v1/traces", strings.NewReader(`{"resourceSpans":[]}`))
		req.Header.Set("Authorization", basic("api", key))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}

	// The attacker (admin's key) opens as many slow exports as the server
	// serves at once: each sends its headers and then a byte a second.
	body := append([]byte(`{"resourceSpans":[]}`), bytes.Repeat([]byte(" "), 1000)...)
	header := http.Header{"Authorization": {basic("api", f.adminKey)}, "Content-Type": {"application/json"}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan slowclient.Result, maxInFlight)
	for range maxInFlight {
		c, err := slowclient.Dial(f.server.URL)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			res, _ := c.Send(http.MethodPost, "/otel/v1/traces", header, body, time.Second)
			done <- res
		}()
		go func() { <-ctx.Done(); c.Close() }()
	}
	// Once the slow exports are in, the attacker's next export is refused:
	// by its key's bound (429), or, without one, by the server's (503).
	var refused *http.Response
	for range 200 {
		if res := export(f.adminKey); res.StatusCode != http.StatusOK {
			refused = res
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if refused == nil {
		t.Fatal("the slow exports never filled a limit")
	}
	if res := export(f.aliceKey); res.StatusCode != http.StatusOK {
		t.Fatalf("another key's export while slow ones trickle: %d (Retry-After %q)", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if refused.StatusCode != http.StatusTooManyRequests || refused.Header.Get("Retry-After") == "" {
		t.Errorf("the slow key's next export: %d (Retry-After %q), want 429 with Retry-After", refused.StatusCode, refused.Header.Get("Retry-After"))
	}
	// Past its key's bound, the slow exports were refused at once, with 429.
	for range maxInFlight - 2 {
		if res := <-done; res.Status != http.StatusTooManyRequests {
			t.Errorf("a slow export past its key's bound: %d after %d bytes", res.Status, res.Sent)
		}
	}
}
