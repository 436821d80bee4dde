package webui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// Saved views of the trace list are objects of the project, of the builtin
// class SavedView, as Weave keeps its own: {view_type: "traces", label,
// definition}, where definition holds what Weave's SavedViewDefinition names
// (filter, sort_by, columns, page_size) for the clients that read those, and
// url_query the whole view (search, status, time range and the rest, which
// Weave's definition has no member for) as the list's URL query. Every
// member of the project sees them; a writer saves and deletes them. Saving
// a label again makes a new version of the same object.

// savedViewClass is the builtin object class of a saved view.
const savedViewClass = "SavedView"

// savedViewType is the view_type of a trace list view.
const savedViewType = "traces"

// maxSavedViews bounds the views the list offers.
const maxSavedViews = 100

// maxViewLabel bounds a view's label, in characters.
const maxViewLabel = 128

var (
	// errNotAView: an object named like a view that is not one (HTTP 409).
	errNotAView = weft.DefineError(weft.ErrConflict, "Conflict", "the object is not a saved view")
	// errNoView: no saved view of that name (HTTP 404).
	errNoView = weft.DefineError(weft.ErrNotFound, "NotFoundError", "no saved view")
)

// savedViewValue is a saved view as it is stored.
type savedViewValue struct {
	ViewType   string         `json:"view_type"`
	Label      string         `json:"label"`
	Definition viewDefinition `json:"definition"`
}

// viewDefinition is Weave's SavedViewDefinition, as far as the list has its
// members, and the list's own URL query.
type viewDefinition struct {
	Filter   *trace.CallsFilter `json:"filter,omitempty"`
	SortBy   []trace.SortBy     `json:"sort_by,omitempty"`
	Columns  []viewColumn       `json:"columns,omitempty"`
	PageSize int                `json:"page_size,omitempty"`
	// URLQuery is the whole view as the list's URL query (no paging).
	URLQuery string `json:"url_query,omitempty"`
}

// viewColumn is a chosen column as a path into the call: ["inputs", "q"].
type viewColumn struct {
	Path []string `json:"path"`
}

// savedView is a view the list offers.
type savedView struct {
	ID, Label string
	Href      string // opens the view
	Delete    string // the form that deletes it
	Current   bool   // the list shows this view now
}

// valueOf is the stored value of view under label. userID is the id of the
// view's user filter ("" for none).
func (v listView) valueOf(label, userID string) savedViewValue {
	filter := v.filter(userID)
	def := viewDefinition{
		Filter:   &trace.CallsFilter{OpNames: filter.OpNames, InputRefs: filter.InputRefs, UserIDs: filter.UserIDs, TraceRootsOnly: filter.TraceRootsOnly},
		SortBy:   []trace.SortBy{{Field: v.sortField(), Direction: v.Dir}},
		PageSize: tracesPageSize,
		URLQuery: v.values("after", "", "offset", "").Encode(),
	}
	for _, col := range v.Cols {
		root, path, _ := trace.SplitField(col)
		def.Columns = append(def.Columns, viewColumn{Path: append([]string{root}, path...)})
	}
	return savedViewValue{ViewType: savedViewType, Label: label, Definition: def}
}

// listViewOf is the list view a stored view opens: its url_query, or for a
// view written by another client (no url_query), its op or input ref
// filter, sort and columns. A value that does not read as a view is
// errBadView.
func listViewOf(val savedViewValue) (listView, error) {
	if val.Definition.URLQuery != "" {
		q, err := url.ParseQuery(val.Definition.URLQuery)
		if err != nil {
			return listView{}, weft.Errorf(errBadView, "the saved view's url_query is not a URL query")
		}
		return parseListView(q)
	}
	q := url.Values{}
	def := val.Definition
	if f := def.Filter; f != nil {
		switch {
		case len(f.InputRefs) == 1:
			q.Set("ref", f.InputRefs[0])
		case len(f.OpNames) == 1 && strings.Contains(f.OpNames[0], ":///"):
			q.Set("ref", f.OpNames[0])
		case len(f.OpNames) == 1:
			q.Set("op", f.OpNames[0])
		}
	}
	var cols []string
	for _, col := range def.Columns {
		if len(col.Path) > 1 && (col.Path[0] == "inputs" || col.Path[0] == "output") {
			cols = append(cols, strings.Join(col.Path, "."))
		}
	}
	if len(cols) > 0 {
		q.Set("cols", strings.Join(cols, ","))
	}
	if len(def.SortBy) > 0 {
		q.Set("sort", def.SortBy[0].Field)
		q.Set("dir", def.SortBy[0].Direction)
	}
	return parseListView(q)
}

// parseWholeView reads a view from q without its paging (after, offset):
// the whole of it, as a saved view and an export take it.
func parseWholeView(q url.Values) (listView, error) {
	q.Del("after")
	q.Del("offset")
	return parseListView(q)
}

