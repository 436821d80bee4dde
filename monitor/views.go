package monitor

import (
	"context"
	"encoding/json"
	"time"
)

// Listed is a monitor of a project as its pages show it: its newest live
// version, and since when it is active.
type Listed struct {
	Monitor
	// ActiveSince is when the monitor last turned active; nil when it is
	// not.
	ActiveSince *time.Time `json:"active_since"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// Verdict is one scorer version's verdict on one call.
type Verdict struct {
	CallID       string          `json:"call_id"`
	ScorerID     string          `json:"scorer_id"`
	ScorerDigest string          `json:"scorer_digest"`
	BackfillID   *string         `json:"backfill_id"`
	State        string          `json:"state"`
	Output       json.RawMessage `json:"output"`
	Error        *string         `json:"error"`
	JudgeCallID  *string         `json:"judge_call_id"`
	Cost         *float64        `json:"cost"`
	CreatedAt    time.Time       `json:"created_at"`
	ScoredAt     *time.Time      `json:"scored_at"`
}

// maxListed bounds List and Verdicts.
const maxListed = 500

// List implements Service.
func (m *Monitors) List(ctx context.Context, projectID string) ([]Listed, error) {
	var rows []monitorRow
	if err := m.db.NewSelect().Model(&rows).Where("project_id = ?", projectID).OrderExpr("object_id").Limit(maxListed).Scan(ctx); err != nil {
		return nil, err
	}
	out := make([]Listed, 0, len(rows))
	for _, r := range rows {
		mon, err := r.monitor()
		if err != nil {
			return nil, err
		}
		out = append(out, Listed{Monitor: *mon, ActiveSince: r.ActiveSince, UpdatedAt: r.UpdatedAt})
	}
	return out, nil
}

// Verdicts implements Service.
func (m *Monitors) Verdicts(ctx context.Context, projectID, monitorID string, limit int) ([]Verdict, error) {
	if limit <= 0 || limit > maxListed {
		limit = maxListed
	}
	var rows []verdictRow
	err := m.db.NewSelect().Model(&rows).Where("project_id = ? AND monitor_id = ?", projectID, monitorID).
		OrderExpr("created_at DESC, call_id").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Verdict, len(rows))
	for i, r := range rows {
		out[i] = Verdict{CallID: r.CallID, ScorerID: r.ScorerID, ScorerDigest: r.ScorerDigest, BackfillID: r.BackfillID, State: r.State,
			Error: r.Error, JudgeCallID: r.JudgeCallID, Cost: r.Cost, CreatedAt: r.CreatedAt, ScoredAt: r.ScoredAt}
		if r.Output != nil {
			out[i].Output = json.RawMessage(*r.Output)
		}
	}
	return out, nil
}
