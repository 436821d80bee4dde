package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
)

// OpTextCompletion names the calls of POST /v1/completions.
const OpTextCompletion = "completions.create"

// TextCompletionRequest is the part of a POST /v1/completions request (vLLM's
// CompletionRequest) the gateway reads: the members of a text completion
// of its own, and Shared, what it shares with a chat completion (model,
// n, the sampling options, stop, stream, structured outputs, the vLLM
// extensions, add_special_tokens), validated as chat's are. The request is
// forwarded from its raw JSON.
type TextCompletionRequest struct {
	// Prompt is a string, a list of strings, a list of token ids or a list
	// of lists of token ids: one prompt, or a batch.
	Prompt json.RawMessage `json:"prompt"`
	// Suffix is the text after the completion: refused, as vLLM refuses
	// it, unless the model fills in the middle (ModelInfo.FillsInMiddle).
	Suffix   *string `json:"suffix"`
	Echo     *bool   `json:"echo"`
	Logprobs *int64  `json:"logprobs"`
	BestOf   *int64  `json:"best_of"`

	Shared *CompletionRequest `json:"-"`
	// Prompts is how many prompts Prompt holds (1 for one prompt).
	Prompts int `json:"-"`
	// Inputs are the prompts, in order.
	Inputs []TextPrompt `json:"-"`
}

// TextPrompt is one prompt of a text completion: a text to tokenize, or
// token ids (IDs non-nil).
type TextPrompt struct {
	Text string
	IDs  []int64
}

// Echoing reports echo.
func (r *TextCompletionRequest) Echoing() bool { return r.Echo != nil && *r.Echo }

// MaxTokens is the request's max_tokens: vLLM's 16 when left out or null.
// Zero asks, with echo, for the prompt alone.
func (r *TextCompletionRequest) MaxTokens() int64 {
	if m := r.Shared.MaxTokens; m != nil {
		return *m
	}
	return vllmDefaultMaxTokens
}

// Choices is how many choices each prompt generates: best_of when given
// (at least n), else n.
func (r *TextCompletionRequest) Choices() int64 {
	if r.BestOf != nil {
		return *r.BestOf
	}
	if r.Shared.N != nil {
		return *r.Shared.N
	}
	return 1
}

// vllmDefaultMaxTokens is max_tokens of a text completion that leaves it
// out, as vLLM's CompletionRequest defaults it.
const vllmDefaultMaxTokens = 16

// TextLimits bound one text completion request (Config.MaxCompletionPrompts
// and MaxCompletionTokens); a zero field is no bound.
type TextLimits struct {
	MaxPrompts int
	MaxTokens  int64
}

// ParseTextRequest decodes and checks a raw text-completion request against
// the route's model and limits: vLLM's rules, each failure a 400 with its
// param.
func ParseTextRequest(raw []byte, info ModelInfo, limits TextLimits) (*TextCompletionRequest, error) {
	req := &TextCompletionRequest{}
	if err := json.Unmarshal(raw, req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, typeError(typeErr)
		}
		return nil, Malformed("body", "json_invalid", "JSON decode error")
	}
	inputs, err := parsePrompt(req.Prompt, info.VocabSize)
	if err != nil {
		return nil, err
	}
	req.Inputs, req.Prompts = inputs, len(inputs)
	members, ok := topLevelMembers(raw)
	if !ok {
		return nil, Malformed("body", "dict_type", "Input should be a valid dictionary")
	}
	// The shared members read as a chat request's: logprobs is a count
	// here, a flag there, and checked below. max_tokens 0 asks, with echo,
	// for the prompt alone, for which vLLM generates one token.
	patch := map[string]json.RawMessage{"logprobs": nil, "messages": json.RawMessage("[]")}
	echoOnly := false
	if v, ok := memberValue(members, "max_tokens"); ok && req.Echoing() && string(bytes.TrimSpace(v)) == "0" {
		echoOnly = true
		patch["max_tokens"] = json.RawMessage("1")
	}
	shared, err := ParseRequest(patchObject(raw, members, patch))
	if err != nil {
		return nil, err
	}
	shared.raw, shared.members = raw, members
	req.Shared = shared
	switch {
	case req.Suffix != nil && !info.FillsInMiddle:
		return nil, Invalid("suffix", "suffix is not currently supported")
	case req.Suffix != nil && req.Echoing():
		return nil, Invalid("suffix", "suffix cannot be used with echo.")
	case req.Logprobs != nil && *req.Logprobs < 0:
		return nil, Invalid("logprobs", "`logprobs` must be a positive value.")
	case req.BestOf != nil && *req.BestOf < 1:
		return nil, Invalid("best_of", "best_of must be at least 1, got %d.", *req.BestOf)
	case req.BestOf != nil && shared.N != nil && *req.BestOf < *shared.N:
		return nil, Invalid("best_of", "best_of must be greater than or equal to n, got n=%d and best_of=%d.", *shared.N, *req.BestOf)
	case req.BestOf != nil && *req.BestOf > 1 && shared.Streaming():
		return nil, Invalid("best_of", "best_of > 1 is not supported with stream=True.")
	case req.BestOf != nil && *req.BestOf > 1 && shared.Temperature != nil && *shared.Temperature < greedyEpsilon:
		return nil, Invalid("best_of", "best_of must be 1 when using greedy sampling, got %d.", *req.BestOf)
	}
	maxLogprobs := info.MaxLogprobs
	if maxLogprobs == 0 {
		maxLogprobs = 20
	}
	if req.Logprobs != nil && *req.Logprobs > maxLogprobs {
		return nil, Invalid("logprobs", "Requested sample logprobs of %d, which is greater than max allowed: %d", *req.Logprobs, maxLogprobs)
	}
	if err := Validate(shared, info); err != nil {
		return nil, err
	}
	if echoOnly {
		zero := int64(0)
		shared.MaxTokens = &zero
	}
	if err := limits.check(req); err != nil {
		return nil, err
	}
	return req, nil
}

