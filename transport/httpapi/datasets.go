package httpapi

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft/datasets"
)

// registerDatasetsFromCalls registers the route that makes a dataset of a
// trace-list selection.
func (h *Handler) registerDatasetsFromCalls(svc datasets.Service) {
	route(h, huma.Operation{OperationID: "datasets-from-calls", Method: http.MethodPost, Path: "/v2/{entity}/{project}/datasets/from_calls",
		Summary: "Publish a dataset version whose rows are the calls a selection names (a calls filter and query, which may test feedback such as monitor verdicts)",
		Tags:    []string{"v2 datasets"}}, true,
		v2Body(func(r *datasets.FromCallsReq) *string { return &r.ProjectID }), byValue(svc.FromCalls))
}
