package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
)

// OpTextCompletion names the calls of POST /v1/completions.
const OpTextCompletion = "completions.create"

// TextCompletionRequest is the part of a POST /v1/completions request (vLLM's
// CompletionRequest) the gateway reads: the members of a text completion
// of its own, and Shared, what it shares with a chat completion (model,
// n, the sampling options, stop, stream, structured outputs, the vLLM
// extensions), validated as chat's are. The request is forwarded from its
// raw JSON.
type TextCompletionRequest struct {
	// Prompt is a string, a list of strings, a list of token ids or a list
	// of lists of token ids: one prompt, or a batch.
	Prompt json.RawMessage `json:"prompt"`
	// Suffix is refused, as vLLM refuses it.
	Suffix   *string `json:"suffix"`
	Echo     *bool   `json:"echo"`
	Logprobs *int64  `json:"logprobs"`
	BestOf   *int64  `json:"best_of"`

	Shared *CompletionRequest `json:"-"`
	// Prompts is how many prompts Prompt holds (1 for one prompt).
	Prompts int `json:"-"`
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
	prompts, err := checkPrompt(req.Prompt)
	if err != nil {
		return nil, err
	}
	req.Prompts = prompts
	members, ok := topLevelMembers(raw)
	if !ok {
		return nil, Malformed("body", "dict_type", "Input should be a valid dictionary")
	}
	// The shared members read as a chat request's: logprobs is a count
	// here, a flag there, and checked below.
	shared, err := ParseRequest(patchObject(raw, members, map[string]json.RawMessage{"logprobs": nil, "messages": json.RawMessage("[]")}))
	if err != nil {
		return nil, err
	}
	shared.raw, shared.members = raw, members
	req.Shared = shared
	switch {
	case req.Suffix != nil:
		return nil, Invalid("suffix", "suffix is not currently supported")
	case req.Logprobs != nil && *req.Logprobs < 0:
		return nil, Invalid("logprobs", "`logprobs` must be a positive value.")
	case req.BestOf != nil && *req.BestOf < 1:
		return nil, Invalid("best_of", "best_of must be at least 1, got %d.", *req.BestOf)
	case req.BestOf != nil && shared.N != nil && *req.BestOf < *shared.N:
		return nil, Invalid("best_of", "best_of must be greater than or equal to n, got n=%d and best_of=%d.", *shared.N, *req.BestOf)
	case req.BestOf != nil && *req.BestOf > 1 && shared.Streaming():
		return nil, Invalid("best_of", "best_of > 1 is not supported with stream=True.")
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
	choices := int64(1)
	if n := req.Shared.N; n != nil && *n > choices {
		choices = *n
	}
	if req.BestOf != nil && *req.BestOf > choices {
		choices = *req.BestOf
	}
	maxTokens := int64(vllmDefaultMaxTokens)
	if m := req.Shared.MaxTokens; m != nil {
		maxTokens = *m
	}
	if choices > l.MaxTokens || maxTokens > l.MaxTokens || int64(req.Prompts)*choices*maxTokens > l.MaxTokens {
		return Invalid("max_tokens", "The request asks for %d prompts × %d choices × %d max_tokens, more than the %d tokens one request may ask for.",
			req.Prompts, choices, maxTokens, l.MaxTokens)
	}
	return nil
}

// checkPrompt accepts vLLM's prompt shapes, none empty, and counts the
// prompts.
func checkPrompt(raw json.RawMessage) (int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return 0, Invalid("prompt", "Either prompt or prompt_embeds must be provided and non-empty.")
	}
	var text string
	var texts []string
	var ids []int64
	var batches [][]int64
	switch {
	case json.Unmarshal(raw, &text) == nil:
		return 1, nil
	case json.Unmarshal(raw, &texts) == nil && len(texts) > 0:
		return len(texts), nil
	case json.Unmarshal(raw, &ids) == nil && len(ids) > 0:
		return 1, nil
	case json.Unmarshal(raw, &batches) == nil && len(batches) > 0:
		for _, b := range batches {
			if len(b) == 0 {
				return 0, Invalid("prompt", "Either prompt or prompt_embeds must be provided and non-empty.")
			}
		}
		return len(batches), nil
	}
	return 0, Invalid("prompt", "prompt must be a string, a list of strings, a list of token ids or a list of lists of token ids, none empty.")
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
	c := s.newCompletion(ctx, projectID, OpTextCompletion, raw, modelKey(head.Model, route))
	c.pending.assemble = assembleTextStream
	err = s.forward(ctx, route, EndpointCompletions, c, func(_ Backend, t Target) (*Answer, error) {
		if _, registered := s.backends[t.Upstream.Kind]; registered {
			// No registered backend answers text completions (a route
			// built in code may still have named them).
			served := slices.DeleteFunc(slices.Clone(route.Endpoints), func(e string) bool { return e == EndpointCompletions })
			return nil, checkEndpoint(&Route{Name: route.Name, Endpoints: served}, EndpointCompletions)
		}
		model, _ := json.Marshal(t.Upstream.Model)
		body := patchObject(raw, req.Shared.members, map[string]json.RawMessage{"model": model})
		return s.remote.post(ctx, t, "/completions", body, req.Shared.Streaming())
	})
	return c.answered(err)
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
