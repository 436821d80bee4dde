// Package evalrun serves Weave's v2 evaluation-run, prediction and score API
// over the trace, objects and feedback services, storing each thing as Weave's
// own server stores it, so that every page and query that reads evaluations
// made by the SDKs reads these too:
//
//   - an evaluation run is a call of the op Evaluation.evaluate whose inputs
//     are {self: <evaluation ref>, model: <model ref>} and whose
//     attributes.weave holds evaluation_run "true", evaluation and model;
//     finishing it adds an Evaluation.summarize child and ends both with the
//     mean of every scorer's scores;
//   - a prediction is a call of the op <model name>.predict (attributes.weave
//     prediction "true", model, evaluation_run_id), inside an
//     Evaluation.predict_and_score call under its run when it has one;
//   - a score is a call of the op <scorer name>.score beside its prediction
//     (attributes.weave score "true", prediction_id, scorer,
//     evaluation_run_id), and a wandb.runnable.<scorer name> feedback row on
//     the prediction's call with payload {"output": value}.
//
// The ops are published (obj.py placeholder sources) under those exact names,
// so that their refs resolve.
package evalrun

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weftlabs/weft"
)

// Errors.
var (
	// ErrInvalid: a ref or id of the request cannot be used.
	ErrInvalid = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid evaluation request")
	// ErrNotFound: no live evaluation run, prediction or score has the id.
	ErrNotFound = weft.DefineError(weft.ErrNotFound, "NotFoundError", "not found")
)

// Service is the v2 evaluation API. Every method is scoped to the project of
// its request, which the caller has authorized; the acting user comes from
// the context. A nil error means every call and feedback row is committed.
// Creating several records is not one transaction (as in Weave): a failure
// part way leaves what was written before it.
type Service interface {
	// RunCreate starts an evaluation run of a model on an evaluation (object
	// refs of the request's project).
	RunCreate(ctx context.Context, req *RunCreateReq) (*RunCreateRes, error)
	// RunRead reads one run; ErrNotFound unless the id is a live run.
	RunRead(ctx context.Context, projectID, runID string) (*Run, error)
	// RunList streams the runs (oldest first) that match every filter given.
	RunList(ctx context.Context, req *RunListReq, yield func(*Run) error) error
	// RunDelete deletes runs with everything under them (calls delete with
	// their descendants).
	RunDelete(ctx context.Context, projectID string, runIDs []string) (*DeleteRes, error)
	// RunFinish ends a run: an Evaluation.summarize child whose output, like
	// the run's, is {<scorer>: {"mean": m}, "output": {"mean": m}} over the
	// run's finished predict_and_score calls (float scores and numeric
	// outputs only); the run's summary is req.Summary.
	RunFinish(ctx context.Context, req *RunFinishReq) (*FinishRes, error)

	// PredictionCreate stores a finished prediction of a model, inside a new
	// predict_and_score call of the run when EvaluationRunID is set.
	PredictionCreate(ctx context.Context, req *PredictionCreateReq) (*PredictionCreateRes, error)
	// PredictionRead reads one prediction.
	PredictionRead(ctx context.Context, projectID, predictionID string) (*Prediction, error)
	// PredictionList streams predictions, only those of one run when
	// evaluationRunID is set.
	PredictionList(ctx context.Context, req *ListReq, yield func(*Prediction) error) error
	// PredictionDelete deletes predictions.
	PredictionDelete(ctx context.Context, projectID string, ids []string) (*DeleteRes, error)
	// PredictionFinish ends the predict_and_score call around a prediction
	// with {output, scores: {<scorer>: value}, model_latency: {mean: s}}.
	// A prediction is stored finished, so its own call is left as it is.
	PredictionFinish(ctx context.Context, projectID, predictionID string) (*FinishRes, error)

	// ScoreCreate stores a scorer's value for a prediction and the
	// feedback row that shows it on the prediction.
	ScoreCreate(ctx context.Context, req *ScoreCreateReq) (*ScoreCreateRes, error)
	// ScoreRead reads one score.
	ScoreRead(ctx context.Context, projectID, scoreID string) (*Score, error)
	// ScoreList streams scores, only those of one run when evaluationRunID
	// is set.
	ScoreList(ctx context.Context, req *ListReq, yield func(*Score) error) error
	// ScoreDelete deletes scores (their calls; the feedback rows stay, as
	// in Weave).
	ScoreDelete(ctx context.Context, projectID string, ids []string) (*DeleteRes, error)

	// ResultsQuery groups the trials (predict_and_score calls) of
	// evaluation root calls by the dataset row they ran on, as Weave's
	// eval_results/query does: rows in row_digest order, each with every
	// evaluation's trials (model output, scores, the predict and scorer
	// calls under it, latency, tokens and, when asked, cost), and a summary
	// of each evaluation's score dimensions. Any evaluation run or
	// Evaluation.evaluate call is a root, however it was recorded. Naming
	// more than MaxResultsEvaluations is ErrInvalid; more than
	// MaxResultsTrials trials is ErrTooLarge.
	ResultsQuery(ctx context.Context, req *ResultsQueryReq) (*ResultsQueryRes, error)
}

