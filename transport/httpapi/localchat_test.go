package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/inprocess"
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

// newLocalGateway opens a gateway serving the tiny model as "tiny" with a
// context of maxModelLen tokens and the extra route options given.
func newLocalGateway(t *testing.T, maxModelLen int, options string, recorder chat.CallRecorder) *localGateway {
	t.Helper()
	dims := llmtest.TinyQwen3
	dims.MaxPositions = max(dims.MaxPositions, maxModelLen)
	dir := llmtest.ModelDir{Dims: dims, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	routing, err := chat.ParseRouting([]byte(fmt.Sprintf(`models:
  - name: tiny
    max_model_len: %d
    upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB, %s}]
`, maxModelLen, dir, options)), nil, inprocess.Kind)
	if err != nil {
		t.Fatal(err)
	}
	return openLocalGateway(t, chat.Config{Routing: routing, Recorder: recorder, Logger: slog.New(slog.DiscardHandler)})
}

// localGateway is a gateway over the models of an in-process server, as
// the server wires them; Close closes both.
type localGateway struct {
	*chat.Gateway
	models *inprocess.Server
}

func (g *localGateway) Close(ctx context.Context) error {
	defer g.models.Close() //nolint:errcheck // it only logs
	return g.Gateway.Close(ctx)
}

// openLocalGateway opens the models of cfg.Routing's local routes and
// serves them through a gateway of cfg.
func openLocalGateway(t testing.TB, cfg chat.Config) *localGateway {
	t.Helper()
	models, err := inprocess.Open(cfg.Routing, inprocess.Config{Logger: cfg.Logger})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Backends = map[string]chat.Backend{chat.KindLocal: models}
	gateway, err := chat.New(cfg)
	if err != nil {
		_ = models.Close()
		t.Fatal(err)
	}
	return &localGateway{Gateway: gateway, models: models}
}

// sharedModels is a gateway opened once, by the first test that needs it,
// and kept open for the package's run: opening a model takes a while (the
// Qwen3 tokenizer), and the tests that share one only read answers (its
// files may be removed once opened: the engine has read them, and the
// weights stay mapped).
type sharedModels struct {
	once    sync.Once
	gateway *localGateway
}

// get returns the gateway, opened by open on the first call. Every caller
// first requires the tokenizers the gateway is built from, so that without
// their files each test skips (fails under CI) on its own, not only the
// one that happens to open it.
func (s *sharedModels) get(t *testing.T, open func() *localGateway, tokenizers ...string) *localGateway {
	t.Helper()
	for _, name := range tokenizers {
		llmtest.RequireTokenizer(t, name)
	}
	s.once.Do(func() { s.gateway = open() })
	if s.gateway == nil {
		t.Fatal("opening the shared models failed: see the test that opened them")
	}
	return s.gateway
}

// sharedLocal is the gateway most wire tests share.
var sharedLocal sharedModels

// newLocalServer is the real HTTP handler, on a database of its own, over
// the shared gateway: a tiny random-weight Qwen3 (the real Qwen3 tokenizer
// and chat template) served as "tiny" with max_model_len 256. Its reasoning
// parser is off, so that the text these tests read is all content (the
// structured-output tests serve the model with it on).
func newLocalServer(t *testing.T) *localServer {
	t.Helper()
	gateway := sharedGateway(t)
	return &localServer{fixture: newFixture(t, testdb.SQLite(t), 1<<20, func(cfg *Config) { cfg.Chat = gateway })}
}

// sharedGateway returns the shared gateway.
func sharedGateway(t *testing.T) *localGateway {
	t.Helper()
	return sharedLocal.get(t, func() *localGateway {
		return newLocalGateway(t, 256, "max_sequences: 8, prompt_tokens_details: true, reasoning_parser: none, trust_request_chat_template: true", nil)
	}, llmtest.TokenizerQwen3)
}

// post sends a JSON body with alice's key and returns the status, headers
// and body.
func (s *localServer) post(t *testing.T, path, body string) (int, http.Header, []byte) {
	t.Helper()
	return s.postAs(t, s.aliceKey, path, body)
}

// postAs is post with key.
func (s *localServer) postAs(t *testing.T, key, path, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.server.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
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
	return s.completeAs(t, s.aliceKey, body)
}

// completeAs is complete with key.
func (s *localServer) completeAs(t *testing.T, key, body string) (completion, []byte) {
	t.Helper()
	status, _, raw := s.postAs(t, key, "/v1/chat/completions", body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, raw)
	}
	var c completion
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return c, raw
}

