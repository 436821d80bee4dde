package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/testdb"
)

// localServer is the real HTTP handler serving a tiny random-weight Qwen3
// model (with the real Qwen3 tokenizer and chat template) in-process, with
// a recorder of traced calls.
type localServer struct {
	fixture
	calls *callLog
}

// callLog keeps the calls the gateway traces.
type callLog struct {
	mu    sync.Mutex
	calls []chat.Call
}

func (l *callLog) RecordCalls(_ context.Context, calls []chat.Call) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, calls...)
	return nil
}

func newLocalServer(t *testing.T, maxModelLen int) *localServer {
	t.Helper()
	dir := llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	routing, err := chat.ParseRouting([]byte(fmt.Sprintf(`models:
  - name: tiny
    max_model_len: %d
    upstreams: [{kind: local, path: %q, threads: 1, max_sequences: 4, kv_cache_bytes: 64MiB, prompt_tokens_details: true}]
`, maxModelLen, dir)), nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := &callLog{}
	gateway, err := chat.New(chat.Config{Routing: routing, Recorder: calls, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gateway.Close(context.Background()) })
	f := newFixture(t, testdb.SQLite(t), 1<<20, func(cfg *Config) { cfg.Chat = gateway })
	return &localServer{fixture: f, calls: calls}
}

// post sends a JSON body with alice's key and returns the status, headers
// and body.
func (s *localServer) post(t *testing.T, path, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.server.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.aliceKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, raw
}

// completion is the part of a chat.completion the tests read.
type completion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"message"`
		Logprobs *struct {
			Content []struct {
				Token       string  `json:"token"`
				Logprob     float64 `json:"logprob"`
				Bytes       []int   `json:"bytes"`
				TopLogprobs []struct {
					Token   string  `json:"token"`
					Logprob float64 `json:"logprob"`
				} `json:"top_logprobs"`
			} `json:"content"`
		} `json:"logprobs"`
		FinishReason string          `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason"`
		TokenIDs     []int           `json:"token_ids"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	PromptTokenIDs []int             `json:"prompt_token_ids"`
	PromptLogprobs []json.RawMessage `json:"prompt_logprobs"`
}

func (s *localServer) complete(t *testing.T, body string) (completion, []byte) {
	t.Helper()
	status, _, raw := s.post(t, "/v1/chat/completions", body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, raw)
	}
	var c completion
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return c, raw
}

// stream posts a streaming request and returns the data payloads, [DONE]
// included.
func (s *localServer) stream(t *testing.T, body string) []string {
	t.Helper()
	status, header, raw := s.post(t, "/v1/chat/completions", body)
	if status != http.StatusOK || header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %s: %s", status, header.Get("Content-Type"), raw)
	}
	var payloads []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			payloads = append(payloads, p)
		}
	}
	return payloads
}

const hello = `"messages":[{"role":"user","content":"Hello!"}]`

func TestLocalCompletionShape(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t, 256)
	c, raw := s.complete(t, `{"model":"tiny",`+hello+`,"max_tokens":5,"temperature":0}`)
	t.Logf("%s", raw)
	_ = c
	payloads := s.stream(t, `{"model":"tiny",`+hello+`,"max_tokens":5,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`)
	t.Logf("%s", strings.Join(payloads, "\n"))
}
