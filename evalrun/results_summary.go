package evalrun

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/trace"
)

// rootMeta is what the summary tells of an evaluation root call.
type rootMeta struct {
	evaluationRef, modelRef, displayName *string
	traceID, startedAt                   string
}

// rootMetadata reads the evaluation root calls.
func (s *Store) rootMetadata(ctx context.Context, projectID string, rootIDs []string) (map[string]rootMeta, error) {
	meta := map[string]rootMeta{}
	q := &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{CallIDs: rootIDs}, Columns: []string{"id", "inputs", "display_name", "trace_id", "started_at"}}
	err := s.cfg.Trace.CallsQuery(ctx, q, func(c *trace.Call) error {
		var inputs struct {
			Self  json.RawMessage `json:"self"`
			This  json.RawMessage `json:"this"`
			Model json.RawMessage `json:"model"`
		}
		_ = json.Unmarshal(c.Inputs, &inputs)
		evaluation := stringOf(inputs.Self)
		if evaluation == nil {
			evaluation = stringOf(inputs.This)
		}
		meta[c.ID] = rootMeta{evaluationRef: evaluation, modelRef: stringOf(inputs.Model), displayName: c.DisplayName,
			traceID: c.TraceID, startedAt: pythonISOTime(c.StartedAt)}
		return nil
	})
	return meta, err
}

// stringOf is a JSON string's text; nil for anything else.
func stringOf(raw json.RawMessage) *string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// pythonISOTime writes t as Python's datetime.isoformat of a UTC time.
func pythonISOTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05") + "+00:00"
}

// summarize aggregates rows per evaluation, in the order the evaluations
// first appear, with one statistic per score dimension in the order first
// seen.
func summarize(rows []*ResultsRow, meta map[string]rootMeta) *ResultsSummary {
	summary := &ResultsSummary{RowCount: len(rows), Evaluations: []*ResultsEvaluationSummary{}}
	byID := map[string]*ResultsEvaluationSummary{}
	for _, row := range rows {
		for _, e := range row.Evaluations {
			es := byID[e.EvaluationCallID]
			if es == nil {
				es = &ResultsEvaluationSummary{EvaluationCallID: e.EvaluationCallID, ScorerStats: []*ResultsScorerStat{}}
				if m, ok := meta[e.EvaluationCallID]; ok {
					es.EvaluationRef, es.ModelRef, es.DisplayName = m.evaluationRef, m.modelRef, m.displayName
					es.TraceID, es.StartedAt = &m.traceID, &m.startedAt
				}
				byID[e.EvaluationCallID] = es
				summary.Evaluations = append(summary.Evaluations, es)
			}
			for _, t := range e.Trials {
				es.TrialCount++
				for _, m := range t.scores.Members {
					es.addScore(m.Key, nil, m.Value)
				}
				if t.TotalTokens != nil {
					es.PredictTotalTokens = ptr(deref(es.PredictTotalTokens) + *t.TotalTokens)
				}
				if t.TotalCost != nil {
					es.PredictTotalCost = ptr(deref(es.PredictTotalCost) + *t.TotalCost)
				}
			}
		}
	}
	for _, es := range summary.Evaluations {
		for _, st := range es.ScorerStats {
			if st.PassKnownCount > 0 {
				st.PassRate = ptr(float64(st.PassTrueCount) / float64(st.PassKnownCount))
			}
			if st.TrialCount > 0 {
				st.PassSignalCoverage = ptr(float64(st.PassKnownCount) / float64(st.TrialCount))
			}
		}
	}
	return summary
}

// addScore counts one score value of a trial: a boolean or number counts
// in the statistic of its dimension; an object's members are dimensions of
// their own (path joined by dots); anything else is not counted.
func (es *ResultsEvaluationSummary) addScore(key string, path []string, v digest.Value) {
	stat := func(valueType string) *ResultsScorerStat {
		var p *string
		if len(path) > 0 {
			p = ptr(strings.Join(path, "."))
		}
		for _, st := range es.ScorerStats {
			if st.ScorerKey == key && (st.Path == nil) == (p == nil) && (p == nil || *st.Path == *p) {
				return st
			}
		}
		st := &ResultsScorerStat{ScorerKey: key, Path: p, ValueType: &valueType}
		es.ScorerStats = append(es.ScorerStats, st)
		return st
	}
	switch v.Kind {
	case digest.Bool:
		st := stat("binary")
		st.TrialCount++
		st.PassKnownCount++
		if v.Bool {
			st.PassTrueCount++
		}
	case digest.Number:
		x, err := strconv.ParseFloat(v.Text, 64)
		if err != nil {
			return
		}
		st := stat("continuous")
		st.TrialCount++
		// The running mean, computed as Weave computes it, so that the
		// figure is the same to the last bit.
		mean := (deref(st.NumericMean)*float64(st.NumericCount) + x) / float64(st.NumericCount+1)
		st.NumericCount++
		st.NumericMean = &mean
	case digest.Object:
		for _, m := range v.Members {
			es.addScore(key, append(slices.Clone(path), m.Key), m.Value)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
