package webui

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
)

// exportComparison answers GET …/evaluations/compare/export?format=csv|jsonl&run=…
// with the comparison page's other parameters: every example the page's
// view shows (all, or the regressions only), in its order, up to
// Config.MaxExportRows, each with its value (a row ref read) and every
// run's call, output and scores.
//
// JSONL writes a line per example: {"row_digest", "example", "regression",
// "results": [one per run, in the runs' order: {"run", "call_id",
// "trace_id", "output", "scores"}, or null when the run lacks the
// example]}. CSV has the columns row_digest, example, regression, then for
// each run (named by its id) <run>.call_id, <run>.output and <run>.<metric>
// for each metric; a string as its text, any other value as JSON.
func (h *Handler) exportComparison(w http.ResponseWriter, r *http.Request, _ *viewer, projectID string) {
	q := r.URL.Query()
	format, err := exportFormatOf(q)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	p, err := parseCompareParams(q)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	ctx := r.Context()
	cmp, err := h.compareRuns(ctx, projectID, p)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	examples := cmp.shown(p)
	examples = examples[:min(len(examples), h.cfg.MaxExportRows)]
	what := "evaluation-comparison"
	if len(cmp.Runs) == 1 {
		what = "evaluation-results"
	}
	h.streamExport(w, r, projectID, what, format, func(out *exportWriter) error {
		write := comparisonJSONL
		if format == "csv" {
			if err := writeCSVRecord(out, comparisonHeader(cmp)); err != nil {
				return err
			}
			write = comparisonRecord
		}
		return h.writeComparison(ctx, out, projectID, cmp, examples, p.Directions, write)
	})
}

// writeComparison resolves the examples' values and writes them, a batch
// at a time.
func (h *Handler) writeComparison(ctx context.Context, out *exportWriter, projectID string, cmp *comparison, examples []*compareExample,
	dirs metricDirections, write func(*bytes.Buffer, *comparison, *compareExample, json.RawMessage, metricDirections) error) error {
	var b bytes.Buffer
	for batch := range slices.Chunk(examples, exportBatch) {
		values, err := h.exampleValues(ctx, projectID, batch)
		if err != nil {
			return err
		}
		b.Reset()
		for i, ex := range batch {
			value := values[i]
			if value == nil {
				value = ex.Example
			}
			if err := write(&b, cmp, ex, value, dirs); err != nil {
				return err
			}
		}
		if _, err := out.Write(b.Bytes()); err != nil {
			return err
		}
		out.flush()
	}
	return nil
}

// comparedResult is one run's result for an example, as JSONL writes it.
type comparedResult struct {
	Run     string             `json:"run"`
	CallID  string             `json:"call_id"`
	TraceID string             `json:"trace_id"`
	Output  json.RawMessage    `json:"output"`
	Scores  map[string]float64 `json:"scores"`
}

// comparisonJSONL writes one example as a line of JSON.
func comparisonJSONL(b *bytes.Buffer, cmp *comparison, ex *compareExample, value json.RawMessage, dirs metricDirections) error {
	results := make([]*comparedResult, len(ex.Results))
	for i, res := range ex.Results {
		if res != nil {
			output := res.Output
			if len(output) == 0 {
				output = json.RawMessage("null")
			}
			results[i] = &comparedResult{Run: cmp.Runs[i].ID, CallID: res.CallID, TraceID: res.TraceID, Output: output, Scores: res.Scores}
		}
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		RowDigest  string            `json:"row_digest"`
		Example    json.RawMessage   `json:"example"`
		Regression bool              `json:"regression"`
		Results    []*comparedResult `json:"results"`
	}{ex.Key, value, ex.regressed(cmp.BaselineIndex, cmp.Metrics, dirs), results})
}

// comparisonHeader is the CSV header of a comparison.
func comparisonHeader(cmp *comparison) []string {
	header := []string{"row_digest", "example", "regression"}
	for _, run := range cmp.Runs {
		header = append(header, inertCell(run.ID+".call_id"), inertCell(run.ID+".output"))
		for _, m := range cmp.Metrics {
			header = append(header, inertCell(run.ID+"."+m))
		}
	}
	return header
}

// comparisonRecord writes one example as a CSV record under
// comparisonHeader.
func comparisonRecord(b *bytes.Buffer, cmp *comparison, ex *compareExample, value json.RawMessage, dirs metricDirections) error {
	record := []string{ex.Key, csvValue(value), strconv.FormatBool(ex.regressed(cmp.BaselineIndex, cmp.Metrics, dirs))}
	for _, res := range ex.Results {
		if res == nil {
			record = append(record, make([]string, 2+len(cmp.Metrics))...)
			continue
		}
		record = append(record, inertCell(res.CallID), csvValue(res.Output))
		for _, m := range cmp.Metrics {
			score := ""
			if v, ok := res.Scores[m]; ok {
				score = strconv.FormatFloat(v, 'g', -1, 64)
			}
			record = append(record, score)
		}
	}
	return writeCSVRecord(b, record)
}

// writeCSVRecord writes one CSV record to w.
func writeCSVRecord(w io.Writer, record []string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(record); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
