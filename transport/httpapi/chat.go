package httpapi

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
)

// chatCompletionInput is a chat-completion request. The body is read raw so
// that every field, known or not, reaches the upstream as sent.
type chatCompletionInput struct {
	ContentType string `header:"Content-Type"`
	// Project chooses the project the call is traced into.
	Project string `header:"OpenAI-Project"`
	// RequestID names the completion: its id is "chatcmpl-" + this value.
	RequestID string `header:"X-Request-Id"`
	RawBody   []byte
}

// modelsOutput is the body of GET /v1/models.
type modelsOutput struct {
	Body struct {
		Object string           `json:"object" example:"list"`
		Data   []chat.ModelCard `json:"data"`
	}
}

// imageCreateInput is the body of POST /image/create.
type imageCreateInput struct {
	Body struct {
		ProjectID string `json:"project_id" doc:"<entity>/<project>"`
		// Inputs holds model, prompt and n; other keys go to the provider.
		Inputs       json.RawMessage `json:"inputs"`
		TrackLLMCall *bool           `json:"track_llm_call,omitempty" doc:"record the generation as a call (default true)"`
		PfUserID     string          `json:"pf_user_id,omitempty" doc:"ignored: the user is the caller"`
		WbUserID     string          `json:"wb_user_id,omitempty" doc:"ignored: the user is the caller"`
	}
}

var errUnsupportedMediaType = weft.DefineError(weft.ErrInvalid, "Bad Request", "Unsupported Media Type: Only 'application/json' is allowed")

func (h *Handler) registerChat() {
	for _, path := range []string{"/v1/chat/completions", "/v1/chat/completions/"} {
		id := "chat-completions-create"
		if path[len(path)-1] == '/' {
			id += "-slash"
		}
		op := h.operation(styleOpenAI, huma.Operation{
			OperationID: id, Method: http.MethodPost, Path: path, Tags: []string{"chat"},
			Summary: "Create a chat completion (OpenAI/vLLM compatible), traced into the caller's project",
			Description: "Validated as vLLM " + chat.VLLMVersion + " validates it; unknown fields are forwarded. " +
				"With stream=true the answer is a text/event-stream of chat.completion.chunk events ending in data: [DONE].",
		})
		op.Responses["200"] = &huma.Response{Description: "The completion, or its stream", Content: map[string]*huma.MediaType{
			"application/json":  {Schema: &huma.Schema{Type: "object"}},
			"text/event-stream": {Schema: &huma.Schema{Type: "string"}},
		}}
		huma.Register(h.api, *op, h.relayed("chat", h.cfg.Chat.Complete))
		if body := h.api.OpenAPI().Paths[path].Post.RequestBody; body != nil {
			schema := h.api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(chat.CompletionRequest{}), true, "")
			body.Content = map[string]*huma.MediaType{"application/json": {Schema: schema}}
		}
	}
	huma.Register(h.api, *h.operation(styleOpenAI, huma.Operation{
		OperationID: "chat-models-list", Method: http.MethodGet, Path: "/v1/models", Tags: []string{"chat"},
		Summary: "List the models the gateway routes and the trained models of the caller's entities",
	}), func(ctx context.Context, _ *struct{}) (*modelsOutput, error) {
		trained, err := h.cfg.Chat.TrainedModels(ctx)
		if err != nil {
			return nil, err
		}
		out := &modelsOutput{}
		out.Body.Object = "list"
		out.Body.Data = append(h.cfg.Chat.Models(), trained...)
		return out, nil
	})
	h.registerTokenize()
	h.registerCompletions()
	route(h, huma.Operation{
		OperationID: "image-create", Method: http.MethodPost, Path: "/image/create", Tags: []string{"images"},
		Summary: "Generate images, store them as files and trace the call",
	}, true, func(_ context.Context, in *imageCreateInput) (chat.ImageRequest, []string, error) {
		return chat.ImageRequest{ProjectID: in.Body.ProjectID, Inputs: in.Body.Inputs, TrackLLMCall: in.Body.TrackLLMCall},
			one(in.Body.ProjectID), nil
	}, func(ctx context.Context, req chat.ImageRequest) (chat.ImageResult, error) {
		return h.cfg.Chat.CreateImage(ctx, req)
	})
}

