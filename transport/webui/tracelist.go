package webui

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// tracesPageSize is the number of traces a list page shows.
const tracesPageSize = 50

// maxListColumns bounds the inputs.* / output.* columns a list shows.
const maxListColumns = 12

// errBadView: a trace-list URL parameter that cannot be read (HTTP 400).
var errBadView = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid view")

// listView is the whole state of a trace list, read from and written to its
// URL, so that a view is a link.
type listView struct {
	Op       string // exact op name
	Status   string // one of the trace.Status* values, or ""
	From     string // start of the time window as typed (UTC), or ""
	To       string // end of the window, or ""
	Q        string // full-text search over inputs and outputs
	User     string // user name of the caller
	Model    string // a model of the trace's own usage
	Feedback bool   // only traces with feedback
	// Ref is an op or object version ref: the list shows every call (not
	// only roots) that ran the op or took the object as an input.
	Ref string
	// Verdict filters by a scorer's verdict (tracelist_verdict.go).
	Verdict verdictFilter
	// Cols are the chosen inputs.* / output.* columns, in order.
	Cols []string
	Sort string // a sortable field
	Dir  string // "asc" or "desc"
	// After is the keyset cursor of the page (the last row of the page
	// before): "<started_at RFC 3339>_<call id>" sorted by started time,
	// "<value>_<call id>" sorted by a numeric column (the value "none" for a
	// row without one); other sorts page by Offset.
	After  string
	Offset int

	from, to *time.Time
	after    *trace.CallsCursor
	refKind  ref.Kind
}

// sortableColumns are the list's fixed sortable columns: the trace
// service's sort fields the list shows. A chosen field column sorts by its
// field.
var sortableColumns = []string{"op_name", trace.SortStatus, trace.SortReactions, trace.SortTotalTokens, trace.SortCost, trace.SortLatency, "started_at", "wb_user_id"}

// keysetColumns are the columns whose pages follow each other by cursor:
// started time and the numeric columns, whose values the trace service pages
// by (trace.CallsQueryReq.After).
var keysetColumns = []string{"started_at", trace.SortReactions, trace.SortTotalTokens, trace.SortCost, trace.SortLatency}

// noValue is a cursor's value for a row that has none in its sort column.
const noValue = "none"

// timeLayouts are the forms a time filter is read in: what a datetime-local
// input sends, and RFC 3339.
var timeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano}

