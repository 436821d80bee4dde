package webui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// childrenPageSize is how many children one expansion of a tree node loads;
// a "more" button loads the next page, so a call with thousands of children
// opens as fast as one with ten.
const childrenPageSize = 100

// maxIDLength bounds call and trace ids taken from a URL.
const maxIDLength = 128

// errNoCall: a trace or call id that names nothing visible (HTTP 404).
var errNoCall = weft.DefineError(weft.ErrNotFound, "NotFoundError", "not found")

// treeChildren is one page of a node's children.
type treeChildren struct {
	Project string
	Calls   []*callView
	// MoreURL loads the next page ("" when this is the last).
	MoreURL string
	Shown   int // children shown so far, this page included
}

// traceView is the data of the trace page.
type traceView struct {
	Project string
	TraceID string
	// Roots are the trace's root calls, each with its first page of children.
	Roots  []rootNode
	Detail *callDetail
	// Timeline is the span of the trace the tree's time bars are drawn in.
	Timeline timelineSpan
}

type rootNode struct {
	Call     *callView
	Children *treeChildren
}

// callDetail is the data of the detail pane.
type callDetail struct {
	Project    string
	Call       *callView
	Inputs     *jsonNode
	Output     *jsonNode
	Attributes *jsonNode
	// ChatIn and ChatOut are the inputs' messages and the output's reply when
	// the call is a chat completion; the JSON trees are still shown below.
	ChatIn, ChatOut []chatMessage
	Usage           []usageRow
	Feedback        []feedbackItem

	// Costs are the call's own costs per model, when priced.
	Costs     []costRow
	CostTotal float64
	HasCost   bool
	Exception *exceptionView
	// CSRF is the session's token, for the feedback forms when a page is
	// used without scripts (htmx sends it as a header).
	CSRF string
	// CanWrite says whether the viewer may add feedback.
	CanWrite bool
	// SwapOOB marks the feedback section for htmx to swap in by its id, when
	// it rides along with the answer to another form (an annotation saved).
	SwapOOB bool
}

// feedbackItem is one feedback row shown on a call.
type feedbackItem struct {
	Type    string
	Emoji   string // reactions
	Note    string // notes
	Payload *jsonNode
	// Annotation is the name of an annotation ("wandb.annotation.<name>"),
	// whose payload's value is Value.
	Annotation string
	Value      *jsonNode
	Creator    string // the creator the client named, else
	UserID     string // the user who stored it
	Username   string
	Created    time.Time
}

// stringField reads a text column of a feedback row, nullable or not.
func stringField(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case *string:
		if s != nil {
			return *s
		}
	}
	return ""
}

func (h *Handler) tracePage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ctx := r.Context()
	traceID := r.PathValue("traceID")
	if len(traceID) > maxIDLength {
		h.refuse(w, r, weft.Errorf(errBadView, "trace id: at most %d characters", maxIDLength))
		return
	}
	var roots []*callView
	err := h.cfg.Trace.CallsQuery(ctx, &trace.CallsQueryReq{
		ProjectID: projectID, Filter: trace.CallsFilter{TraceIDs: []string{traceID}, TraceRootsOnly: true}, Limit: childrenPageSize,
	}, func(c *trace.Call) error { roots = append(roots, viewOf(c)); return nil })
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if len(roots) == 0 {
		h.refuse(w, r, weft.Errorf(errNoCall, "There is no trace %q in %s.", truncate(traceID, 40), projectID))
		return
	}
	data := traceView{Project: projectID, TraceID: traceID}
	for _, root := range roots {
		children, err := h.children(ctx, projectID, root.ID, 0)
		if err != nil {
			h.internalError(w, r, err)
			return
		}
		data.Roots = append(data.Roots, rootNode{Call: root, Children: &children})
	}
	selected := r.URL.Query().Get("call")
	if selected == "" {
		selected = roots[0].ID
	}
	detail, err := h.detail(ctx, projectID, selected)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if detail.Call.TraceID != traceID {
		h.refuse(w, r, weft.Errorf(errNoCall, "Call %q is not part of this trace.", truncate(selected, 40)))
		return
	}
	data.Detail = detail
	h.forViewer(r, v, projectID, detail)
	data.Timeline = timelineOf(roots, h.cfg.Now())
	h.render(w, r, http.StatusOK, "trace", page{Title: roots[0].Name, Viewer: v, Project: projectID, Body: data})
}

