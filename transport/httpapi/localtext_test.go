package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// textCompletion is the part of a text_completion the tests read.
type textCompletion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []textChoice
	Usage   struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

type textChoice struct {
	Index          int               `json:"index"`
	Text           string            `json:"text"`
	Logprobs       *textLogprobs     `json:"logprobs"`
	FinishReason   *string           `json:"finish_reason"`
	StopReason     json.RawMessage   `json:"stop_reason"`
	TokenIDs       []int             `json:"token_ids"`
	PromptTokenIDs []int             `json:"prompt_token_ids"`
	PromptLogprobs []json.RawMessage `json:"prompt_logprobs"`
}

type textLogprobs struct {
	TextOffset    []int                `json:"text_offset"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	Tokens        []string             `json:"tokens"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
}

// text posts a text completion as alice and decodes its answer.
func (s *localServer) text(t *testing.T, body string) (textCompletion, []byte) {
	t.Helper()
	status, _, raw := s.post(t, "/v1/completions", body)
	if status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", body, status, raw)
	}
	var c textCompletion
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return c, raw
}

// tokens is the model's /tokenize of text, special tokens added or not.
func (s *localServer) tokens(t *testing.T, text string, special bool) []int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "tiny", "prompt": text, "add_special_tokens": special})
	_, _, raw := s.post(t, "/tokenize", string(body))
	var out struct{ Tokens []int }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return out.Tokens
}

// A text completion of a local model has every member vLLM's
// CompletionResponse dumps, in its order; its prompt is the tokenizer's
// (/tokenize) whether sent as text or as those token ids; max_tokens is 16
// when left out; echo repeats the prompt, alone with max_tokens 0 (vLLM
// then counts the one token it generated).
func TestLocalTextCompletion(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	const prompt = "Once upon a time"
	c, raw := s.text(t, `{"model":"tiny","prompt":"`+prompt+`","max_tokens":5,"temperature":0,"ignore_eos":true}`)
	for what, want := range map[string]string{
		"":       "id object created model choices service_tier system_fingerprint usage kv_transfer_params ec_transfer_params metrics",
		"choice": "index text logprobs finish_reason stop_reason token_ids prompt_logprobs prompt_token_ids routed_experts",
	} {
		var got []string
		if what == "" {
			got = keys(t, raw)
		} else {
			got = keys(t, member(t, raw, "choices", 0))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%q members: %v, want %s", what, got, want)
		}
	}
	ids := s.tokens(t, prompt, true)
	if !strings.HasPrefix(c.ID, "cmpl-") || c.Object != "text_completion" || c.Model != "tiny" || len(c.Choices) != 1 || c.Choices[0].Text == "" ||
		*c.Choices[0].FinishReason != "length" || c.Usage.PromptTokens != len(ids) || c.Usage.CompletionTokens != 5 || c.Usage.TotalTokens != len(ids)+5 {
		t.Errorf("answer %s (prompt of %d tokens)", raw, len(ids))
	}
	asIDs, _ := s.text(t, fmt.Sprintf(`{"model":"tiny","prompt":%s,"max_tokens":5,"temperature":0,"ignore_eos":true,"return_token_ids":true}`, mustJSON(ids)))
	if asIDs.Choices[0].Text != c.Choices[0].Text || !slices.Equal(asIDs.Choices[0].PromptTokenIDs, ids) || len(asIDs.Choices[0].TokenIDs) != 5 {
		t.Errorf("as token ids: %+v, as text %q", asIDs.Choices[0], c.Choices[0].Text)
	}
	if d, _ := s.text(t, `{"model":"tiny","prompt":"`+prompt+`","ignore_eos":true}`); d.Usage.CompletionTokens != 16 {
		t.Errorf("max_tokens left out: %d tokens", d.Usage.CompletionTokens)
	}
	echo, _ := s.text(t, `{"model":"tiny","prompt":"`+prompt+`","max_tokens":5,"temperature":0,"ignore_eos":true,"echo":true}`)
	if echo.Choices[0].Text != prompt+c.Choices[0].Text {
		t.Errorf("echo %q, without %q", echo.Choices[0].Text, c.Choices[0].Text)
	}
	only, raw := s.text(t, `{"model":"tiny","prompt":"`+prompt+`","max_tokens":0,"echo":true,"logprobs":1}`)
	if only.Choices[0].Text != prompt || only.Usage.CompletionTokens != 1 || *only.Choices[0].FinishReason != "length" ||
		len(only.Choices[0].Logprobs.Tokens) != len(ids) {
		t.Errorf("echo alone: %s", raw)
	}
}

