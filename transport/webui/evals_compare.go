package webui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// Comparison bounds: runs compared at once, and rows per page.
const (
	maxCompareRuns  = 5
	comparePageSize = 50
)

// compareParams is the state of a comparison in its URL.
type compareParams struct {
	Runs        []string
	Baseline    string
	Regressions bool
	Offset      int
}

// parseCompareParams reads ?run=<id>&run=<id>…&baseline=<id>&regressions=1&offset=<n>.
func parseCompareParams(q url.Values) (compareParams, error) {
	p := compareParams{Baseline: q.Get("baseline")}
	for _, id := range q["run"] {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(p.Runs, id) {
			if len(id) > maxIDLength {
				return p, weft.Errorf(errBadView, "run: at most %d characters", maxIDLength)
			}
			p.Runs = append(p.Runs, id)
		}
	}
	if len(p.Runs) < 2 || len(p.Runs) > maxCompareRuns {
		return p, weft.Errorf(errBadView, "run: choose from 2 to %d evaluation runs to compare", maxCompareRuns)
	}
	if p.Baseline == "" {
		p.Baseline = p.Runs[0]
	}
	if !slices.Contains(p.Runs, p.Baseline) {
		return p, weft.Errorf(errBadView, "baseline: must be one of the runs compared")
	}
	switch q.Get("regressions") {
	case "":
	case "1", "on":
		p.Regressions = true
	default:
		return p, weft.Errorf(errBadView, "regressions: 1 or nothing")
	}
	off, err := offsetParam(q)
	p.Offset = off
	return p, err
}

// values writes the parameters back as a query, with changes applied.
func (p compareParams) values(changes ...string) url.Values {
	q := url.Values{"run": p.Runs, "baseline": {p.Baseline}}
	if p.Regressions {
		q.Set("regressions", "1")
	}
	if p.Offset > 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	for i := 0; i+1 < len(changes); i += 2 {
		if changes[i+1] == "" {
			q.Del(changes[i])
		} else {
			q.Set(changes[i], changes[i+1])
		}
	}
	return q
}

func (p compareParams) url(projectID string, changes ...string) string {
	return withQuery(projectPath(projectID, "evaluations/compare"), p.values(changes...))
}

// comparison is every example of two or more runs aligned by row digest,
// before paging: what the page and the send actions read.
type comparison struct {
	Runs    []evalRun
	Metrics []string
	// Examples are in the baseline's order, then each other run's
	// examples the baseline lacks.
	Examples []*compareExample
	// BaselineIndex is the baseline's index in Runs.
	BaselineIndex int
}

// compareExample is one example (one dataset row) across the runs.
type compareExample struct {
	Key string // the row digest
	// Example is the example as the calls name it: a row ref or the value.
	Example json.RawMessage
	// Results are per run, in Runs order (nil: the run has no such example).
	Results    []*exampleResult
	Regression bool
}

// exampleResult is one run's call for an example.
type exampleResult struct {
	CallID, TraceID string
	Output          json.RawMessage
	Scores          map[string]float64
}

