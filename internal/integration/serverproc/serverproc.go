// Package serverproc runs the real weft server binary (examples/server) as a
// child process for end-to-end tests: built once per test binary, started on a
// free loopback port, with the bootstrap API key read from its output.
package serverproc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/gobuild"
	"github.com/weftlabs/weft/internal/procstat"
)

// Server is a running weft server process.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:41234.
	URL string
	// Key is the admin API key printed on first start ("" when the database
	// already had users).
	Key string

	cmd    *exec.Cmd
	done   chan struct{}
	output *lockedBuffer
}

// Options configure Start.
type Options struct {
	// DatabaseURL is passed as -database-url. Required.
	DatabaseURL string
	// Args are extra arguments after "serve".
	Args []string
	// Env adds environment variables (KEY=VALUE).
	Env []string
}

// Binary builds examples/server once and returns its path.
func Binary(t testing.TB) string { return gobuild.Binary(t, "./examples/server") }

// Start runs the server and waits until it listens. The process is stopped
// (SIGTERM, then SIGKILL) when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	args := append([]string{"serve", "-addr", "127.0.0.1:0", "-database-url", opts.DatabaseURL, "-log-level", "warn"}, opts.Args...)
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = append(os.Environ(), opts.Env...)
	out := &lockedBuffer{}
	cmd.Stderr = out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{cmd: cmd, done: make(chan struct{}), output: out}
	ready := make(chan error, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			line := scanner.Text()
			out.WriteString(line + "\n")
			if key, ok := strings.CutPrefix(line, "WEFT_API_KEY="); ok {
				s.Key = key
			}
			if url, ok := strings.CutPrefix(line, "weft listening on "); ok {
				s.URL = url
				ready <- nil
			}
		}
		ready <- fmt.Errorf("server exited before listening")
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("%v; output:\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("server did not start in 60s; output:\n%s", out.String())
	}
	// Registered first, so it runs after Stop: a failed test shows all the
	// server said, its shutdown included.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server output:\n%s", out.String())
		}
	})
	t.Cleanup(s.Stop)
	return s
}

// Stop ends the server gracefully (SIGTERM), killing it after 10 seconds.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Kill ends the server with SIGKILL, as a crash would, and waits for it.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// PeakRSS is the most resident memory the process has held so far, in
// bytes.
func (s *Server) PeakRSS() (int64, error) { return procstat.PeakRSS(s.cmd.Process.Pid) }

// Output returns what the server printed so far.
func (s *Server) Output() string { return s.output.String() }

// Wait blocks until the process exits or ctx ends.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
