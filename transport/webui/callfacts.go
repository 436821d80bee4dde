package webui

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/weftlabs/weft/trace"
)

// costRow is one model's cost of a call (summary.weave.costs, present when
// the call was read with IncludeCosts and the model has a price).
type costRow struct {
	Model                      string
	Prompt, Completion, Cached float64
	Total                      float64
	PromptUnit                 string
}

// callCosts reads the per-model costs of a call's summary and their sum.
func callCosts(c *trace.Call) (rows []costRow, total float64, ok bool) {
	var s struct {
		Weave struct {
			Costs map[string]struct {
				trace.Usage
				PromptTokenCostUnit string `json:"prompt_token_cost_unit"`
			} `json:"costs"`
		} `json:"weave"`
	}
	if json.Unmarshal(c.Summary, &s) != nil || len(s.Weave.Costs) == 0 {
		return nil, 0, false
	}
	for model, u := range s.Weave.Costs {
		r := costRow{Model: model, PromptUnit: u.PromptTokenCostUnit}
		r.Prompt = deref(u.PromptTokensTotalCost)
		r.Completion = deref(u.CompletionTokensTotalCost)
		r.Cached = deref(u.CacheReadInputTokensTotalCost) + deref(u.CacheCreationInputTokensTotalCost)
		r.Total = r.Prompt + r.Completion + r.Cached
		total += r.Total
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b costRow) int { return strings.Compare(a.Model, b.Model) })
	return rows, total, true
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// formatCost writes a cost in dollars with enough digits for fractions of a
// cent.
func formatCost(c float64) string {
	switch {
	case c == 0:
		return "$0"
	case c < 0.01 && c > -0.01:
		return "$" + strconv.FormatFloat(c, 'f', 6, 64)
	default:
		return "$" + strconv.FormatFloat(c, 'f', 4, 64)
	}
}

// exceptionView splits a recorded exception into the line people read first
// and the rest (a Python traceback ends with its error line; other
// languages' stacks start with it).
type exceptionView struct {
	Headline string
	Stack    string
}

func exceptionOf(text string) *exceptionView {
	text = strings.TrimRight(text, "\n ")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		return &exceptionView{Headline: text}
	}
	if strings.HasPrefix(lines[0], "Traceback (most recent call last)") {
		return &exceptionView{Headline: strings.TrimSpace(lines[len(lines)-1]), Stack: text}
	}
	return &exceptionView{Headline: strings.TrimSpace(lines[0]), Stack: text}
}
