package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// tracesView is the data of the trace list page.
type tracesView struct {
	Project string
	View    listView
	Rows    []*listRow
	Count   int64 // matching traces, capped at countCap+1
	// Prev and Next link the neighbouring pages ("" when there is none);
	// a page reached by cursor links back to the first page instead.
	Prev, Next, FirstPage string
	First                 int // 1-based number of the first row shown, 0 when unknown (cursor pages)
	Statuses              []string
	// SortLinks gives each sortable column (fixed and chosen) the link that
	// sorts by it (descending first, flipping when it is already the sort).
	SortLinks map[string]string
	// Fields are the chosen inputs.* / output.* columns.
	Fields []fieldColumn
	// Suggestions are fields of the rows shown that are not columns yet.
	Suggestions []fieldColumn
	// UnknownUser is set when the user filter names nobody.
	UnknownUser bool
	// Live is the server-sent event stream of the view ("" without one).
	Live string
	// Export links the view's export as CSV and as JSONL (at most
	// ExportLimit calls).
	Export      map[string]string
	ExportLimit int64
	// SavedViews are the project's saved views (tracelist_views.go), when
	// the server keeps objects (HasViews); CanSave when the viewer may save
	// and delete them, SaveQuery being the view's URL query to save.
	SavedViews []savedView
	HasViews   bool
	CanSave    bool
	SaveQuery  string
	// Selectable draws a checkbox on each row, for the selection form
	// (this server keeps queues or datasets). The rows are the same for
	// every viewer, as live updates share them; the stylesheet hides the
	// boxes of a page without the form.
	Selectable bool
	// Selection offers the actions on selected rows to a viewer who may
	// write to the project (tracelist_selection.go); nil to a reader.
	Selection *selectionOffer
}

// listRow is one trace of the list.
type listRow struct {
	*callView
	rowPreview
	Reactions []reactionCount
	Cost      string   // "" when no usage is priced
	Fields    []string // the chosen columns' values as text, "" when absent
	// Fresh marks a row that a live update added or changed.
	Fresh bool
}

// reactionCount is how often one emoji was given to a call.
type reactionCount struct {
	Emoji string
	Count int
}

// fieldColumn is a chosen (or suggested) field column and its links.
type fieldColumn struct {
	Field  string
	Link   string // adds (a suggestion) or removes (a column) the field
	Sort   string // sorts by the field
	Sorted string // "ascending" or "descending" when it is the sort
}

// maxFieldText bounds the text a field cell shows.
const maxFieldText = 160

// maxSuggestions bounds the suggested columns.
const maxSuggestions = 12

// tracesPage serves the trace list.
func (h *Handler) tracesPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	view, err := parseListView(r.URL.Query())
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	data, err := h.listData(r.Context(), projectID, view, nil)
	writer := h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, true) == nil
	if err == nil && h.cfg.Objects != nil {
		data.HasViews, data.SaveQuery = true, view.values("after", "", "offset", "").Encode()
		data.CanSave = writer
		data.SavedViews, err = h.savedViews(r.Context(), projectID, view.url(projectID, "after", "", "offset", ""))
	}
	if err == nil && writer {
		data.Selection, err = h.selectionOf(r, projectID)
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "traces", page{Title: projectID, Viewer: v, Project: projectID, Body: data})
}

