package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// TokenizeResult is the answer of vLLM's POST /tokenize.
type TokenizeResult struct {
	Count       int      `json:"count"`
	MaxModelLen int      `json:"max_model_len"`
	Tokens      []int    `json:"tokens"`
	TokenStrs   []string `json:"token_strs"`
}

// DetokenizeResult is the answer of vLLM's POST /detokenize.
type DetokenizeResult struct {
	Prompt string `json:"prompt"`
}

// tokenizeRequest is either of vLLM's tokenize requests: a prompt, or chat
// messages (with the chat template's options).
type tokenizeRequest struct {
	Model           string  `json:"model"`
	Prompt          *string `json:"prompt"`
	ReturnTokenStrs *bool   `json:"return_token_strs"`
	chatInput
}

// Tokenize answers vLLM's POST /tokenize for a local model: the prompt's
// tokens (add_special_tokens defaults to true), or the tokens a chat
// completion with the same messages feeds the model (add_generation_prompt
// true and add_special_tokens false by default), with max_model_len and,
// when asked, each token's vocabulary string.
func (s *localServer) Tokenize(_ context.Context, t Target, raw []byte) (*TokenizeResult, error) {
	var req tokenizeRequest
	if err := decodeBody(raw, &req); err != nil {
		return nil, err
	}
	lm := s.modelOf(t.Route)
	var ids []int
	switch {
	case len(req.Messages) > 0 && !bytes.Equal(req.Messages, []byte("null")):
		if req.Messages[0] != '[' {
			return nil, malformed("messages", "list_type", "Input should be a valid list")
		}
		if err := checkGenerationPrompt(&CompletionRequest{AddGenerationPrompt: req.AddGenerationPrompt, ContinueFinalMessage: req.ContinueFinalMessage}, ModelInfo{}); err != nil {
			return nil, err
		}
		prompt, err := lm.prompt.render(&req.chatInput)
		if err != nil {
			return nil, err
		}
		ids = prompt.ids
	case req.Prompt != nil:
		ids = lm.prompt.tokenizer.Encode(*req.Prompt, req.AddSpecialTokens == nil || *req.AddSpecialTokens)
	default:
		return nil, malformed("prompt", "missing", "Field required")
	}
	out := &TokenizeResult{Count: len(ids), MaxModelLen: lm.prompt.maxModelLen, Tokens: nonNil(ids)}
	if req.ReturnTokenStrs != nil && *req.ReturnTokenStrs {
		out.TokenStrs = make([]string, len(ids))
		for i, id := range ids {
			out.TokenStrs[i], _ = lm.prompt.tokenizer.IDToToken(id)
		}
	}
	return out, nil
}

// Detokenize answers vLLM's POST /detokenize for a local model: the text of
// the tokens, special tokens kept.
func (s *localServer) Detokenize(_ context.Context, t Target, raw []byte) (*DetokenizeResult, error) {
	var req struct {
		Model  string  `json:"model"`
		Tokens []int64 `json:"tokens"`
	}
	if err := decodeBody(raw, &req); err != nil {
		return nil, err
	}
	if req.Tokens == nil {
		return nil, malformed("tokens", "missing", "Field required")
	}
	lm := s.modelOf(t.Route)
	ids := make([]int, len(req.Tokens))
	vocab := int64(lm.engine.VocabSize())
	for i, id := range req.Tokens {
		if id < 0 {
			return nil, malformed("tokens", "greater_than_equal", "Input should be greater than or equal to 0")
		}
		if id >= vocab {
			return nil, invalid("tokens", "Token id %d is out of vocabulary (vocabulary size %d).", id, vocab)
		}
		ids[i] = int(id)
	}
	return &DetokenizeResult{Prompt: lm.prompt.tokenizer.Decode(ids, tokenizer.DecodeOptions{})}, nil
}

// decodeBody reads a JSON object body, reporting a wrong shape as vLLM's
// handler does.
func decodeBody(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return typeError(typeErr)
		}
		return malformed("body", "json_invalid", "JSON decode error")
	}
	if _, ok := topLevelMembers(raw); !ok {
		return malformed("body", "dict_type", "Input should be a valid dictionary")
	}
	return nil
}

// Tokenize answers vLLM's POST /tokenize with the tokenizer of the model
// the body names: 404 for a model no route serves, 400 for one served by a
// remote upstream.
func (s *Gateway) Tokenize(ctx context.Context, raw []byte) (*TokenizeResult, error) {
	var req tokenizeRequest
	if err := decodeBody(raw, &req); err != nil {
		return nil, err
	}
	t, err := s.targetOf(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	return s.backendOf(t.Upstream).Tokenize(ctx, t, raw)
}

// Detokenize answers vLLM's POST /detokenize as Tokenize does.
func (s *Gateway) Detokenize(ctx context.Context, raw []byte) (*DetokenizeResult, error) {
	var req struct {
		Model  string  `json:"model"`
		Tokens []int64 `json:"tokens"`
	}
	if err := decodeBody(raw, &req); err != nil {
		return nil, err
	}
	if req.Tokens == nil {
		return nil, malformed("tokens", "missing", "Field required")
	}
	t, err := s.targetOf(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	return s.backendOf(t.Upstream).Detokenize(ctx, t, raw)
}

// targetOf is the target of a request for model outside a completion: the
// route's first upstream.
func (s *Gateway) targetOf(ctx context.Context, model string) (Target, error) {
	route, err := s.resolve(ctx, model)
	if err != nil {
		return Target{}, err
	}
	return Target{Route: route, Upstream: route.Upstreams[0]}, nil
}