// check refuses a batch of more prompts, or a request for more tokens,
// than the limits allow.
func (l TextLimits) check(req *TextCompletionRequest) error {
	if l.MaxPrompts > 0 && req.Prompts > l.MaxPrompts {
		return Invalid("prompt", "The prompt holds %d prompts, more than the %d one request may hold.", req.Prompts, l.MaxPrompts)
	}
	if l.MaxTokens <= 0 {
		return nil
	}
	choices, maxTokens := max(req.Choices(), 1), req.MaxTokens()
	if choices > l.MaxTokens || maxTokens > l.MaxTokens || int64(req.Prompts)*choices*maxTokens > l.MaxTokens {
		return Invalid("max_tokens", "The request asks for %d prompts × %d choices × %d max_tokens, more than the %d tokens one request may ask for.",
			req.Prompts, choices, maxTokens, l.MaxTokens)
	}
	return nil
}

// parsePrompt reads vLLM's prompt shapes, none empty: a text, texts, token
// ids or lists of them. Token ids must be within the vocabulary when its
// size is known (vocabSize > 0).
func parsePrompt(raw json.RawMessage, vocabSize int64) ([]TextPrompt, error) {
	raw = bytes.TrimSpace(raw)
	empty := Invalid("prompt", "Either prompt or prompt_embeds must be provided and non-empty.")
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, empty
	}
	var text string
	var texts []string
	var ids []int64
	var batches [][]int64
	switch {
	case json.Unmarshal(raw, &text) == nil:
		if text == "" {
			return nil, empty
		}
		return []TextPrompt{{Text: text}}, nil
	case json.Unmarshal(raw, &texts) == nil && len(texts) > 0:
		out := make([]TextPrompt, len(texts))
		for i, t := range texts {
			out[i].Text = t
		}
		return out, nil
	case json.Unmarshal(raw, &ids) == nil && len(ids) > 0:
		batches = [][]int64{ids}
	case json.Unmarshal(raw, &batches) == nil && len(batches) > 0:
	default:
		return nil, Invalid("prompt", "prompt must be a string, a list of strings, a list of token ids or a list of lists of token ids, none empty.")
	}
	out := make([]TextPrompt, len(batches))
	for i, b := range batches {
		if len(b) == 0 {
			return nil, empty
		}
		for _, id := range b {
			switch {
			case id < 0:
				return nil, Invalid("prompt", "Token ids must be greater than or equal to 0, got %d.", id)
			case vocabSize > 0 && id >= vocabSize:
				return nil, Invalid("prompt", "Token id %d is out of vocabulary", id)
			}
		}
		out[i].IDs = b
	}
	return out, nil
}