// logprobs N: for every token its text, its logprob, the position's
// chosen token and N most likely ones keyed by text (greedy: the chosen
// one is the most likely) and its offset in the text in characters; with
// echo the prompt's tokens come first, the first without a logprob, and
// the generated tokens' logprobs are the same as without echo.
func TestLocalTextLogprobs(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	const prompt = "The quick brown fox"
	plain, _ := s.text(t, `{"model":"tiny","prompt":"`+prompt+`","max_tokens":6,"temperature":0,"ignore_eos":true,"logprobs":2}`)
	echo, raw := s.text(t, `{"model":"tiny","prompt":"`+prompt+`","max_tokens":6,"temperature":0,"ignore_eos":true,"logprobs":2,"echo":true}`)
	ids := s.tokens(t, prompt, true)
	lp, elp := plain.Choices[0].Logprobs, echo.Choices[0].Logprobs
	if lp == nil || elp == nil || len(lp.Tokens) != 6 || len(elp.Tokens) != len(ids)+6 || elp.TokenLogprobs[0] != nil || elp.TopLogprobs[0] != nil {
		t.Fatalf("logprobs %s", raw)
	}
	if strings.Join(elp.Tokens[:len(ids)], "") != prompt || strings.Join(lp.Tokens, "") != plain.Choices[0].Text {
		t.Errorf("tokens %q spell neither %q nor %q", elp.Tokens, prompt, plain.Choices[0].Text)
	}
	for name, l := range map[string]*textLogprobs{"plain": lp, "echo": elp} {
		for i, tok := range l.Tokens {
			if i > 0 && l.TextOffset[i] != l.TextOffset[i-1]+utf8.RuneCountInString(l.Tokens[i-1]) {
				t.Errorf("%s: offset %d of %v", name, i, l.TextOffset)
			}
			if l.TokenLogprobs[i] == nil {
				continue
			}
			top, own := l.TopLogprobs[i], *l.TokenLogprobs[i]
			best := math.Inf(-1)
			for _, v := range top {
				best = max(best, v)
			}
			if v, ok := top[tok]; !ok || v != own || len(top) < 2 || len(top) > 3 || (i >= len(l.Tokens)-6 && own != best) || own > 0 {
				t.Errorf("%s: position %d (%q, %v): %v", name, i, tok, own, top)
			}
		}
	}
	for i := range 6 {
		if *lp.TokenLogprobs[i] != *elp.TokenLogprobs[len(ids)+i] || lp.Tokens[i] != elp.Tokens[len(ids)+i] {
			t.Errorf("generated token %d: %q %v, echoed %q %v", i, lp.Tokens[i], *lp.TokenLogprobs[i], elp.Tokens[len(ids)+i], *elp.TokenLogprobs[len(ids)+i])
		}
	}
	if len(echo.Choices[0].PromptLogprobs) != len(ids) || string(echo.Choices[0].PromptLogprobs[0]) != "null" {
		t.Errorf("prompt_logprobs %v", echo.Choices[0].PromptLogprobs)
	}
	asIDs, _ := s.text(t, `{"model":"tiny","prompt":"`+prompt+`","max_tokens":6,"temperature":0,"ignore_eos":true,"logprobs":0,"return_tokens_as_token_ids":true,"return_token_ids":true}`)
	for i, tok := range asIDs.Choices[0].Logprobs.Tokens {
		if want := fmt.Sprintf("token_id:%d", asIDs.Choices[0].TokenIDs[i]); tok != want || len(asIDs.Choices[0].Logprobs.TopLogprobs[i]) != 1 {
			t.Errorf("token %d: %q, want %s; top %v", i, tok, want, asIDs.Choices[0].Logprobs.TopLogprobs[i])
		}
	}
}

