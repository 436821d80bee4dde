package evalrun

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/trace/callquery"
)

// The sort_by and filters of eval_results/query, as Weave's trace server
// applies them to the grouped rows (its eval results query builder):
//
//   - Fields: row_digest, inputs.<path> (the dataset row, resolved when the
//     example is a ref to a row of the project, else the example), output.<path>
//     (the predict_and_score call's output) and scores.<path> (its
//     output.scores, true and false reading as "1" and "0"). A path is dotted
//     as in the calls query language ("\." a dot in a member name).
//   - A field reads as text, as in the calls query language (missing and null
//     read as ""), from one trial of the row; scoped to an evaluation
//     (evaluation_call_id), from one trial of that evaluation, and null when
//     the row has none.
//   - A filter is a calls-language query over these fields. Filters scoped to
//     the same evaluation must all hold; with filter_logic_operator "or" (the
//     default) a row is kept when the filters of any one evaluation (or the
//     unscoped ones) hold, with "and" when every filter does.
//   - A sort by scores.* orders by the mean of the trials' numeric values, any
//     other field by its text; mode "difference" (over more than one
//     evaluation) orders by the spread of the evaluations' means. Rows without
//     a value come last in both directions; row_digest ascending breaks ties.

// Bounds of the sort_by and filters of one results query: each filter is
// evaluated on every grouped row.
const (
	// MaxResultsSortBy bounds the sort_by entries.
	MaxResultsSortBy = 16
	// MaxResultsFilters bounds the filters.
	MaxResultsFilters = 64
	// MaxResultsFilterNodes bounds the operations and operands of all
	// filters together.
	MaxResultsFilterNodes = 1000
)

// ResultsSortBy is Weave's EvalResultsSortBy.
type ResultsSortBy struct {
	Field     string `json:"field" doc:"row_digest, scores.<path>, inputs.<path> or output.<path>"`
	Direction string `json:"direction" enum:"asc,desc"`
	// EvaluationCallID scopes the field to one evaluation's trials.
	EvaluationCallID *string `json:"evaluation_call_id,omitempty" nullable:"true"`
	// Mode "difference" sorts by the spread of a score across the
	// evaluations (EvaluationCallID is then ignored).
	Mode string `json:"mode,omitempty" enum:"value,difference" doc:"default value"`
}

// ResultsFilter is Weave's EvalResultsFilter.
type ResultsFilter struct {
	// EvaluationCallID scopes the query's fields to one evaluation's trials.
	EvaluationCallID *string `json:"evaluation_call_id,omitempty" nullable:"true"`
	// Query is a calls query ({"$expr": …}) over the fields of ResultsSortBy.
	Query json.RawMessage `json:"query" type:"object"`
}

// rowOrder is a results query's sort_by and filters, checked.
type rowOrder struct {
	sorts []rowSort
	// groups are the filters by evaluation scope, in order of appearance;
	// any true group keeps a row (one group of all filters under "and").
	groups [][]rowFilter
}

type rowSort struct {
	field      callquery.Field
	desc       bool
	scope      *string
	difference bool
}

type rowFilter struct {
	query *callquery.Query
	scope *string
}

// empty tells whether the order leaves rows as they are.
func (o *rowOrder) empty() bool { return len(o.sorts) == 0 && len(o.groups) == 0 }

// readsInputs tells whether a sort or filter reads inputs.*, which needs
// the dataset rows resolved.
func (o *rowOrder) readsInputs() bool {
	for _, s := range o.sorts {
		if s.field.Root == "inputs" {
			return true
		}
	}
	for _, g := range o.groups {
		for _, f := range g {
			if exprReads(f.query.Expr, "inputs") {
				return true
			}
		}
	}
	return false
}