// stream posts a streaming chat completion and returns the data payloads,
// [DONE] included.
func (s *localServer) stream(t *testing.T, body string) []string {
	t.Helper()
	return s.streamAt(t, "/v1/chat/completions", body)
}

// streamAt is stream for the API at path.
func (s *localServer) streamAt(t *testing.T, path, body string) []string {
	t.Helper()
	status, header, raw := s.post(t, path, body)
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
	s := newLocalServer(t)
	c, raw := s.complete(t, `{"model":"tiny",`+hello+`,"max_tokens":5,"temperature":0}`)
	want := map[string]string{
		"":                  "id object created model choices service_tier system_fingerprint usage prompt_logprobs prompt_token_ids prompt_text kv_transfer_params ec_transfer_params metrics",
		"choice":            "index message logprobs finish_reason stop_reason token_ids routed_experts",
		"message":           "role content refusal annotations audio function_call reasoning reasoning_content",
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
	// The same prompt again reads its first full KV block from the cache
	// (a prompt of this run only: the model is shared).
	long := `{"model":"tiny","messages":[{"role":"user","content":"` + rand.Text() + strings.Repeat(" word", 40) + `"}],"max_tokens":1}`
	again, _ := s.complete(t, long)
	again2, raw2 := s.complete(t, long)
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
	s := newLocalServer(t)
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
	s := newLocalServer(t)
	text := func(seed int) string {
		c, _ := s.complete(t, fmt.Sprintf(`{"model":"tiny",%s,"max_tokens":16,"temperature":1,"seed":%d}`, hello, seed))
		return *c.Choices[0].Message.Content
	}
	if a, b, other := text(3), text(3), text(4); a != b || a == other {
		t.Errorf("seed 3: %q then %q; seed 4: %q", a, b, other)
	}
}

// Logprobs: one entry per generated token, top_logprobs entries each
// (greedy: the chosen token is the most likely, and the list is sorted),
// bytes are the token's UTF-8, and return_tokens_as_token_ids names ids.
func TestLocalLogprobs(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	c, raw := s.complete(t, `{"model":"tiny",`+hello+`,"max_tokens":6,"temperature":0,"logprobs":true,"top_logprobs":3,"return_token_ids":true}`)
	lp := c.Choices[0].Logprobs
	if lp == nil || len(lp.Content) != 6 || len(c.Choices[0].TokenIDs) != 6 {
		t.Fatalf("logprobs %s", raw)
	}
	for i, e := range lp.Content {
		if len(e.TopLogprobs) != 3 || e.TopLogprobs[0].Token != e.Token || e.TopLogprobs[0].Logprob != e.Logprob ||
			e.TopLogprobs[1].Logprob > e.TopLogprobs[0].Logprob || e.TopLogprobs[2].Logprob > e.TopLogprobs[1].Logprob || e.Logprob > 0 {
			t.Errorf("entry %d: %+v", i, e)
		}
		var b []byte
		for _, x := range e.Bytes {
			b = append(b, byte(x))
		}
		if string(b) != e.Token {
			t.Errorf("entry %d: bytes %v of %q", i, e.Bytes, e.Token)
		}
	}
	var text strings.Builder
	for _, e := range lp.Content {
		text.WriteString(e.Token)
	}
	if text.String() != *c.Choices[0].Message.Content {
		t.Errorf("tokens %q, content %q", text.String(), *c.Choices[0].Message.Content)
	}
	// Sampled tokens: as vLLM, each position's list starts with the chosen
	// token, then the most likely others, in order.
	sampled, raw := s.complete(t, `{"model":"tiny",`+hello+`,"max_tokens":20,"temperature":2,"seed":9,"logprobs":true,"top_logprobs":4}`)
	below := 0
	for i, e := range sampled.Choices[0].Logprobs.Content {
		top := e.TopLogprobs
		if len(top) != 4 || top[0].Token != e.Token || top[0].Logprob != e.Logprob || top[2].Logprob > top[1].Logprob || top[3].Logprob > top[2].Logprob {
			t.Errorf("sampled entry %d: %+v", i, e)
		}
		if e.Logprob < top[1].Logprob {
			below++
		}
	}
	if below == 0 {
		t.Errorf("temperature 2 never chose a token below the most likely: %s", raw)
	}
	ids, _ := s.complete(t, `{"model":"tiny",`+hello+`,"max_tokens":6,"temperature":0,"logprobs":true,"top_logprobs":1,"return_tokens_as_token_ids":true}`)
	for i, e := range ids.Choices[0].Logprobs.Content {
		if want := fmt.Sprintf("token_id:%d", c.Choices[0].TokenIDs[i]); e.Token != want || e.TopLogprobs[0].Token != want || e.Logprob != lp.Content[i].Logprob {
			t.Errorf("entry %d: %+v, want %s", i, e, want)
		}
	}
	if status, _, body := s.post(t, "/v1/chat/completions", `{"model":"tiny",`+hello+`,"top_logprobs":2}`); status != 400 || !strings.Contains(string(body), `"param":"top_logprobs"`) {
		t.Errorf("top_logprobs without logprobs: %d %s", status, body)
	}
	if status, _, body := s.post(t, "/v1/chat/completions", `{"model":"tiny",`+hello+`,"logprobs":true,"top_logprobs":21}`); status != 400 || !strings.Contains(string(body), "greater than max allowed: 20") {
		t.Errorf("top_logprobs over max_logprobs: %d %s", status, body)
	}
}

// prompt_logprobs: one entry per prompt token, null first, each keyed by
// the prompt's own token id; echo asks for them too.
func TestLocalPromptLogprobs(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	c, raw := s.complete(t, `{"model":"tiny",`+hello+`,"max_tokens":1,"prompt_logprobs":2,"return_token_ids":true}`)
	if len(c.PromptLogprobs) != len(c.PromptTokenIDs) || string(c.PromptLogprobs[0]) != "null" {
		t.Fatalf("prompt_logprobs %s", raw)
	}
	for i := 1; i < len(c.PromptLogprobs); i++ {
		var entry map[string]struct {
			Logprob      float64 `json:"logprob"`
			Rank         int     `json:"rank"`
			DecodedToken string  `json:"decoded_token"`
		}
		if err := json.Unmarshal(c.PromptLogprobs[i], &entry); err != nil {
			t.Fatal(err)
		}
		own, ok := entry[fmt.Sprint(c.PromptTokenIDs[i])]
		if !ok || len(entry) < 2 || len(entry) > 3 || own.Rank < 1 || own.Logprob > 0 {
			t.Errorf("position %d (token %d): %s", i, c.PromptTokenIDs[i], c.PromptLogprobs[i])
		}
	}
	if status, _, body := s.post(t, "/v1/chat/completions", `{"model":"tiny",`+hello+`,"prompt_logprobs":1,"stream":true}`); status != 400 || !strings.Contains(string(body), "`prompt_logprobs` are not available when `stream=True`.") {
		t.Errorf("prompt_logprobs with stream: %d %s", status, body)
	}
}

// echo with a prefilled assistant message (continue_final_message) repeats
// it before the continuation, whole and streamed; with a generation prompt
// a trailing user message is not echoed.
func TestLocalEcho(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	prefill := `"messages":[{"role":"user","content":"Tell a story"},{"role":"assistant","content":"Once upon a time"}],"add_generation_prompt":false,"continue_final_message":true`
	c, raw := s.complete(t, `{"model":"tiny",`+prefill+`,"echo":true,"max_tokens":3,"temperature":0}`)
	plain, _ := s.complete(t, `{"model":"tiny",`+prefill+`,"max_tokens":3,"temperature":0}`)
	if *c.Choices[0].Message.Content != "Once upon a time"+*plain.Choices[0].Message.Content || c.Choices[0].Message.Role != "assistant" || c.PromptLogprobs == nil {
		t.Errorf("echo: %s, without echo %q", raw, *plain.Choices[0].Message.Content)
	}
	payloads := s.stream(t, `{"model":"tiny",`+prefill+`,"echo":true,"max_tokens":3,"temperature":0,"stream":true}`)
	var echoed chunk
	_ = json.Unmarshal([]byte(payloads[1]), &echoed)
	if echoed.Choices[0].Delta.Content == nil || *echoed.Choices[0].Delta.Content != "Once upon a time" {
		t.Errorf("second chunk %s", payloads[1])
	}
	user, _ := s.complete(t, `{"model":"tiny",`+hello+`,"echo":true,"max_tokens":3,"temperature":0}`)
	again, _ := s.complete(t, `{"model":"tiny",`+hello+`,"max_tokens":3,"temperature":0}`)
	if *user.Choices[0].Message.Content != *again.Choices[0].Message.Content {
		t.Errorf("a user message was echoed: %q", *user.Choices[0].Message.Content)
	}
}

// Stop strings and stop token ids end a choice with vLLM's finish and stop
// reasons; include_stop_str_in_output keeps the string.
func TestLocalStop(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	base, _ := s.complete(t, `{"model":"tiny",`+hello+`,"max_tokens":8,"temperature":0,"return_token_ids":true,"logprobs":true}`)
	text := *base.Choices[0].Message.Content
	tokens := base.Choices[0].Logprobs.Content
	// Stop at the text of the third token.
	stop := tokens[2].Token
	cut := strings.Index(text, stop)
	stopJSON, _ := json.Marshal(stop)
	c, raw := s.complete(t, fmt.Sprintf(`{"model":"tiny",%s,"max_tokens":8,"temperature":0,"stop":[%s]}`, hello, stopJSON))
	if *c.Choices[0].Message.Content != text[:cut] || c.Choices[0].FinishReason != "stop" || string(c.Choices[0].StopReason) != string(stopJSON) {
		t.Errorf("stop %q in %q: %s", stop, text, raw)
	}
	with, raw := s.complete(t, fmt.Sprintf(`{"model":"tiny",%s,"max_tokens":8,"temperature":0,"stop":%s,"include_stop_str_in_output":true}`, hello, stopJSON))
	if *with.Choices[0].Message.Content != text[:cut]+stop {
		t.Errorf("include_stop_str_in_output: %s", raw)
	}
	id := base.Choices[0].TokenIDs[3]
	byID, raw := s.complete(t, fmt.Sprintf(`{"model":"tiny",%s,"max_tokens":8,"temperature":0,"stop_token_ids":[%d],"return_token_ids":true}`, hello, id))
	first := slicesIndex(base.Choices[0].TokenIDs, id)
	if byID.Choices[0].FinishReason != "stop" || string(byID.Choices[0].StopReason) != fmt.Sprint(id) || len(byID.Choices[0].TokenIDs) != first+1 {
		t.Errorf("stop_token_ids [%d] in %v: %s", id, base.Choices[0].TokenIDs, raw)
	}
}

func slicesIndex(ids []int, id int) int {
	for i, v := range ids {
		if v == id {
			return i
		}
	}
	return -1
}

// n choices, usage summed over them; ignore_eos with max_tokens gives
// exactly max_tokens; min_tokens and penalties pass through.
func TestLocalChoicesAndLengths(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	c, raw := s.complete(t, `{"model":"tiny",`+hello+`,"n":3,"max_tokens":4,"ignore_eos":true,"seed":1,"presence_penalty":0.5,"frequency_penalty":0.5,"repetition_penalty":1.2,"top_k":20,"top_p":0.9,"min_p":0.01,"min_tokens":2}`)
	if len(c.Choices) != 3 || c.Usage.CompletionTokens != 12 {
		t.Fatalf("n=3: %s", raw)
	}
	for i, ch := range c.Choices {
		if ch.Index != i || ch.FinishReason != "length" {
			t.Errorf("choice %d: %+v", i, ch)
		}
	}
	// No max_tokens: as many as the context leaves.
	all, raw := s.complete(t, `{"model":"tiny",`+hello+`,"ignore_eos":true}`)
	if all.Usage.TotalTokens != 256 || all.Choices[0].FinishReason != "length" {
		t.Errorf("default max_tokens: %s", raw)
	}
	// Greedy sampling with n > 1 is refused, as vLLM does.
	if status, _, body := s.post(t, "/v1/chat/completions", `{"model":"tiny",`+hello+`,"n":2,"temperature":0}`); status != 400 || !strings.Contains(string(body), "n must be 1 when using greedy sampling") {
		t.Errorf("greedy n=2: %d %s", status, body)
	}
}

// The context length: vLLM's messages for a prompt or max_tokens that does
// not fit, and truncate_prompt_tokens keeping the prompt's last tokens.
func TestLocalContextLength(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	long := `"messages":[{"role":"user","content":"` + strings.Repeat("many words ", 150) + `"}]`
	_, _, tok := s.post(t, "/tokenize", `{"model":"tiny",`+long+`}`)
	var tokenized struct {
		Count       int   `json:"count"`
		MaxModelLen int   `json:"max_model_len"`
		Tokens      []int `json:"tokens"`
	}
	_ = json.Unmarshal(tok, &tokenized)
	if tokenized.MaxModelLen != 256 || tokenized.Count <= 256 {
		t.Fatalf("tokenize: %s", tok)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"model":"tiny",` + long + `}`, fmt.Sprintf(`{"error":{"message":"You passed %d input tokens and requested 0 output tokens. However, the model's context length is only 256 tokens, resulting in a maximum input length of 256 tokens. Please reduce the length of the input prompt.","type":"BadRequestError","param":"input_tokens","code":400}}`, tokenized.Count)},
		{`{"model":"tiny",` + hello + `,"max_tokens":250}`, `{"error":{"message":"You passed 10 input tokens and requested 250 output tokens. However, the model's context length is only 256 tokens, resulting in a maximum input length of 6 tokens. Please reduce the length of the input prompt.","type":"BadRequestError","param":"input_tokens","code":400}}`},
		{`{"model":"tiny",` + hello + `,"max_completion_tokens":257}`, `{"error":{"message":"max_completion_tokens=257cannot be greater than max_model_len=max_total_tokens=256. Please request fewer output tokens.","type":"BadRequestError","param":"max_completion_tokens","code":400}}`},
		{`{"model":"tiny",` + long + `,"max_tokens":10,"truncate_prompt_tokens":250}`, `{"error":{"message":"truncate_prompt_tokens=250 cannot be greater than max_model_len - max_tokens = 246. Please request a smaller truncation size.","type":"BadRequestError","param":"truncate_prompt_tokens","code":400}}`},
	} {
		status, _, body := s.post(t, "/v1/chat/completions", tc.body)
		if status != 400 || strings.TrimSpace(string(body)) != tc.want {
			t.Errorf("%s:\n%d %s\nwant %s", tc.body, status, body, tc.want)
		}
	}
	c, raw := s.complete(t, `{"model":"tiny",`+long+`,"max_tokens":4,"truncate_prompt_tokens":20,"return_token_ids":true}`)
	if c.Usage.PromptTokens != 20 || fmt.Sprint(c.PromptTokenIDs) != fmt.Sprint(tokenized.Tokens[len(tokenized.Tokens)-20:]) {
		t.Errorf("truncated: %s", raw)
	}
	right, raw := s.complete(t, `{"model":"tiny",`+long+`,"max_tokens":4,"truncate_prompt_tokens":20,"truncation_side":"right","return_token_ids":true}`)
	if fmt.Sprint(right.PromptTokenIDs) != fmt.Sprint(tokenized.Tokens[:20]) {
		t.Errorf("truncated on the right: %s", raw)
	}
}

// The chat template gets tools (tool_choice auto/none), documents and
// chat_template_kwargs: /tokenize with the same messages shows the ids a
// completion feeds the model.
func TestLocalTemplateOptions(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	prompt := func(extra string) (completion, string) {
		c, _ := s.complete(t, `{"model":"tiny",`+hello+extra+`,"max_tokens":1,"return_token_ids":true}`)
		ids, _ := json.Marshal(c.PromptTokenIDs)
		_, _, text := s.post(t, "/detokenize", `{"model":"tiny","tokens":`+string(ids)+`}`)
		var d struct{ Prompt string }
		_ = json.Unmarshal(text, &d)
		return c, d.Prompt
	}
	_, plain := prompt("")
	if plain != "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n" {
		t.Errorf("plain prompt %q", plain)
	}
	withTools, text := prompt("," + tools)
	if !strings.Contains(text, `"name": "get_weather"`) || !strings.Contains(text, "<tools>") {
		t.Errorf("tools not rendered: %q", text)
	}
	_, _, tok := s.post(t, "/tokenize", `{"model":"tiny",`+hello+`,`+tools+`}`)
	var tokenized struct{ Tokens []int }
	_ = json.Unmarshal(tok, &tokenized)
	if fmt.Sprint(tokenized.Tokens) != fmt.Sprint(withTools.PromptTokenIDs) {
		t.Errorf("/tokenize %v, completion prompt %v", tokenized.Tokens, withTools.PromptTokenIDs)
	}
	if _, none := prompt("," + tools + `,"tool_choice":"none"`); none != text {
		t.Errorf("tool_choice none renders %q", none)
	}
	if _, thinking := prompt(`,"chat_template_kwargs":{"enable_thinking":false}`); thinking != plain+"<think>\n\n</think>\n\n" {
		t.Errorf("enable_thinking false: %q", thinking)
	}
	if _, custom := prompt(`,"chat_template":"{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}"`); custom != "[user] Hello!" {
		t.Errorf("request chat_template: %q", custom)
	}
	if _, custom := prompt(`,"chat_template_kwargs":{"chat_template":"{% for m in messages %}<{{ m.role }}>{% endfor %}"}`); custom != "<user>" {
		t.Errorf("chat_template_kwargs.chat_template: %q", custom)
	}
	status, _, body := s.post(t, "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"chat_template":"{{ raise_exception('no users here') }}"}`)
	if status != 400 || !strings.Contains(string(body), `"message":"no users here"`) {
		t.Errorf("raise_exception: %d %s", status, body)
	}
	status, _, body = s.post(t, "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x/y.png"}}]}]}`)
	if status != 400 || !strings.Contains(string(body), `"param":"messages.0.content.0"`) {
		t.Errorf("image content: %d %s", status, body)
	}
}

// X-Request-Id names the completion, whole and streamed, over the body's
// request_id, as vLLM names it.
func TestLocalRequestID(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	for _, stream := range []string{"false", "true"} {
		body := `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"request_id":"from-body","stream":` + stream + `}`
		req, _ := http.NewRequest(http.MethodPost, s.server.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.aliceKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-Id", "trace-7f3a")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(raw), `"id":"chatcmpl-trace-7f3a"`) || strings.Contains(string(raw), "from-body") {
			t.Errorf("stream %s: %d %s", stream, res.StatusCode, raw)
		}
	}
	if c, raw := s.complete(t, `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":1,"request_id":"from-body"}`); c.ID != "chatcmpl-from-body" {
		t.Errorf("without the header: %s", raw)
	}
}

