package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/weftlabs/weft/internal/procstat"
	"github.com/weftlabs/weft/internal/testdb"
)

// spawned is a weft server this tool started: built from ./examples/server,
// on a fresh database, with chat routed to an in-process mock upstream.
type spawned struct {
	URL, Key string
	cmd      *exec.Cmd
	dir      string
	upstream *mockUpstream
}

// spawn builds and starts the server. database is "sqlite", "postgres" (a
// throwaway local cluster made with initdb/pg_ctl) or a database URL.
func spawn(ctx context.Context, database string, upstream *mockUpstream) (*spawned, error) {
	dir, err := os.MkdirTemp("", "weftload-")
	if err != nil {
		return nil, err
	}
	binary := filepath.Join(dir, "weft-server")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, "./examples/server")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the server (run from the repository root): %v: %s", err, out)
	}
	url := database
	switch database {
	case "sqlite":
		url = "sqlite:" + filepath.Join(dir, "weft.db")
	case "postgres":
		// A durable server: the figures must include the cost of fsync.
		cluster, err := testdb.StartLocal(ctx, "fsync=on", "full_page_writes=on", "synchronous_commit=on")
		if err != nil {
			return nil, err
		}
		url = cluster.URL
	}
	routing := filepath.Join(dir, "chat.yaml")
	config := fmt.Sprintf("models:\n  - name: load-model\n    upstreams:\n      - url: %s\n", upstream.URL)
	if err := os.WriteFile(routing, []byte(config), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, "serve", "-addr", "127.0.0.1:0", "-database-url", url, "-log-level", "error", "-chat-config", routing)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &spawned{cmd: cmd, dir: dir, upstream: upstream}
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		line := scanner.Text()
		if key, ok := strings.CutPrefix(line, "WEFT_API_KEY="); ok {
			s.Key = key
		}
		if addr, ok := strings.CutPrefix(line, "weft listening on "); ok {
			s.URL = addr
			break
		}
	}
	if s.URL == "" {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("the server exited before listening")
	}
	go func() { _, _ = bufioDiscard(scanner) }()
	return s, nil
}

func bufioDiscard(s *bufio.Scanner) (int, error) {
	n := 0
	for s.Scan() {
		n++
	}
	return n, s.Err()
}

// peakRSS reads the server's peak resident memory.
func (s *spawned) peakRSS() (int64, error) { return procstat.PeakRSS(s.cmd.Process.Pid) }

func (s *spawned) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
	}
	_ = os.RemoveAll(s.dir)
}
