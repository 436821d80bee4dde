package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A short, bounded run of each scenario against a spawned server: every route
// of the mix is exercised and nothing fails. The long runs are documented in the
// package comment.
func TestScenariosAgainstSpawnedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	_, file, _, _ := runtime.Caller(0)
	if err := os.Chdir(filepath.Join(filepath.Dir(file), "..", "..", "..")); err != nil { // spawn builds from the repository root
		t.Fatal(err)
	}
	ctx := context.Background()
	upstream, err := startMockUpstream(5, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer upstream.Close()
	server, err := spawn(ctx, "sqlite", upstream)
	if err != nil {
		t.Fatal(err)
	}
	defer server.stop()
	cfg := config{url: server.URL, key: server.Key, project: "admin/load", rate: 80, duration: 3 * time.Second,
		maxInFlight: 64, mix: defaultMix, chatModel: "load-model", batchSize: 20}

	rep, err := run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.print(&out)
	// Shed requests are not failures here: on a loaded machine the server
	// answers slower than the set rate and the generator drops what it cannot
	// send; what this run proves is that every answer it got is a success.
	if rep.failures() > 0 {
		t.Fatalf("mixed load had errors:\n%s", out.String())
	}
	for name := range routes {
		seen := false
		for route := range rep.routes {
			seen = seen || strings.HasPrefix(route, name+" ")
		}
		if !seen {
			t.Errorf("route %s got no traffic:\n%s", name, out.String())
		}
	}

	if res := runChatStreams(ctx, cfg, 50); res.failed > 0 || res.completed != 50 {
		t.Errorf("chat streams: %+v", res)
	}
	res, err := runStreamQuery(ctx, cfg, 2500)
	if err != nil || res.lines < 2500 {
		t.Errorf("stream query: %+v, %v", res, err)
	}
}