// compareRuns loads each run's per-example calls and aligns them.
func (h *Handler) compareRuns(ctx context.Context, projectID string, p compareParams) (*comparison, error) {
	cmp := &comparison{}
	predict, err := h.opRefs(ctx, projectID, predictOps...)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*compareExample{}
	metrics := map[string]bool{}
	for i, id := range p.Runs {
		res, err := h.cfg.Trace.CallRead(ctx, &trace.CallReadReq{ProjectID: projectID, ID: id})
		if err != nil {
			return nil, err
		}
		if res.Call == nil {
			return nil, weft.Errorf(errNoRun, "no evaluation run %s in this project", truncate(id, 40))
		}
		cmp.Runs = append(cmp.Runs, runOf(projectID, res.Call))
		if id == p.Baseline {
			cmp.BaselineIndex = i
		}
		if len(predict) == 0 {
			continue
		}
		req := &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{ParentIDs: []string{id}, OpNames: predict}}
		err = h.cfg.Trace.CallsQuery(ctx, req, func(c *trace.Call) error {
			key, example, result := exampleOf(c)
			if key == "" {
				return nil
			}
			ex := byKey[key]
			if ex == nil {
				ex = &compareExample{Key: key, Example: example, Results: make([]*exampleResult, len(p.Runs))}
				byKey[key] = ex
				cmp.Examples = append(cmp.Examples, ex)
			}
			if ex.Results[i] == nil { // a repeated trial: the first counts
				ex.Results[i] = result
			}
			for m := range result.Scores {
				metrics[m] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	cmp.Metrics = sortedKeys(metrics)
	// Baseline order first: examples the baseline saw, in its order.
	b := cmp.BaselineIndex
	slices.SortStableFunc(cmp.Examples, func(x, y *compareExample) int {
		return boolRank(x.Results[b] == nil) - boolRank(y.Results[b] == nil)
	})
	for _, ex := range cmp.Examples {
		ex.Regression = ex.regressed(b, cmp.Metrics)
	}
	return cmp, nil
}

var errNoRun = weft.DefineError(weft.ErrNotFound, "NotFoundError", "no such evaluation run")

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// regressed reports whether any run scored an example lower than the
// baseline on any metric (scores are taken as higher is better).
func (ex *compareExample) regressed(baseline int, metrics []string) bool {
	base := ex.Results[baseline]
	if base == nil {
		return false
	}
	for i, r := range ex.Results {
		if i == baseline || r == nil {
			continue
		}
		for _, m := range metrics {
			bv, bok := base.Scores[m]
			rv, rok := r.Scores[m]
			if bok && rok && rv < bv {
				return true
			}
		}
	}
	return false
}

// exampleOf reads one per-example call: its example's row digest (the id of
// a row ref, else the digest of the example's canonical JSON), the example,
// and the call's output and scores.
func exampleOf(c *trace.Call) (string, json.RawMessage, *exampleResult) {
	var inputs struct {
		Example json.RawMessage `json:"example"`
	}
	if json.Unmarshal(c.Inputs, &inputs) != nil || len(inputs.Example) == 0 {
		return "", nil, nil
	}
	var out struct {
		Output      json.RawMessage            `json:"output"`
		ModelOutput json.RawMessage            `json:"model_output"`
		Scores      map[string]json.RawMessage `json:"scores"`
	}
	_ = json.Unmarshal(c.Output, &out)
	result := &exampleResult{CallID: c.ID, TraceID: c.TraceID, Output: out.ModelOutput, Scores: map[string]float64{}}
	if len(result.Output) == 0 {
		result.Output = out.Output
	}
	for scorer, raw := range out.Scores {
		for _, s := range flattenScores(scorer, raw) {
			result.Scores[s.Name] = s.Value
		}
	}
	return rowKey(inputs.Example), inputs.Example, result
}

// rowKey is the row digest an example names.
func rowKey(example json.RawMessage) string {
	var s string
	if json.Unmarshal(example, &s) == nil && ref.IsRef(s) {
		if r, err := ref.Parse(s); err == nil && len(r.Extra) >= 2 && r.Extra[len(r.Extra)-2] == "id" {
			return r.Extra[len(r.Extra)-1]
		}
	}
	v, err := digest.Parse(example)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(v.Canonical())
	return hex.EncodeToString(sum[:])
}

// exampleValues resolves the examples of some rows to their values: row refs
// are read through the objects service in one batch, inline examples are
// themselves.
func (h *Handler) exampleValues(ctx context.Context, projectID string, examples []*compareExample) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(examples))
	var refs []string
	var at []int
	for i, ex := range examples {
		var s string
		if json.Unmarshal(ex.Example, &s) == nil && ref.IsRef(s) {
			// Only refs into this project are read: a call may name
			// anything, and the viewer is authorized for this project alone.
			if r, err := ref.Parse(s); err != nil || r.ProjectID() != projectID || h.cfg.Objects == nil {
				continue
			}
			refs = append(refs, s)
			at = append(at, i)
			continue
		}
		out[i] = ex.Example
	}
	if len(refs) == 0 {
		return out, nil
	}
	res, err := h.cfg.Objects.RefsReadBatch(ctx, &objects.RefsReadBatchReq{Refs: refs})
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		if j < len(res.Vals) {
			out[i] = res.Vals[j]
		}
	}
	return out, nil
}