// A batch of prompts with n choices each answers prompt i's choice j as
// choice i×n + j, each exactly what the prompt alone answers (the engine's
// output does not depend on what runs beside it); the usage sums the
// prompts once and every choice's tokens. best_of keeps the candidates of
// the highest cumulative logprob: with a seed, the best of the n=best_of
// answer's choices.
func TestLocalTextBatchAndBestOf(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	const opts = `"max_tokens":6,"temperature":1,"seed":3,"ignore_eos":true`
	batch, raw := s.text(t, `{"model":"tiny","prompt":["Hello","A longer second prompt"],"n":2,`+opts+`}`)
	if len(batch.Choices) != 4 || batch.Usage.CompletionTokens != 24 ||
		batch.Usage.PromptTokens != len(s.tokens(t, "Hello", true))+len(s.tokens(t, "A longer second prompt", true)) {
		t.Fatalf("batch %s", raw)
	}
	for p, prompt := range []string{"Hello", "A longer second prompt"} {
		alone, _ := s.text(t, `{"model":"tiny","prompt":"`+prompt+`","n":2,`+opts+`}`)
		for j := range 2 {
			if c := batch.Choices[2*p+j]; c.Index != 2*p+j || c.Text != alone.Choices[j].Text {
				t.Errorf("prompt %d choice %d: %+v, alone %q", p, j, c, alone.Choices[j].Text)
			}
		}
	}
	candidates, _ := s.text(t, `{"model":"tiny","prompt":"Hello","n":3,"logprobs":0,`+opts+`}`)
	best, bestScore := "", math.Inf(-1)
	for _, c := range candidates.Choices {
		score := 0.0
		for _, v := range c.Logprobs.TokenLogprobs {
			score += *v
		}
		if score > bestScore {
			best, bestScore = c.Text, score
		}
	}
	chosen, raw := s.text(t, `{"model":"tiny","prompt":"Hello","best_of":3,`+opts+`}`)
	if len(chosen.Choices) != 1 || chosen.Choices[0].Text != best || chosen.Choices[0].Logprobs != nil || chosen.Usage.CompletionTokens != 6 {
		t.Errorf("best_of 3: %s; the best candidate %q", raw, best)
	}
}

// A seeded stream says what the same request says whole: one choice per
// chunk with every member vLLM's stream choice sets, the echoed prompt and
// its ids (which vLLM sends with echo) on each choice's first chunk,
// offsets that continue from chunk to chunk, and the usage chunk last.
func TestLocalTextStreamEqualsWhole(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	req := `{"model":"tiny","prompt":["Hi","Bye now"],"n":2,"max_tokens":7,"temperature":1,"seed":11,"ignore_eos":true,"logprobs":1,"echo":true`
	whole, _ := s.text(t, req+`}`)
	payloads := s.streamAt(t, "/v1/completions", req+`,"stream":true,"stream_options":{"include_usage":true}}`)
	if payloads[len(payloads)-1] != "[DONE]" {
		t.Fatalf("no [DONE]: %v", payloads)
	}
	texts, tokens := map[int]string{}, map[int][]string{}
	var usage textCompletion
	for i, p := range payloads[:len(payloads)-1] {
		if i == len(payloads)-2 {
			if got := strings.Join(keys(t, json.RawMessage(p)), " "); got != "id object created model choices usage" {
				t.Errorf("usage chunk members %s: %s", got, p)
			}
			_ = json.Unmarshal([]byte(p), &usage)
			continue
		}
		if got := strings.Join(keys(t, member(t, json.RawMessage(p), "choices", 0)), " "); got != "index text logprobs finish_reason stop_reason prompt_token_ids token_ids" {
			t.Fatalf("chunk choice members %s: %s", got, p)
		}
		var c textCompletion
		_ = json.Unmarshal([]byte(p), &c)
		ch := c.Choices[0]
		if texts[ch.Index] == "" && (ch.PromptTokenIDs == nil || !strings.HasPrefix(ch.Text, []string{"Hi", "Bye now"}[ch.Index/2])) {
			t.Errorf("first chunk of choice %d: %s", ch.Index, p)
		}
		if ch.Logprobs.TextOffset[0] != utf8.RuneCountInString(texts[ch.Index]) {
			t.Errorf("choice %d: offset %d after %q", ch.Index, ch.Logprobs.TextOffset[0], texts[ch.Index])
		}
		texts[ch.Index] += ch.Text
		tokens[ch.Index] = append(tokens[ch.Index], ch.Logprobs.Tokens...)
	}
	for _, w := range whole.Choices {
		if texts[w.Index] != w.Text || !slices.Equal(tokens[w.Index], w.Logprobs.Tokens) {
			t.Errorf("choice %d streamed %q %q, whole %q %q", w.Index, texts[w.Index], tokens[w.Index], w.Text, w.Logprobs.Tokens)
		}
	}
	if len(whole.Choices) != 4 || usage.Usage != whole.Usage || whole.Usage.CompletionTokens != 28 {
		t.Errorf("usage streamed %+v, whole %+v", usage.Usage, whole.Usage)
	}
}