// callChildren answers the tree's request for one page of a node's children.
func (h *Handler) callChildren(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	callID := r.PathValue("callID")
	offset := 0
	if s := r.URL.Query().Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			h.refuse(w, r, weft.Errorf(errBadView, "offset: must be a whole number"))
			return
		}
		offset = n
	}
	if len(callID) > maxIDLength {
		h.refuse(w, r, weft.Errorf(errBadView, "call id: at most %d characters", maxIDLength))
		return
	}
	children, err := h.children(r.Context(), projectID, callID, offset)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.renderFragment(w, r, "trace", "tree_children", children)
}

// callDetail answers the detail pane of one call; a plain page load of the
// same URL goes to the call's trace page with the call selected.
func (h *Handler) callDetail(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	callID := r.PathValue("callID")
	if len(callID) > maxIDLength {
		h.refuse(w, r, weft.Errorf(errBadView, "call id: at most %d characters", maxIDLength))
		return
	}
	detail, err := h.detail(r.Context(), projectID, callID)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if r.Header.Get("HX-Request") != "true" {
		http.Redirect(w, r, projectPath(projectID, "traces/", detail.Call.TraceID)+"?call="+url.QueryEscape(callID), http.StatusSeeOther)
		return
	}
	h.forViewer(r, v, projectID, detail)
	h.renderFragment(w, r, "trace", "call_detail", detail)
}

// children loads one page of the children of parentID, in start order, and
// marks which of them have children of their own (one query for the page).
func (h *Handler) children(ctx context.Context, projectID, parentID string, offset int) (treeChildren, error) {
	out := treeChildren{Project: projectID}
	err := h.cfg.Trace.CallsQuery(ctx, &trace.CallsQueryReq{
		ProjectID: projectID, Filter: trace.CallsFilter{ParentIDs: []string{parentID}},
		Limit: childrenPageSize + 1, Offset: offset,
	}, func(c *trace.Call) error { out.Calls = append(out.Calls, viewOf(c)); return nil })
	if err != nil {
		return out, err
	}
	if len(out.Calls) > childrenPageSize {
		out.Calls = out.Calls[:childrenPageSize]
		out.MoreURL = projectPath(projectID, "calls/", pathSegment(parentID), "/children?offset=", strconv.Itoa(offset+childrenPageSize))
	}
	out.Shown = offset + len(out.Calls)
	if len(out.Calls) == 0 {
		return out, nil
	}
	byID := make(map[string]*callView, len(out.Calls))
	ids := make([]string, len(out.Calls))
	for i, c := range out.Calls {
		byID[c.ID], ids[i] = c, c.ID
	}
	err = h.cfg.Trace.CallsQuery(ctx, &trace.CallsQueryReq{
		ProjectID: projectID, Filter: trace.CallsFilter{CallIDs: ids, HasChildren: true}, Columns: []string{"id"},
	}, func(c *trace.Call) error { byID[c.ID].HasChildren = true; return nil })
	return out, err
}

