package evalrun

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// Bounds of [Store.ResultsQuery]: the grouping holds every trial of the
// evaluations named in memory at once.
const (
	// MaxResultsEvaluations bounds the evaluations one results query names.
	MaxResultsEvaluations = 100
	// MaxResultsTrials bounds the predict_and_score calls one results
	// query reads; a query over more is ErrTooLarge.
	MaxResultsTrials = 100_000
)

// ErrTooLarge: the evaluations named have more trials than a results query
// may hold.
var ErrTooLarge = weft.DefineError(weft.ErrTooLarge, "RequestTooLarge", "too many evaluation trials")

// idsPerQuery bounds the ids of one parent_ids filter (each is a bound
// parameter of the SQL).
const idsPerQuery = 500

// ResultsQueryReq is the body of POST /v2/{entity}/{project}/eval_results/query:
// Weave's EvalResultsQueryBody.
type ResultsQueryReq struct {
	ProjectID         string   `json:"-"`
	EvaluationCallIDs []string `json:"evaluation_call_ids,omitempty" nullable:"true" doc:"evaluation root call ids"`
	EvaluationRunIDs  []string `json:"evaluation_run_ids,omitempty" nullable:"true" doc:"the same, as the evaluation runs API names them"`
	// RequireIntersection keeps only the rows every evaluation has.
	RequireIntersection bool `json:"require_intersection,omitempty"`
	// IncludeRawDataRows sets each row's raw_data_row: the example, or its
	// dataset-row ref unless ResolveRowRefs.
	IncludeRawDataRows bool `json:"include_raw_data_rows,omitempty"`
	ResolveRowRefs     bool `json:"resolve_row_refs,omitempty"`
	// IncludeRows (default true) and IncludeSummary choose the sections.
	IncludeRows                *bool `json:"include_rows,omitempty" nullable:"true" doc:"default true"`
	IncludeSummary             bool  `json:"include_summary,omitempty"`
	SummaryRequireIntersection *bool `json:"summary_require_intersection,omitempty" nullable:"true" doc:"null: require_intersection"`
	// IncludePredictAndScoreChildren (default true) reads the predict and
	// score calls under each trial.
	IncludePredictAndScoreChildren *bool `json:"include_predict_and_score_children,omitempty" nullable:"true" doc:"default true"`
	// IncludeCosts prices each trial's predict call.
	IncludeCosts bool `json:"include_costs,omitempty"`
	// SortBy orders the rows (row_digest ascending when empty); Filters
	// select them, combined by FilterLogicOperator (see results_order.go).
	SortBy              []ResultsSortBy `json:"sort_by,omitempty" nullable:"true"`
	Filters             []ResultsFilter `json:"filters,omitempty" nullable:"true"`
	FilterLogicOperator string          `json:"filter_logic_operator,omitempty" enum:"and,or" doc:"default or: a row passes when the filters of any one evaluation hold"`
	Limit               *int            `json:"limit,omitempty" nullable:"true" minimum:"0"`
	Offset              int             `json:"offset,omitempty" minimum:"0"`
}

// ResultsQueryRes is Weave's EvalResultsQueryRes.
type ResultsQueryRes struct {
	Rows      []*ResultsRow   `json:"rows"`
	TotalRows int             `json:"total_rows"`
	Summary   *ResultsSummary `json:"summary"`
	Warnings  []string        `json:"warnings"`
}

// ResultsRow is one dataset row with the trials of each evaluation on it.
type ResultsRow struct {
	RowDigest   string               `json:"row_digest"`
	RawDataRow  json.RawMessage      `json:"raw_data_row"`
	Evaluations []*ResultsEvaluation `json:"evaluations"`

	example json.RawMessage // the trials' example: a value or a dataset-row ref
	inputs  digest.Value    // the example, its ref resolved; read by inputs.* fields
}

// ResultsEvaluation is one evaluation's trials of a row.
type ResultsEvaluation struct {
	EvaluationCallID string          `json:"evaluation_call_id"`
	Trials           []*ResultsTrial `json:"trials"`
}

