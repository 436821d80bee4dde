package webui

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// The ops of an evaluation run, by object id: the run's root call and one
// call per example (the Python and the TypeScript spelling).
const evaluateOp = "Evaluation.evaluate"

var predictOps = []string{"Evaluation.predict_and_score", "Evaluation.predictAndScore"}

// evalsPageSize is the number of runs the evaluation list shows.
const evalsPageSize = 50

// evalsView is the data of the evaluation list.
type evalsView struct {
	Project string
	Runs    []evalRun
	// CompareAction is the comparison the form of chosen runs goes to.
	CompareAction string
	First         int
	Prev, Next    string
}

// evalRun is one evaluation run: its root call and summary scores.
type evalRun struct {
	*callView
	Href       string // the run's trace
	Evaluation string // the evaluation's ref
	EvalHref   string
	Model      string // the model's ref or name
	ModelHref  string
	Scores     []summaryScore
	// Results is the page of the run's examples (a comparison of one run).
	Results string
}

// summaryScore is one score of a run's summary: "exactMatch true_fraction" 0.67.
type summaryScore struct {
	Name  string
	Value float64
}

// Text formats the score for people.
func (s summaryScore) Text() string { return formatScore(s.Value) }

// evalsPage answers GET …/evaluations?offset=<n>: the project's evaluation
// runs, newest first, with their summary scores and a form to compare some.
func (h *Handler) evalsPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	offset, err := offsetParam(r.URL.Query())
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	ctx := r.Context()
	view := evalsView{Project: projectID, CompareAction: projectPath(projectID, "evaluations/compare"), First: offset + 1}
	opNames, err := h.opRefs(ctx, projectID, evaluateOp)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	if len(opNames) > 0 {
		req := &trace.CallsQueryReq{
			ProjectID: projectID, Filter: trace.CallsFilter{OpNames: opNames},
			SortBy: []trace.SortBy{{Field: "started_at", Direction: "desc"}}, Limit: evalsPageSize + 1, Offset: offset,
		}
		err = h.cfg.Trace.CallsQuery(ctx, req, func(c *trace.Call) error {
			run := runOf(projectID, c)
			run.Results = compareParams{Runs: []string{c.ID}, Baseline: c.ID, Limit: comparePageSize}.url(projectID)
			view.Runs = append(view.Runs, run)
			return nil
		})
		if err != nil {
			h.internalError(w, r, err)
			return
		}
	}
	if len(view.Runs) > evalsPageSize {
		view.Runs = view.Runs[:evalsPageSize]
		view.Next = evalsPath(projectID, offset+evalsPageSize)
	}
	if offset > 0 {
		view.Prev = evalsPath(projectID, max(0, offset-evalsPageSize))
	}
	h.render(w, r, http.StatusOK, "evals", page{Title: "Evaluations", Viewer: v, Project: projectID, Body: view})
}

// opRefs are the refs of every live version of the op named objectID: the
// op names its calls carry.
func (h *Handler) opRefs(ctx context.Context, projectID string, objectIDs ...string) ([]string, error) {
	if h.cfg.Objects == nil {
		return nil, nil
	}
	res, err := h.cfg.Objects.ObjsQuery(ctx, &objects.ObjsQueryReq{
		ProjectID: projectID, MetadataOnly: true,
		Filter: &objects.ObjectVersionFilter{ObjectIDs: objectIDs, IsOp: new(true)},
	})
	if err != nil {
		return nil, err
	}
	refs := make([]string, len(res.Objs))
	for i, o := range res.Objs {
		refs[i] = objectRef(projectID, "op", o.ObjectID, o.Digest)
	}
	return refs, nil
}

// runOf reads an evaluation run from its root call.
func runOf(projectID string, c *trace.Call) evalRun {
	run := evalRun{callView: viewOf(c), Href: projectPath(projectID, "traces/", pathSegment(c.TraceID))}
	var inputs struct {
		Self  any `json:"self"`
		Model any `json:"model"`
	}
	_ = json.Unmarshal(c.Inputs, &inputs)
	if s, ok := inputs.Self.(string); ok {
		run.Evaluation, run.EvalHref = refName(s), refHref(s)
	}
	switch m := inputs.Model.(type) {
	case string:
		run.Model, run.ModelHref = refName(m), refHref(m)
	case map[string]any:
		if name, ok := m["name"].(string); ok {
			run.Model = name
		}
	}
	run.Scores = summaryScores(c.Output)
	return run
}

// refName is what people call the thing a ref names: "name:v…" shortened to
// the name, or the text itself when it is no ref.
func refName(s string) string {
	if !ref.IsRef(s) {
		return s
	}
	r, err := ref.Parse(s)
	if err != nil || r.Name == "" {
		return s
	}
	return r.Name
}

// summaryScores flattens an evaluation summary into named numbers: each
// scorer's figures at any depth ("exactMatch.correct.true_fraction" of a
// scorer that returns {correct: boolean}). The model's own figures
// (latency, success) come last.
func summaryScores(output json.RawMessage) []summaryScore {
	var summary map[string]json.RawMessage
	if json.Unmarshal(output, &summary) != nil {
		return nil
	}
	var scores, model []summaryScore
	for _, scorer := range sortedKeys(summary) {
		if scorer == "model_output" || scorer == "output" {
			continue
		}
		for _, s := range flattenScores(scorer, summary[scorer]) {
			if strings.HasPrefix(scorer, "model_") {
				model = append(model, s)
			} else {
				scores = append(scores, s)
			}
		}
	}
	return append(scores, model...)
}

// Bounds of the scores read from one value: how deep objects are followed,
// and how many scores are kept (a scorer may return anything).
const (
	maxScoreDepth = 8
	maxScores     = 64
)

// flattenScores turns one scorer's value into named numbers: a number or
// boolean (1 or 0) under name, an object's numbers and booleans under
// name.member, name.member.member… (in member order, at most maxScoreDepth
// deep and maxScores in all). Anything else is no score.
func flattenScores(name string, raw json.RawMessage) []summaryScore {
	var out []summaryScore
	var walk func(name string, raw json.RawMessage, depth int)
	walk = func(name string, raw json.RawMessage, depth int) {
		if len(out) >= maxScores {
			return
		}
		if f, ok := scoreNumber(raw); ok {
			out = append(out, summaryScore{Name: name, Value: f})
			return
		}
		var members map[string]json.RawMessage
		if depth >= maxScoreDepth || json.Unmarshal(raw, &members) != nil {
			return
		}
		for _, k := range sortedKeys(members) {
			walk(name+"."+k, members[k], depth+1)
		}
	}
	walk(name, raw, 0)
	return out
}

// scoreNumber reads a number or a boolean (true is 1).
func scoreNumber(raw json.RawMessage) (float64, bool) {
	s := strings.TrimSpace(string(raw))
	switch s {
	case "true":
		return 1, true
	case "false":
		return 0, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// formatScore writes a score with up to four significant decimals.
func formatScore(f float64) string {
	return strconv.FormatFloat(math.Round(f*10000)/10000, 'f', -1, 64)
}

// evalsPath is the link of one page of the evaluation list.
func evalsPath(projectID string, offset int) string {
	q := url.Values{}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	return withQuery(projectPath(projectID, "evaluations"), q)
}
