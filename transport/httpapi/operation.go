package httpapi

import (
	"context"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft"
)

// authRequired lets a request in with either scheme.
var authRequired = []map[string][]string{{"basicAuth": {}}, {"bearerAuth": {}}}

// operation fills what every weft operation shares: authentication, the body
// limit and read timeout, and the error style of its route family. Tags name
// the family in the OpenAPI document.
func (h *Handler) operation(style errorStyle, op huma.Operation) *huma.Operation {
	if op.Security == nil {
		op.Security = authRequired
	}
	if op.MaxBodyBytes == 0 {
		op.MaxBodyBytes = h.cfg.MaxBodyBytes
	}
	if op.BodyReadTimeout == 0 {
		op.BodyReadTimeout = h.cfg.BodyReadTimeout
	}
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[metadataStyle] = style
	op.Metadata[metadataSchemas] = h.api.OpenAPI().Components.Schemas
	if op.DefaultStatus == 0 {
		op.DefaultStatus = http.StatusOK
	}
	if op.Responses == nil {
		op.Responses = h.errorResponses(style)
	}
	return &op
}

// Documented error bodies, one per style.
type (
	// HTTPValidationError is FastAPI's body for a malformed request (422).
	HTTPValidationError struct {
		Detail []validationItem `json:"detail"`
	}
	// DomainError is the body of every other error on the Weave-style routes.
	DomainError struct {
		Reason    string `json:"reason"`
		ErrorType string `json:"error_type"`
		Detail    string `json:"detail"`
	}
	// OpenAIErrorBody is vLLM's error envelope, used on chat routes.
	OpenAIErrorBody struct {
		Error openAIError `json:"error"`
	}
)

// errorResponses documents the error bodies of style in the OpenAPI document.
func (h *Handler) errorResponses(style errorStyle) map[string]*huma.Response {
	schemas := h.api.OpenAPI().Components.Schemas
	response := func(description string, body any) *huma.Response {
		return &huma.Response{Description: description, Content: map[string]*huma.MediaType{
			"application/json": {Schema: schemas.Schema(reflect.TypeOf(body), true, "")},
		}}
	}
	if style == styleOpenAI {
		return map[string]*huma.Response{"default": response("Error", OpenAIErrorBody{})}
	}
	return map[string]*huma.Response{
		"422":     response("Malformed request", HTTPValidationError{}),
		"default": response("Error", DomainError{}),
	}
}

// public marks an operation that needs no credentials.
var public = []map[string][]string{}

// authorize checks that the caller in ctx may touch projectID.
func (h *Handler) authorize(ctx context.Context, projectID string, write bool) error {
	p, ok := weft.PrincipalFrom(ctx)
	if !ok {
		return weft.ErrBadCredentials
	}
	return h.cfg.Authorizer.Authorize(ctx, p, projectID, write)
}

// written records that the caller in ctx wrote to the projects, after the
// write succeeded: a rejected write creates no project.
func (h *Handler) written(ctx context.Context, projectIDs ...string) error {
	p, _ := weft.PrincipalFrom(ctx)
	for _, projectID := range projectIDs {
		if err := h.cfg.Authorizer.ProjectWritten(ctx, p, projectID); err != nil {
			return err
		}
	}
	return nil
}

// projectOf joins the {entity} and {project} path parameters of the v2 routes.
func projectOf(entity, project string) string { return entity + "/" + project }