// relayed is the handler of an OpenAI route the chat gateway answers
// (answer: Complete, Embed, …): the caller's project (the OpenAI-Project
// header) authorized for writing, since the call is traced into it, and
// the answer relayed as it comes. what names the route in logs.
func (h *Handler) relayed(what string, answer func(ctx context.Context, projectID string, raw []byte) (*chat.Completion, error)) func(context.Context, *chatCompletionInput) (*huma.StreamResponse, error) {
	return func(ctx context.Context, in *chatCompletionInput) (*huma.StreamResponse, error) {
		if err := requireJSON(in.ContentType); err != nil {
			return nil, err
		}
		p, _ := weft.PrincipalFrom(ctx)
		project := h.cfg.Chat.ProjectFor(p, in.Project)
		if err := h.authorize(ctx, project, true); err != nil {
			return nil, err
		}
		completion, err := answer(chat.WithRequestID(ctx, in.RequestID), project, in.RawBody)
		if err != nil {
			return nil, err
		}
		if err := h.written(ctx, project); err != nil {
			// The answer is under way and its call will be traced: the
			// project is recorded by its next write.
			loggerFrom(ctx).WarnContext(ctx, what+": recording the project", "project", project, "error", err)
		}
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			_, w := humachi.Unwrap(hctx)
			if err := completion.Relay(w); err != nil {
				loggerFrom(ctx).DebugContext(ctx, what+": relay ended early", "error", err)
			}
		}}, nil
	}
}

// rawJSONInput is a body read raw, with its content type (vLLM accepts only
// application/json).
type rawJSONInput struct {
	ContentType string `header:"Content-Type"`
	RawBody     []byte
}

type tokenizeOutput struct{ Body *chat.TokenizeResult }

type detokenizeOutput struct{ Body *chat.DetokenizeResult }

// registerTokenize serves vLLM's POST /tokenize and POST /detokenize for
// local models, authenticated like the other chat routes.
func (h *Handler) registerTokenize() {
	huma.Register(h.api, *h.operation(styleOpenAI, huma.Operation{
		OperationID: "tokenize", Method: http.MethodPost, Path: "/tokenize", Tags: []string{"chat"},
		Summary:     "Tokenize a prompt or chat messages with a local model's tokenizer (vLLM's /tokenize)",
		Description: "Body {model, prompt, add_special_tokens=true, return_token_strs=false} or {model, messages, add_generation_prompt=true, continue_final_message=false, add_special_tokens=false, chat_template, chat_template_kwargs, tools, return_token_strs}; answers {count, max_model_len, tokens, token_strs}.",
	}), func(ctx context.Context, in *rawJSONInput) (*tokenizeOutput, error) {
		if err := requireJSON(in.ContentType); err != nil {
			return nil, err
		}
		res, err := h.cfg.Chat.Tokenize(ctx, in.RawBody)
		if err != nil {
			return nil, err
		}
		return &tokenizeOutput{Body: res}, nil
	})
	huma.Register(h.api, *h.operation(styleOpenAI, huma.Operation{
		OperationID: "detokenize", Method: http.MethodPost, Path: "/detokenize", Tags: []string{"chat"},
		Summary:     "Turn token ids back into text with a local model's tokenizer (vLLM's /detokenize)",
		Description: "Body {model, tokens}; answers {prompt}.",
	}), func(ctx context.Context, in *rawJSONInput) (*detokenizeOutput, error) {
		if err := requireJSON(in.ContentType); err != nil {
			return nil, err
		}
		res, err := h.cfg.Chat.Detokenize(ctx, in.RawBody)
		if err != nil {
			return nil, err
		}
		return &detokenizeOutput{Body: res}, nil
	})
}

// requireJSON refuses a body that is not application/json, as vLLM does.
func requireJSON(contentType string) error {
	if mediaType, _, err := mime.ParseMediaType(contentType); err != nil || mediaType != "application/json" {
		return errUnsupportedMediaType
	}
	return nil
}