// ResultsTrial is one predict_and_score call.
type ResultsTrial struct {
	PredictAndScoreCallID string            `json:"predict_and_score_call_id"`
	PredictCallID         *string           `json:"predict_call_id"`
	ModelOutput           json.RawMessage   `json:"model_output"`
	Scores                json.RawMessage   `json:"scores" type:"object"`
	ModelLatencySeconds   *float64          `json:"model_latency_seconds"`
	TotalTokens           *int64            `json:"total_tokens"`
	TotalCost             *float64          `json:"total_cost"`
	ScorerCallIDs         map[string]string `json:"scorer_call_ids"`
	// GenAISpanRef is always null: no trial here comes from GenAI spans.
	GenAISpanRef []struct{} `json:"genai_span_ref" nullable:"true"`

	scores digest.Value // Scores, parsed in order
	output digest.Value // the predict_and_score call's output; read by output.* and scores.*
}

// ResultsSummary is Weave's EvalResultsSummaryRes.
type ResultsSummary struct {
	RowCount    int                         `json:"row_count"`
	Evaluations []*ResultsEvaluationSummary `json:"evaluations"`
}

// ResultsEvaluationSummary aggregates one evaluation's trials.
type ResultsEvaluationSummary struct {
	EvaluationCallID   string               `json:"evaluation_call_id"`
	TrialCount         int                  `json:"trial_count"`
	ScorerStats        []*ResultsScorerStat `json:"scorer_stats"`
	PredictTotalTokens *int64               `json:"predict_total_tokens"`
	PredictTotalCost   *float64             `json:"predict_total_cost"`
	EvaluationRef      *string              `json:"evaluation_ref"`
	ModelRef           *string              `json:"model_ref"`
	DisplayName        *string              `json:"display_name"`
	TraceID            *string              `json:"trace_id"`
	StartedAt          *string              `json:"started_at"`
}

// ResultsScorerStat is the statistics of one score dimension: a scorer's
// value, or a boolean or number leaf inside it (Path).
type ResultsScorerStat struct {
	ScorerKey          string   `json:"scorer_key"`
	Path               *string  `json:"path"`
	ValueType          *string  `json:"value_type" enum:"binary,continuous,text"`
	TrialCount         int      `json:"trial_count"`
	NumericCount       int      `json:"numeric_count"`
	NumericMean        *float64 `json:"numeric_mean"`
	PassTrueCount      int      `json:"pass_true_count"`
	PassKnownCount     int      `json:"pass_known_count"`
	PassRate           *float64 `json:"pass_rate"`
	PassSignalCoverage *float64 `json:"pass_signal_coverage"`
}

