package chat

import (
	"context"
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

// Tokenize answers vLLM's POST /tokenize with the tokenizer of the model
// the body names: 404 for a model no route serves, 400 for one served by a
// remote upstream. The backend serving the model reads the rest of the
// body.
func (s *Gateway) Tokenize(ctx context.Context, raw []byte) (*TokenizeResult, error) {
	var req struct {
		Model string `json:"model"`
	}
	if err := DecodeBody(raw, &req); err != nil {
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
	if err := DecodeBody(raw, &req); err != nil {
		return nil, err
	}
	if req.Tokens == nil {
		return nil, Malformed("tokens", "missing", "Field required")
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
	return Target{Route: route, Upstream: route.Upstreams[0], Adapter: route.adapter}, nil
}
