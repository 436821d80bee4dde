package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/evalrun"
)

// The inputs of the v2 evaluation-run, prediction and score routes, which
// name their project in the path.
type (
	// v2RecordInput names one run, prediction or score.
	v2RecordInput struct {
		Entity  string `path:"entity"`
		Project string `path:"project"`
		ID      string `path:"id"`
	}
	// v2RecordsListInput pages a listing; the Python SDK sends the run
	// filters comma-joined.
	v2RecordsListInput struct {
		Entity           string `path:"entity"`
		Project          string `path:"project"`
		Limit            int    `query:"limit" minimum:"0" doc:"at most this many (0: no limit)"`
		Offset           int    `query:"offset" minimum:"0"`
		EvaluationRunID  string `query:"evaluation_run_id" doc:"predictions and scores: only those of this run"`
		EvaluationRefs   string `query:"evaluation_refs" doc:"runs: comma-separated evaluation refs"`
		ModelRefs        string `query:"model_refs" doc:"runs: comma-separated model refs"`
		EvaluationRunIDs string `query:"evaluation_run_ids" doc:"runs: comma-separated run ids"`
	}
	// v2RecordsDeleteInput names the records to delete, a repeated query
	// parameter as the Python SDK sends it.
	v2RecordsDeleteInput struct {
		Entity           string   `path:"entity"`
		Project          string   `path:"project"`
		EvaluationRunIDs []string `query:"evaluation_run_ids"`
		PredictionIDs    []string `query:"prediction_ids"`
		ScoreIDs         []string `query:"score_ids"`
	}
	v2RunFinishInput struct {
		Entity  string `path:"entity"`
		Project string `path:"project"`
		ID      string `path:"id"`
		Body    evalrun.RunFinishReq
	}
)