// viewObjectID is the object id of a view labelled label: its letters and
// digits, lower-cased, runs of anything else as one "-".
func viewObjectID(label string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(label) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "view"
	}
	return b.String()
}

// savedViews lists the project's trace list views, by label; current is the
// link of the view shown, to mark.
func (h *Handler) savedViews(ctx context.Context, projectID, current string) ([]savedView, error) {
	latest, limit := true, maxSavedViews
	res, err := h.cfg.Objects.ObjsQuery(ctx, &objects.ObjsQueryReq{ProjectID: projectID, Limit: &limit,
		Filter: &objects.ObjectVersionFilter{BaseObjectClasses: []string{savedViewClass}, LatestOnly: &latest}})
	if err != nil {
		return nil, err
	}
	var views []savedView
	for _, obj := range res.Objs {
		var val savedViewValue
		if json.Unmarshal(obj.Val, &val) != nil || val.ViewType != savedViewType {
			continue
		}
		label := val.Label
		if label == "" {
			label = obj.ObjectID
		}
		href := projectPath(projectID, "views/", pathSegment(obj.ObjectID))
		view := savedView{ID: obj.ObjectID, Label: label, Href: href, Delete: href + "/delete"}
		if lv, err := listViewOf(val); err == nil {
			view.Current = lv.url(projectID) == current
		}
		views = append(views, view)
	}
	slices.SortFunc(views, func(a, b savedView) int { return strings.Compare(strings.ToLower(a.Label), strings.ToLower(b.Label)) })
	return views, nil
}

// readView reads the saved view name of the project: errNoView when there
// is none, errNotAView when the object is something else.
func (h *Handler) readView(ctx context.Context, projectID, name string) (savedViewValue, error) {
	var val savedViewValue
	if h.cfg.Objects == nil {
		return val, weft.Errorf(errNoView, "this server keeps no saved views")
	}
	res, err := h.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: "latest"})
	if errors.Is(err, weft.ErrNotFound) || errors.Is(err, weft.ErrInvalid) {
		return val, weft.Errorf(errNoView, "no saved view is named %q", truncate(name, 60))
	}
	if err != nil {
		return val, err
	}
	if res.Obj.BaseObjectClass == nil || *res.Obj.BaseObjectClass != savedViewClass ||
		json.Unmarshal(res.Obj.Val, &val) != nil || val.ViewType != savedViewType {
		return val, weft.Errorf(errNotAView, "%q is an object of the project but not a saved view of the trace list", truncate(name, 60))
	}
	return val, nil
}

// openView answers a saved view's link with the list it saved.
func (h *Handler) openView(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	val, err := h.readView(r.Context(), projectID, r.PathValue("name"))
	if errors.Is(err, errNotAView) {
		err = weft.Errorf(errNoView, "no saved view is named %q", truncate(r.PathValue("name"), 60))
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view, err := listViewOf(val)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, view.url(projectID), http.StatusSeeOther)
}

// saveView stores the view the form names (query: the list's URL query)
// under its label, for every member of the project, and opens it.
func (h *Handler) saveView(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Objects == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no saved views.")
		return
	}
	ctx := r.Context()
	if err := h.cfg.Authorizer.Authorize(ctx, v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return
	}
	label := strings.TrimSpace(r.PostFormValue("label"))
	if label == "" || utf8.RuneCountInString(label) > maxViewLabel || strings.ContainsFunc(label, unicode.IsControl) {
		h.refuse(w, r, weft.Errorf(errBadView, "label: a name of 1 to %d characters", maxViewLabel))
		return
	}
	q, err := url.ParseQuery(strings.TrimPrefix(r.PostFormValue("query"), "?"))
	if err != nil {
		h.refuse(w, r, weft.Errorf(errBadView, "query: not a URL query"))
		return
	}
	view, err := parseWholeView(q)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	userID, _, err := h.userFilter(ctx, view)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	name := viewObjectID(label)
	if _, err := h.readView(ctx, projectID, name); err != nil && !errors.Is(err, errNoView) {
		h.refuse(w, r, err)
		return
	}
	val, _ := json.Marshal(view.valueOf(label, userID))
	class := savedViewClass
	_, err = h.cfg.Objects.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{
		ProjectID: projectID, ObjectID: name, Val: val, BuiltinObjectClass: &class}})
	if err == nil {
		err = h.cfg.Authorizer.ProjectWritten(ctx, v.principal, projectID)
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, view.url(projectID), http.StatusSeeOther)
}

// deleteView deletes a saved view (every version of it) and goes back to
// the list.
func (h *Handler) deleteView(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ctx := r.Context()
	if err := h.cfg.Authorizer.Authorize(ctx, v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return
	}
	name := r.PathValue("name")
	if _, err := h.readView(ctx, projectID, name); err != nil {
		h.refuse(w, r, err)
		return
	}
	if _, err := h.cfg.Objects.ObjDelete(ctx, &objects.ObjDeleteReq{ProjectID: projectID, ObjectID: name}); err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, projectPath(projectID), http.StatusSeeOther)
}
