package webui

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"

	"github.com/weftlabs/weft/objects"
)

// maxExportColumns bounds the columns of a table's CSV export: members
// past the first that many names are left out of it (its JSONL keeps every
// member).
const maxExportColumns = 1000

// tableExportPath is the export route of a table.
func tableExportPath(projectID, digest string) string {
	return projectPath(projectID, "tables/", pathSegment(digest), "/export")
}

// exportTable answers GET …/tables/{digest}/export?format=csv|jsonl&sort=…&dir=…:
// the rows of a table (a dataset version's rows, say) in the table page's
// order, up to Config.MaxExportRows. JSONL writes each row's value on a
// line of its own, as stored; CSV has a column per member of the rows, in
// the order the names first appear (one column, value, when a row is not
// an object), a string member as its text and any other value as JSON.
func (h *Handler) exportTable(w http.ResponseWriter, r *http.Request, _ *viewer, projectID string) {
	digest, ok := h.tableDigest(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	format, err := exportFormatOf(q)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view, err := parseTableView(q)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	view.Offset = 0
	ctx := r.Context()
	// An unknown table is the page's 404, not an empty download.
	if _, err := h.cfg.Objects.TableQueryStats(ctx, &objects.TableQueryStatsReq{ProjectID: projectID, Digest: digest}); err != nil {
		h.refuse(w, r, err)
		return
	}
	rows := tableRowsReader{objects: h.cfg.Objects, projectID: projectID, digest: digest, view: view, limit: h.cfg.MaxExportRows}
	h.streamExport(w, r, projectID, "table-"+digest[:min(len(digest), 12)], format, func(out *exportWriter) error {
		if format == "csv" {
			return rows.writeCSV(ctx, out)
		}
		return rows.writeJSONL(ctx, out)
	})
}

// tableRowsReader reads the rows of one table in a view's order, a batch at
// a time, up to limit rows.
type tableRowsReader struct {
	objects   objects.Service
	projectID string
	digest    string
	view      tableView
	limit     int
}

// each calls fn with each batch of rows.
func (t tableRowsReader) each(ctx context.Context, fn func([]objects.TableRow) error) error {
	for offset := 0; offset < t.limit; {
		n, at := min(exportBatch, t.limit-offset), offset
		req := &objects.TableQueryReq{ProjectID: t.projectID, Digest: t.digest, Limit: &n, Offset: &at}
		if t.view.Sort != "" {
			req.SortBy = []objects.SortBy{{Field: t.view.Sort, Direction: t.view.Dir}}
		}
		res, err := t.objects.TableQuery(ctx, req)
		if err != nil {
			return err
		}
		if len(res.Rows) > 0 {
			if err := fn(res.Rows); err != nil {
				return err
			}
		}
		if len(res.Rows) < n {
			return nil
		}
		offset += len(res.Rows)
	}
	return nil
}

// writeJSONL writes each row's value as one line.
func (t tableRowsReader) writeJSONL(ctx context.Context, out *exportWriter) error {
	var b bytes.Buffer
	return t.each(ctx, func(rows []objects.TableRow) error {
		b.Reset()
		for _, row := range rows {
			if err := json.Compact(&b, row.Val); err != nil {
				return err
			}
			b.WriteByte('\n')
		}
		_, err := out.Write(b.Bytes())
		out.flush()
		return err
	})
}

// writeCSV writes a header of the rows' member names, then a record per
// row. The header needs every name first: a first pass over the rows reads
// the names alone.
func (t tableRowsReader) writeCSV(ctx context.Context, out *exportWriter) error {
	var names []string
	seen := map[string]bool{}
	scalar := false
	err := t.each(ctx, func(rows []objects.TableRow) error {
		for _, row := range rows {
			members, ok := memberNames(row.Val)
			scalar = scalar || !ok
			for _, name := range members {
				if !seen[name] && len(names) < maxExportColumns {
					seen[name] = true
					names = append(names, name)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if scalar || len(names) == 0 {
		names = nil
	}
	cw := csv.NewWriter(out)
	header := []string{"value"}
	if names != nil {
		header = make([]string, len(names))
		for i, name := range names {
			header[i] = inertCell(name)
		}
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	err = t.each(ctx, func(rows []objects.TableRow) error {
		for _, row := range rows {
			record := []string{csvValue(row.Val)}
			if names != nil {
				var members map[string]json.RawMessage
				_ = json.Unmarshal(row.Val, &members)
				record = make([]string, len(names))
				for i, name := range names {
					if raw, ok := members[name]; ok {
						record[i] = csvValue(raw)
					}
				}
			}
			if err := cw.Write(record); err != nil {
				return err
			}
		}
		cw.Flush()
		out.flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// memberNames are the member names of a JSON object in their stored order;
// false when raw is no object.
func memberNames(raw json.RawMessage) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		name, _ := tok.(string)
		names = append(names, name)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return names, true
}

// csvValue is a stored value as a CSV cell: a string as its text (made
// inert), any other value as its JSON.
func csvValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return inertCell(s)
	}
	return compactJSON(raw)
}
