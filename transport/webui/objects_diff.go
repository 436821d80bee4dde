package webui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/jsondiff"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
)

// Bounds of the object diff: code longer than maxCodeLines lines on a side
// is not aligned (alignment takes lines² steps); tables of more than
// maxTableDiffRows rows are not compared row by row; at most
// maxTableDiffShown added and removed rows are drawn.
const (
	maxCodeLines      = 2000
	maxTableDiffRows  = 50_000
	maxTableDiffShown = 100
)

// objectDiffView is the data of the diff of two versions of one object.
type objectDiffView struct {
	Project string
	Name    string
	// A and B are the versions as the URL names them.
	A, B string
	// Versions are the indexes the form offers, newest first.
	Versions    []int
	Left, Right *versionSide
	Value       diffPart
	// Code is the line diff of an op's source; nil for objects.
	Code *lineDiff
	// Tables are the row diffs of the members that hold tables.
	Tables []tableDiff
}

// versionSide is one version of the diff.
type versionSide struct {
	Index   int
	Digest  string
	Created time.Time
	Href    string
}

// lineDiff is a diff of two texts by lines.
type lineDiff struct {
	Lines          []diffLine
	Added, Removed int
	Note           string
}

// diffLine is one line of a line diff: Op is "equal", "added" or
// "removed"; Left and Right are 1-based line numbers (0: not on that side).
type diffLine struct {
	Op          string
	Left, Right int
	Text        string
}

// tableDiff compares the tables one member of the two versions holds, by
// row digest: the rows only the right table has (added) and only the left
// (removed).
type tableDiff struct {
	Field                    string
	LeftHref, RightHref      string
	Added, Removed           []tableDiffRow
	AddedCount, RemovedCount int
	Kept                     int
	Note                     string
}

// tableDiffRow is one added or removed row, at its index in its table.
type tableDiffRow struct {
	Index  int
	Digest string
	Value  *jsonNode
}

// objectDiffPage answers GET …/objects/{name}/diff?a=<version>&b=<version>:
// any two versions of an object (digests, "v<N>" or "latest"), compared
// structurally, with an op's code as a line diff and tables by rows.
func (h *Handler) objectDiffPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Objects == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no objects.")
		return
	}
	name, q := r.PathValue("name"), r.URL.Query()
	view := objectDiffView{Project: projectID, Name: name, A: q.Get("a"), B: q.Get("b")}
	for _, s := range []string{name, view.A, view.B} {
		if len(s) > maxObjectNameLength {
			h.refuse(w, r, weft.Errorf(errBadView, "object name and versions: at most %d characters", maxObjectNameLength))
			return
		}
	}
	ctx := r.Context()
	res, err := h.cfg.Objects.ObjsQuery(ctx, &objects.ObjsQueryReq{
		ProjectID: projectID, Filter: &objects.ObjectVersionFilter{ObjectIDs: []string{name}}, MetadataOnly: true,
	})
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	if len(res.Objs) == 0 {
		h.renderError(w, r, http.StatusNotFound, "This project has no object named "+truncate(name, 80)+".")
		return
	}
	for _, o := range res.Objs {
		view.Versions = append(view.Versions, o.VersionIndex)
	}
	slices.SortFunc(view.Versions, func(a, b int) int { return b - a })
	if view.A == "" || view.B == "" {
		view.B = versionName(view.Versions[0])
		view.A = versionName(view.Versions[min(1, len(view.Versions)-1)])
	}
	left, err := h.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: view.A})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	right, err := h.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: view.B})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	l, rt := left.Obj, right.Obj
	view.Left = &versionSide{Index: l.VersionIndex, Digest: l.Digest, Created: l.CreatedAt, Href: objectVersionPath(projectID, name, l.Digest)}
	view.Right = &versionSide{Index: rt.VersionIndex, Digest: rt.Digest, Created: rt.CreatedAt, Href: objectVersionPath(projectID, name, rt.Digest)}
	view.Value = structuralDiff(l.Val, rt.Val)
	if l.Kind == "op" && rt.Kind == "op" {
		code, err := h.opCodeDiff(ctx, projectID, l.Val, rt.Val)
		if err != nil {
			h.internalError(w, r, err)
			return
		}
		view.Code = code
	}
	view.Tables, err = h.tableDiffs(ctx, projectID, l.Val, rt.Val)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	title := name + ": v" + itoaVersion(l.VersionIndex) + " → v" + itoaVersion(rt.VersionIndex)
	h.render(w, r, http.StatusOK, "object_diff", page{Title: title, Viewer: v, Project: projectID, Body: view})
}

func itoaVersion(i int) string { return strings.TrimPrefix(versionName(i), "v") }

// opSourceFile is the file of an op version that holds its code.
const opSourceFile = "obj.py"

// opCodeDiff diffs the code files of two op versions by lines.
func (h *Handler) opCodeDiff(ctx context.Context, projectID string, left, right json.RawMessage) (*lineDiff, error) {
	var texts [2]string
	for i, val := range []json.RawMessage{left, right} {
		code, err := h.opSource(ctx, projectID, val)
		switch {
		case errors.Is(err, errNoCode):
			return &lineDiff{Note: "These op versions keep no code to compare."}, nil
		case errors.Is(err, weft.ErrNotFound):
			return &lineDiff{Note: "The code of one of these versions is missing."}, nil
		case err != nil:
			return nil, err
		}
		texts[i] = code
	}
	return diffLines(texts[0], texts[1]), nil
}

