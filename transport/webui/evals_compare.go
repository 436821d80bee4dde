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

// Comparison bounds: runs compared at once, and rows per page (by
// default, and at most).
const (
	maxCompareRuns  = 5
	comparePageSize = 50
	maxComparePage  = 200
)

// compareParams is the state of a comparison in its URL.
type compareParams struct {
	Runs        []string
	Baseline    string
	Regressions bool
	// Directions says which metrics are lower-is-better.
	Directions metricDirections
	Offset     int
	Limit      int
}

// parseCompareParams reads ?run=<id>&run=<id>…&baseline=<id>&regressions=1&lower=<metric>…&higher=<metric>…&offset=<n>&limit=<n>.
func parseCompareParams(q url.Values) (compareParams, error) {
	p := compareParams{Baseline: q.Get("baseline"), Limit: comparePageSize}
	var err error
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxComparePage {
			return p, weft.Errorf(errBadView, "limit: rows per page, from 1 to %d", maxComparePage)
		}
		p.Limit = n
	}
	for _, id := range q["run"] {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(p.Runs, id) {
			if len(id) > maxIDLength {
				return p, weft.Errorf(errBadView, "run: at most %d characters", maxIDLength)
			}
			p.Runs = append(p.Runs, id)
		}
	}
	if len(p.Runs) < 1 || len(p.Runs) > maxCompareRuns {
		return p, weft.Errorf(errBadView, "run: choose one evaluation run to see its results, or up to %d to compare", maxCompareRuns)
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
	if p.Directions, err = parseMetricDirections(q); err != nil {
		return p, err
	}
	p.Offset, err = offsetParam(q)
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
	if p.Limit != comparePageSize {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if len(p.Directions.Lower) > 0 {
		q["lower"] = p.Directions.Lower
	}
	if len(p.Directions.Higher) > 0 {
		q["higher"] = p.Directions.Higher
	}
	return applyChanges(q, changes)
}

func (p compareParams) url(projectID string, changes ...string) string {
	return withQuery(projectPath(projectID, "evaluations/compare"), p.values(changes...))
}

// comparison is every example of one run (its results) or more (aligned by
// row digest),
// before paging: what the page and the send actions read. Its examples may
// be shared with other requests (the alignment cache): never changed.
type comparison struct {
	Runs    []evalRun
	Metrics []string
	// Examples are in the baseline's order, then each other run's
	// examples the baseline lacks.
	Examples []*compareExample
	// BaselineIndex is the baseline's index in Runs.
	BaselineIndex int
	// version names the state of the runs (see alignmentKey).
	version []string
}

// compareExample is one example (one dataset row) across the runs.
type compareExample struct {
	Key string // the row digest
	// Example is the example as the calls name it: a row ref or the value.
	Example json.RawMessage
	// Results are per run, in Runs order (nil: the run has no such example).
	Results []*exampleResult
}

// exampleResult is one run's call for an example.
type exampleResult struct {
	CallID, TraceID string
	Output          json.RawMessage
	Scores          map[string]float64
}

// loadRuns reads the runs compared (their root calls) and the refs of the
// per-example op, the start of every comparison.
func (h *Handler) loadRuns(ctx context.Context, projectID string, p compareParams) (*comparison, []string, error) {
	cmp := &comparison{}
	predict, err := h.opRefs(ctx, projectID, predictOps...)
	if err != nil {
		return nil, nil, err
	}
	for i, id := range p.Runs {
		res, err := h.cfg.Trace.CallRead(ctx, &trace.CallReadReq{ProjectID: projectID, ID: id})
		if err != nil {
			return nil, nil, err
		}
		if res.Call == nil {
			return nil, nil, weft.Errorf(errNoRun, "no evaluation run %s in this project", truncate(id, 40))
		}
		cmp.Runs = append(cmp.Runs, runOf(projectID, res.Call))
		if id == p.Baseline {
			cmp.BaselineIndex = i
		}
		if res.Call.EndedAt != nil {
			cmp.version = append(cmp.version, id+"@"+strconv.FormatInt(res.Call.EndedAt.UnixNano(), 10))
		}
	}
	return cmp, predict, nil
}

// alignment is every example of some runs, aligned by row digest, in the
// order first seen (run by run), with the metrics any of them scored.
type alignment struct {
	Examples []*compareExample
	Metrics  []string
}

// compareRuns aligns every example of every run: from the alignment cache
// when the runs have ended and are as they were, else from each run's
// per-example calls.
func (h *Handler) compareRuns(ctx context.Context, projectID string, p compareParams) (*comparison, error) {
	cmp, predict, err := h.loadRuns(ctx, projectID, p)
	if err != nil {
		return nil, err
	}
	key, err := h.alignmentKey(ctx, projectID, p, cmp, predict)
	if err != nil {
		return nil, err
	}
	al := h.alignments.get(key)
	if al == nil {
		if al, err = h.alignRuns(ctx, projectID, p, predict); err != nil {
			return nil, err
		}
		h.alignments.put(key, al)
	}
	cmp.Metrics = al.Metrics
	// Baseline order first: examples the baseline saw, in its order.
	b := cmp.BaselineIndex
	cmp.Examples = slices.Clone(al.Examples)
	slices.SortStableFunc(cmp.Examples, func(x, y *compareExample) int {
		return boolRank(x.Results[b] == nil) - boolRank(y.Results[b] == nil)
	})
	return cmp, nil
}

// alignmentKey names the alignment of the runs as they are: the project,
// the runs in order, the per-example op's refs, and for each run its end
// and the number of its per-example calls. "" (nothing is cached) while a
// run has not ended: its examples may still be arriving.
func (h *Handler) alignmentKey(ctx context.Context, projectID string, p compareParams, cmp *comparison, predict []string) (string, error) {
	if len(cmp.version) != len(p.Runs) || len(predict) == 0 {
		return "", nil
	}
	parts := append([]string{projectID}, predict...)
	for i, id := range p.Runs {
		stats, err := h.cfg.Trace.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: projectID, Filter: trace.CallsFilter{ParentIDs: []string{id}, OpNames: predict}})
		if err != nil {
			return "", err
		}
		parts = append(parts, cmp.version[i]+"#"+strconv.FormatInt(stats.Count, 10))
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:]), nil
}