// parseRowOrder checks the sort_by and filters of req.
func parseRowOrder(req *ResultsQueryReq) (*rowOrder, error) {
	o := &rowOrder{}
	if len(req.SortBy) > MaxResultsSortBy {
		return nil, weft.Errorf(ErrInvalid, "sort_by has at most %d entries", MaxResultsSortBy)
	}
	if len(req.Filters) > MaxResultsFilters {
		return nil, weft.Errorf(ErrInvalid, "filters has at most %d entries", MaxResultsFilters)
	}
	for i, s := range req.SortBy {
		f, err := resultsField(s.Field)
		if err != nil {
			return nil, weft.Errorf(ErrInvalid, "sort_by[%d]: %v", i, err)
		}
		difference := s.Mode == "difference" && len(distinct(append(slices.Clone(req.EvaluationCallIDs), req.EvaluationRunIDs...))) > 1
		if difference && f.Root != "scores" {
			return nil, weft.Errorf(ErrInvalid, "sort_by[%d]: mode difference sorts by the spread of a score; the field must be scores.<path>", i)
		}
		o.sorts = append(o.sorts, rowSort{field: f, desc: s.Direction == "desc", scope: s.EvaluationCallID, difference: difference})
	}
	nodes := 0
	byScope := map[string]int{}
	for i, flt := range req.Filters {
		q, err := callquery.ParseWith(flt.Query, resultsField)
		if err != nil {
			return nil, weft.Errorf(ErrInvalid, "filters[%d].query: %v", i, err)
		}
		if q == nil {
			return nil, weft.Errorf(ErrInvalid, "filters[%d].query: a filter needs a query {\"$expr\": …}", i)
		}
		if nodes += countNodes(q.Expr); nodes > MaxResultsFilterNodes {
			return nil, weft.Errorf(ErrInvalid, "filters have more than %d operations and operands together", MaxResultsFilterNodes)
		}
		key := "*"
		if flt.EvaluationCallID != nil && req.FilterLogicOperator != "and" {
			key = "=" + *flt.EvaluationCallID
		}
		g, ok := byScope[key]
		if !ok {
			g = len(o.groups)
			byScope[key] = g
			o.groups = append(o.groups, nil)
		}
		o.groups[g] = append(o.groups[g], rowFilter{query: q, scope: flt.EvaluationCallID})
	}
	return o, nil
}

// resultsField resolves a field of eval_results sort_by and filters.
func resultsField(name string) (callquery.Field, error) {
	if name == "row_digest" {
		return callquery.Field{Name: name, Kind: callquery.Column, Column: name, Type: callquery.Text}, nil
	}
	for _, root := range []string{"scores", "inputs", "output"} {
		if path, ok := strings.CutPrefix(name, root+"."); ok {
			return callquery.DynamicField(name, root, path)
		}
	}
	return callquery.Field{}, &callquery.Error{Msg: fmt.Sprintf("unsupported eval results field %q; fields: scores.<path>, inputs.<path>, output.<path>, row_digest", name)}
}

// countNodes counts the operations and operands of e.
func countNodes(e callquery.Expr) int {
	n := 1
	for _, c := range children(e) {
		n += countNodes(c)
	}
	return n
}

// exprReads tells whether e reads a field of root.
func exprReads(e callquery.Expr, root string) bool {
	if f, ok := e.(*callquery.FieldRef); ok {
		return f.Field.Root == root
	}
	return slices.ContainsFunc(children(e), func(c callquery.Expr) bool { return exprReads(c, root) })
}

// children are the operands of e.
func children(e callquery.Expr) []callquery.Expr {
	switch e := e.(type) {
	case *callquery.And:
		return e.Terms
	case *callquery.Or:
		return e.Terms
	case *callquery.Not:
		return []callquery.Expr{e.Term}
	case *callquery.Compare:
		return []callquery.Expr{e.Left, e.Right}
	case *callquery.In:
		return append([]callquery.Expr{e.Left}, e.List...)
	case *callquery.Contains:
		return []callquery.Expr{e.Input, e.Substr}
	case *callquery.Convert:
		return []callquery.Expr{e.Input}
	}
	return nil
}