// parseListView reads a list's URL query; a bad value is errBadView naming
// the parameter.
func parseListView(q url.Values) (listView, error) {
	v := listView{
		Op: strings.TrimSpace(q.Get("op")), Status: q.Get("status"),
		From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to")),
		Q: strings.TrimSpace(q.Get("q")), User: strings.TrimSpace(q.Get("user")), Model: strings.TrimSpace(q.Get("model")),
		Sort: q.Get("sort"), Dir: q.Get("dir"), After: q.Get("after"),
	}
	for _, text := range []struct{ name, value string }{{"op", v.Op}, {"user", v.User}, {"model", v.Model}} {
		if len(text.value) > 512 {
			return v, weft.Errorf(errBadView, "%s: at most 512 characters", text.name)
		}
	}
	if len(v.Q) > trace.MaxSearchLength {
		return v, weft.Errorf(errBadView, "q: at most %d bytes", trace.MaxSearchLength)
	}
	if v.Ref = strings.TrimSpace(q.Get("ref")); v.Ref != "" {
		r, err := ref.Parse(v.Ref)
		if err != nil || len(v.Ref) > 1024 || (r.Kind != ref.KindOp && r.Kind != ref.KindObject) {
			return v, weft.Errorf(errBadView, "ref: an op or object ref like weave:///entity/project/op/name:digest")
		}
		v.refKind = r.Kind
		if r.Kind == ref.KindOp && v.Op != "" && v.Op != v.Ref {
			return v, weft.Errorf(errBadView, "op and ref: they name different ops")
		}
	}
	switch q.Get("feedback") {
	case "":
	case "1", "on":
		v.Feedback = true
	default:
		return v, weft.Errorf(errBadView, "feedback: 1 or nothing")
	}
	switch v.Status {
	case "", trace.StatusSuccess, trace.StatusError, trace.StatusRunning, trace.StatusDescendantError:
	default:
		return v, weft.Errorf(errBadView, "status: %q is not a status", truncate(v.Status, 40))
	}
	if cols := strings.TrimSpace(q.Get("cols")); cols != "" {
		for _, col := range strings.Split(cols, ",") {
			col = strings.TrimSpace(col)
			if col == "" || slices.Contains(v.Cols, col) {
				continue
			}
			if _, _, err := trace.SplitField(col); err != nil || len(col) > 256 {
				return v, weft.Errorf(errBadView, "cols: %q is not a column like inputs.question or output.answer", truncate(col, 40))
			}
			v.Cols = append(v.Cols, col)
		}
		if len(v.Cols) > maxListColumns {
			return v, weft.Errorf(errBadView, "cols: at most %d columns", maxListColumns)
		}
	}
	verdict, err := parseVerdict(q)
	if err != nil {
		return v, err
	}
	v.Verdict = verdict
	if v.Sort == "" {
		v.Sort = "started_at"
	}
	if v.Sort == sortVerdict && v.Verdict.Scorer == "" {
		return v, weft.Errorf(errBadView, "sort: sorting by verdict needs a verdict filter's scorer")
	}
	if !slices.Contains(sortableColumns, v.Sort) && !slices.Contains(v.Cols, v.Sort) && v.Sort != sortVerdict {
		return v, weft.Errorf(errBadView, "sort: cannot sort by %q (sort by a shown column)", truncate(v.Sort, 40))
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
		cursor, err := parseCursor(v.After, v.Sort)
		if err != nil {
			return v, err
		}
		v.after = cursor
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

// parseCursor reads the after parameter of a list sorted by sort.
func parseCursor(after, sort string) (*trace.CallsCursor, error) {
	if !slices.Contains(keysetColumns, sort) {
		return nil, weft.Errorf(errBadView, "after: only a list sorted by started time or a numeric column pages by cursor")
	}
	i := strings.LastIndex(after, "_")
	if i < 0 || i == len(after)-1 || len(after)-i-1 > maxIDLength {
		return nil, weft.Errorf(errBadView, "after: a cursor is <value>_<call id>")
	}
	value, cursor := after[:i], &trace.CallsCursor{ID: after[i+1:]}
	if sort == "started_at" {
		t, err := time.Parse(time.RFC3339Nano, value)
		if err != nil {
			return nil, weft.Errorf(errBadView, "after: a cursor of a list sorted by started time is <time>_<call id>")
		}
		cursor.StartedAt = t
		return cursor, nil
	}
	if value == noValue {
		return cursor, nil
	}
	n, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
		return nil, weft.Errorf(errBadView, "after: a cursor of a list sorted by a number is <number>_<call id> or none_<call id>")
	}
	cursor.Key = &n
	return cursor, nil
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
// plus one row that tells whether a next page exists. userID is the id of
// the view's user filter.
func (v listView) query(projectID, userID string) *trace.CallsQueryReq {
	return &trace.CallsQueryReq{
		ProjectID:    projectID,
		Filter:       v.filter(userID),
		SortBy:       []trace.SortBy{{Field: v.sortField(), Direction: v.Dir}},
		Query:        v.Verdict.query(),
		Limit:        tracesPageSize + 1,
		Offset:       v.Offset,
		After:        v.after,
		IncludeCosts: true,
	}
}

// keyset reports whether the view pages by cursor: sorted by started time or
// a numeric column, where the next page starts at the last row's value
// however deep it is.
func (v listView) keyset() bool { return slices.Contains(keysetColumns, v.Sort) }

// cursorOf is the after value that starts the page following c, in the
// order of the query that read c.
func (v listView) cursorOf(c *callView) string {
	cursor := c.call.Cursor()
	switch {
	case v.Sort == "started_at":
		return cursor.StartedAt.UTC().Format(time.RFC3339Nano) + "_" + c.ID
	case cursor.Key == nil:
		return noValue + "_" + c.ID
	}
	return strconv.FormatFloat(*cursor.Key, 'g', -1, 64) + "_" + c.ID
}

// filter is the calls filter of the view; userID is the id of its user
// filter ("" for none).
func (v listView) filter(userID string) trace.CallsFilter {
	f := trace.CallsFilter{TraceRootsOnly: v.Ref == "", TraceStatuses: true, StartedFrom: v.from, StartedBefore: v.to, Search: v.Q, HasFeedback: v.Feedback}
	switch v.refKind {
	case ref.KindOp:
		f.OpNames = append(f.OpNames, v.Ref)
	case ref.KindObject:
		f.InputRefs = []string{v.Ref}
	}
	if v.Op != "" {
		f.OpNames = append(f.OpNames, v.Op)
	}
	if v.Status != "" {
		f.Statuses = []string{v.Status}
	}
	if userID != "" {
		f.UserIDs = []string{userID}
	}
	if v.Model != "" {
		f.Models = []string{v.Model}
	}
	return f
}

// ColsParam is the view's columns as its URL writes them.
func (v listView) ColsParam() string { return strings.Join(v.Cols, ",") }

// values is the view as URL query values, with changes applied ("key",
// "value" pairs; an empty value removes the key).
func (v listView) values(changes ...string) url.Values {
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
	set("q", v.Q, "")
	set("user", v.User, "")
	set("model", v.Model, "")
	set("ref", v.Ref, "")
	if v.Feedback {
		q.Set("feedback", "1")
	}
	v.Verdict.set(q)
	set("cols", v.ColsParam(), "")
	set("sort", v.Sort, "started_at")
	set("dir", v.Dir, "desc")
	set("after", v.After, "")
	set("offset", strconv.Itoa(v.Offset), "0")
	return applyChanges(q, changes)
}

// url is the view's link, with changes applied (see values).
func (v listView) url(projectID string, changes ...string) string {
	return withQuery(projectPath(projectID), v.values(changes...))
}

// withQuery is path with q, when q has any value.
// applyChanges applies changes to q: key, value pairs, an empty value
// removing the key. It returns q.
func applyChanges(q url.Values, changes []string) url.Values {
	for i := 0; i+1 < len(changes); i += 2 {
		if changes[i+1] == "" {
			q.Del(changes[i])
		} else {
			q.Set(changes[i], changes[i+1])
		}
	}
	return q
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// withColumns is the view's link with cols in place of its columns, on the
// first page (a column change can change the sort).
func (v listView) withColumns(projectID string, cols []string) string {
	changes := []string{"cols", strings.Join(cols, ","), "after", "", "offset", ""}
	if !slices.Contains(sortableColumns, v.Sort) && !slices.Contains(cols, v.Sort) {
		changes = append(changes, "sort", "", "dir", "")
	}
	return v.url(projectID, changes...)
}

// truncate shortens s for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s…", strings.ToValidUTF8(s[:n], ""))
}