// TextComplete answers a raw POST /v1/completions request: the model's
// route must serve EndpointCompletions; it is forwarded to the route's
// upstreams (the model renamed to the upstream's) with its retries and
// fallbacks, and traced into projectID as one call, a stream assembled
// into one text_completion. Errors come before anything is relayed, as
// Complete's do.
func (s *Gateway) TextComplete(ctx context.Context, projectID string, raw []byte) (*Completion, error) {
	var head struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, typeError(typeErr)
		}
		return nil, Malformed("body", "json_invalid", "JSON decode error")
	}
	route, err := s.resolve(ctx, head.Model)
	if err != nil {
		return nil, err
	}
	if err := checkEndpoint(route, EndpointCompletions); err != nil {
		return nil, err
	}
	req, err := ParseTextRequest(raw, route.ModelInfo, TextLimits{MaxPrompts: s.cfg.MaxCompletionPrompts, MaxTokens: s.cfg.MaxCompletionTokens})
	if err != nil {
		return nil, err
	}
	req.Shared.tenant, _, _ = strings.Cut(projectID, "/")
	c := s.newCompletion(ctx, projectID, OpTextCompletion, raw, modelKey(head.Model, route))
	c.pending.assemble = assembleTextStream
	err = s.forward(ctx, route, EndpointCompletions, c, func(b Backend, t Target) (*Answer, error) {
		tc, ok := b.(TextCompleter)
		if !ok {
			// A route built in code may name text completions for a
			// backend that does not answer them.
			served := slices.DeleteFunc(slices.Clone(route.Endpoints), func(e string) bool { return e == EndpointCompletions })
			return nil, checkEndpoint(&Route{Name: route.Name, Endpoints: served}, EndpointCompletions)
		}
		return tc.TextComplete(ctx, t, req)
	})
	return c.answered(err)
}

// TextComplete forwards a text completion to the upstream, the model
// renamed to the upstream's and everything else as sent.
func (rl relay) TextComplete(ctx context.Context, t Target, req *TextCompletionRequest) (*Answer, error) {
	model, _ := json.Marshal(t.Upstream.Model)
	body := patchObject(req.Shared.raw, req.Shared.members, map[string]json.RawMessage{"model": model})
	return rl.post(ctx, t, "/completions", body, req.Shared.Streaming())
}

// assembleTextStream is the text_completion a stream of text completion
// chunks makes: each choice's text, finish reason and logprobs joined, the
// usage of the last chunk that has one.
func assembleTextStream(frames [][]byte) json.RawMessage {
	type logprobs struct {
		Tokens        []json.RawMessage `json:"tokens"`
		TokenLogprobs []json.RawMessage `json:"token_logprobs"`
		TopLogprobs   []json.RawMessage `json:"top_logprobs"`
		TextOffset    []json.RawMessage `json:"text_offset"`
	}
	type choice struct {
		Index        int             `json:"index"`
		Text         string          `json:"text"`
		FinishReason *string         `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason,omitempty"`
		Logprobs     *logprobs       `json:"logprobs"`
	}
	out := struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Choices []*choice       `json:"choices"`
		Usage   json.RawMessage `json:"usage,omitempty"`
		Error   json.RawMessage `json:"error,omitempty"`
	}{Object: "text_completion", Choices: []*choice{}}
	choices := map[int]*choice{}
	for _, frame := range frames {
		var c struct {
			ID      string          `json:"id"`
			Created int64           `json:"created"`
			Model   string          `json:"model"`
			Usage   json.RawMessage `json:"usage"`
			Error   json.RawMessage `json:"error"`
			Choices []choice        `json:"choices"`
		}
		if json.Unmarshal(frame, &c) != nil {
			continue
		}
		if len(c.Error) > 0 {
			out.Error = c.Error
			continue
		}
		if out.ID == "" {
			out.ID, out.Created, out.Model = c.ID, c.Created, c.Model
		}
		if len(c.Usage) > 0 && string(c.Usage) != "null" {
			out.Usage = c.Usage
		}
		for _, d := range c.Choices {
			ch := choices[d.Index]
			if ch == nil {
				ch = &choice{Index: d.Index}
				choices[d.Index] = ch
				out.Choices = append(out.Choices, ch)
			}
			ch.Text += d.Text
			if d.FinishReason != nil {
				ch.FinishReason, ch.StopReason = d.FinishReason, d.StopReason
			}
			if lp := d.Logprobs; lp != nil {
				if ch.Logprobs == nil {
					ch.Logprobs = &logprobs{}
				}
				ch.Logprobs.Tokens = append(ch.Logprobs.Tokens, lp.Tokens...)
				ch.Logprobs.TokenLogprobs = append(ch.Logprobs.TokenLogprobs, lp.TokenLogprobs...)
				ch.Logprobs.TopLogprobs = append(ch.Logprobs.TopLogprobs, lp.TopLogprobs...)
				ch.Logprobs.TextOffset = append(ch.Logprobs.TextOffset, lp.TextOffset...)
			}
		}
	}
	sort.Slice(out.Choices, func(i, j int) bool { return out.Choices[i].Index < out.Choices[j].Index })
	b, _ := json.Marshal(out)
	return b
}
