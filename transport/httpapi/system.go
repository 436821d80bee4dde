package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// healthOutput is the body of GET /health.
type healthOutput struct {
	Body struct {
		Status string `json:"status" example:"ok"`
	}
}

// serverInfoOutput is the body of GET /server_info, which the Weave Python
// client reads to check compatibility.
type serverInfoOutput struct {
	Body struct {
		MinRequiredWeavePythonVersion string `json:"min_required_weave_python_version"`
		TraceServerVersion            string `json:"trace_server_version"`
	}
}

// versionOutput is the body of GET /version.
type versionOutput struct {
	Body string
}

func (h *Handler) registerSystem() {
	huma.Register(h.api, *h.operation(styleWeave, huma.Operation{
		OperationID: "health", Method: http.MethodGet, Path: "/health", Security: public,
		Summary: "Liveness and database health", Tags: []string{"system"},
	}), func(ctx context.Context, _ *struct{}) (*healthOutput, error) {
		if err := h.cfg.Health(ctx); err != nil {
			return nil, &httpError{status: http.StatusServiceUnavailable, body: map[string]any{"status": "unavailable", "detail": err.Error()}}
		}
		out := &healthOutput{}
		out.Body.Status = "ok"
		return out, nil
	})
	huma.Register(h.api, *h.operation(styleWeave, huma.Operation{
		OperationID: "server-info", Method: http.MethodGet, Path: "/server_info", Security: public,
		Summary: "Server version and the oldest compatible Weave client", Tags: []string{"system"},
	}), func(context.Context, *struct{}) (*serverInfoOutput, error) {
		out := &serverInfoOutput{}
		out.Body.MinRequiredWeavePythonVersion = "0.0.0"
		out.Body.TraceServerVersion = Version
		return out, nil
	})
	huma.Register(h.api, *h.operation(styleWeave, huma.Operation{
		OperationID: "version", Method: http.MethodGet, Path: "/version", Security: public,
		Summary: "Server version", Tags: []string{"system"},
	}), func(context.Context, *struct{}) (*versionOutput, error) {
		return &versionOutput{Body: Version}, nil
	})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
