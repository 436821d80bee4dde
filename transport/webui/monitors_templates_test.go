package webui

import (
	"encoding/json"
	"time"

	"github.com/weftlabs/weft/monitor"
)

// monitorFixtures are the monitor pages' data, hostile text in every field
// a publisher or a judge chooses.
func monitorFixtures(v *viewer) map[string]page {
	at := time.Date(2026, 11, 2, 1, 0, 0, 0, time.UTC)
	cost, reason, judgeCall := 0.0006, xss, "0190aaaa-0000-7000-8000-0000000000aa"
	query := json.RawMessage(`{"$expr":{"$eq":[{"$getField":"output"},{"$literal":"` + "x" + `"}]}}`)
	mon := monitor.Listed{Monitor: monitor.Monitor{ProjectID: "team/p", ObjectID: xss, Digest: xss, Description: xss, SamplingRate: 0.5,
		OpNames: []string{xss}, Query: query, Scorers: []string{xss}, Active: true}, ActiveSince: &at, UpdatedAt: at}
	intervals := []monitor.Interval{
		{Start: at.Add(-time.Hour), Seconds: 3600, Totals: monitor.Totals{Verdicts: monitor.VerdictCounts{Done: 3, Error: 1}, PromptTokens: 10, CompletionTokens: 5, Cost: 0.01, PricedVerdicts: 3}},
		{Start: at, Seconds: 3600},
	}
	paused := monitor.Listed{Monitor: monitor.Monitor{ProjectID: "team/p", ObjectID: "paused", Digest: "d", SamplingRate: 1}, UpdatedAt: at}
	return map[string]page{
		"monitors": {Title: "Monitors", Viewer: v, Project: "team/p", Body: monitorsView{Project: "team/p", Monitors: []monitor.Listed{mon, paused}}},
		"monitor": {Title: xss, Viewer: v, Project: "team/p", Body: monitorView{Project: "team/p", Monitor: mon, Scorers: []scorerLink{{Name: xss, Ref: xss}},
			Range: "24h", Ranges: chartRangeNames(), From: at.Add(-time.Hour), To: at.Add(time.Hour),
			Charts:    verdictCharts(monitorView{Project: "team/p", Scorers: []scorerLink{{Name: xss, Ref: xss}}}, intervals),
			Stats:     &monitor.Stats{Totals: monitor.Totals{Verdicts: monitor.VerdictCounts{Done: 3, Error: 1}, PromptTokens: 10, CompletionTokens: 5, Cost: 0.01, PricedVerdicts: 3}},
			Backfills: []monitor.Backfill{{ID: "b", State: monitor.BackfillFailed, Error: xss, StartedFrom: &at, StartedBefore: at, CreatedAt: at, Planned: true}},
			Verdicts: []monitor.Verdict{
				{CallID: xss, ScorerID: xss, State: monitor.StateDone, Output: json.RawMessage(`{"v":"` + "<b>" + `"}`), JudgeCallID: &judgeCall, Cost: &cost, CreatedAt: at},
				{CallID: "c", ScorerID: "s", State: monitor.StateError, Error: &reason, CreatedAt: at},
			}}},
		"monitor_form": {Title: xss, Viewer: v, Project: "team/p", Body: monitorForm{Project: "team/p", ID: xss, Existing: true, Description: xss,
			Ops: xss, Query: xss, Sampling: "50", Active: true, Error: xss,
			Scorers: []scorerChoice{{Ref: xss, Name: xss, Class: xss, Chosen: true}, {Ref: "r", Name: "n"}}}},
		"scorer_form": {Title: xss, Viewer: v, Project: "team/p", Body: scorerForm{Project: "team/p", Name: xss, Class: monitor.ClassJudge,
			Classes: scorerClasses, ModelRef: xss, Model: xss, System: xss, Prompt: xss, Schema: xss, Models: []string{xss}, Field: xss, Substring: xss,
			Pattern: xss, MinLength: "1", Call: xss, Calls: []previewCall{{ID: xss, Label: xss}}, Error: xss,
			Preview: &monitor.Preview{Model: xss, Schema: json.RawMessage(`{"x":"<b>"}`), Verdict: json.RawMessage(`{"v":"<b>"}`), Error: xss,
				Messages: []monitor.PreviewMessage{{Role: xss, Content: xss}}}}},
	}
}