// listData reads one page of the view. fresh names calls to mark as just
// added or changed.
func (h *Handler) listData(ctx context.Context, projectID string, view listView, fresh map[string]bool) (tracesView, error) {
	data := tracesView{Project: projectID, View: view, First: view.Offset + 1,
		Statuses:  []string{trace.StatusSuccess, trace.StatusError, trace.StatusRunning, trace.StatusDescendantError},
		SortLinks: map[string]string{}, Selectable: h.cfg.Feedback != nil || h.datasets != nil}
	if h.cfg.Feed != nil {
		data.Live = withQuery(projectPath(projectID, "live"), view.values())
	}
	h.fillColumns(&data)
	data.Export, data.ExportLimit = exportLinks(projectPath(projectID, "export"), view.values("after", "", "offset", "")), int64(h.cfg.MaxExportRows)
	userID, known, err := h.userFilter(ctx, view)
	if err != nil || !known {
		data.UnknownUser = !known
		return data, err
	}
	err = h.cfg.Trace.CallsQuery(ctx, view.query(projectID, userID), func(c *trace.Call) error {
		data.Rows = append(data.Rows, rowOf(c, view.Cols, fresh[c.ID]))
		return nil
	})
	if err != nil {
		return data, err
	}
	stats, err := h.cfg.Trace.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: projectID, Filter: view.filter(userID), Limit: countCap + 1})
	if err != nil {
		return data, err
	}
	data.Count = stats.Count
	more := len(data.Rows) > tracesPageSize
	if more {
		data.Rows = data.Rows[:tracesPageSize]
	}
	switch {
	case view.keyset():
		if more {
			data.Next = view.url(projectID, "after", view.cursorOf(data.Rows[len(data.Rows)-1].callView), "offset", "")
		}
		if view.After != "" || view.Offset > 0 {
			data.FirstPage, data.First = view.url(projectID, "after", "", "offset", ""), 0
		}
	default:
		if more {
			data.Next = view.url(projectID, "offset", strconv.Itoa(view.Offset+tracesPageSize))
		}
		if view.Offset > 0 {
			data.Prev = view.url(projectID, "offset", strconv.Itoa(max(0, view.Offset-tracesPageSize)))
		}
	}
	data.Suggestions = suggestions(data.Rows, view, projectID)
	return data, h.fillRows(ctx, projectID, data.Rows)
}

// userFilter is the user id of the view's user filter: "" for none, and
// known false when it names nobody (so that nothing matches).
func (h *Handler) userFilter(ctx context.Context, view listView) (userID string, known bool, err error) {
	if view.User == "" {
		return "", true, nil
	}
	ids, err := h.cfg.Identity.UserIDs(ctx, []string{view.User})
	if err != nil {
		return "", true, err
	}
	return ids[view.User], ids[view.User] != "", nil
}

// fillRows completes rows read from the trace service: their users' names,
// their reactions, and the roll-ups of roots written without them.
func (h *Handler) fillRows(ctx context.Context, projectID string, rows []*listRow) error {
	views := make([]*callView, len(rows))
	for i, row := range rows {
		views[i] = row.callView
	}
	if err := h.fillUsernames(ctx, views); err != nil {
		return err
	}
	if err := h.fillReactions(ctx, projectID, rows); err != nil {
		return err
	}
	return h.fillRollups(ctx, projectID, rows)
}

// fillColumns sets the sort links and the chosen columns' links.
func (h *Handler) fillColumns(data *tracesView) {
	view, projectID := data.View, data.Project
	sortLink := func(field string) string {
		dir := "desc"
		if view.Sort == field && view.Dir == "desc" {
			dir = "asc"
		}
		return view.url(projectID, "sort", field, "dir", dir, "offset", "", "after", "")
	}
	for _, field := range sortableColumns {
		data.SortLinks[field] = sortLink(field)
	}
	for _, field := range view.Cols {
		col := fieldColumn{Field: field, Sort: sortLink(field),
			Link: view.withColumns(projectID, slices.DeleteFunc(slices.Clone(view.Cols), func(c string) bool { return c == field }))}
		if view.Sort == field {
			col.Sorted = map[string]string{"asc": "ascending", "desc": "descending"}[view.Dir]
		}
		data.Fields = append(data.Fields, col)
	}
}

// rowOf is the list row of a call with the values of the chosen columns.
func rowOf(c *trace.Call, cols []string, fresh bool) *listRow {
	row := &listRow{callView: viewOf(c), rowPreview: previewOf(c), Cost: costOf(c), Fresh: fresh}
	for _, col := range cols {
		row.Fields = append(row.Fields, fieldText(c, col))
	}
	return row
}

// fieldText is the value of a field of a call as a cell shows it, cut at
// maxFieldText.
func fieldText(c *trace.Call, field string) string {
	return truncate(fieldValue(c, field), maxFieldText)
}