// errNoCode: an op version names no code file.
var errNoCode = errors.New("the op version keeps no code")

// opSource reads the code of an op version (its value val): errNoCode when
// it names no code file, an error of class weft.ErrNotFound when the file
// is missing.
func (h *Handler) opSource(ctx context.Context, projectID string, val json.RawMessage) (string, error) {
	var op struct {
		Files map[string]string `json:"files"`
	}
	if json.Unmarshal(val, &op) != nil || op.Files[opSourceFile] == "" {
		return "", errNoCode
	}
	res, err := h.cfg.Objects.FileContent(ctx, &objects.FileContentReq{ProjectID: projectID, Digest: op.Files[opSourceFile]})
	if err != nil {
		return "", err
	}
	return string(res.Content), nil
}

// diffLines aligns two texts' lines (a longest common subsequence) into one
// diff listing.
func diffLines(left, right string) *lineDiff {
	a, b := splitLines(left), splitLines(right)
	if len(a) > maxCodeLines || len(b) > maxCodeLines {
		return &lineDiff{Note: "This code is too long to compare here."}
	}
	d := &lineDiff{}
	i, j := 0, 0
	emit := func(toI, toJ int) {
		for ; i < toI; i++ {
			d.Lines = append(d.Lines, diffLine{Op: "removed", Left: i + 1, Text: a[i]})
			d.Removed++
		}
		for ; j < toJ; j++ {
			d.Lines = append(d.Lines, diffLine{Op: "added", Right: j + 1, Text: b[j]})
			d.Added++
		}
	}
	for _, p := range jsondiff.Align(len(a), len(b), func(x, y int) bool { return a[x] == b[y] }) {
		emit(p.Left, p.Right)
		d.Lines = append(d.Lines, diffLine{Op: "equal", Left: i + 1, Right: j + 1, Text: a[i]})
		i, j = i+1, j+1
	}
	emit(len(a), len(b))
	return d
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// tableDiffs compares, member by member, the tables two object versions
// hold at their top level (a dataset's rows).
func (h *Handler) tableDiffs(ctx context.Context, projectID string, left, right json.RawMessage) ([]tableDiff, error) {
	l, r := tableMembers(left), tableMembers(right)
	var fields []string
	for field := range l {
		if _, ok := r[field]; ok {
			fields = append(fields, field)
		}
	}
	slices.Sort(fields)
	var out []tableDiff
	for _, field := range fields {
		lt, rt := l[field], r[field]
		if lt.ProjectID() != projectID || rt.ProjectID() != projectID {
			continue
		}
		d, err := h.tableDiff(ctx, projectID, lt.Digest, rt.Digest)
		if err != nil {
			return nil, err
		}
		d.Field = field
		out = append(out, d)
	}
	return out, nil
}

// tableMembers are the top-level members of an object value that are table
// refs.
func tableMembers(val json.RawMessage) map[string]ref.Ref {
	var members map[string]json.RawMessage
	if json.Unmarshal(val, &members) != nil {
		return nil
	}
	out := map[string]ref.Ref{}
	for k, raw := range members {
		var s string
		if json.Unmarshal(raw, &s) != nil || !ref.IsRef(s) {
			continue
		}
		if rf, err := ref.Parse(s); err == nil && rf.Kind == ref.KindTable && len(rf.Extra) == 0 {
			out[k] = rf
		}
	}
	return out
}

// tableDiff compares two tables of the project by row digest.
func (h *Handler) tableDiff(ctx context.Context, projectID, left, right string) (tableDiff, error) {
	d := tableDiff{LeftHref: tablePath(projectID, left, tableView{}), RightHref: tablePath(projectID, right, tableView{})}
	var rows [2][]objects.TableRow
	for i, digest := range []string{left, right} {
		stats, err := h.cfg.Objects.TableQueryStats(ctx, &objects.TableQueryStatsReq{ProjectID: projectID, Digest: digest})
		if err != nil {
			if errors.Is(err, weft.ErrNotFound) {
				d.Note = "One of these tables is missing."
				return d, nil
			}
			return d, err
		}
		if stats.Count > maxTableDiffRows {
			d.Note = "These tables are too large to compare row by row here."
			return d, nil
		}
		res, err := h.cfg.Objects.TableQuery(ctx, &objects.TableQueryReq{ProjectID: projectID, Digest: digest})
		if err != nil {
			return d, err
		}
		rows[i] = res.Rows
	}
	in := func(rows []objects.TableRow) map[string]bool {
		set := make(map[string]bool, len(rows))
		for _, r := range rows {
			set[r.Digest] = true
		}
		return set
	}
	leftSet, rightSet := in(rows[0]), in(rows[1])
	for _, r := range rows[0] {
		if rightSet[r.Digest] {
			d.Kept++
			continue
		}
		d.RemovedCount++
		if len(d.Removed) < maxTableDiffShown {
			d.Removed = append(d.Removed, tableDiffRow{Index: r.OriginalIndex, Digest: r.Digest, Value: cellTree(projectID, r.Val)})
		}
	}
	for _, r := range rows[1] {
		if leftSet[r.Digest] {
			continue
		}
		d.AddedCount++
		if len(d.Added) < maxTableDiffShown {
			d.Added = append(d.Added, tableDiffRow{Index: r.OriginalIndex, Digest: r.Digest, Value: cellTree(projectID, r.Val)})
		}
	}
	return d, nil
}
