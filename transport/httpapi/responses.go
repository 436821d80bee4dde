package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat/responses"
)

// responseIDInput names a stored response of the caller's project.
type responseIDInput struct {
	Project string `header:"OpenAI-Project"`
	ID      string `path:"id" maxLength:"128"`
}

type responseItemsInput struct {
	Project string `header:"OpenAI-Project"`
	ID      string `path:"id" maxLength:"128"`
	After   string `query:"after" maxLength:"128"`
	Limit   int    `query:"limit"`
	Order   string `query:"order"`
}

type rawJSONOutput struct {
	Body json.RawMessage
}

// registerResponses serves OpenAI's Responses API over the chat routes'
// models, storing responses in the caller's project (the OpenAI-Project
// header, as for chat completions).
func (h *Handler) registerResponses() {
	if h.cfg.Responses == nil {
		return
	}
	op := h.operation(styleOpenAI, huma.Operation{
		OperationID: "responses-create", Method: http.MethodPost, Path: "/v1/responses", Tags: []string{"chat"},
		Summary: "Create a model response (OpenAI's Responses API), generated through the chat routes and stored in the caller's project",
		Description: "Text or message input, instructions, previous_response_id, function tools and their outputs, " +
			"text.format, reasoning; with stream=true a text/event-stream of the Responses events.",
	})
	op.Responses["200"] = &huma.Response{Description: "The response, or its event stream", Content: map[string]*huma.MediaType{
		"application/json":  {Schema: &huma.Schema{Type: "object"}},
		"text/event-stream": {Schema: &huma.Schema{Type: "string"}},
	}}
	huma.Register(h.api, *op, h.createResponse)
	huma.Register(h.api, *h.operation(styleOpenAI, huma.Operation{
		OperationID: "responses-get", Method: http.MethodGet, Path: "/v1/responses/{id}", Tags: []string{"chat"},
		Summary: "Get a stored response of the caller's project",
	}), func(ctx context.Context, in *responseIDInput) (*rawJSONOutput, error) {
		project, err := h.responseProject(ctx, in.Project, false)
		if err != nil {
			return nil, err
		}
		resp, err := h.cfg.Responses.Get(ctx, project, in.ID)
		if err != nil {
			return nil, err
		}
		return &rawJSONOutput{Body: resp}, nil
	})
	huma.Register(h.api, *h.operation(styleOpenAI, huma.Operation{
		OperationID: "responses-delete", Method: http.MethodDelete, Path: "/v1/responses/{id}", Tags: []string{"chat"},
		Summary: "Delete a stored response of the caller's project",
	}), func(ctx context.Context, in *responseIDInput) (*body[*responses.Deleted], error) {
		project, err := h.responseProject(ctx, in.Project, true)
		if err != nil {
			return nil, err
		}
		res, err := h.cfg.Responses.Delete(ctx, project, in.ID)
		if err != nil {
			return nil, err
		}
		return &body[*responses.Deleted]{Body: res}, nil
	})
	huma.Register(h.api, *h.operation(styleOpenAI, huma.Operation{
		OperationID: "responses-input-items", Method: http.MethodGet, Path: "/v1/responses/{id}/input_items", Tags: []string{"chat"},
		Summary: "List the input items of a stored response of the caller's project",
	}), func(ctx context.Context, in *responseItemsInput) (*body[*responses.ItemList], error) {
		project, err := h.responseProject(ctx, in.Project, false)
		if err != nil {
			return nil, err
		}
		res, err := h.cfg.Responses.InputItems(ctx, project, in.ID, in.After, in.Limit, in.Order)
		if err != nil {
			return nil, err
		}
		return &body[*responses.ItemList]{Body: res}, nil
	})
}

// responseProject is the caller's project for a Responses route, authorized
// for reading or writing.
func (h *Handler) responseProject(ctx context.Context, header string, write bool) (string, error) {
	p, _ := weft.PrincipalFrom(ctx)
	project := h.cfg.Chat.ProjectFor(p, header)
	return project, h.authorize(ctx, project, write)
}

func (h *Handler) createResponse(ctx context.Context, in *chatCompletionInput) (*huma.StreamResponse, error) {
	if err := requireJSON(in.ContentType); err != nil {
		return nil, err
	}
	project, err := h.responseProject(ctx, in.Project, true)
	if err != nil {
		return nil, err
	}
	answer, err := h.cfg.Responses.Create(ctx, project, in.RawBody)
	if err != nil {
		return nil, err
	}
	if err := h.written(ctx, project); err != nil {
		loggerFrom(ctx).WarnContext(ctx, "responses: recording the project", "project", project, "error", err)
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		_, w := humachi.Unwrap(hctx)
		if err := answer.Relay(ctx, w); err != nil {
			loggerFrom(ctx).WarnContext(ctx, "responses: relay ended early", "error", err)
		}
	}}, nil
}
