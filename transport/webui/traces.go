package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// tracesPageSize is the number of traces a list page shows.
const tracesPageSize = 50

// errBadView: a trace-list URL parameter that cannot be read (HTTP 400).
var errBadView = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid view")

// listView is the whole state of a trace list, read from and written to its
// URL, so that a view is a link.
type listView struct {
	Op     string // exact op name
	Status string // one of the trace.Status* values, or ""
	From   string // start of the time window as typed (UTC), or ""
	To     string // end of the window, or ""
	Sort   string // a sortable field
	Dir    string // "asc" or "desc"
	// After is the keyset cursor of a page sorted by started_at
	// ("<started_at RFC 3339>_<call id>": the last row of the page before);
	// other sorts page by Offset.
	After  string
	Offset int

	from, to *time.Time
	after    *trace.CallsCursor
}

// sortableFields are the list's sortable columns: the trace service's sort
// fields that the list shows.
var sortableFields = map[string]bool{"started_at": true, "op_name": true, "display_name": true}

// timeLayouts are the forms a time filter is read in: what a datetime-local
// input sends, and RFC 3339.
var timeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano}

// parseListView reads a list's URL query; a bad value is errBadView naming
// the parameter.
func parseListView(q url.Values) (listView, error) {
	v := listView{
		Op: strings.TrimSpace(q.Get("op")), Status: q.Get("status"),
		From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to")),
		Sort: q.Get("sort"), Dir: q.Get("dir"), After: q.Get("after"),
	}
	if len(v.Op) > 512 {
		return v, weft.Errorf(errBadView, "op: at most 512 characters")
	}
	switch v.Status {
	case "", trace.StatusSuccess, trace.StatusError, trace.StatusRunning, trace.StatusDescendantError:
	default:
		return v, weft.Errorf(errBadView, "status: %q is not a status", truncate(v.Status, 40))
	}
	if v.Sort == "" {
		v.Sort = "started_at"
	}
	if !sortableFields[v.Sort] {
		return v, weft.Errorf(errBadView, "sort: cannot sort by %q", truncate(v.Sort, 40))
	}
	switch v.Dir {
	case "":
		v.Dir = "desc"
	case "asc", "desc":
	default:
		return v, weft.Errorf(errBadView, "dir: must be asc or desc")
	}
	for _, bound := range []struct {
		name string
		text string
		into **time.Time
	}{{"from", v.From, &v.from}, {"to", v.To, &v.to}} {
		if bound.text == "" {
			continue
		}
		t, ok := parseTime(bound.text)
		if !ok {
			return v, weft.Errorf(errBadView, "%s: %q is not a time like 2026-05-01T12:00", bound.name, truncate(bound.text, 40))
		}
		*bound.into = &t
	}
	if v.After != "" {
		at, callID, _ := strings.Cut(v.After, "_")
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil || callID == "" || len(callID) > maxIDLength || v.Sort != "started_at" {
			return v, weft.Errorf(errBadView, "after: a cursor of a list sorted by started time is <time>_<call id>")
		}
		v.after = &trace.CallsCursor{StartedAt: t, ID: callID}
	}
	if off := q.Get("offset"); off != "" {
		n, err := strconv.Atoi(off)
		if err != nil || n < 0 || n > 1_000_000 {
			return v, weft.Errorf(errBadView, "offset: must be a whole number from 0 to 1000000")
		}
		v.Offset = n
	}
	return v, nil
}