// apply filters rows and sorts what is kept.
func (o *rowOrder) apply(rows []*ResultsRow, rootIDs []string) []*ResultsRow {
	if o.empty() {
		return rows
	}
	var kept []*ResultsRow
	for _, row := range rows {
		if o.keeps(row) {
			kept = append(kept, row)
		}
	}
	if len(o.sorts) == 0 {
		return kept
	}
	keys := make(map[*ResultsRow][]any, len(kept))
	for _, row := range kept {
		k := make([]any, len(o.sorts))
		for i, s := range o.sorts {
			k[i] = s.key(row, rootIDs)
		}
		keys[row] = k
	}
	slices.SortStableFunc(kept, func(a, b *ResultsRow) int {
		ka, kb := keys[a], keys[b]
		for i, s := range o.sorts {
			switch x, y := ka[i], kb[i]; {
			case x == nil && y == nil:
			case x == nil:
				return 1
			case y == nil:
				return -1
			default:
				c := compareKeys(x, y)
				if s.desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
		}
		return strings.Compare(a.RowDigest, b.RowDigest)
	})
	return kept
}

// compareKeys orders two sort keys of one field: float64s or strings.
func compareKeys(x, y any) int {
	if a, ok := x.(float64); ok {
		return cmp.Compare(a, y.(float64))
	}
	return strings.Compare(x.(string), y.(string))
}

// keeps tells whether row passes the filters.
func (o *rowOrder) keeps(row *ResultsRow) bool {
	if len(o.groups) == 0 {
		return true
	}
	for _, g := range o.groups {
		all := true
		for _, f := range g {
			e := &rowEvaluator{row: row, scope: f.scope}
			if e.cond(f.query.Expr) != triTrue {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// key is the value row sorts by: a float64, a string, or nil (last).
func (s rowSort) key(row *ResultsRow, rootIDs []string) any {
	if s.field.Kind == callquery.Column {
		return row.RowDigest
	}
	if !s.difference {
		return sortValue(row, s.field, s.scope)
	}
	var lo, hi float64
	for i, id := range rootIDs {
		v, ok := sortValue(row, s.field, &id).(float64)
		if !ok {
			return nil
		}
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return hi - lo
}

// sortValue is the value of field a row sorts by: the mean of a score's
// numeric values over the trials in scope, another field's text in one of
// them; nil when there is none.
func sortValue(row *ResultsRow, f callquery.Field, scope *string) any {
	if f.Root != "scores" {
		if text, ok := fieldText(row, f, scope); ok {
			return text
		}
		return nil
	}
	var sum float64
	n := 0
	for _, t := range trialsIn(row, scope) {
		if v, ok := callquery.TextDouble(trialText(row, t, f)); ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return sum / float64(n)
}

// trialsIn are the trials of row in scope (every trial for nil).
func trialsIn(row *ResultsRow, scope *string) []*ResultsTrial {
	var out []*ResultsTrial
	for _, e := range row.Evaluations {
		if scope == nil || e.EvaluationCallID == *scope {
			out = append(out, e.Trials...)
		}
	}
	return out
}

// fieldText is the text of a dynamic field in the first trial of row in
// scope; ok false when there is none.
func fieldText(row *ResultsRow, f callquery.Field, scope *string) (string, bool) {
	trials := trialsIn(row, scope)
	if len(trials) == 0 {
		return "", false
	}
	return trialText(row, trials[0], f), true
}

// trialText reads a dynamic field in one trial as text.
func trialText(row *ResultsRow, t *ResultsTrial, f callquery.Field) string {
	switch f.Root {
	case "inputs":
		return jsonText(row.inputs, f.Path)
	case "output":
		return jsonText(t.output, f.Path)
	}
	v, ok := t.output.Get("scores")
	if !ok {
		return ""
	}
	switch text := jsonText(v, f.Path); text {
	case "true":
		return "1"
	case "false":
		return "0"
	default:
		return text
	}
}

// jsonText is the value at path as the query language reads a dynamic
// field: a string as itself, a number as written, true and false, an object
// or array as compact JSON, missing and null as "".
func jsonText(v digest.Value, path []callquery.Step) string {
	for _, step := range path {
		switch {
		case step.IsIndex() && v.Kind == digest.Array && step.Index < len(v.Items):
			v = v.Items[step.Index]
		case !step.IsIndex() && v.Kind == digest.Object:
			m, ok := v.Get(step.Key)
			if !ok {
				return ""
			}
			v = m
		default:
			return ""
		}
	}
	switch v.Kind {
	case digest.Null:
		return ""
	case digest.String:
		return v.Text
	case digest.Bool:
		if v.Bool {
			return "true"
		}
		return "false"
	}
	return string(v.Compact())
}
