package webui

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/jsondiff"
	"github.com/weftlabs/weft/trace"
)

// maxDiffChildren bounds the children of each side aligned on the diff page.
const maxDiffChildren = 500

// maxDiffBytes bounds each side of a structural diff; larger values are
// compared by their JSON trees side by side instead.
const maxDiffBytes = 1 << 20

// diffView is the data of the diff page. With no pair chosen (or a side
// that names nothing) it is the form alone.
type diffView struct {
	Project string
	// Kind is "calls" or "traces": what the form's ids name.
	Kind        string
	LeftID      string
	RightID     string
	Left, Right *diffSide
	// Latency, Tokens and Cost compare the right side with the left.
	Latency, Tokens, Cost delta
	// Children pairs the two calls' children by op name.
	Children    []childPair
	ChildrenCut bool
	Inputs      diffPart
	Output      diffPart
}

// diffSide is one call of a diff with its facts.
type diffSide struct {
	Call    *callView
	Cost    float64
	HasCost bool
	Href    string // the call in its trace
}

// diffPart is the structural diff of one part (inputs, output), or why it
// is not shown.
type diffPart struct {
	Root   *jsondiff.Node
	Counts jsondiff.Counts
	Note   string
}

// childPair is one row of the children alignment: both sides when their op
// names align, else one.
type childPair struct {
	Left, Right *callView
	// DiffURL compares an aligned pair.
	DiffURL string
	Latency delta
}

// delta is a difference people read: "+120 ms", with a class saying which
// way it goes ("more", "less" or "same").
type delta struct {
	Text  string
	Class string
}

