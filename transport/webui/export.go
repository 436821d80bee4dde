package webui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/weftlabs/weft"
)

// Exports: the trace list (tracelist_export.go), a table such as a
// dataset's rows (objects_table_export.go) and an evaluation comparison
// (evals_export.go) download as CSV or JSONL. Each streams its rows a batch
// at a time, up to Config.MaxExportRows, through streamExport.

// DefaultMaxExportRows is how many rows (calls, table rows, compared
// examples) one export writes when Config.MaxExportRows is zero.
const DefaultMaxExportRows = 10_000

// exportBatch is how many rows an export reads, completes and writes at a
// time: what it holds in memory.
const exportBatch = tracesPageSize

// exportFormats are the export formats and their media types.
var exportFormats = map[string]string{"csv": "text/csv; charset=utf-8", "jsonl": "application/jsonl"}

// exportFormatOf reads an export's ?format=: csv or jsonl.
func exportFormatOf(q url.Values) (string, error) {
	format := q.Get("format")
	if _, ok := exportFormats[format]; !ok {
		return "", weft.Errorf(errBadView, "format: csv or jsonl")
	}
	return format, nil
}

// exportLinks are a page's export links, by format: path with the page's
// query q and the format.
func exportLinks(path string, q url.Values) map[string]string {
	links := map[string]string{}
	for format := range exportFormats {
		with := url.Values{"format": {format}}
		for k, v := range q {
			with[k] = v
		}
		links[format] = withQuery(path, with)
	}
	return links
}

// streamExport answers an export in format, named <project>-<what>.<format>:
// write streams its rows to the response. An error before anything was
// written is answered as a page's error; one after aborts the response, so
// that a download never ends short without saying so.
func (h *Handler) streamExport(w http.ResponseWriter, r *http.Request, projectID, what, format string, write func(*exportWriter) error) {
	w.Header().Set("Content-Type", exportFormats[format])
	w.Header().Set("Content-Disposition", `attachment; filename="`+exportName(projectID, what, format)+`"`)
	w.Header().Set("Cache-Control", "no-store")
	out := &exportWriter{w: w, flusher: http.NewResponseController(w)}
	if err := write(out); err != nil {
		if !out.started {
			w.Header().Del("Content-Disposition")
			h.refuse(w, r, err)
			return
		}
		h.cfg.Logger.ErrorContext(r.Context(), "webui: export ended early", "project", projectID, "export", what, "error", err)
		panic(http.ErrAbortHandler)
	}
}

// exportName is the file name of an export: entity-project-what.<format>,
// with no character a Content-Disposition header would misread.
func exportName(projectID, what, format string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`"\/;`, r) {
			return '-'
		}
		return r
	}, projectID+"-"+what) + "." + format
}

// exportWriter is the response of an export: it remembers whether anything
// was written, and flushes each batch to the client.
type exportWriter struct {
	w       http.ResponseWriter
	flusher *http.ResponseController
	started bool
}

func (e *exportWriter) Write(p []byte) (int, error) {
	e.started = true
	return e.w.Write(p)
}

func (e *exportWriter) flush() { _ = e.flusher.Flush() }

// inertCell keeps a spreadsheet from reading a cell as a formula: text that
// starts with =, +, -, @, a tab or a carriage return gets a leading "'"
// (OWASP's advice against CSV injection). A number an export formats
// itself is written without it: a spreadsheet reads -0.5 as a number.
func inertCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
