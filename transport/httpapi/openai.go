package httpapi

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// registerEmbeddings serves OpenAI's POST /v1/embeddings through the chat
// gateway: embedding models run in-process and routes serving embeddings,
// traced into the caller's project.
func (h *Handler) registerEmbeddings() {
	op := h.operation(styleOpenAI, huma.Operation{
		OperationID: "embeddings-create", Method: http.MethodPost, Path: "/v1/embeddings", Tags: []string{"chat"},
		Summary:     "Create embeddings (OpenAI compatible) with an embedding model run in-process or routed, traced into the caller's project",
		Description: "input: a string, strings, token ids or lists of token ids; encoding_format float or base64; dimensions for Matryoshka models; truncate_prompt_tokens.",
	})
	op.Responses["200"] = &huma.Response{Description: "The embeddings", Content: map[string]*huma.MediaType{
		"application/json": {Schema: &huma.Schema{Type: "object"}},
	}}
	huma.Register(h.api, *op, h.relayed("embeddings", h.cfg.Chat.Embed))
}

// registerTextCompletions serves POST /v1/completions (text completions)
// through the chat gateway's routes serving completions, traced into the
// caller's project.
func (h *Handler) registerTextCompletions() {
	op := h.operation(styleOpenAI, huma.Operation{
		OperationID: "text-completions-create", Method: http.MethodPost, Path: "/v1/completions", Tags: []string{"chat"},
		Summary: "Create a text completion (OpenAI/vLLM compatible) through a route serving completions, traced into the caller's project",
		Description: "prompt: a string, strings, token ids or lists of token ids; echo, logprobs (a count), best_of, n, every sampling option; suffix is refused as vLLM refuses it. " +
			"With stream=true the answer is a text/event-stream of text_completion chunks ending in data: [DONE].",
	})
	op.Responses["200"] = &huma.Response{Description: "The completion, or its stream", Content: map[string]*huma.MediaType{
		"application/json":  {Schema: &huma.Schema{Type: "object"}},
		"text/event-stream": {Schema: &huma.Schema{Type: "string"}},
	}}
	huma.Register(h.api, *op, h.relayed("completions", h.cfg.Chat.TextComplete))
}
