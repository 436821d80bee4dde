package monitor

import (
	"context"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/internal/timeseries"
)

// StatsReq asks for what a monitor's verdicts given in a time range (by
// when they were queued) came to, and, with Granularity, what they came to
// per interval of the range.
type StatsReq struct {
	ProjectID string
	MonitorID string
	// From and Before bound the range; nil is no bound.
	From, Before *time.Time
	// Granularity, in seconds, asks for Stats.Intervals: the range (From
	// is then required; Before defaults to now) cut into intervals as the
	// stats routes of the calls cut theirs ([timeseries.Resolve]: from the
	// start of From's interval, at most [timeseries.MaxBuckets] of them),
	// over at most Config.StatsMaxRange.
	Granularity int64
}

// Totals are what some verdicts of a monitor came to.
type Totals struct {
	Verdicts VerdictCounts `json:"verdicts"`
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

// Stats is what a monitor's verdicts came to.
type Stats struct {
	MonitorID string `json:"monitor_id"`
	Totals
	// Intervals are the verdicts per interval, oldest first, every
	// interval of the range (empty ones too), when StatsReq.Granularity
	// asks for them.
	Intervals []Interval `json:"intervals,omitempty"`
}

// Interval is what the verdicts of a monitor queued in one interval came
// to.
type Interval struct {
	Start time.Time `json:"start"`
	// Seconds is the interval's length.
	Seconds int64 `json:"seconds"`
	Totals
}

// statsMetrics are the columns each group of verdicts sums: the m0, m1, …
// of the query, in this order.
var statsMetrics = []timeseries.Metric{
	{Name: "prompt_tokens", Aggregations: []timeseries.Aggregation{timeseries.Sum}},
	{Name: "completion_tokens", Aggregations: []timeseries.Aggregation{timeseries.Sum}},
	{Name: "cost", Aggregations: []timeseries.Aggregation{timeseries.Sum, timeseries.Count}},
}

// Stats returns what the verdicts of a monitor came to: one grouped query
// by interval and state, through the stats routes' own bucketing and
// aggregation ([timeseries.Aggregate]).
func (m *Monitors) Stats(ctx context.Context, req StatsReq) (*Stats, error) {
	dialect := database.DialectOf(m.db)
	q := m.db.NewSelect().Model((*verdictRow)(nil)).ColumnExpr("state AS k").
		ColumnExpr("prompt_tokens AS m0").ColumnExpr("completion_tokens AS m1").ColumnExpr("cost AS m2").
		Where("project_id = ? AND monitor_id = ?", req.ProjectID, req.MonitorID)
	var w *timeseries.Window
	if req.Granularity != 0 {
		if req.From == nil {
			return nil, weft.Errorf(ErrInvalidStats, "from: verdicts per interval need the range's start")
		}
		// The range is bounded by Config.StatsMaxRange; its intervals by
		// timeseries.MaxBuckets.
		win, err := timeseries.Resolve(*req.From, req.Before, &req.Granularity, "UTC", m.now(), m.cfg.StatsMaxRange)
		if err != nil {
			return nil, weft.Errorf(ErrInvalidStats, "%v", err)
		}
		w = &win
		index := w.Index(dialect, "created_at")
		q = q.ColumnExpr(index.SQL+" AS b", index.Args...).Where("created_at < ?", w.End)
	} else {
		q = q.ColumnExpr("0 AS b")
		if req.Before != nil {
			q = q.Where("created_at < ?", req.Before.UTC())
		}
	}
	if req.From != nil {
		q = q.Where("created_at >= ?", req.From.UTC())
	}
	groups, err := timeseries.Aggregate(ctx, m.db, dialect, q, statsMetrics)
	if err != nil {
		return nil, err
	}
	s := &Stats{MonitorID: req.MonitorID}
	buckets := 1
	if w != nil {
		buckets = w.Buckets()
		s.Intervals = make([]Interval, buckets)
	}
	for b := range buckets {
		var in Totals
		for _, state := range groups.Keys() {
			in.add(state, groups, b)
		}
		s.Totals.sum(in)
		if w != nil {
			s.Intervals[b] = Interval{Start: w.BucketTime(b).UTC(), Seconds: w.Granularity, Totals: in}
		}
	}
	return s, nil
}

// add adds the verdicts of one state in bucket b of groups.
func (t *Totals) add(state string, groups *timeseries.Groups, b int) {
	var n int64
	groups.Fill(int64(b), state, func(name string, v any) {
		x := number(v)
		switch name {
		case "count":
			n = int64(x)
		case timeseries.Alias(timeseries.Sum, "prompt_tokens"):
			t.PromptTokens += int64(x)
		case timeseries.Alias(timeseries.Sum, "completion_tokens"):
			t.CompletionTokens += int64(x)
		case timeseries.Alias(timeseries.Sum, "cost"):
			t.Cost += x
		case timeseries.Alias(timeseries.Count, "cost"):
			t.PricedVerdicts += int64(x)
		}
	})
	switch state {
	case StatePending:
		t.Verdicts.Pending += n
	case StateDone:
		t.Verdicts.Done += n
	case StateError:
		t.Verdicts.Error += n
	}
}

// sum adds o to t.
func (t *Totals) sum(o Totals) {
	t.Verdicts.Pending += o.Verdicts.Pending
	t.Verdicts.Done += o.Verdicts.Done
	t.Verdicts.Error += o.Verdicts.Error
	t.PromptTokens += o.PromptTokens
	t.CompletionTokens += o.CompletionTokens
	t.Cost += o.Cost
	t.PricedVerdicts += o.PricedVerdicts
}

// number is a value timeseries.Groups.Fill gives, as a float.
func number(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case int:
		return float64(x)
	}
	return 0
}
