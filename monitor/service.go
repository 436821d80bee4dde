package monitor

import (
	"context"
	"encoding/json"
)

// Service is what the API offers of monitors beyond the Monitor objects
// themselves (which are published and read as objects). Every method acts
// in the caller's project, which the caller (weft.PrincipalFrom(ctx)) has
// been authorized for: writing for StartBackfill, CancelBackfill and Score
// (whose judges' calls are traced into the project), reading for the
// others. *Monitors is one.
type Service interface {
	// List returns the project's monitors, by object id (at most 500).
	List(ctx context.Context, projectID string) ([]Listed, error)
	// Verdicts returns a monitor's newest verdicts, newest first (at most
	// limit, and at most 500).
	Verdicts(ctx context.Context, projectID, monitorID string, limit int) ([]Verdict, error)
	// StartBackfill runs a monitor over the calls that started in a range,
	// once per (call, scorer version) whatever scored them before.
	StartBackfill(ctx context.Context, req BackfillReq) (*Backfill, error)
	// Backfill returns a backfill and its progress.
	Backfill(ctx context.Context, projectID, id string) (*Backfill, error)
	// Backfills returns the newest backfills of a project, or of one of
	// its monitors.
	Backfills(ctx context.Context, projectID, monitorID string) ([]Backfill, error)
	// CancelBackfill stops a running backfill; verdicts given stay (a
	// judge that had its answer when the cancel committed may still store
	// it).
	CancelBackfill(ctx context.Context, projectID, id string) (*Backfill, error)
	// Stats returns what a monitor's verdicts came to: counts by state,
	// the judges' tokens and their cost.
	Stats(ctx context.Context, req StatsReq) (*Stats, error)
	// Score gives a scorer's verdicts on answers that are no calls (an RL
	// job's rollouts), and the reward each verdict holds at a path: a
	// judge usable as the reward. Judges run with the caller's authority:
	// a judge model the caller may not use is refused.
	Score(ctx context.Context, req ScoreReq) (*ScoreRes, error)
	// CheckScorer checks a scorer object's value before the caller
	// publishes it as name: a monitor could run it, and the caller may use
	// its judge's model (else ErrJudgeModel).
	CheckScorer(ctx context.Context, projectID, name string, val json.RawMessage) error
	// PreviewScorer shows what a scorer value (checked as CheckScorer
	// checks it) would do with a call of the project, asking no model: a
	// judge's messages filled from the call, or a deterministic scorer's
	// verdict. A call the project lacks is ErrCallNotFound.
	PreviewScorer(ctx context.Context, projectID, name string, val json.RawMessage, callID string) (*Preview, error)
}

var _ Service = (*Monitors)(nil)