func parseTime(s string) (time.Time, bool) {
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// query is the trace service query of the view: root calls only, one page
// plus one row that tells whether a next page exists.
func (v listView) query(projectID string) *trace.CallsQueryReq {
	return &trace.CallsQueryReq{
		ProjectID: projectID,
		Filter:    v.filter(),
		SortBy:    []trace.SortBy{{Field: v.Sort, Direction: v.Dir}},
		Limit:     tracesPageSize + 1,
		Offset:    v.Offset,
		After:     v.after,
	}
}

// keyset reports whether the view pages by cursor: sorted by started time,
// where the trace service's index leads straight to any page.
func (v listView) keyset() bool { return v.Sort == "started_at" }

// cursorOf is the after value that starts the page following c.
func cursorOf(c *callView) string {
	return c.Started.UTC().Format(time.RFC3339Nano) + "_" + c.ID
}

func (v listView) filter() trace.CallsFilter {
	f := trace.CallsFilter{TraceRootsOnly: true, StartedFrom: v.from, StartedBefore: v.to}
	if v.Op != "" {
		f.OpNames = []string{v.Op}
	}
	if v.Status != "" {
		f.Statuses = []string{v.Status}
	}
	return f
}

// url is the view's link, with changes applied ("key", "value" pairs).
func (v listView) url(projectID string, changes ...string) string {
	q := url.Values{}
	set := func(k, val, zero string) {
		if val != zero {
			q.Set(k, val)
		}
	}
	set("op", v.Op, "")
	set("status", v.Status, "")
	set("from", v.From, "")
	set("to", v.To, "")
	set("sort", v.Sort, "started_at")
	set("dir", v.Dir, "desc")
	set("after", v.After, "")
	set("offset", strconv.Itoa(v.Offset), "0")
	for i := 0; i+1 < len(changes); i += 2 {
		if changes[i+1] == "" {
			q.Del(changes[i])
		} else {
			q.Set(changes[i], changes[i+1])
		}
	}
	if len(q) == 0 {
		return projectPath(projectID)
	}
	return projectPath(projectID) + "?" + q.Encode()
}

// tracesView is the data of the trace list page.
type tracesView struct {
	Project string
	View    listView
	Rows    []*callView
	Count   int64 // matching traces, capped at countCap+1
	// Prev and Next link the neighbouring pages ("" when there is none);
	// a page reached by cursor links back to the first page instead.
	Prev, Next, FirstPage string
	First                 int // 1-based number of the first row shown, 0 when unknown (cursor pages)
	Statuses              []string
	// SortLinks gives each sortable column the link that sorts by it
	// (descending first, flipping when it is already the sort).
	SortLinks map[string]string
}

func (h *Handler) tracesPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	view, err := parseListView(r.URL.Query())
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	ctx := r.Context()
	data := tracesView{Project: projectID, View: view, First: view.Offset + 1,
		Statuses:  []string{trace.StatusSuccess, trace.StatusError, trace.StatusRunning, trace.StatusDescendantError},
		SortLinks: map[string]string{}}
	err = h.cfg.Trace.CallsQuery(ctx, view.query(projectID), func(c *trace.Call) error {
		data.Rows = append(data.Rows, viewOf(c))
		return nil
	})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	stats, err := h.cfg.Trace.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: projectID, Filter: view.filter(), Limit: countCap + 1})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	data.Count = stats.Count
	more := len(data.Rows) > tracesPageSize
	if more {
		data.Rows = data.Rows[:tracesPageSize]
	}
	switch {
	case view.keyset():
		if more {
			data.Next = view.url(projectID, "after", cursorOf(data.Rows[len(data.Rows)-1]), "offset", "")
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
	for field := range sortableFields {
		dir := "desc"
		if view.Sort == field && view.Dir == "desc" {
			dir = "asc"
		}
		data.SortLinks[field] = view.url(projectID, "sort", field, "dir", dir, "offset", "", "after", "")
	}
	if err := h.fillUsernames(r, data.Rows); err != nil {
		h.internalError(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "traces", page{Title: projectID, Viewer: v, Project: projectID, Body: data})
}

// fillUsernames names the users of calls.
func (h *Handler) fillUsernames(r *http.Request, rows []*callView) error {
	var ids []string
	for _, c := range rows {
		if c.UserID != "" {
			ids = append(ids, c.UserID)
		}
	}
	names, err := h.cfg.Identity.Usernames(r.Context(), ids)
	if err != nil {
		return err
	}
	for _, c := range rows {
		c.Username = names[c.UserID]
	}
	return nil
}

// truncate shortens s for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s…", strings.ToValidUTF8(s[:n], ""))
}