// fieldValue is the value of a field of a call as text: a string as
// itself, any other JSON value as compact JSON, "" when absent.
func fieldValue(c *trace.Call, field string) string {
	root, path, err := trace.SplitField(field)
	if err != nil {
		return ""
	}
	doc := c.Inputs
	if root == "output" {
		doc = c.Output
	}
	var value json.RawMessage = doc
	for _, member := range path {
		var members map[string]json.RawMessage
		if json.Unmarshal(value, &members) != nil {
			return ""
		}
		var ok bool
		if value, ok = members[member]; !ok {
			return ""
		}
	}
	var s string
	if json.Unmarshal(value, &s) != nil {
		s = compactJSON(value)
	}
	return s
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// costOf is the priced cost of a call's own usage (summary.weave.costs), in
// dollars, "" when nothing is priced.
func costOf(c *trace.Call) string {
	_, total, ok := callCosts(c)
	if !ok {
		return ""
	}
	return formatCost(total)
}

// suggestions are the top-level members of the shown rows' inputs and
// outputs that are not columns yet, each with the link that adds it.
func suggestions(rows []*listRow, view listView, projectID string) []fieldColumn {
	seen := map[string]bool{}
	for _, row := range rows {
		for root, doc := range map[string]json.RawMessage{"inputs": row.call.Inputs, "output": row.call.Output} {
			var members map[string]json.RawMessage
			if json.Unmarshal(doc, &members) != nil {
				continue
			}
			for name := range members {
				field := root + "." + name
				if _, _, err := trace.SplitField(field); err == nil && len(field) <= 256 && !slices.Contains(view.Cols, field) {
					seen[field] = true
				}
			}
		}
	}
	var out []fieldColumn
	for _, field := range slices.Sorted(maps.Keys(seen)) {
		if len(out) == maxSuggestions || len(view.Cols) >= maxListColumns {
			break
		}
		out = append(out, fieldColumn{Field: field, Link: view.withColumns(projectID, append(slices.Clone(view.Cols), field))})
	}
	return out
}

// fillUsernames names the users of calls.
func (h *Handler) fillUsernames(ctx context.Context, rows []*callView) error {
	var ids []string
	for _, c := range rows {
		if c.UserID != "" {
			ids = append(ids, c.UserID)
		}
	}
	names, err := h.cfg.Identity.Usernames(ctx, ids)
	if err != nil {
		return err
	}
	for _, c := range rows {
		c.Username = names[c.UserID]
	}
	return nil
}

// maxReactionsRead bounds the reaction rows read for one list page.
const maxReactionsRead = 5000

// reactionTypes are the feedback types of reactions, in both spellings.
var reactionTypes = []any{"wandb.reaction.1", "trace.reaction.1"}

// fillReactions counts the reactions given to each row's call, by emoji in
// order of first use.
func (h *Handler) fillReactions(ctx context.Context, projectID string, rows []*listRow) error {
	if h.cfg.Feedback == nil || len(rows) == 0 {
		return nil
	}
	byRef := map[string]*listRow{}
	var refs []any
	for _, row := range rows {
		callRef := ref.Call(projectID, row.ID)
		for _, scheme := range []string{"weave", "trace"} {
			s := callRef.WithScheme(scheme).String()
			byRef[s] = row
			refs = append(refs, s)
		}
	}
	expr, err := json.Marshal(map[string]any{"$and": []any{
		map[string]any{"$in": []any{map[string]any{"$getField": "weave_ref"}, literals(refs)}},
		map[string]any{"$in": []any{map[string]any{"$getField": "feedback_type"}, literals(reactionTypes)}},
	}})
	if err != nil {
		return err
	}
	limit := maxReactionsRead
	res, err := h.cfg.Feedback.Query(ctx, feedback.QueryReq{ProjectID: projectID, Query: &feedback.Query{Expr: expr},
		Fields: []string{"weave_ref", "payload"}, Limit: &limit})
	if err != nil {
		return err
	}
	for _, item := range res.Result {
		row := byRef[stringField(item["weave_ref"])]
		payload, _ := item["payload"].(json.RawMessage)
		var p struct {
			Emoji string `json:"emoji"`
		}
		if row == nil || json.Unmarshal(payload, &p) != nil || p.Emoji == "" {
			continue
		}
		i := slices.IndexFunc(row.Reactions, func(r reactionCount) bool { return r.Emoji == p.Emoji })
		if i < 0 {
			row.Reactions = append(row.Reactions, reactionCount{Emoji: p.Emoji})
			i = len(row.Reactions) - 1
		}
		row.Reactions[i].Count++
	}
	return nil
}

// literals wraps values as {"$literal": v} operands.
func literals(values []any) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = map[string]any{"$literal": v}
	}
	return out
}