// ResultsQuery implements [Service].
func (s *Store) ResultsQuery(ctx context.Context, req *ResultsQueryReq) (*ResultsQueryRes, error) {
	order, err := parseRowOrder(req)
	if err != nil {
		return nil, err
	}
	if req.ResolveRowRefs && !req.IncludeRawDataRows {
		return nil, weft.Errorf(ErrInvalid, "resolve_row_refs requires include_raw_data_rows")
	}
	rootIDs := distinct(append(slices.Clone(req.EvaluationCallIDs), req.EvaluationRunIDs...))
	if len(rootIDs) > MaxResultsEvaluations {
		return nil, weft.Errorf(ErrInvalid, "at most %d evaluations may be named", MaxResultsEvaluations)
	}
	includeRows := req.IncludeRows == nil || *req.IncludeRows
	res := &ResultsQueryRes{Rows: []*ResultsRow{}, Warnings: []string{}}
	if req.IncludeSummary {
		res.Summary = &ResultsSummary{Evaluations: []*ResultsEvaluationSummary{}}
	}
	if len(rootIDs) == 0 {
		return res, nil
	}
	rows, warnings, err := s.resultRows(ctx, req, rootIDs, includeRows)
	if err != nil {
		return nil, err
	}
	if includeRows && order.readsInputs() {
		more, err := s.resolveInputs(ctx, req.ProjectID, rows)
		if err != nil {
			return nil, err
		}
		for _, w := range more {
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
	}
	res.Warnings = warnings
	if includeRows {
		selected := order.apply(intersect(rows, rootIDs, req.RequireIntersection), rootIDs)
		res.TotalRows = len(selected)
		start := min(req.Offset, len(selected))
		end := len(selected)
		if req.Limit != nil {
			end = min(end, start+*req.Limit)
		}
		res.Rows = selected[start:end]
	}
	if req.IncludeSummary {
		intersection := req.RequireIntersection
		if req.SummaryRequireIntersection != nil {
			intersection = *req.SummaryRequireIntersection
		}
		meta, err := s.rootMetadata(ctx, req.ProjectID, rootIDs)
		if err != nil {
			return nil, err
		}
		res.Summary = summarize(intersect(rows, rootIDs, intersection), meta)
	}
	return res, nil
}

// distinct drops repeated ids, keeping the first of each.
func distinct(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// resultRows groups the predict_and_score calls under the evaluation roots by
// the dataset row they ran on, in row_digest order.
func (s *Store) resultRows(ctx context.Context, req *ResultsQueryReq, rootIDs []string, includeRows bool) ([]*ResultsRow, []string, error) {
	var trials []*trace.Call
	err := s.children(ctx, req.ProjectID, rootIDs, []string{"id", "parent_id", "op_name", "inputs", "output"}, false, func(c *trace.Call) error {
		if !opNameIs(c.OpName, predictAndScoreOp) {
			return nil
		}
		if len(trials) == MaxResultsTrials {
			return weft.Errorf(ErrTooLarge, "the evaluations have more than %d trials", MaxResultsTrials)
		}
		trials = append(trials, c)
		return nil
	})
	if err != nil || len(trials) == 0 {
		return nil, []string{}, err
	}
	childrenOf := map[string][]*trace.Call{}
	if req.IncludePredictAndScoreChildren == nil || *req.IncludePredictAndScoreChildren {
		ids := make([]string, len(trials))
		for i, c := range trials {
			ids[i] = c.ID
		}
		columns := []string{"id", "parent_id", "op_name", "attributes", "inputs", "summary", "started_at", "ended_at"}
		err := s.children(ctx, req.ProjectID, ids, columns, req.IncludeCosts, func(c *trace.Call) error {
			childrenOf[*c.ParentID] = append(childrenOf[*c.ParentID], c)
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}

	rawRows := req.IncludeRawDataRows && includeRows
	byDigest := map[string]*ResultsRow{}
	var rows []*ResultsRow
	for _, c := range trials {
		var inputs struct {
			Example json.RawMessage `json:"example"`
			Model   json.RawMessage `json:"model"`
		}
		_ = json.Unmarshal(c.Inputs, &inputs)
		example := orNull(inputs.Example)
		rowDigest := exampleDigest(example)
		row := byDigest[rowDigest]
		if row == nil {
			row = &ResultsRow{RowDigest: rowDigest, RawDataRow: json.RawMessage(`null`), example: example}
			byDigest[rowDigest] = row
			rows = append(rows, row)
		}
		if rawRows && string(row.RawDataRow) == "null" {
			row.RawDataRow = example
		}
		i := slices.IndexFunc(row.Evaluations, func(e *ResultsEvaluation) bool { return e.EvaluationCallID == *c.ParentID })
		if i < 0 {
			row.Evaluations = append(row.Evaluations, &ResultsEvaluation{EvaluationCallID: *c.ParentID})
			i = len(row.Evaluations) - 1
		}
		row.Evaluations[i].Trials = append(row.Evaluations[i].Trials, trialOf(c, inputs.Model, childrenOf[c.ID], req.IncludeCosts))
	}
	slices.SortFunc(rows, func(a, b *ResultsRow) int { return strings.Compare(a.RowDigest, b.RowDigest) })
	warnings := []string{}
	if rawRows && req.ResolveRowRefs {
		warnings, err = s.resolveRows(ctx, req.ProjectID, rows, func(r *ResultsRow) *json.RawMessage { return &r.RawDataRow })
		if err != nil {
			return nil, nil, err
		}
	}
	return rows, warnings, nil
}

// children streams the calls whose parent is one of parentIDs, in start
// order, a bounded number of parents per query.
func (s *Store) children(ctx context.Context, projectID string, parentIDs, columns []string, costs bool, yield func(*trace.Call) error) error {
	for chunk := range slices.Chunk(parentIDs, idsPerQuery) {
		q := &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{ParentIDs: chunk}, Columns: columns, IncludeCosts: costs,
			SortBy: []trace.SortBy{{Field: "started_at", Direction: "asc"}}}
		if err := s.cfg.Trace.CallsQuery(ctx, q, yield); err != nil {
			return err
		}
	}
	return nil
}

// exampleDigest is the row digest of a trial's example, as Weave derives it:
// the row digest a dataset-row ref names, else the digest of the string, or
// of the value's JSON (json.dumps with sorted keys).
func exampleDigest(example json.RawMessage) string {
	var s string
	if json.Unmarshal(example, &s) == nil {
		if r, err := ref.Parse(s); err == nil && len(r.Extra) >= 4 && slices.Equal(r.Extra[len(r.Extra)-4:len(r.Extra)-1], []string{"attr", "rows", "id"}) {
			return r.Extra[len(r.Extra)-1]
		}
		return digest.Bytes([]byte(s))
	}
	d, err := digest.JSON(example)
	if err != nil {
		return digest.Bytes(example)
	}
	return d
}

// trialOf reads one predict_and_score call with its children.
func trialOf(c *trace.Call, modelRef json.RawMessage, children []*trace.Call, costs bool) *ResultsTrial {
	var output struct {
		Output       json.RawMessage `json:"output"`
		Scores       json.RawMessage `json:"scores"`
		ModelLatency struct {
			Mean *float64 `json:"mean"`
		} `json:"model_latency"`
	}
	_ = json.Unmarshal(c.Output, &output)
	t := &ResultsTrial{PredictAndScoreCallID: c.ID, ModelOutput: orNull(output.Output), Scores: json.RawMessage(`{}`), ScorerCallIDs: map[string]string{}}
	t.output, _ = digest.Parse(c.Output)
	if v, err := digest.Parse(output.Scores); err == nil && v.Kind == digest.Object {
		t.Scores, t.scores = output.Scores, v
	}
	predict := predictCall(children, modelRef)
	switch {
	case predict != nil && predict.EndedAt != nil:
		latency := predict.EndedAt.Sub(predict.StartedAt).Seconds()
		t.ModelLatencySeconds = &latency
	case output.ModelLatency.Mean != nil:
		t.ModelLatencySeconds = output.ModelLatency.Mean
	}
	if predict != nil {
		t.PredictCallID = &predict.ID
		t.TotalTokens = totalTokens(predict.Summary)
		if costs {
			t.TotalCost = totalCost(predict.Summary)
		}
	}
	var scorers []*trace.Call
	for _, child := range children {
		if isScoreCall(child) || strings.Contains(strings.ToLower(child.OpName), ".score") || strings.Contains(strings.ToLower(child.OpName), "scorer") {
			scorers = append(scorers, child)
		}
	}
	for _, m := range t.scores.Members {
		key := strings.ToLower(m.Key)
		for _, sc := range scorers {
			op := strings.ToLower(sc.OpName)
			if strings.Contains(op, key) || strings.Contains(key, op) {
				t.ScorerCallIDs[m.Key] = sc.ID
				break
			}
		}
	}
	return t
}

// isScoreCall tells whether a call is marked a score: attributes.weave.score
// "true", or a truthy _weave_eval_meta.score.
func isScoreCall(c *trace.Call) bool {
	var attrs struct {
		Weave struct {
			Score json.RawMessage `json:"score"`
		} `json:"weave"`
		EvalMeta struct {
			Score json.RawMessage `json:"score"`
		} `json:"_weave_eval_meta"`
	}
	_ = json.Unmarshal(c.Attributes, &attrs)
	if string(attrs.Weave.Score) == `"true"` {
		return true
	}
	switch string(attrs.EvalMeta.Score) {
	case "", "null", "false", "0", `""`, "{}", "[]":
		return false
	}
	return true
}

// predictCall picks the model's call among a trial's children, as Weave does:
// the first that is no score and whose self is the model, or whose op name
// says predict or invoke.
func predictCall(children []*trace.Call, modelRef json.RawMessage) *trace.Call {
	for _, c := range children {
		if isScoreCall(c) {
			continue
		}
		var inputs struct {
			Self json.RawMessage `json:"self"`
		}
		_ = json.Unmarshal(c.Inputs, &inputs)
		if len(inputs.Self) > 0 && len(modelRef) > 0 && sameJSON(inputs.Self, modelRef) {
			return c
		}
		op := strings.ToLower(c.OpName)
		if strings.Contains(op, "predict") || strings.Contains(op, "invoke") {
			return c
		}
	}
	return nil
}

// sameJSON tells whether two JSON texts hold the same value.
func sameJSON(a, b json.RawMessage) bool {
	x, errA := digest.Parse(a)
	y, errB := digest.Parse(b)
	return errA == nil && errB == nil && string(x.Canonical()) == string(y.Canonical())
}

// totalTokens sums summary.usage.*.total_tokens; nil when no model reports
// them.
func totalTokens(summary json.RawMessage) *int64 {
	var s struct {
		Usage map[string]map[string]json.RawMessage `json:"usage"`
	}
	_ = json.Unmarshal(summary, &s)
	var total int64
	found := false
	for _, usage := range s.Usage {
		if n, err := strconv.ParseFloat(string(usage["total_tokens"]), 64); err == nil {
			total += int64(n)
			found = true
		}
	}
	if !found {
		return nil
	}
	return &total
}

// totalCost sums the priced token costs of summary.weave.costs; nil when
// none is priced.
func totalCost(summary json.RawMessage) *float64 {
	var s struct {
		Weave struct {
			Costs map[string]trace.Usage `json:"costs"`
		} `json:"weave"`
	}
	_ = json.Unmarshal(summary, &s)
	var total float64
	found := false
	for _, c := range s.Weave.Costs {
		for _, part := range []*float64{c.PromptTokensTotalCost, c.CompletionTokensTotalCost, c.CacheReadInputTokensTotalCost, c.CacheCreationInputTokensTotalCost} {
			if part != nil {
				total += *part
				found = true
			}
		}
	}
	if !found {
		return nil
	}
	return &total
}

// resolveInputs sets the inputs of rows, which inputs.* fields read: the
// example, its dataset-row ref resolved as resolveRows does.
func (s *Store) resolveInputs(ctx context.Context, projectID string, rows []*ResultsRow) ([]string, error) {
	resolved := make([]json.RawMessage, len(rows))
	index := make(map[*ResultsRow]int, len(rows))
	for i, row := range rows {
		resolved[i], index[row] = row.example, i
	}
	warnings, err := s.resolveRows(ctx, projectID, rows, func(r *ResultsRow) *json.RawMessage { return &resolved[index[r]] })
	if err != nil {
		return nil, err
	}
	for i, row := range rows {
		row.inputs, _ = digest.Parse(resolved[i])
	}
	return warnings, nil
}

// resolveRows replaces the dataset-row refs held at each row's at (its
// raw_data_row, or the example inputs.* fields read) with the rows. Only
// refs of the project itself are read; the others stay refs, with a warning.
func (s *Store) resolveRows(ctx context.Context, projectID string, rows []*ResultsRow, at func(*ResultsRow) *json.RawMessage) ([]string, error) {
	var refs []string
	var targets []*ResultsRow
	foreign := false
	for _, row := range rows {
		var text string
		if json.Unmarshal(*at(row), &text) != nil {
			continue
		}
		r, err := ref.Parse(text)
		if err != nil || !slices.Contains(r.Extra, "rows") {
			continue
		}
		if r.ProjectID() != projectID {
			foreign = true
			continue
		}
		refs = append(refs, text)
		targets = append(targets, row)
	}
	warnings := []string{}
	if foreign {
		warnings = append(warnings, "dataset row refs of other projects were not resolved; raw_data_row holds the ref")
	}
	for start := 0; start < len(refs); start += idsPerQuery {
		end := min(start+idsPerQuery, len(refs))
		res, err := s.cfg.Objects.RefsReadBatch(ctx, &objects.RefsReadBatchReq{Refs: refs[start:end]})
		if err != nil {
			if errors.Is(err, weft.ErrInvalid) || errors.Is(err, weft.ErrNotFound) {
				return append(warnings, "Failed to resolve dataset row refs; raw_data_row may contain refs"), nil
			}
			return nil, err
		}
		for i, val := range res.Vals {
			if len(val) > 0 && string(val) != "null" {
				*at(targets[start+i]) = val
			}
		}
	}
	return warnings, nil
}

// intersect keeps, when required and more than one evaluation is named, the
// rows that every evaluation ran on.
func intersect(rows []*ResultsRow, rootIDs []string, required bool) []*ResultsRow {
	if !required || len(rootIDs) < 2 {
		return rows
	}
	var out []*ResultsRow
	for _, row := range rows {
		all := true
		for _, id := range rootIDs {
			if !slices.ContainsFunc(row.Evaluations, func(e *ResultsEvaluation) bool { return e.EvaluationCallID == id }) {
				all = false
				break
			}
		}
		if all {
			out = append(out, row)
		}
	}
	return out
}