// alignRuns reads each run's per-example calls and aligns them.
func (h *Handler) alignRuns(ctx context.Context, projectID string, p compareParams, predict []string) (*alignment, error) {
	al := &alignment{}
	byKey := map[string]*compareExample{}
	metrics := map[string]bool{}
	for i, id := range p.Runs {
		if len(predict) == 0 {
			continue
		}
		req := &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{ParentIDs: []string{id}, OpNames: predict}}
		err := h.cfg.Trace.CallsQuery(ctx, req, func(c *trace.Call) error {
			key, example, result := exampleOf(c)
			if key == "" {
				return nil
			}
			ex := byKey[key]
			if ex == nil {
				ex = &compareExample{Key: key, Example: example, Results: make([]*exampleResult, len(p.Runs))}
				byKey[key] = ex
				al.Examples = append(al.Examples, ex)
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
	al.Metrics = sortedKeys(metrics)
	return al, nil
}

// compareWindow is what one page of a comparison shows: the page's
// examples, and how many there are in all (-1 when the page was found
// without counting them).
type compareWindow struct {
	*comparison
	Total, All int
	// BaselineCount is the number of the baseline's examples, when known.
	BaselineCount int
	HasNext       bool
}

// compareWindowOf loads one page of a comparison. A page of all examples
// that lies within the baseline's examples is found without reading every
// example: the baseline's page of calls, then each other run's calls for
// those examples' row refs (the input refs filter). Any other page (the
// regressions, the examples only other runs have, inline examples) aligns
// every example first (kept in the alignment cache once the runs have
// ended), then filters and pages.
func (h *Handler) compareWindowOf(ctx context.Context, projectID string, p compareParams) (*compareWindow, error) {
	if !p.Regressions {
		win, ok, err := h.baselineWindow(ctx, projectID, p)
		if err != nil || ok {
			return win, err
		}
	}
	cmp, err := h.compareRuns(ctx, projectID, p)
	if err != nil {
		return nil, err
	}
	all := len(cmp.Examples)
	examples := cmp.shown(p)
	win := &compareWindow{comparison: cmp, Total: len(examples), All: all, BaselineCount: -1}
	cmp.Examples = pageOf(examples, p.Offset, p.Limit)
	win.HasNext = p.Offset+len(cmp.Examples) < len(examples)
	return win, nil
}

// shown is the examples p's view shows, in order: every one, or the
// regressions only. It takes cmp.Examples' array.
func (cmp *comparison) shown(p compareParams) []*compareExample {
	if !p.Regressions {
		return cmp.Examples
	}
	return slices.DeleteFunc(cmp.Examples, func(ex *compareExample) bool {
		return !ex.regressed(cmp.BaselineIndex, cmp.Metrics, p.Directions)
	})
}

// baselineWindow is compareWindowOf's path for a page inside the
// baseline's examples; ok is false when the page is not one (it reaches
// the baseline's last example, or an example is no row ref).
func (h *Handler) baselineWindow(ctx context.Context, projectID string, p compareParams) (*compareWindow, bool, error) {
	cmp, predict, err := h.loadRuns(ctx, projectID, p)
	if err != nil || len(predict) == 0 {
		return nil, false, err
	}
	b := cmp.BaselineIndex
	filter := trace.CallsFilter{ParentIDs: []string{p.Baseline}, OpNames: predict}
	stats, err := h.cfg.Trace.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: projectID, Filter: filter})
	if err != nil {
		return nil, false, err
	}
	if int64(p.Offset+p.Limit) >= stats.Count {
		return nil, false, nil
	}
	byKey := map[string]*compareExample{}
	var refs []string
	notRef := false
	req := &trace.CallsQueryReq{ProjectID: projectID, Filter: filter, Limit: p.Limit, Offset: p.Offset}
	err = h.cfg.Trace.CallsQuery(ctx, req, func(c *trace.Call) error {
		key, example, result := exampleOf(c)
		var s string
		if key == "" || json.Unmarshal(example, &s) != nil || !ref.IsRef(s) {
			notRef = true
			return nil
		}
		ex := byKey[key]
		if ex == nil {
			ex = &compareExample{Key: key, Example: example, Results: make([]*exampleResult, len(p.Runs))}
			ex.Results[b] = result
			byKey[key] = ex
			cmp.Examples = append(cmp.Examples, ex)
			refs = append(refs, s)
		}
		return nil
	})
	if err != nil || notRef {
		return nil, false, err
	}
	for i, id := range p.Runs {
		if i == b {
			continue
		}
		req := &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{ParentIDs: []string{id}, OpNames: predict, InputRefs: refs}}
		err := h.cfg.Trace.CallsQuery(ctx, req, func(c *trace.Call) error {
			key, _, result := exampleOf(c)
			if ex := byKey[key]; ex != nil && ex.Results[i] == nil {
				ex.Results[i] = result
			}
			return nil
		})
		if err != nil {
			return nil, false, err
		}
	}
	metrics := map[string]bool{}
	for _, ex := range cmp.Examples {
		for _, r := range ex.Results {
			if r != nil {
				for m := range r.Scores {
					metrics[m] = true
				}
			}
		}
	}
	cmp.Metrics = sortedKeys(metrics)
	return &compareWindow{comparison: cmp, Total: -1, All: -1, BaselineCount: int(stats.Count), HasNext: true}, true, nil
}

var errNoRun = weft.DefineError(weft.ErrNotFound, "NotFoundError", "no such evaluation run")

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// regressed reports whether any run scored an example worse than the
// baseline on any metric, each metric in its direction.
func (ex *compareExample) regressed(baseline int, metrics []string, dirs metricDirections) bool {
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
			if bok && rok && dirs.better(m, bv, rv) < 0 {
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