// commaList splits a comma-joined list ("" is none).
func commaList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// registerEvalRuns registers Weave's /v2/{entity}/{project}/evaluation_runs,
// /predictions and /scores routes.
func (h *Handler) registerEvalRuns(svc evalrun.Service) {
	op := func(tag, id, method, path, summary string) huma.Operation {
		return huma.Operation{OperationID: id, Method: method, Path: "/v2/{entity}/{project}/" + path, Summary: summary, Tags: []string{"v2 " + tag}}
	}
	read := func(in *v2RecordInput) (*v2RecordInput, []string, error) {
		return in, one(projectOf(in.Entity, in.Project)), nil
	}
	list := func(_ context.Context, in *v2RecordsListInput) (*v2RecordsListInput, []string, error) {
		return in, one(projectOf(in.Entity, in.Project)), nil
	}
	del := func(_ context.Context, in *v2RecordsDeleteInput) (*v2RecordsDeleteInput, []string, error) {
		return in, one(projectOf(in.Entity, in.Project)), nil
	}
	stream := func(run func(ctx context.Context, yield func(any) error) error) *huma.StreamResponse {
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			out := newNDJSONStream(hctx)
			out.finish(hctx.Context(), run(hctx.Context(), out.write))
		}}
	}
	streamOp := func(o huma.Operation) huma.Operation {
		o.Responses = h.errorResponses(styleWeave)
		o.Responses["200"] = &huma.Response{Description: "One JSON object per line", Content: map[string]*huma.MediaType{"application/jsonl": {}}}
		return o
	}

	// Evaluation runs.
	route(h, op("evaluation runs", "evaluation-run-create", http.MethodPost, "evaluation_runs", "Start an evaluation run"), true,
		v2Body(func(r *evalrun.RunCreateReq) *string { return &r.ProjectID }), svc.RunCreate)
	route(h, op("evaluation runs", "evaluation-run-read", http.MethodGet, "evaluation_runs/{id}", "Read an evaluation run"), false,
		func(_ context.Context, in *v2RecordInput) (*v2RecordInput, []string, error) { return read(in) },
		func(ctx context.Context, in *v2RecordInput) (*evalrun.Run, error) {
			return svc.RunRead(ctx, projectOf(in.Entity, in.Project), in.ID)
		})
	routeOutput(h, streamOp(op("evaluation runs", "evaluation-run-list", http.MethodGet, "evaluation_runs", "List evaluation runs (JSON lines)")), false, list,
		func(_ context.Context, in *v2RecordsListInput) (*huma.StreamResponse, error) {
			req := &evalrun.RunListReq{ProjectID: projectOf(in.Entity, in.Project), Evaluations: commaList(in.EvaluationRefs), Models: commaList(in.ModelRefs),
				EvaluationRunIDs: commaList(in.EvaluationRunIDs), Limit: in.Limit, Offset: in.Offset}
			return stream(func(ctx context.Context, yield func(any) error) error {
				return svc.RunList(ctx, req, func(r *evalrun.Run) error { return yield(r) })
			}), nil
		})
	route(h, op("evaluation runs", "evaluation-run-delete", http.MethodDelete, "evaluation_runs", "Delete evaluation runs and everything under them"), true, del,
		func(ctx context.Context, in *v2RecordsDeleteInput) (*evalrun.DeleteRes, error) {
			return svc.RunDelete(ctx, projectOf(in.Entity, in.Project), in.EvaluationRunIDs)
		})
	route(h, op("evaluation runs", "evaluation-run-finish", http.MethodPost, "evaluation_runs/{id}/finish", "Finish an evaluation run"), true,
		func(_ context.Context, in *v2RunFinishInput) (*evalrun.RunFinishReq, []string, error) {
			in.Body.ProjectID, in.Body.EvaluationRunID = projectOf(in.Entity, in.Project), in.ID
			return &in.Body, one(in.Body.ProjectID), nil
		}, svc.RunFinish)

	// Predictions.
	route(h, op("predictions", "prediction-create", http.MethodPost, "predictions", "Store a prediction"), true,
		v2Body(func(r *evalrun.PredictionCreateReq) *string { return &r.ProjectID }), svc.PredictionCreate)
	route(h, op("predictions", "prediction-read", http.MethodGet, "predictions/{id}", "Read a prediction"), false,
		func(_ context.Context, in *v2RecordInput) (*v2RecordInput, []string, error) { return read(in) },
		func(ctx context.Context, in *v2RecordInput) (*evalrun.Prediction, error) {
			return svc.PredictionRead(ctx, projectOf(in.Entity, in.Project), in.ID)
		})
	routeOutput(h, streamOp(op("predictions", "prediction-list", http.MethodGet, "predictions", "List predictions (JSON lines)")), false, list,
		func(_ context.Context, in *v2RecordsListInput) (*huma.StreamResponse, error) {
			req := &evalrun.ListReq{ProjectID: projectOf(in.Entity, in.Project), EvaluationRunID: in.EvaluationRunID, Limit: in.Limit, Offset: in.Offset}
			return stream(func(ctx context.Context, yield func(any) error) error {
				return svc.PredictionList(ctx, req, func(p *evalrun.Prediction) error { return yield(p) })
			}), nil
		})
	route(h, op("predictions", "prediction-delete", http.MethodDelete, "predictions", "Delete predictions"), true, del,
		func(ctx context.Context, in *v2RecordsDeleteInput) (*evalrun.DeleteRes, error) {
			return svc.PredictionDelete(ctx, projectOf(in.Entity, in.Project), in.PredictionIDs)
		})
	route(h, op("predictions", "prediction-finish", http.MethodPost, "predictions/{id}/finish", "Finish the predict_and_score call around a prediction"), true,
		func(_ context.Context, in *v2RecordInput) (*v2RecordInput, []string, error) { return read(in) },
		func(ctx context.Context, in *v2RecordInput) (*evalrun.FinishRes, error) {
			return svc.PredictionFinish(ctx, projectOf(in.Entity, in.Project), in.ID)
		})

	// Scores.
	route(h, op("scores", "score-create", http.MethodPost, "scores", "Store a score of a prediction"), true,
		v2Body(func(r *evalrun.ScoreCreateReq) *string { return &r.ProjectID }), svc.ScoreCreate)
	route(h, op("scores", "score-read", http.MethodGet, "scores/{id}", "Read a score"), false,
		func(_ context.Context, in *v2RecordInput) (*v2RecordInput, []string, error) { return read(in) },
		func(ctx context.Context, in *v2RecordInput) (*evalrun.Score, error) {
			return svc.ScoreRead(ctx, projectOf(in.Entity, in.Project), in.ID)
		})
	routeOutput(h, streamOp(op("scores", "score-list", http.MethodGet, "scores", "List scores (JSON lines)")), false, list,
		func(_ context.Context, in *v2RecordsListInput) (*huma.StreamResponse, error) {
			req := &evalrun.ListReq{ProjectID: projectOf(in.Entity, in.Project), EvaluationRunID: in.EvaluationRunID, Limit: in.Limit, Offset: in.Offset}
			return stream(func(ctx context.Context, yield func(any) error) error {
				return svc.ScoreList(ctx, req, func(s *evalrun.Score) error { return yield(s) })
			}), nil
		})
	route(h, op("scores", "score-delete", http.MethodDelete, "scores", "Delete scores"), true, del,
		func(ctx context.Context, in *v2RecordsDeleteInput) (*evalrun.DeleteRes, error) {
			return svc.ScoreDelete(ctx, projectOf(in.Entity, in.Project), in.ScoreIDs)
		})

	// Results of evaluations, grouped by dataset row.
	route(h, op("eval results", "eval-results-query", http.MethodPost, "eval_results/query", "Evaluation results grouped by dataset row, with a summary per evaluation"), false,
		v2Body(func(r *evalrun.ResultsQueryReq) *string { return &r.ProjectID }), svc.ResultsQuery)
}

