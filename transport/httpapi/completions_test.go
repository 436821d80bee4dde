package httpapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// Weave's playground routes run a completion through the chat gateway:
// /completions/create answers {response, weave_call_id} with the call traced
// into the project, a failure is {"response": {"error": …}} with status 200
// as Weave reports it, /completions/create_stream answers JSON lines of
// chunks after a _meta line, and /actions/execute_batch is a 400.
func TestWeaveCompletionRoutes(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, piece := range []string{"Hel", "lo"} {
				fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", piece)
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	t.Cleanup(upstream.Close)
	f := newCompletionFixture(t, upstream.URL)
	auth := basic("api", f.aliceKey)

	status, body := post(t, f, auth, "/completions/create", `{"project_id":"alice/p","inputs":{"model":"m","messages":[{"role":"user","content":"hi"}]}}`)
	var res struct {
		Response    map[string]any `json:"response"`
		WeaveCallID *string        `json:"weave_call_id"`
	}
	if status != 200 || json.Unmarshal(body, &res) != nil || res.Response["object"] != "chat.completion" || res.WeaveCallID == nil {
		t.Fatalf("create: %d %s", status, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, call := post(t, f, auth, "/call/read", fmt.Sprintf(`{"project_id":"alice/p","id":%q}`, *res.WeaveCallID))
		if status == 200 && strings.Contains(string(call), `"Hello"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("traced call: %d %s", status, call)
		}
		time.Sleep(50 * time.Millisecond)
	}

	status, body = post(t, f, auth, "/completions/create", `{"project_id":"alice/p","inputs":{"model":"nope","messages":[{"role":"user","content":"hi"}]}}`)
	if status != 200 || !strings.Contains(string(body), `"response":{"error":`) || !strings.Contains(string(body), `"weave_call_id":null`) {
		t.Errorf("unknown model: %d %s", status, body)
	}

	status, body = post(t, f, auth, "/completions/create_stream", `{"project_id":"alice/p","inputs":{"model":"m","messages":[{"role":"user","content":"hi"}]}}`)
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if status != 200 || len(lines) != 3 || !strings.HasPrefix(lines[0], `{"_meta":{"weave_call_id":"`) || !strings.Contains(lines[2], `"content":"lo"`) {
		t.Errorf("create_stream: %d %s", status, body)
	}

	for _, tc := range []struct {
		path, body string
		status     int
	}{
		{"/completions/create", `{"project_id":"alice/p","inputs":[1]}`, 422},
		{"/completions/create", `{"project_id":"admin/p","inputs":{"model":"m","messages":[]}}`, 403},
		{"/actions/execute_batch", `{"project_id":"alice/p","action_ref":"weave:///alice/p/object/a:b","call_ids":["x"]}`, 400},
	} {
		if status, body := post(t, f, auth, tc.path, tc.body); status != tc.status {
			t.Errorf("%s %s: %d %s", tc.path, tc.body, status, body)
		}
	}
}

// newCompletionFixture serves the routes with a chat gateway whose model "m"
// is the OpenAI-style upstream at upstreamURL, traced into SQLite.
func newCompletionFixture(t *testing.T, upstreamURL string) fixture {
	t.Helper()
	db := testdb.SQLite(t)
	traces, err := trace.New(trace.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	gateway, err := chat.New(chat.Config{Routing: &chat.Routing{Models: []chat.Route{{Name: "m", Timeout: 30 * time.Second, Upstreams: []chat.Upstream{{URL: upstreamURL + "/v1", Model: "m"}}}}},
		Recorder: chatstore.Recorder{Trace: traces}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gateway.Close(t.Context()) })
	return newFixture(t, db, 1<<20, func(cfg *Config) { cfg.Trace, cfg.Chat = traces, gateway })
}

// /completions/create_stream passes each chunk on as the upstream produces
// it: the client reads the first chunk while the upstream still holds back
// the last one.
func TestCompletionStreamPassesChunks(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(piece string) {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", piece)
			w.(http.Flusher).Flush()
		}
		chunk("first")
		select {
		case <-release:
		case <-time.After(30 * time.Second):
		}
		chunk("last")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(upstream.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	f := newCompletionFixture(t, upstream.URL)
	req, _ := http.NewRequest(http.MethodPost, f.server.URL+"/completions/create_stream",
		strings.NewReader(`{"project_id":"alice/p","inputs":{"model":"m","messages":[{"role":"user","content":"hi"}]}}`))
	req.Header.Set("Authorization", basic("api", f.aliceKey))
	// The request runs beside the test: its answer's headers come only with
	// the first line.
	lines := make(chan string)
	go func() {
		defer close(lines)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			lines <- err.Error()
			return
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			lines <- res.Status
			return
		}
		r := bufio.NewReader(res.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			lines <- line
		}
	}()
	next := func(what string) string {
		select {
		case line := <-lines:
			return line
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s line while the upstream holds back the last chunk", what)
		}
		return ""
	}
	if meta := next("_meta"); !strings.HasPrefix(meta, `{"_meta":{"weave_call_id":"`) {
		t.Fatalf("first line: %s", meta)
	}
	if first := next("first chunk"); !strings.Contains(first, `"content":"first"`) {
		t.Fatalf("first chunk: %s", first)
	}
	close(release)
	var rest []string
	for line := range lines {
		rest = append(rest, line)
	}
	if len(rest) != 1 || !strings.Contains(rest[0], `"content":"last"`) {
		t.Fatalf("after the first chunk: %q", rest)
	}
}
