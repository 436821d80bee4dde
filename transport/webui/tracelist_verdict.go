package webui

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace/callquery"
)

// The trace list filters and sorts by a scorer's verdict: the feedback a
// monitor (or a Weave SDK's scorer) stores on a call as
// wandb.runnable.<scorer>, its payload {"output": verdict}. The filter is a
// calls query over the feedback field, so it selects as the API's query
// does, and the selection's actions (a queue, a dataset) take what it shows.

// sortVerdict is the sort parameter that orders by the verdict filter's
// field.
const sortVerdict = "verdict"

// Comparisons of the verdict filter.
var verdictOps = map[string]string{"eq": "$eq", "ne": "$eq", "lt": "$lt", "gt": "$gt"}

// verdictFilter is the list's verdict filter: the calls whose verdict of
// Scorer has, at Path in its output, a value that compares by Op with Value
// (with no Value: the calls that have a verdict of Scorer).
type verdictFilter struct {
	Scorer string // the scorer's object id
	Path   string // dotted path in the verdict ("correct", "scores.0"), or ""
	Op     string // a verdictOps key
	Value  string // as typed: true, false, a number or text
}

// parseVerdict reads the verdict filter of a list's URL query.
func parseVerdict(q url.Values) (verdictFilter, error) {
	f := verdictFilter{Scorer: strings.TrimSpace(q.Get("verdict")), Path: strings.TrimSpace(q.Get("verdict_path")),
		Op: q.Get("verdict_op"), Value: strings.TrimSpace(q.Get("verdict_value"))}
	if f.Op == "" {
		f.Op = "eq"
	}
	if _, ok := verdictOps[f.Op]; !ok {
		return f, weft.Errorf(errBadView, "verdict_op: eq, ne, lt or gt")
	}
	if f.Scorer == "" {
		if f.Path != "" || f.Value != "" {
			return f, weft.Errorf(errBadView, "verdict: name the scorer whose verdict to filter by")
		}
		return f, nil
	}
	if len(f.Scorer) > maxObjectNameLength || strings.ContainsAny(f.Scorer, "[]") {
		return f, weft.Errorf(errBadView, "verdict: a scorer name of at most %d characters", maxObjectNameLength)
	}
	if len(f.Path) > 256 || len(f.Value) > 1024 {
		return f, weft.Errorf(errBadView, "verdict_path and verdict_value: at most 256 and 1024 characters")
	}
	if _, err := callquery.Parse(f.query()); err != nil {
		return f, weft.Errorf(errBadView, "verdict: %v", err)
	}
	return f, nil
}

// field is the calls query's feedback field of the verdict.
func (f verdictFilter) field() string {
	field := "feedback.[wandb.runnable." + f.Scorer + "].payload.output"
	if f.Path != "" {
		field += "." + f.Path
	}
	return field
}

// query is the calls query of the filter; nil without one.
func (f verdictFilter) query() json.RawMessage {
	if f.Scorer == "" {
		return nil
	}
	get := map[string]any{"$getField": f.field()}
	var expr any
	if f.Value == "" {
		expr = map[string]any{"$not": []any{map[string]any{"$eq": []any{get, map[string]any{"$literal": nil}}}}}
	} else {
		expr = map[string]any{verdictOps[f.Op]: []any{get, map[string]any{"$literal": verdictLiteral(f.Value)}}}
		if f.Op == "ne" {
			expr = map[string]any{"$not": []any{expr}}
		}
	}
	q, _ := json.Marshal(map[string]any{"$expr": expr})
	return q
}

// verdictLiteral reads a typed value: true and false as booleans, a number
// as a number, anything else as text.
func verdictLiteral(s string) any {
	switch s {
	case "true":
		return true
	case "false":
		return false
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return n
	}
	return s
}

// set writes the filter into URL query values.
func (f verdictFilter) set(q url.Values) {
	if f.Scorer == "" {
		return
	}
	q.Set("verdict", f.Scorer)
	for k, v := range map[string]string{"verdict_path": f.Path, "verdict_value": f.Value} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Op != "eq" {
		q.Set("verdict_op", f.Op)
	}
}

// verdictOpLabels are the comparisons as the filter form names them, by
// verdictOps key.
var verdictOpLabels = map[string]string{"eq": "=", "ne": "≠", "lt": "<", "gt": ">"}

// VerdictSortURL is the view sorted by its verdict in dir.
func (v listView) VerdictSortURL(projectID, dir string) string {
	return v.url(projectID, "sort", sortVerdict, "dir", dir, "offset", "", "after", "")
}

// sortField is the trace service's sort field of the view's sort.
func (v listView) sortField() string {
	if v.Sort == sortVerdict {
		return v.Verdict.field()
	}
	return v.Sort
}