// evaluateModelBody and evaluationStatusBody are Weave's bodies of POST
// /evaluations/evaluate_model and /evaluations/status.
type (
	evaluateModelBody struct {
		ProjectID     string `json:"project_id"`
		EvaluationRef string `json:"evaluation_ref"`
		ModelRef      string `json:"model_ref"`
		WbUserID      string `json:"wb_user_id,omitempty" doc:"ignored"`
	}
	evaluationStatusBody struct {
		ProjectID string `json:"project_id"`
		CallID    string `json:"call_id"`
	}
	rescoreBody struct {
		ProjectID             string   `json:"project_id"`
		SourceEvaluationRunID string   `json:"source_evaluation_run_id"`
		ScorerRefs            []string `json:"scorer_refs" minItems:"1"`
		WbUserID              string   `json:"wb_user_id,omitempty" doc:"ignored"`
	}
	callsScoreBody struct {
		ProjectID  string   `json:"project_id"`
		CallIDs    []string `json:"call_ids"`
		ScorerRefs []string `json:"scorer_refs"`
		WbUserID   string   `json:"wb_user_id,omitempty" doc:"ignored"`
	}
)

// errServerEvaluations refuses Weave's server-side evaluation runs and
// scoring: they run an Evaluation object's dataset, model and scorers (or a
// scorer over stored calls) in a worker of the server, code this server does
// not execute.
var errServerEvaluations = weft.DefineError(weft.ErrInvalid, "InvalidRequest",
	"server-side evaluations are not supported by this server: run Evaluation.evaluate and scorers in the client (their calls, or the /v2 evaluation_runs, predictions and scores routes, are stored and shown)")

// registerServerEvaluations registers Weave's /evaluations/evaluate_model,
// /evaluations/status, /evaluations/rescore and /calls/score, each a 400
// after the project is authorized.
func (h *Handler) registerServerEvaluations() {
	refuse := func(context.Context, struct{}) (*struct{}, error) { return nil, errServerEvaluations }
	route(h, huma.Operation{OperationID: "evaluations-evaluate-model", Method: http.MethodPost, Path: "/evaluations/evaluate_model", Tags: []string{"evaluations"},
		Summary: "Not supported: always 400 (run evaluations in the client)"}, true,
		func(_ context.Context, in *body[evaluateModelBody]) (struct{}, []string, error) {
			return struct{}{}, one(in.Body.ProjectID), nil
		}, refuse)
	route(h, huma.Operation{OperationID: "evaluations-status", Method: http.MethodPost, Path: "/evaluations/status", Tags: []string{"evaluations"},
		Summary: "Not supported: always 400 (there are no server-side evaluations)"}, false,
		func(_ context.Context, in *body[evaluationStatusBody]) (struct{}, []string, error) {
			return struct{}{}, one(in.Body.ProjectID), nil
		}, refuse)
	route(h, huma.Operation{OperationID: "evaluations-rescore", Method: http.MethodPost, Path: "/evaluations/rescore", Tags: []string{"evaluations"},
		Summary: "Not supported: always 400 (scorers run in the client)"}, true,
		func(_ context.Context, in *body[rescoreBody]) (struct{}, []string, error) {
			return struct{}{}, one(in.Body.ProjectID), nil
		}, refuse)
	route(h, huma.Operation{OperationID: "calls-score", Method: http.MethodPost, Path: "/calls/score", Tags: []string{"evaluations"},
		Summary: "Not supported: always 400 (scorers run in the client)"}, true,
		func(_ context.Context, in *body[callsScoreBody]) (struct{}, []string, error) {
			return struct{}{}, one(in.Body.ProjectID), nil
		}, refuse)
}
