package main

import (
	"bufio"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/gobuild"
	"github.com/weftlabs/weft/internal/slowclient"
)

// startServer runs serve with args on a new SQLite database and returns its
// base URL and the admin key it printed; it is stopped when the test ends.
func startServer(t *testing.T, args ...string) (base, key string) {
	t.Helper()
	dir := t.TempDir()
	args = append([]string{"serve", "-addr", "127.0.0.1:0", "-log-level", "error", "-database-url", "sqlite:" + filepath.Join(dir, "weft.db")}, args...)
	cmd := exec.Command(gobuild.Binary(t, "./examples/server"), args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		line := scanner.Text()
		if k, ok := strings.CutPrefix(line, "WEFT_API_KEY="); ok {
			key = k
		}
		if b, ok := strings.CutPrefix(line, "weft listening on "); ok {
			go func() { // keep the pipe drained
				for scanner.Scan() {
				}
			}()
			return b, key
		}
	}
	t.Fatalf("the server did not start: %v", scanner.Err())
	return "", ""
}

// TestServerClosesIdleAndSlowConnections: with short -idle-timeout and
// -body-read-timeout, a keep-alive connection left idle after a request is
// closed by the server, and a sign-in form sent one byte at a time is
// answered 408 and closed before it is done.
func TestServerClosesIdleAndSlowConnections(t *testing.T) {
	t.Parallel()
	base, key := startServer(t, "-idle-timeout", "500ms", "-body-read-timeout", "500ms")

	idle, err := slowclient.Dial(base)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if res, err := idle.Send(http.MethodGet, "/health", nil, nil, 0); err != nil || res.Status != http.StatusOK {
		t.Fatalf("GET /health: %d %v", res.Status, err)
	}
	if err := idle.WaitClosed(); err != nil {
		t.Fatalf("idle keep-alive connection: %v", err)
	}

	slow, err := slowclient.Dial(base)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	form := []byte(url.Values{"key": {key}, "user": {"admin"}, "next": {"/"}}.Encode())
	res, err := slow.Send(http.MethodPost, "/ui/signin", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, form, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusRequestTimeout || res.Sent == len(form) {
		t.Fatalf("slow sign-in: %d after %d of %d bytes; want 408 before the form ends", res.Status, res.Sent, len(form))
	}
	if err := slow.WaitClosed(); err != nil {
		t.Fatalf("slow sign-in: %v", err)
	}
}

// TestServeLiveStreamFlags: -live-streams-per-session bounds the live pages
// one sign-in follows (one more is a 429), and a count below 1 is a mistake
// in the command line (exit 2).
func TestServeLiveStreamFlags(t *testing.T) {
	t.Parallel()
	base, key := startServer(t, "-live-streams-per-session", "1")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.PostForm(base+"/ui/signin", url.Values{"key": {key}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookies := res.Cookies()
	live := func() *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/ui/p/admin/p/live", nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	if first := live(); first.StatusCode != http.StatusOK {
		t.Fatalf("the first live list: %d", first.StatusCode)
	}
	if second := live(); second.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a second live list past -live-streams-per-session 1: %d", second.StatusCode)
	}
	for _, flag := range []string{"-live-streams-per-session", "-live-refreshes"} {
		if got := run(t, "serve", flag, "0"); got.status != 2 || !strings.Contains(got.stderr, flag) {
			t.Errorf("%s 0: status %d, stderr %q", flag, got.status, got.stderr)
		}
	}
}
