package webui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

// Table page bounds: rows per page, and the columns drawn (the members of
// the page's rows, in the order they first appear).
const (
	tablePageSize   = 50
	maxTableColumns = 24
	maxSortPath     = 256
)

// tableView is the state of a table page in its URL: the sort (a member's
// dotted path and a direction) and the offset.
type tableView struct {
	Sort   string
	Dir    string
	Offset int
}

// tablePageView is the data of a table page.
type tablePageView struct {
	Project string
	Digest  string
	View    tableView
	Count   int64
	// First is the 1-based position of the first row shown.
	First   int
	Columns []tableColumn
	Rows    []tableRowView
	// Scalar is set when the rows are not objects: one column of values.
	Scalar     bool
	Prev, Next string
	// Export links the table's export as CSV and as JSONL, in the page's
	// order (at most ExportLimit rows).
	Export      map[string]string
	ExportLimit int64
}

// tableColumn is a column header: its member name and the links that sort by it.
type tableColumn struct {
	Name string
	// Sorted is "ascending" or "descending" when the page is sorted by it.
	Sorted string
	// Sort is the link that sorts by the column (the other way when sorted);
	// "" when the name cannot be a sort path (it holds a dot).
	Sort string
}

// tableRowView is one row: its position in the table, digest and cells.
type tableRowView struct {
	Index  int
	Digest string
	Cells  []*jsonNode
}

// tablePage answers GET …/tables/{digest}?sort=<path>&dir=<asc|desc>&offset=<n>:
// one page of a table's rows, sorted and paged by the objects service, each
// cell drawn like a call's values.
func (h *Handler) tablePage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	digest, ok := h.tableDigest(w, r)
	if !ok {
		return
	}
	view, err := parseTableView(r.URL.Query())
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	ctx := r.Context()
	stats, err := h.cfg.Objects.TableQueryStats(ctx, &objects.TableQueryStatsReq{ProjectID: projectID, Digest: digest})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	limit := tablePageSize
	req := &objects.TableQueryReq{ProjectID: projectID, Digest: digest, Limit: &limit, Offset: &view.Offset}
	if view.Sort != "" {
		req.SortBy = []objects.SortBy{{Field: view.Sort, Direction: view.Dir}}
	}
	res, err := h.cfg.Objects.TableQuery(ctx, req)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	data := tableRows(projectID, digest, view, res.Rows)
	data.Count = stats.Count
	data.Export, data.ExportLimit = exportLinks(tableExportPath(projectID, digest), view.sortValues()), int64(h.cfg.MaxExportRows)
	if view.Offset > 0 {
		data.Prev = tablePath(projectID, digest, tableView{Sort: view.Sort, Dir: view.Dir, Offset: max(0, view.Offset-tablePageSize)})
	}
	if int64(view.Offset+len(res.Rows)) < stats.Count {
		data.Next = tablePath(projectID, digest, tableView{Sort: view.Sort, Dir: view.Dir, Offset: view.Offset + tablePageSize})
	}
	h.render(w, r, http.StatusOK, "table", page{Title: "Table " + truncate(digest, 12), Viewer: v, Project: projectID, Body: data})
}

// parseTableView reads a table page's URL query.
func parseTableView(q url.Values) (tableView, error) {
	v := tableView{Sort: q.Get("sort"), Dir: q.Get("dir")}
	if len(v.Sort) > maxSortPath {
		return v, weft.Errorf(errBadView, "sort: at most %d characters", maxSortPath)
	}
	if v.Sort != "" && strings.Contains("."+v.Sort+".", "..") {
		return v, weft.Errorf(errBadView, "sort: a dotted path of member names, like input.question")
	}
	switch v.Dir {
	case "":
		v.Dir = "asc"
	case "asc", "desc":
	default:
		return v, weft.Errorf(errBadView, "dir: must be asc or desc")
	}
	off, err := offsetParam(q)
	v.Offset = off
	return v, err
}

// tableRows lays a page of rows out as columns: the members of object rows
// in the order they first appear (at most maxTableColumns), or one column of
// values when a row is not an object.
func tableRows(projectID, digest string, view tableView, rows []objects.TableRow) tablePageView {
	data := tablePageView{Project: projectID, Digest: digest, View: view, First: view.Offset + 1}
	members := make([]map[string]json.RawMessage, len(rows))
	var names []string
	seen := map[string]bool{}
	for i, r := range rows {
		if err := json.Unmarshal(r.Val, &members[i]); err != nil || members[i] == nil {
			data.Scalar = true
			continue
		}
		for _, name := range objectKeys(r.Val) {
			if !seen[name] && len(names) < maxTableColumns {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	if data.Scalar {
		names = nil
	}
	for _, name := range names {
		col := tableColumn{Name: name}
		if !strings.Contains(name, ".") && name != "" {
			dir := "asc"
			if view.Sort == name {
				col.Sorted = map[string]string{"asc": "ascending", "desc": "descending"}[view.Dir]
				if view.Dir == "asc" {
					dir = "desc"
				}
			}
			col.Sort = tablePath(projectID, digest, tableView{Sort: name, Dir: dir})
		}
		data.Columns = append(data.Columns, col)
	}
	for i, r := range rows {
		row := tableRowView{Index: r.OriginalIndex, Digest: r.Digest}
		if data.Scalar {
			row.Cells = []*jsonNode{cellTree(projectID, r.Val)}
		} else {
			for _, name := range names {
				raw, ok := members[i][name]
				if !ok {
					row.Cells = append(row.Cells, nil)
					continue
				}
				row.Cells = append(row.Cells, cellTree(projectID, raw))
			}
		}
		data.Rows = append(data.Rows, row)
	}
	return data
}

// objectKeys are the member names of a JSON object in their stored order.
func objectKeys(raw json.RawMessage) []string {
	n := jsonTree(raw)
	if n == nil || n.Kind != "object" {
		return nil
	}
	keys := make([]string, 0, len(n.Children))
	for _, c := range n.Children {
		if c.Kind != "more" {
			keys = append(keys, c.Key)
		}
	}
	return keys
}

// cellTree draws one stored value like a call's values: a JSON tree whose
// refs link to their pages and whose images show.
func cellTree(projectID string, raw json.RawMessage) *jsonNode {
	n := jsonTree(raw)
	decorate(n, "", valueLinks{Project: projectID})
	return n
}

// tablePath is the link of a table page in view.
func tablePath(projectID, digest string, view tableView) string {
	q := view.sortValues()
	if view.Offset > 0 {
		q.Set("offset", strconv.Itoa(view.Offset))
	}
	return withQuery(projectPath(projectID, "tables/", pathSegment(digest)), q)
}

// sortValues is the view's sort as a query.
func (view tableView) sortValues() url.Values {
	q := url.Values{}
	if view.Sort != "" {
		q.Set("sort", view.Sort)
		if view.Dir == "desc" {
			q.Set("dir", "desc")
		}
	}
	return q
}

// tableDigest is the {digest} of a table route, answered for the caller
// (404 when the server keeps no tables, 400 when it is too long) when false.
func (h *Handler) tableDigest(w http.ResponseWriter, r *http.Request) (string, bool) {
	if h.cfg.Objects == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no tables.")
		return "", false
	}
	digest := r.PathValue("digest")
	if len(digest) > maxObjectNameLength {
		h.refuse(w, r, weft.Errorf(errBadView, "digest: at most %d characters", maxObjectNameLength))
		return "", false
	}
	return digest, true
}