// detail reads one call for the detail pane, with its feedback.
func (h *Handler) detail(ctx context.Context, projectID, callID string) (*callDetail, error) {
	c, err := h.readCall(ctx, projectID, callID)
	if err != nil {
		return nil, err
	}
	d := &callDetail{
		Project: projectID, Call: viewOf(c),
		Inputs: jsonTree(c.Inputs), Output: jsonTree(c.Output), Attributes: jsonTree(c.Attributes),
		ChatIn: chatInputs(c.Inputs), ChatOut: chatOutput(c.Output), Usage: usageRows(c),
	}
	d.Exception = exceptionOf(d.Call.Exception)
	d.Costs, d.CostTotal, d.HasCost = callCosts(c)
	for part, node := range map[string]*jsonNode{"inputs": d.Inputs, "output": d.Output, "attributes": d.Attributes} {
		decorate(node, "", valueLinks{ShowAllBase: callValueBase(projectID, callID, part), Project: projectID})
	}
	// The members a chat view draws start closed in the JSON tree below it.
	if d.ChatIn != nil {
		closeMembers(d.Inputs, "messages", "contents", "system", "input")
	}
	if d.ChatOut != nil {
		closeMembers(d.Output, "choices", "candidates", "content", "output")
	}
	decorateMessages(d.ChatIn, projectID)
	decorateMessages(d.ChatOut, projectID)
	if h.cfg.Feedback != nil {
		if d.Feedback, err = h.feedbackOf(ctx, projectID, callID); err != nil {
			return nil, err
		}
	}
	// One lookup names the call's user and the feedback authors.
	userIDs := []string{d.Call.UserID}
	for _, f := range d.Feedback {
		userIDs = append(userIDs, f.UserID)
	}
	names, err := h.cfg.Identity.Usernames(ctx, userIDs)
	if err != nil {
		return nil, err
	}
	d.Call.Username = names[d.Call.UserID]
	for i := range d.Feedback {
		d.Feedback[i].Username = names[d.Feedback[i].UserID]
	}
	return d, nil
}

// readCall reads one call with its costs; a call that is not visible is
// errNoCall.
func (h *Handler) readCall(ctx context.Context, projectID, callID string) (*trace.Call, error) {
	res, err := h.cfg.Trace.CallRead(ctx, &trace.CallReadReq{ProjectID: projectID, ID: callID, IncludeCosts: true})
	if err != nil {
		return nil, err
	}
	if res.Call == nil {
		return nil, weft.Errorf(errNoCall, "There is no call %q in %s.", truncate(callID, 40), projectID)
	}
	return res.Call, nil
}

// maxFeedbackShown bounds the feedback listed on one call.
const maxFeedbackShown = 100

// feedbackOf lists the feedback on a call: rows whose ref names the call in
// either ref scheme, oldest first.
func (h *Handler) feedbackOf(ctx context.Context, projectID, callID string) ([]feedbackItem, error) {
	callRef := ref.Call(projectID, callID)
	var either []map[string]any
	for _, scheme := range []string{"weave", "trace"} {
		either = append(either, map[string]any{"$eq": []any{
			map[string]any{"$getField": "weave_ref"}, map[string]any{"$literal": callRef.WithScheme(scheme).String()},
		}})
	}
	expr, err := json.Marshal(map[string]any{"$or": either})
	if err != nil {
		return nil, err
	}
	limit := maxFeedbackShown
	res, err := h.cfg.Feedback.Query(ctx, feedback.QueryReq{ProjectID: projectID, Query: &feedback.Query{Expr: expr}, Limit: &limit})
	if err != nil {
		return nil, err
	}
	var items []feedbackItem
	for _, row := range res.Result {
		item := feedbackItem{}
		item.Type, _ = row["feedback_type"].(string)
		item.Creator = stringField(row["creator"])
		item.UserID = stringField(row["pf_user_id"])
		if created, ok := row["created_at"].(time.Time); ok {
			item.Created = created
		}
		payload, _ := row["payload"].(json.RawMessage)
		var p struct {
			Emoji string `json:"emoji"`
			Note  string `json:"note"`
		}
		_ = json.Unmarshal(payload, &p)
		item.Emoji, item.Note = p.Emoji, p.Note
		if name, ok := annotationName(item.Type); ok {
			var a struct {
				Value json.RawMessage `json:"value"`
			}
			if json.Unmarshal(payload, &a) == nil && a.Value != nil {
				item.Annotation, item.Value = name, jsonTree(a.Value)
				decorate(item.Value, "", valueLinks{Project: projectID})
			}
		}
		if item.Emoji == "" && item.Note == "" && item.Value == nil {
			item.Payload = jsonTree(payload)
			decorate(item.Payload, "", valueLinks{Project: projectID})
		}
		items = append(items, item)
	}
	return items, nil
}
