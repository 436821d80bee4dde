package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft/chat/embeddings"
)

// registerEmbeddings serves OpenAI's POST /v1/embeddings with the embedding
// models served in-process.
func (h *Handler) registerEmbeddings() {
	huma.Register(h.api, *h.operation(styleOpenAI, huma.Operation{
		OperationID: "embeddings-create", Method: http.MethodPost, Path: "/v1/embeddings", Tags: []string{"chat"},
		Summary:     "Create embeddings (OpenAI compatible) with an embedding model served in-process",
		Description: "input: a string, strings, token ids or lists of token ids; encoding_format float or base64; dimensions for Matryoshka models; truncate_prompt_tokens.",
	}), func(ctx context.Context, in *rawJSONInput) (*body[*embeddings.Response], error) {
		if err := requireJSON(in.ContentType); err != nil {
			return nil, err
		}
		res, err := h.cfg.Embeddings.Embed(ctx, in.RawBody)
		if err != nil {
			return nil, err
		}
		return &body[*embeddings.Response]{Body: res}, nil
	})
}