// Structured outputs constrain a text completion as a chat completion's;
// a suffix fills in the middle with the vocabulary's FIM tokens (the
// prompt is what the tokenizer makes of the FIM text).
func TestLocalTextStructuredAndSuffix(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	for _, body := range []string{
		`{"model":"tiny","prompt":"Answer:","structured_outputs":{"choice":["yes","no"]},"max_tokens":5,"seed":1}`,
		`{"model":"tiny","prompt":"Answer:","guided_choice":["yes","no"],"max_tokens":5,"seed":2}`,
	} {
		if c, raw := s.text(t, body); c.Choices[0].Text != "yes" && c.Choices[0].Text != "no" {
			t.Errorf("%s: %s", body, raw)
		}
	}
	c, raw := s.text(t, `{"model":"tiny","prompt":"N:","response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}},"max_tokens":40,"seed":4}`)
	var v struct{ N *int }
	if err := json.Unmarshal([]byte(c.Choices[0].Text), &v); (err != nil || v.N == nil) && *c.Choices[0].FinishReason == "stop" {
		t.Errorf("json_schema: %s", raw)
	}
	fim, raw := s.text(t, `{"model":"tiny","prompt":"def add(a, b):\n    return ","suffix":"\n\nprint(add(1, 2))","max_tokens":4,"return_token_ids":true}`)
	want := s.tokens(t, "<|fim_prefix|>def add(a, b):\n    return <|fim_suffix|>\n\nprint(add(1, 2))<|fim_middle|>", false)
	if !slices.Equal(fim.Choices[0].PromptTokenIDs, want) {
		t.Errorf("fill in the middle: %s, want prompt %v", raw, want)
	}
}

// What a text completion may not ask is a 400 naming the param.
func TestLocalTextErrors(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	long := strings.Repeat("word ", 300)
	for _, tc := range []struct{ body, param string }{
		{`{"model":"tiny","prompt":[151936]}`, "prompt"},
		{`{"model":"tiny","prompt":[[1],[-1]]}`, "prompt"},
		{`{"model":"tiny","prompt":""}`, "prompt"},
		{`{"model":"tiny","prompt":"x","suffix":"y","echo":true}`, "suffix"},
		{`{"model":"tiny","prompt":"x","best_of":2,"temperature":0}`, "best_of"},
		{`{"model":"tiny","prompt":"x","best_of":2,"stream":true}`, "best_of"},
		{`{"model":"tiny","prompt":"x","max_tokens":300}`, "max_tokens"},
		{`{"model":"tiny","prompt":"x","max_tokens":0}`, "max_tokens"},
		{`{"model":"tiny","prompt":"` + long + `"}`, "input_tokens"},
		{`{"model":"tiny","prompt":"x","logprobs":21}`, "logprobs"},
		{`{"model":"tiny","prompt":"x","truncation_side":"middle"}`, "truncation_side"},
		{`{"model":"tiny","prompt":"x","structured_outputs":{"choice":["a"],"regex":"b"}}`, "structured_outputs"},
		{`{"model":"tiny","prompt":"x","use_beam_search":true}`, "use_beam_search"},
	} {
		status, _, body := s.post(t, "/v1/completions", tc.body)
		if status != http.StatusBadRequest || !strings.Contains(string(body), `"param":"`+tc.param+`"`) {
			t.Errorf("%.80s: %d %s, want a 400 naming %s", tc.body, status, body, tc.param)
		}
	}
	// logprobs is a count from 0 to the model's max_logprobs (the
	// -local-logprobs limit, vLLM's 20): vLLM's messages below and above,
	// and a type error for anything but an integer.
	for _, tc := range []struct{ logprobs, msg string }{
		{"21", "Requested sample logprobs of 21, which is greater than max allowed: 20"},
		{"9223372036854775807", "Requested sample logprobs of 9223372036854775807, which is greater than max allowed: 20"},
		{"-1", "`logprobs` must be a positive value."},
		{"-9223372036854775808", "`logprobs` must be a positive value."},
		{"1e400", "Input should be a valid integer"},
		{"2.5", "Input should be a valid integer"},
		{`"2"`, "Input should be a valid integer"},
		{"true", "Input should be a valid integer"},
		{"[2]", "Input should be a valid integer"},
	} {
		for _, stream := range []string{"false", "true"} {
			body := `{"model":"tiny","prompt":"x","stream":` + stream + `,"logprobs":` + tc.logprobs + `}`
			status, _, raw := s.post(t, "/v1/completions", body)
			var e struct {
				Error struct{ Message, Param string }
			}
			_ = json.Unmarshal(raw, &e)
			if status != http.StatusBadRequest || e.Error.Param != "logprobs" || !strings.Contains(e.Error.Message, tc.msg) {
				t.Errorf("%s: %d %s, want a 400 naming logprobs: %s", body, status, raw, tc.msg)
			}
		}
	}
	for _, lp := range []string{"0", "20", "null"} {
		if status, _, raw := s.post(t, "/v1/completions", `{"model":"tiny","prompt":"x","max_tokens":2,"logprobs":`+lp+`}`); status != http.StatusOK {
			t.Errorf("logprobs %s: %d %s", lp, status, raw)
		}
	}
	if status, _, body := s.post(t, "/v1/completions", `{"model":"nope","prompt":"x"}`); status != http.StatusNotFound {
		t.Errorf("unknown model: %d %s", status, body)
	}
}
