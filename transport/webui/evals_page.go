package webui

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/weftlabs/weft/feedback"
)

// compareView is the data of the comparison page.
type compareView struct {
	Project string
	Params  compareParams
	Runs    []evalRun
	// Baseline is the index of the baseline in Runs.
	Baseline int
	Metrics  []string
	// Directions are the metrics' directions, each with the link that
	// turns it the other way.
	Directions []metricDirectionView
	// Total counts the examples shown by the filter; All every example
	// (both -1 when the page was found without counting them, and then
	// BaselineCount is the baseline's number of examples).
	Total, All    int
	BaselineCount int
	Rows          []compareRow
	First         int
	Prev, Next    string
	// Links of the view: regressions only on and off, each run as baseline.
	RegressionsOn, RegressionsOff string
	BaselineLinks                 []string
	// The forms that send chosen rows on (CSRF-protected POSTs).
	CSRF          string
	CanWrite      bool
	Queues        []feedback.Queue
	QueueAction   string
	DatasetAction string
	DatasetName   string
	// Export links the examples of the view as CSV and as JSONL; ExportLimit
	// is set when there are more than an export writes.
	Export      map[string]string
	ExportLimit int
}

// metricDirectionView is one metric's direction in the comparison.
type metricDirectionView struct {
	Name          string
	LowerIsBetter bool
	Flip          string
}

// compareRow is one example across the runs.
type compareRow struct {
	Key        string
	Example    *jsonNode
	Regression bool
	Cells      []compareCell
}

// compareCell is one run's result for the example.
type compareCell struct {
	Run     string // the run's id
	Missing bool
	Href    string // the call in its trace
	Output  *jsonNode
	Scores  []cellScore
}

// cellScore is one metric of a cell with its delta against the baseline.
type cellScore struct {
	Name  string
	Value string
	Delta delta
	// Has is false when the run has no such score for the example.
	Has bool
}

// evalComparePage answers GET …/evaluations/compare?run=…&run=…&baseline=…:
// the runs' examples aligned by row digest with their scores and deltas
// against the baseline, regressions only on request, paged; with one run,
// that run's results.
func (h *Handler) evalComparePage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	p, err := parseCompareParams(r.URL.Query())
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	ctx := r.Context()
	win, err := h.compareWindowOf(ctx, projectID, p)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	cmp := win.comparison
	view := compareView{
		Project: projectID, Params: p, Runs: cmp.Runs, Baseline: cmp.BaselineIndex, Metrics: cmp.Metrics,
		Total: win.Total, All: win.All, BaselineCount: win.BaselineCount, First: p.Offset + 1,
		RegressionsOn:  p.url(projectID, "regressions", "1", "offset", ""),
		RegressionsOff: p.url(projectID, "regressions", "", "offset", ""),
		CSRF:           v.CSRF(),
		QueueAction:    projectPath(projectID, "evaluations/compare/queue"),
		DatasetAction:  projectPath(projectID, "evaluations/compare/dataset"),
	}
	view.Export = exportLinks(projectPath(projectID, "evaluations/compare/export"), p.values("offset", "", "limit", ""))
	if max(win.Total, win.BaselineCount) > h.cfg.MaxExportRows {
		view.ExportLimit = h.cfg.MaxExportRows
	}
	for _, m := range cmp.Metrics {
		flipped := p
		flipped.Directions = p.Directions.flipped(m)
		view.Directions = append(view.Directions, metricDirectionView{Name: m, LowerIsBetter: p.Directions.lowerIsBetter(m), Flip: flipped.url(projectID, "offset", "")})
	}
	for _, run := range cmp.Runs {
		view.BaselineLinks = append(view.BaselineLinks, p.url(projectID, "baseline", run.ID, "offset", ""))
	}
	pageRows := cmp.Examples
	if p.Offset > 0 {
		view.Prev = p.url(projectID, "offset", itoaOffset(max(0, p.Offset-p.Limit)))
	}
	if win.HasNext {
		view.Next = p.url(projectID, "offset", itoaOffset(p.Offset+p.Limit))
	}
	values, err := h.exampleValues(ctx, projectID, pageRows)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	for i, ex := range pageRows {
		view.Rows = append(view.Rows, compareRowOf(projectID, cmp, ex, values[i], p.Directions))
	}
	view.DatasetName = h.exampleDataset(pageRows)
	if h.cfg.Authorizer.Authorize(ctx, v.principal, projectID, true) == nil {
		view.CanWrite = true
		if h.cfg.Feedback != nil {
			res, err := h.cfg.Feedback.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: projectID})
			if err != nil {
				h.internalError(w, r, err)
				return
			}
			view.Queues = res.Queues
		}
	}
	title := "Compare evaluations"
	if len(cmp.Runs) == 1 {
		title = "Evaluation results"
	}
	h.render(w, r, http.StatusOK, "eval_compare", page{Title: title, Viewer: v, Project: projectID, Body: view})
}

// pageOf is items[offset : offset+limit], bounded by len(items).
func pageOf[T any](items []T, offset, limit int) []T {
	items = items[min(offset, len(items)):]
	return items[:min(limit, len(items))]
}

func itoaOffset(n int) string { return strconv.Itoa(n) }

// compareRowOf lays one example out: each run's output and scores, with
// deltas against the baseline, better or worse in each metric's direction.
func compareRowOf(projectID string, cmp *comparison, ex *compareExample, value json.RawMessage, dirs metricDirections) compareRow {
	row := compareRow{Key: ex.Key, Regression: ex.regressed(cmp.BaselineIndex, cmp.Metrics, dirs)}
	if value != nil {
		row.Example = cellTree(projectID, value)
	} else {
		row.Example = cellTree(projectID, ex.Example)
	}
	base := ex.Results[cmp.BaselineIndex]
	for i, res := range ex.Results {
		if res == nil {
			row.Cells = append(row.Cells, compareCell{Run: cmp.Runs[i].ID, Missing: true})
			continue
		}
		cell := compareCell{
			Run:    cmp.Runs[i].ID,
			Href:   projectPath(projectID, "traces/", pathSegment(res.TraceID)) + "?call=" + pathSegment(res.CallID),
			Output: cellTree(projectID, res.Output),
		}
		for _, m := range cmp.Metrics {
			s := cellScore{Name: m}
			val, ok := res.Scores[m]
			if ok {
				s.Has, s.Value = true, formatScore(val)
				if bv, bok := base.scoreOf(m); bok && i != cmp.BaselineIndex {
					s.Delta = scoreDelta(bv, val, dirs.better(m, bv, val))
				}
			}
			cell.Scores = append(cell.Scores, s)
		}
		row.Cells = append(row.Cells, cell)
	}
	return row
}

// scoreOf is the result's score m; false when r is nil or lacks it.
func (r *exampleResult) scoreOf(m string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	v, ok := r.Scores[m]
	return v, ok
}

// scoreDelta is a score's change against the baseline, whose class says
// whether it is better ("up"), worse ("down") or the same (better is the
// comparison of metricDirections.better).
func scoreDelta(baseline, score float64, better int) delta {
	d := deltaOf(baseline, score, formatScore)
	d.Class = map[int]string{1: "up", -1: "down", 0: "same"}[better]
	return d
}