// RunCreateReq is the body of POST /v2/{entity}/{project}/evaluation_runs.
type RunCreateReq struct {
	ProjectID  string `json:"-"`
	Evaluation string `json:"evaluation" doc:"ref of the Evaluation object"`
	Model      string `json:"model" doc:"ref of the model"`
}

// RunCreateRes names the new run.
type RunCreateRes struct {
	EvaluationRunID string `json:"evaluation_run_id"`
}

// Run is an evaluation run as Weave reports it.
type Run struct {
	EvaluationRunID string `json:"evaluation_run_id"`
	Evaluation      string `json:"evaluation"`
	Model           string `json:"model"`
	// Status is the call's: running, success, error or descendant_error.
	Status     *string         `json:"status"`
	StartedAt  *time.Time      `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at"`
	Summary    json.RawMessage `json:"summary" type:"object" nullable:"true"`
}

// RunListReq lists runs.
type RunListReq struct {
	ProjectID string
	// Evaluations, Models and EvaluationRunIDs keep runs whose evaluation,
	// model or id is one of theirs; an empty list is no filter.
	Evaluations      []string
	Models           []string
	EvaluationRunIDs []string
	Limit, Offset    int
}

// RunFinishReq is the body of POST …/evaluation_runs/{id}/finish.
type RunFinishReq struct {
	ProjectID       string          `json:"-"`
	EvaluationRunID string          `json:"-"`
	Summary         json.RawMessage `json:"summary,omitempty" type:"object" nullable:"true"`
}

// FinishRes reports a finish.
type FinishRes struct {
	Success bool `json:"success"`
}

// DeleteRes counts the calls deleted (as /calls/delete counts them).
type DeleteRes struct {
	NumDeleted int `json:"num_deleted"`
}

// ListReq lists predictions or scores.
type ListReq struct {
	ProjectID       string
	EvaluationRunID string
	Limit, Offset   int
}

// PredictionCreateReq is the body of POST /v2/{entity}/{project}/predictions.
type PredictionCreateReq struct {
	ProjectID       string          `json:"-"`
	Model           string          `json:"model" doc:"ref of the model"`
	Inputs          json.RawMessage `json:"inputs" type:"object"`
	Output          json.RawMessage `json:"output"`
	EvaluationRunID *string         `json:"evaluation_run_id,omitempty" nullable:"true"`
}

// PredictionCreateRes names the new prediction.
type PredictionCreateRes struct {
	PredictionID string `json:"prediction_id"`
}

// Prediction is a prediction as Weave reports it.
type Prediction struct {
	PredictionID    string          `json:"prediction_id"`
	Model           string          `json:"model"`
	Inputs          json.RawMessage `json:"inputs" type:"object"`
	Output          json.RawMessage `json:"output"`
	EvaluationRunID *string         `json:"evaluation_run_id"`
	WbUserID        *string         `json:"wb_user_id"`
}

// ScoreCreateReq is the body of POST /v2/{entity}/{project}/scores.
type ScoreCreateReq struct {
	ProjectID       string  `json:"-"`
	PredictionID    string  `json:"prediction_id"`
	Scorer          string  `json:"scorer" doc:"object ref of the scorer"`
	Value           float64 `json:"value"`
	EvaluationRunID *string `json:"evaluation_run_id,omitempty" nullable:"true"`
}

// ScoreCreateRes names the new score.
type ScoreCreateRes struct {
	ScoreID string `json:"score_id"`
}

// Score is a score as Weave reports it.
type Score struct {
	ScoreID         string          `json:"score_id"`
	Scorer          string          `json:"scorer"`
	Value           json.RawMessage `json:"value"`
	EvaluationRunID *string         `json:"evaluation_run_id"`
	WbUserID        *string         `json:"wb_user_id"`
}