// diffPage answers GET …/diff?left=<call>&right=<call> (or
// ?kind=traces&left=<trace>&right=<trace>, comparing the traces' roots).
func (h *Handler) diffPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	q := r.URL.Query()
	view := diffView{Project: projectID, Kind: q.Get("kind"), LeftID: q.Get("left"), RightID: q.Get("right")}
	switch view.Kind {
	case "":
		view.Kind = "calls"
	case "calls", "traces":
	default:
		h.refuse(w, r, weft.Errorf(errBadView, "kind: calls or traces"))
		return
	}
	if len(view.LeftID) > maxIDLength || len(view.RightID) > maxIDLength {
		h.refuse(w, r, weft.Errorf(errBadView, "ids: at most %d characters", maxIDLength))
		return
	}
	render := func(status int) {
		h.render(w, r, status, "diff", page{Title: "Compare", Viewer: v, Project: projectID, Body: view})
	}
	if view.LeftID == "" || view.RightID == "" {
		render(http.StatusOK)
		return
	}
	ctx := r.Context()
	left, err := h.diffSideOf(ctx, projectID, view.Kind, view.LeftID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	right, err := h.diffSideOf(ctx, projectID, view.Kind, view.RightID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view.Left, view.Right = left, right
	view.Latency = deltaOfMS(left.Call.LatencyMS, right.Call.LatencyMS)
	view.Tokens = deltaOf(float64(left.Call.Tokens), float64(right.Call.Tokens), func(f float64) string { return strconv.FormatInt(int64(f), 10) + " tokens" })
	if left.HasCost || right.HasCost {
		view.Cost = deltaOf(left.Cost, right.Cost, formatCost)
	}
	if view.Children, view.ChildrenCut, err = h.alignChildren(ctx, projectID, left.Call.ID, right.Call.ID); err != nil {
		h.refuse(w, r, err)
		return
	}
	view.Inputs = structuralDiff(left.Call.call.Inputs, right.Call.call.Inputs)
	view.Output = structuralDiff(left.Call.call.Output, right.Call.call.Output)
	render(http.StatusOK)
}

// diffSideOf reads one side: the call, or a trace's first root.
func (h *Handler) diffSideOf(ctx context.Context, projectID, kind, id string) (*diffSide, error) {
	callID := id
	if kind == "traces" {
		callID = ""
		err := h.cfg.Trace.CallsQuery(ctx, &trace.CallsQueryReq{
			ProjectID: projectID, Filter: trace.CallsFilter{TraceIDs: []string{id}, TraceRootsOnly: true}, Limit: 1,
		}, func(c *trace.Call) error { callID = c.ID; return nil })
		if err != nil {
			return nil, err
		}
		if callID == "" {
			return nil, weft.Errorf(errNoCall, "There is no trace %q in %s.", truncate(id, 40), projectID)
		}
	}
	c, err := h.readCall(ctx, projectID, callID)
	if err != nil {
		return nil, err
	}
	side := &diffSide{Call: viewOf(c)}
	_, side.Cost, side.HasCost = callCosts(c)
	side.Href = projectPath(projectID, "traces/", pathSegment(c.TraceID)) + "?call=" + url.QueryEscape(c.ID)
	return side, nil
}

// alignChildren pairs the children of two calls by op name, in start order,
// along a longest common subsequence of their op names.
func (h *Handler) alignChildren(ctx context.Context, projectID, leftID, rightID string) ([]childPair, bool, error) {
	read := func(parent string) ([]*callView, bool, error) {
		var out []*callView
		err := h.cfg.Trace.CallsQuery(ctx, &trace.CallsQueryReq{
			ProjectID: projectID, Filter: trace.CallsFilter{ParentIDs: []string{parent}}, Limit: maxDiffChildren + 1,
		}, func(c *trace.Call) error { out = append(out, viewOf(c)); return nil })
		if len(out) > maxDiffChildren {
			return out[:maxDiffChildren], true, err
		}
		return out, false, err
	}
	left, leftCut, err := read(leftID)
	if err != nil {
		return nil, false, err
	}
	right, rightCut, err := read(rightID)
	if err != nil {
		return nil, false, err
	}
	pairs := jsondiff.Align(len(left), len(right), func(i, j int) bool { return left[i].OpName == right[j].OpName })
	var rows []childPair
	li, ri := 0, 0
	for _, p := range append(pairs, jsondiff.Pair{Left: len(left), Right: len(right)}) {
		for ; li < p.Left; li++ {
			rows = append(rows, childPair{Left: left[li]})
		}
		for ; ri < p.Right; ri++ {
			rows = append(rows, childPair{Right: right[ri]})
		}
		if p.Left < len(left) && p.Right < len(right) {
			l, r := left[p.Left], right[p.Right]
			rows = append(rows, childPair{
				Left: l, Right: r, Latency: deltaOfMS(l.LatencyMS, r.LatencyMS),
				DiffURL: projectPath(projectID, "diff?left=", url.QueryEscape(l.ID), "&right=", url.QueryEscape(r.ID)),
			})
			li, ri = p.Left+1, p.Right+1
		}
	}
	return rows, leftCut || rightCut, nil
}

// structuralDiff compares two stored values.
func structuralDiff(left, right []byte) diffPart {
	if len(left) > maxDiffBytes || len(right) > maxDiffBytes {
		return diffPart{Note: "These values are too large to compare here."}
	}
	root, err := jsondiff.Diff(left, right)
	if errors.Is(err, jsondiff.ErrInvalidJSON) {
		return diffPart{Note: "These values could not be compared: " + err.Error()}
	}
	if err != nil {
		return diffPart{Note: err.Error()}
	}
	return diffPart{Root: root, Counts: root.Counts()}
}

func deltaOfMS(left, right *int64) delta {
	if left == nil || right == nil {
		return delta{Text: "–", Class: "same"}
	}
	return deltaOf(float64(*left), float64(*right), func(f float64) string {
		ms := int64(f)
		return formatLatency(&ms)
	})
}

// deltaOf is right − left, formatted by format (given the magnitude).
func deltaOf(left, right float64, format func(float64) string) delta {
	d := right - left
	switch {
	case d > 0:
		return delta{Text: "+" + format(d), Class: "more"}
	case d < 0:
		return delta{Text: "−" + format(-d), Class: "less"}
	}
	return delta{Text: "±0", Class: "same"}
}
