package inprocess

import (
	"bytes"
	"context"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// tokenizeRequest is either of vLLM's tokenize requests: a prompt, or chat
// messages (with the chat template's options).
type tokenizeRequest struct {
	Model           string  `json:"model"`
	Prompt          *string `json:"prompt"`
	ReturnTokenStrs *bool   `json:"return_token_strs"`
	chatInput
}

// Tokenize answers vLLM's POST /tokenize: the prompt's tokens
// (add_special_tokens defaults to true), or the tokens a chat completion
// with the same messages feeds the model (add_generation_prompt true and
// add_special_tokens false by default, held to the rules a completion's
// are), with max_model_len and, when asked, each token's vocabulary
// string.
func (s *Server) Tokenize(_ context.Context, t chat.Target, raw []byte) (*chat.TokenizeResult, error) {
	var req tokenizeRequest
	if err := chat.DecodeBody(raw, &req); err != nil {
		return nil, err
	}
	m, err := s.modelOf(t)
	if err != nil {
		return nil, err
	}
	var ids []int
	switch {
	case len(req.Messages) > 0 && !bytes.Equal(req.Messages, []byte("null")):
		if req.Messages[0] != '[' {
			return nil, chat.Malformed("messages", "list_type", "Input should be a valid list")
		}
		options := &chat.CompletionRequest{AddGenerationPrompt: req.AddGenerationPrompt, ContinueFinalMessage: req.ContinueFinalMessage}
		if err := chat.Validate(options, chat.ModelInfo{}); err != nil {
			return nil, err
		}
		prompt, err := m.prompt.render(&req.chatInput)
		if err != nil {
			return nil, err
		}
		ids = prompt.ids
	case req.Prompt != nil:
		ids = m.prompt.tokenizer.Encode(*req.Prompt, req.AddSpecialTokens == nil || *req.AddSpecialTokens)
	default:
		return nil, chat.Malformed("prompt", "missing", "Field required")
	}
	out := &chat.TokenizeResult{Count: len(ids), MaxModelLen: m.prompt.maxModelLen, Tokens: nonNil(ids)}
	if req.ReturnTokenStrs != nil && *req.ReturnTokenStrs {
		out.TokenStrs = make([]string, len(ids))
		for i, id := range ids {
			out.TokenStrs[i], _ = m.prompt.tokenizer.IDToToken(id)
		}
	}
	return out, nil
}

// Detokenize answers vLLM's POST /detokenize: the text of the tokens,
// special tokens kept.
func (s *Server) Detokenize(_ context.Context, t chat.Target, raw []byte) (*chat.DetokenizeResult, error) {
	var req struct {
		Tokens []int64 `json:"tokens"`
	}
	if err := chat.DecodeBody(raw, &req); err != nil {
		return nil, err
	}
	if req.Tokens == nil {
		return nil, chat.Malformed("tokens", "missing", "Field required")
	}
	m, err := s.modelOf(t)
	if err != nil {
		return nil, err
	}
	ids := make([]int, len(req.Tokens))
	vocab := int64(m.engine.VocabSize())
	for i, id := range req.Tokens {
		if id < 0 {
			return nil, chat.Malformed("tokens", "greater_than_equal", "Input should be greater than or equal to 0")
		}
		if id >= vocab {
			return nil, chat.Invalid("tokens", "Token id %d is out of vocabulary (vocabulary size %d).", id, vocab)
		}
		ids[i] = int(id)
	}
	return &chat.DetokenizeResult{Prompt: m.prompt.tokenizer.Decode(ids, tokenizer.DecodeOptions{})}, nil
}
