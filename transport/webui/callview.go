package webui

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/weftlabs/weft/objects/ref"
	"github.com/weftlabs/weft/trace"
)

// callView is a call as the list, the tree and the detail pane show it.
type callView struct {
	ID          string
	TraceID     string
	ParentID    string
	ThreadID    string // "" outside a thread
	OpName      string
	Name        string // display name, else the op's name
	Status      string // summary.weave.status
	Started     time.Time
	Ended       *time.Time
	LatencyMS   *int64
	Tokens      int64 // summed over the models of summary.usage
	UserID      string
	Username    string // filled in by the page when known
	Exception   string
	HasChildren bool // set by the tree
	call        *trace.Call
}

// summaryFields are the members of a call's summary the UI reads.
type summaryFields struct {
	Usage map[string]usageCounts `json:"usage"`
	Weave struct {
		Status      string `json:"status"`
		LatencyMS   *int64 `json:"latency_ms"`
		TraceName   string `json:"trace_name"`
		DisplayName string `json:"display_name"`
	} `json:"weave"`
}

// usageCounts are one model's counters in summary.usage; the SDKs write
// either the OpenAI names or the input/output ones.
type usageCounts struct {
	Requests         int64 `json:"requests"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
}

// total is the model's token count: total_tokens when given, else the sum of
// the parts.
func (u usageCounts) total() int64 {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.PromptTokens + u.CompletionTokens + u.InputTokens + u.OutputTokens
}

func viewOf(c *trace.Call) *callView {
	v := &callView{
		ID: c.ID, TraceID: c.TraceID, OpName: c.OpName, Started: c.StartedAt, Ended: c.EndedAt, call: c,
	}
	if c.ParentID != nil {
		v.ParentID = *c.ParentID
	}
	if c.ThreadID != nil {
		v.ThreadID = *c.ThreadID
	}
	if c.PfUserID != nil {
		v.UserID = *c.PfUserID
	}
	if c.Exception != nil {
		v.Exception = *c.Exception
	}
	var s summaryFields
	_ = json.Unmarshal(c.Summary, &s) // a summary of another shape only lacks the numbers
	v.Status, v.LatencyMS = s.Weave.Status, s.Weave.LatencyMS
	for _, u := range s.Usage {
		v.Tokens += u.total()
	}
	switch {
	case c.DisplayName != nil && *c.DisplayName != "":
		v.Name = *c.DisplayName
	case s.Weave.TraceName != "":
		v.Name = s.Weave.TraceName
	default:
		v.Name = opShortName(c.OpName)
	}
	return v
}

// opShortName is the name part of an op ref ("weave:///e/p/op/name:digest" →
// "name"), or the op name itself when it is no ref.
func opShortName(opName string) string {
	if r, err := ref.Parse(opName); err == nil && r.Name != "" {
		return r.Name
	}
	return opName
}

// usageRows lists a call's own summary.usage per model, sorted by model.
func usageRows(c *trace.Call) []usageRow {
	var s summaryFields
	_ = json.Unmarshal(c.Summary, &s)
	var rows []usageRow
	for model, u := range s.Usage {
		rows = append(rows, usageRow{Model: model, Requests: u.Requests, Prompt: u.PromptTokens + u.InputTokens,
			Completion: u.CompletionTokens + u.OutputTokens, Total: u.total()})
	}
	slices.SortFunc(rows, func(a, b usageRow) int {
		switch {
		case a.Model < b.Model:
			return -1
		case a.Model > b.Model:
			return 1
		}
		return 0
	})
	return rows
}

// usageRow is one model's line in the detail pane.
type usageRow struct {
	Model                               string
	Requests, Prompt, Completion, Total int64
}

// statusLabel is the words shown for a status.
func statusLabel(status string) string {
	switch status {
	case trace.StatusSuccess:
		return "success"
	case trace.StatusError:
		return "error"
	case trace.StatusRunning:
		return "running"
	case trace.StatusDescendantError:
		return "child error"
	}
	return status
}
