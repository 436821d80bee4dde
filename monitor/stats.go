package monitor

import (
	"context"
	"time"
)

// StatsReq asks for what a monitor's verdicts given in a time range (by
// when they were queued) came to.
type StatsReq struct {
	ProjectID string
	MonitorID string
	// From and Before bound the range; nil is no bound.
	From, Before *time.Time
}

// Stats is what a monitor's verdicts came to.
type Stats struct {
	MonitorID string        `json:"monitor_id"`
	Verdicts  VerdictCounts `json:"verdicts"`
	// PromptTokens and CompletionTokens are the judges' tokens over every
	// verdict; Cost is the sum of the verdicts' costs (each its judge's
	// tokens at the project's price of the judge model, in the price's
	// unit, USD for the built-in prices) over the PricedVerdicts that have
	// one.
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	Cost             float64 `json:"cost"`
	PricedVerdicts   int64   `json:"priced_verdicts"`
}

// Stats returns what the verdicts of a monitor came to.
func (m *Monitors) Stats(ctx context.Context, req StatsReq) (*Stats, error) {
	var rows []struct {
		State            string  `bun:"state"`
		N                int64   `bun:"n"`
		PromptTokens     int64   `bun:"prompt_tokens"`
		CompletionTokens int64   `bun:"completion_tokens"`
		Cost             float64 `bun:"cost"`
		Priced           int64   `bun:"priced"`
	}
	q := m.db.NewSelect().Model((*verdictRow)(nil)).Column("state").ColumnExpr("count(*) AS n").
		ColumnExpr("COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens").
		ColumnExpr("COALESCE(SUM(completion_tokens), 0) AS completion_tokens").
		ColumnExpr("COALESCE(SUM(cost), 0.0) AS cost").ColumnExpr("count(cost) AS priced").
		Where("project_id = ? AND monitor_id = ?", req.ProjectID, req.MonitorID)
	if req.From != nil {
		q = q.Where("created_at >= ?", req.From.UTC())
	}
	if req.Before != nil {
		q = q.Where("created_at < ?", req.Before.UTC())
	}
	if err := q.Group("state").Scan(ctx, &rows); err != nil {
		return nil, err
	}
	s := &Stats{MonitorID: req.MonitorID}
	for _, r := range rows {
		switch r.State {
		case StatePending:
			s.Verdicts.Pending = r.N
		case StateDone:
			s.Verdicts.Done = r.N
		case StateError:
			s.Verdicts.Error = r.N
		}
		s.PromptTokens += r.PromptTokens
		s.CompletionTokens += r.CompletionTokens
		s.Cost += r.Cost
		s.PricedVerdicts += r.Priced
	}
	return s, nil
}
