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

// keys lists a JSON object's member names in order.
func keys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var out []string
	for dec.More() {
		k, _ := dec.Token()
		out = append(out, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func member(t *testing.T, raw json.RawMessage, path ...any) json.RawMessage {
	t.Helper()
	for _, p := range path {
		switch p := p.(type) {
		case string:
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("%v in %s", err, raw)
			}
			raw = m[p]
		case int:
			var l []json.RawMessage
			if err := json.Unmarshal(raw, &l); err != nil || p >= len(l) {
				t.Fatalf("no [%d] in %s", p, raw)
			}
			raw = l[p]
		}
	}
	return raw
}

// The non-streamed answer has every member vLLM's ChatCompletionResponse
// dumps, in its order, with the counts of what was generated.
func TestLocalCompletionShape(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t, 256)
	c, raw := s.complete(t, `{"model":"tiny",`+hello+`,"max_tokens":5,"temperature":0}`)
	want := map[string]string{
		"":                  "id object created model choices service_tier system_fingerprint usage prompt_logprobs prompt_token_ids prompt_text kv_transfer_params ec_transfer_params metrics",
		"choice":            "index message logprobs finish_reason stop_reason token_ids routed_experts",
		"message":           "role content refusal annotations audio function_call reasoning",
		"usage":             "prompt_tokens total_tokens completion_tokens prompt_tokens_details completion_tokens_details",
		"prompt_tokens_det": "cached_tokens",
	}
	for what, got := range map[string][]string{
		"":                  keys(t, raw),
		"choice":            keys(t, member(t, raw, "choices", 0)),
		"message":           keys(t, member(t, raw, "choices", 0, "message")),
		"usage":             keys(t, member(t, raw, "usage")),
		"prompt_tokens_det": keys(t, member(t, raw, "usage", "prompt_tokens_details")),
	} {
		if strings.Join(got, " ") != want[what] {
			t.Errorf("%s members: %v, want %s", what, got, want[what])
		}
	}
	_, _, tok := s.post(t, "/tokenize", `{"model":"tiny",`+hello+`}`)
	var tokenized struct{ Count int }
	_ = json.Unmarshal(tok, &tokenized)
	if !strings.HasPrefix(c.ID, "chatcmpl-") || c.Object != "chat.completion" || c.Model != "tiny" || len(c.Choices) != 1 ||
		c.Choices[0].Message.Role != "assistant" || c.Choices[0].Message.Content == nil || *c.Choices[0].Message.Content == "" ||
		c.Choices[0].FinishReason != "length" || string(c.Choices[0].StopReason) != "null" ||
		c.Usage.PromptTokens != tokenized.Count || c.Usage.CompletionTokens != 5 || c.Usage.TotalTokens != tokenized.Count+5 {
		t.Errorf("answer %s (prompt of %d tokens)", raw, tokenized.Count)
	}
	// The same prompt again reads its first full KV block from the cache.
	again, _ := s.complete(t, `{"model":"tiny","messages":[{"role":"user","content":"`+strings.Repeat("word ", 40)+`"}],"max_tokens":1}`)
	again2, raw2 := s.complete(t, `{"model":"tiny","messages":[{"role":"user","content":"`+strings.Repeat("word ", 40)+`"}],"max_tokens":1}`)
	if again.Usage.PromptTokensDetails.CachedTokens != 0 || again2.Usage.PromptTokensDetails.CachedTokens == 0 {
		t.Errorf("cached tokens %d then %s", again.Usage.PromptTokensDetails.CachedTokens, raw2)
	}
}

// chunk is the part of a chat.completion.chunk the tests read.
type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Logprobs *struct {
			Content []json.RawMessage `json:"content"`
		} `json:"logprobs"`
		FinishReason *string         `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason"`
		TokenIDs     []int           `json:"token_ids"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	PromptTokenIDs []int `json:"prompt_token_ids"`
}

// A seeded stream says exactly what the same request says whole: the
// chunks follow vLLM's sequence (a role chunk per choice, one choice per
// chunk, a finish chunk per choice, the usage chunk, [DONE]).
func TestLocalStreamEqualsWhole(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t, 256)
	req := `{"model":"tiny",` + hello + `,"max_tokens":12,"temperature":1,"seed":7,"n":2,"logprobs":true,"top_logprobs":2,"return_token_ids":true`
	whole, _ := s.complete(t, req+`}`)
	payloads := s.stream(t, req+`,"stream":true,"stream_options":{"include_usage":true}}`)
	if payloads[len(payloads)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %v", payloads)
	}
	texts, ids, lps := map[int]string{}, map[int][]int{}, map[int]int{}
	finished := map[int]string{}
	var usage *chunk
	for i, p := range payloads[:len(payloads)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(p), &c); err != nil {
			t.Fatalf("%v: %s", err, p)
		}
		if c.Usage != nil {
			if i != len(payloads)-2 || len(c.Choices) != 0 {
				t.Fatalf("usage chunk %d of %d: %s", i, len(payloads), p)
			}
			usage = &c
			continue
		}
		if len(c.Choices) != 1 {
			t.Fatalf("chunk with %d choices: %s", len(c.Choices), p)
		}
		ch := c.Choices[0]
		if i < 2 {
			if ch.Delta.Role == nil || *ch.Delta.Role != "assistant" || ch.Index != i || c.PromptTokenIDs == nil {
				t.Fatalf("role chunk %d: %s", i, p)
			}
			continue
		}
		if _, done := finished[ch.Index]; done {
			t.Fatalf("chunk after the finish chunk of choice %d: %s", ch.Index, p)
		}
		texts[ch.Index] += *ch.Delta.Content
		ids[ch.Index] = append(ids[ch.Index], ch.TokenIDs...)
		lps[ch.Index] += len(ch.Logprobs.Content)
		if ch.FinishReason != nil {
			finished[ch.Index] = *ch.FinishReason
		}
	}
	for i, w := range whole.Choices {
		if texts[i] != *w.Message.Content || fmt.Sprint(ids[i]) != fmt.Sprint(w.TokenIDs) || finished[i] != w.FinishReason || lps[i] != len(w.Logprobs.Content) {
			t.Errorf("choice %d streamed %q %v %q (%d logprobs), whole %q %v %q", i, texts[i], ids[i], finished[i], lps[i], *w.Message.Content, w.TokenIDs, w.FinishReason)
		}
	}
	if *whole.Choices[0].Message.Content == *whole.Choices[1].Message.Content {
		t.Errorf("n=2 with a seed gave one text twice: %q", *whole.Choices[0].Message.Content)
	}
	if usage == nil || usage.Usage.CompletionTokens != whole.Usage.CompletionTokens || usage.Usage.PromptTokens != whole.Usage.PromptTokens || whole.Usage.CompletionTokens != 24 {
		t.Errorf("usage chunk %+v, whole %+v", usage, whole.Usage)
	}
	if fmt.Sprint(whole.PromptTokenIDs) == "[]" || len(whole.PromptTokenIDs) != whole.Usage.PromptTokens {
		t.Errorf("prompt_token_ids %v", whole.PromptTokenIDs)
	}
}

// Same seed, same output; another seed, another output.
func TestLocalSeed(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t, 256)
	text := func(seed int) string {
		c, _ := s.complete(t, fmt.Sprintf(`{"model":"tiny",%s,"max_tokens":16,"temperature":1,"seed":%d}`, hello, seed))
		return *c.Choices[0].Message.Content
	}
	if a, b, other := text(3), text(3), text(4); a != b || a == other {
		t.Errorf("seed 3: %q then %q; seed 4: %q", a, b, other)
	}
}
