package webui

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft/trace"
)

// exportColumns are the fixed columns of a CSV export; the view's chosen
// inputs.* / output.* columns follow them.
var exportColumns = []string{"id", "trace_id", "op_name", "display_name", "status", "started_at", "ended_at", "latency_ms",
	"total_tokens", "cost_usd", "models", "user", "feedback", "inputs", "output", "exception"}

// exportTraces streams the calls of a trace list view (every page, in its
// order, up to Config.MaxExportRows) as CSV or JSONL (format=csv|jsonl with
// the view's own parameters). The rows are read and written a batch at a
// time, so an export holds one batch in memory.
func (h *Handler) exportTraces(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	q := r.URL.Query()
	format, err := exportFormatOf(q)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	q.Del("format")
	view, err := parseWholeView(q)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	ctx := r.Context()
	userID, known, err := h.userFilter(ctx, view)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	req := view.query(projectID, userID)
	req.Limit = h.cfg.MaxExportRows
	if !known {
		req = nil // the user filter names nobody: nothing matches
	}
	h.streamExport(w, r, projectID, "traces", format, func(out *exportWriter) error {
		if format == "csv" {
			return h.exportCSV(ctx, out, projectID, view, req)
		}
		return h.exportJSONL(ctx, out, req)
	})
}

// exportJSONL writes each call as one line of JSON, as the API streams it;
// a nil req writes nothing.
func (h *Handler) exportJSONL(ctx context.Context, out *exportWriter, req *trace.CallsQueryReq) error {
	if req == nil {
		return nil
	}
	n := 0
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	return h.cfg.Trace.CallsQuery(ctx, req, func(c *trace.Call) error {
		if err := enc.Encode(c); err != nil {
			return err
		}
		if n++; n%exportBatch == 0 {
			out.flush()
		}
		return nil
	})
}

// exportCSV writes a header and a row per call with the list's columns,
// completed a batch at a time as the list completes its page; a nil req
// writes the header alone.
func (h *Handler) exportCSV(ctx context.Context, out *exportWriter, projectID string, view listView, req *trace.CallsQueryReq) error {
	cw := csv.NewWriter(out)
	if err := cw.Write(append(append([]string(nil), exportColumns...), view.Cols...)); err != nil {
		return err
	}
	if req == nil {
		cw.Flush()
		return cw.Error()
	}
	batch := make([]*listRow, 0, exportBatch)
	write := func() error {
		if err := h.fillRows(ctx, projectID, batch); err != nil {
			return err
		}
		for _, row := range batch {
			if err := cw.Write(csvRecord(row, view.Cols)); err != nil {
				return err
			}
		}
		batch = batch[:0]
		cw.Flush()
		out.flush()
		return cw.Error()
	}
	err := h.cfg.Trace.CallsQuery(ctx, req, func(c *trace.Call) error {
		batch = append(batch, rowOf(c, nil, false))
		if len(batch) == exportBatch {
			return write()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return write()
}

// csvRecord is a row of a CSV export: the fixed columns, then the values of
// cols in full.
func csvRecord(row *listRow, cols []string) []string {
	c := row.call
	ended, latency := "", ""
	if c.EndedAt != nil {
		ended = c.EndedAt.UTC().Format(time.RFC3339Nano)
	}
	if row.LatencyMS != nil {
		latency = strconv.FormatInt(*row.LatencyMS, 10)
	}
	tokens := ""
	if row.Tokens > 0 {
		tokens = strconv.FormatInt(row.Tokens, 10)
	}
	user := row.Username
	if user == "" {
		user = row.UserID
	}
	var feedback []string
	for _, r := range row.Reactions {
		feedback = append(feedback, r.Emoji+"×"+strconv.Itoa(r.Count))
	}
	exception := ""
	if c.Exception != nil {
		exception = *c.Exception
	}
	record := []string{c.ID, c.TraceID, c.OpName, row.Name, row.Status, c.StartedAt.UTC().Format(time.RFC3339Nano), ended, latency,
		tokens, strings.TrimPrefix(row.Cost, "$"), row.Models, user, strings.Join(feedback, " "),
		compactJSON(c.Inputs), compactJSON(c.Output), exception}
	for _, col := range cols {
		record = append(record, fieldValue(c, col))
	}
	for i, cell := range record {
		record[i] = inertCell(cell)
	}
	return record
}
