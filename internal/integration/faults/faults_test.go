// Package faults proves that weft loses nothing it acknowledged: a server killed
// with SIGKILL in the middle of ingest, and PostgreSQL going away under load,
// leave every call that got a 2xx present and whole.
package faults

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestMain(m *testing.M) { e2e.Main(m) }

const project = "admin/faults"

// Kill -9 the server in the middle of ingest, restart it on the same database:
// every acknowledged call is there and whole.
func TestKillDuringIngest(t *testing.T) {
	t.Parallel()
	for _, tc := range testdb.Backends {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			url := tc.URL(t)
			srv := serverproc.Start(t, serverproc.Options{DatabaseURL: url})
			in := newIngester(srv.URL, srv.Key, project)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { in.run(ctx, 4, 25); close(done) }()
			// Kill once a good number of batches are in, while more are in flight.
			waitFor(t, 30*time.Second, func() bool { in.mu.Lock(); defer in.mu.Unlock(); return len(in.acked) >= 500 })
			srv.Kill()
			cancel()
			<-done
			if in.malformed > 0 {
				t.Fatalf("%d 2xx answers were not one result per item", in.malformed)
			}
			restarted := serverproc.Start(t, serverproc.Options{DatabaseURL: url})
			t.Logf("acknowledged %d calls before the kill; statuses %v; %d requests cut off", len(in.acked), in.statuses, in.failures)
			verify(t, restarted.URL, srv.Key, project, in.acked)
		})
	}
}

// PostgreSQL stops for 10 seconds under load: requests fail fast with 503 (no
// hang, no crash), the server recovers by itself when the database returns,
// and nothing acknowledged is lost.
func TestPostgresOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cluster, err := testdb.StartLocal(ctx)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a local PostgreSQL cluster is required under CI=true: %v", err)
		}
		t.Skipf("no local PostgreSQL binaries: %v", err)
	}
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: cluster.URL})
	in := newIngester(srv.URL, srv.Key, project)
	loadCtx, stopLoad := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { in.run(loadCtx, 4, 10); close(done) }()
	waitFor(t, 30*time.Second, func() bool { in.mu.Lock(); defer in.mu.Unlock(); return len(in.acked) >= 200 })

	if err := cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	outage := time.Now()
	healthDuring := get(t, srv.URL+"/health")
	time.Sleep(10*time.Second - time.Since(outage))
	in.mu.Lock()
	unavailable := in.statuses[http.StatusServiceUnavailable]
	in.mu.Unlock()
	if err := cluster.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The server reconnects by itself: health and ingest succeed again.
	waitFor(t, 60*time.Second, func() bool { return get(t, srv.URL+"/health") == http.StatusOK })
	in.mu.Lock()
	okBefore := in.statuses[http.StatusOK]
	in.mu.Unlock()
	waitFor(t, 60*time.Second, func() bool { in.mu.Lock(); defer in.mu.Unlock(); return in.statuses[http.StatusOK] > okBefore+5 })
	stopLoad()
	<-done

	t.Logf("statuses %v; transport failures %d; acknowledged %d", in.statuses, in.failures, len(in.acked))
	if healthDuring != http.StatusServiceUnavailable {
		t.Errorf("/health during the outage = %d, want 503", healthDuring)
	}
	if unavailable == 0 {
		t.Errorf("no request was answered 503 during the outage: %v", in.statuses)
	}
	for status, n := range in.statuses {
		if status >= 500 && status != http.StatusServiceUnavailable {
			t.Errorf("%d requests answered %d; server output:\n%s", n, status, srv.Output())
		}
	}
	if in.timeouts > 0 || in.failures > 0 {
		t.Errorf("requests hung or the server dropped connections: %d timeouts, %d transport failures", in.timeouts, in.failures)
	}
	if in.malformed > 0 {
		t.Errorf("%d 2xx answers were not one result per item", in.malformed)
	}
	verify(t, srv.URL, srv.Key, project, in.acked)
}

func get(t *testing.T, url string) int {
	t.Helper()
	client := &http.Client{Timeout: 15 * time.Second}
	res, err := client.Get(url)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// waitFor polls cond until it holds or the bound passes (a bound against hangs,
// not a performance assertion).
func waitFor(t *testing.T, bound time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached within %s", bound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two servers on one PostgreSQL database ingest at the same time: every call
// either of them acknowledged is readable, whole, through the other.
func TestTwoServersOneDatabase(t *testing.T) {
	t.Parallel()
	url := testdb.PostgresURL(t)
	first := serverproc.Start(t, serverproc.Options{DatabaseURL: url})
	second := serverproc.Start(t, serverproc.Options{DatabaseURL: url})
	if second.Key != "" {
		t.Fatalf("the second server bootstrapped another admin key")
	}
	toFirst := newIngester(first.URL, first.Key, project)
	toSecond := newIngester(second.URL, first.Key, project)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { toFirst.run(ctx, 2, 25); done <- struct{}{} }()
	go func() { toSecond.run(ctx, 2, 25); done <- struct{}{} }()
	waitFor(t, 60*time.Second, func() bool {
		toFirst.mu.Lock()
		defer toFirst.mu.Unlock()
		toSecond.mu.Lock()
		defer toSecond.mu.Unlock()
		return len(toFirst.acked) >= 500 && len(toSecond.acked) >= 500
	})
	cancel()
	<-done
	<-done
	for name, in := range map[string]*ingester{"first": toFirst, "second": toSecond} {
		if in.failures > 0 || in.malformed > 0 || len(in.statuses) != 1 {
			t.Errorf("%s server: statuses %v, %d transport failures, %d malformed answers", name, in.statuses, in.failures, in.malformed)
		}
	}
	verify(t, second.URL, first.Key, project, toFirst.acked)
	verify(t, first.URL, first.Key, project, toSecond.acked)
}