// A request's own chat template is a program the server would run: unless
// the model trusts request templates, it is refused as vLLM refuses it,
// whichever field carries it.
func TestLocalUntrustedChatTemplate(t *testing.T) {
	t.Parallel()
	gateway := newLocalGateway(t, 256, "max_sequences: 1", nil)
	t.Cleanup(func() { _ = gateway.Close(context.Background()) })
	s := &localServer{fixture: newFixture(t, testdb.SQLite(t), 1<<20, func(cfg *Config) { cfg.Chat = gateway })}
	for _, extra := range []string{
		`"chat_template":"{{ messages }}"`,
		`"chat_template_kwargs":{"chat_template":"{{ messages }}"}`,
	} {
		for _, path := range []string{"/v1/chat/completions", "/tokenize"} {
			status, _, body := s.post(t, path, `{"model":"tiny","messages":[{"role":"user","content":"hi"}],`+extra+`}`)
			if status != 400 || !strings.Contains(string(body), "Refused request with untrusted chat template.") {
				t.Errorf("%s with %s: %d %s", path, extra, status, body)
			}
		}
	}
	if status, _, body := s.post(t, "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":1}`); status != 200 {
		t.Errorf("without a template: %d %s", status, body)
	}
}

// What local models cannot do is a 400 naming the field, never a silently
// unconstrained answer.
func TestLocalNotYetSupported(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	for _, tc := range []struct{ extra, param string }{
		{`"use_beam_search":true`, "use_beam_search"},
		{`"response_format":{"type":"structural_tag","format":{}}`, "response_format"},
		{`"structured_outputs":{"structural_tag":"{}"}`, "structured_outputs.structural_tag"},
		{`"structured_outputs":{"json":{"type":"object"},"whitespace_pattern":" ?"}`, "structured_outputs.whitespace_pattern"},
		{`"guided_json":{"type":"object"},"guided_whitespace_pattern":" ?"`, "guided_whitespace_pattern"},
	} {
		status, _, body := s.post(t, "/v1/chat/completions", `{"model":"tiny",`+hello+`,`+tc.extra+`}`)
		if status != 400 || !strings.Contains(string(body), `"param":"`+tc.param+`"`) || !strings.Contains(string(body), "not supported by local models") {
			t.Errorf("%s: %d %s", tc.extra, status, body)
		}
	}
	if status, _, body := s.post(t, "/v1/chat/completions", `{"model":"tiny",`+hello+`,"response_format":{"type":"text"},"max_tokens":1}`); status != 200 {
		t.Errorf("response_format text: %d %s", status, body)
	}
}

// POST /tokenize and /detokenize answer as vLLM's: prompt or messages,
// add_special_tokens, token_strs; errors in vLLM's envelope; the same
// authentication as every chat route.
func TestLocalTokenizeRoutes(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	status, _, body := s.post(t, "/tokenize", `{"model":"tiny","prompt":"Hello world<|im_end|>","return_token_strs":true}`)
	if status != 200 || string(bytes.TrimSpace(body)) != `{"count":3,"max_model_len":256,"tokens":[9707,1879,151645],"token_strs":["Hello","Ġworld","<|im_end|>"]}` {
		t.Errorf("tokenize prompt: %d %s", status, body)
	}
	status, _, body = s.post(t, "/tokenize", `{"model":"tiny","prompt":"Hello"}`)
	if status != 200 || !strings.Contains(string(body), `"token_strs":null`) {
		t.Errorf("tokenize without token_strs: %d %s", status, body)
	}
	status, _, body = s.post(t, "/detokenize", `{"model":"tiny","tokens":[9707,1879,151645]}`)
	if status != 200 || string(bytes.TrimSpace(body)) != `{"prompt":"Hello world<|im_end|>"}` {
		t.Errorf("detokenize: %d %s", status, body)
	}
	status, _, body = s.post(t, "/tokenize", `{"model":"tiny",`+hello+`,"add_generation_prompt":false}`)
	if status != 200 || !strings.Contains(string(body), `"count":7`) {
		t.Errorf("tokenize messages without generation prompt: %d %s", status, body)
	}
	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/tokenize", `{"model":"nope","prompt":"x"}`, 404, `{"error":{"message":"The model ` + "`nope`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`},
		{"/detokenize", `{"model":"nope","tokens":[1]}`, 404, `"type":"NotFoundError"`},
		{"/tokenize", `{"model":"tiny",` + hello + `,"add_generation_prompt":true,"continue_final_message":true}`, 400, "Cannot set both `continue_final_message` and `add_generation_prompt` to True."},
		{"/tokenize", `{"model":"tiny"}`, 400, `"param":"prompt"`},
		{"/detokenize", `{"model":"tiny","tokens":[99999999]}`, 400, "out of vocabulary"},
		{"/detokenize", `{"model":"tiny","tokens":"x"}`, 400, `"code":400`},
	} {
		status, _, body := s.post(t, tc.path, tc.body)
		if status != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s %s: %d %s", tc.path, tc.body, status, body)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, s.server.URL+"/tokenize", strings.NewReader(`{"prompt":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("tokenize without a key: %d", res.StatusCode)
	}
}

// /v1/models lists a local model with its context length, and its
// completions are traced like forwarded ones: the request, the answer (the
// stream assembled) and the usage under the model's name.
func TestLocalModelsAndTracing(t *testing.T) {
	t.Parallel()
	calls := &callLog{}
	gateway := newLocalGateway(t, 256, "max_sequences: 2, reasoning_parser: none", calls)
	s := &localServer{fixture: newFixture(t, testdb.SQLite(t), 1<<20, func(cfg *Config) { cfg.Chat = gateway }), calls: calls}
	req, _ := http.NewRequest(http.MethodGet, s.server.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+s.aliceKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(raw), `"id":"tiny"`) || !strings.Contains(string(raw), `"max_model_len":256`) {
		t.Errorf("models: %s", raw)
	}
	status, header, whole := s.post(t, "/v1/chat/completions", `{"model":"tiny",`+hello+`,"max_tokens":3,"seed":5}`)
	if status != 200 || header.Get(chat.CallIDHeader) == "" {
		t.Fatalf("%d %v %s", status, header, whole)
	}
	payloads := s.stream(t, `{"model":"tiny",`+hello+`,"max_tokens":3,"seed":5,"stream":true,"stream_options":{"include_usage":true}}`)
	if len(payloads) < 3 {
		t.Fatalf("stream %v", payloads)
	}
	text := s.streamAt(t, "/v1/completions", `{"model":"tiny","prompt":"Hi","max_tokens":3,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`)
	if err := gateway.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	if len(s.calls.calls) != 3 {
		t.Fatalf("%d calls traced", len(s.calls.calls))
	}
	first, second, third := s.calls.calls[0], s.calls.calls[1], s.calls.calls[2]
	if first.OpName != chat.OpChatCompletion || first.ID != header.Get(chat.CallIDHeader) || first.ProjectID != "alice/chat" ||
		string(first.Output) != strings.TrimSpace(string(whole)) || first.Exception != "" {
		t.Errorf("traced %+v", first)
	}
	var summary map[string]map[string]map[string]int
	_ = json.Unmarshal(first.Summary, &summary)
	if u := summary["usage"]["tiny"]; u["completion_tokens"] != 3 || u["requests"] != 1 || u["prompt_tokens"] != 10 {
		t.Errorf("summary %s", first.Summary)
	}
	var out completion
	_ = json.Unmarshal(second.Output, &out)
	var w completion
	_ = json.Unmarshal(whole, &w)
	if len(out.Choices) != 1 || *out.Choices[0].Message.Content != *w.Choices[0].Message.Content || out.Usage.TotalTokens != w.Usage.TotalTokens {
		t.Errorf("streamed call output %s, whole %s", second.Output, whole)
	}
	// A streamed text completion is one call: its chunks assembled into
	// one text_completion, its usage under the model's name.
	var streamed strings.Builder
	for _, p := range text[:len(text)-2] {
		var c textCompletion
		_ = json.Unmarshal([]byte(p), &c)
		streamed.WriteString(c.Choices[0].Text)
	}
	var traced textCompletion
	_ = json.Unmarshal(third.Output, &traced)
	_ = json.Unmarshal(third.Summary, &summary)
	if third.OpName != chat.OpTextCompletion || traced.Object != "text_completion" || len(traced.Choices) != 1 || traced.Choices[0].Text != streamed.String() ||
		summary["usage"]["tiny"]["completion_tokens"] != 3 || summary["usage"]["tiny"]["prompt_tokens"] != traced.Usage.PromptTokens || traced.Usage.PromptTokens == 0 {
		t.Errorf("traced text completion %s %s, streamed %q", third.Output, third.Summary, streamed.String())
	}
}

// continuous_usage_stats puts the running usage of the chunk's choice on
// every chunk.
func TestLocalContinuousUsage(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	payloads := s.stream(t, `{"model":"tiny",`+hello+`,"max_tokens":4,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`)
	last := -1
	for _, p := range payloads[:len(payloads)-1] {
		var c chunk
		_ = json.Unmarshal([]byte(p), &c)
		if c.Usage == nil || c.Usage.CompletionTokens < last || c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
			t.Fatalf("chunk %s", p)
		}
		last = c.Usage.CompletionTokens
	}
	if last != 4 {
		t.Errorf("final completion tokens %d", last)
	}
}

// A request the engine cannot admit in time is answered 503 with
// Retry-After, in vLLM's envelope, and traced as failed.
func TestLocalOverloaded(t *testing.T) {
	t.Parallel()
	// The long stream could not finish in many times the queue wait.
	gateway := newLocalGateway(t, 16384, "max_sequences: 1, max_queue_wait: 200ms", nil)
	t.Cleanup(func() { _ = gateway.Close(context.Background()) })
	s := &localServer{fixture: newFixture(t, testdb.SQLite(t), 1<<20, func(cfg *Config) { cfg.Chat = gateway })}

	// A long stream holds the only sequence slot.
	req, _ := http.NewRequest(http.MethodPost, s.server.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"tiny",`+hello+`,"max_tokens":16000,"ignore_eos":true,"stream":true}`))
	req.Header.Set("Authorization", "Bearer "+s.aliceKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := bufio.NewReader(res.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	status, header, body := s.post(t, "/v1/chat/completions", `{"model":"tiny",`+hello+`,"max_tokens":2}`)
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") != "1" ||
		!strings.Contains(string(body), `"type":"ServiceUnavailableError"`) || !strings.Contains(string(body), `"code":503`) {
		t.Errorf("overloaded: %d Retry-After %q %s", status, header.Get("Retry-After"), body)
	}
}

// /image/create naming a model run in-process is a 400 saying it generates
// no images (its backend is not a chat.ImageGenerator); before, the
// gateway tried to reach an image provider at it.
func TestLocalModelGeneratesNoImages(t *testing.T) {
	s := newLocalServer(t)
	status, _, raw := s.post(t, "/image/create", `{"project_id":"alice/p","inputs":{"model":"tiny","prompt":"a loom"}}`)
	if status != http.StatusBadRequest || !strings.Contains(string(raw), "The model `tiny` does not generate images") {
		t.Fatalf("status %d: %s", status, raw)
	}
}
