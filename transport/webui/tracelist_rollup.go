package webui

import (
	"context"
	"errors"

	"github.com/weftlabs/weft/trace"
)

// fillRollups completes the roots of a trace list page whose summaries lack
// the roll-ups the Python SDK sends (OpenTelemetry spans, the JS SDK): a root
// another call of whose trace raised says "child error" rather than
// "success", and a root with no usage of its own shows its trace's tokens and
// cost (trace.Service.CallsUsage, which counts an SDK's own roll-up once).
// Two queries per page, each bounded by the page's roots.
func (h *Handler) fillRollups(ctx context.Context, projectID string, rows []*listRow) error {
	var succeeded, unpriced []string
	byID := make(map[string]*listRow, len(rows))
	for _, row := range rows {
		if row.ParentID != "" {
			continue
		}
		byID[row.ID] = row
		if row.Status == trace.StatusSuccess {
			succeeded = append(succeeded, row.ID)
		}
		if row.Tokens == 0 {
			unpriced = append(unpriced, row.ID)
		}
	}
	if len(succeeded) > 0 {
		req := &trace.CallsQueryReq{ProjectID: projectID, Columns: []string{"id"}, Limit: len(succeeded),
			Filter: trace.CallsFilter{CallIDs: succeeded, Statuses: []string{trace.StatusDescendantError}, TraceStatuses: true}}
		err := h.cfg.Trace.CallsQuery(ctx, req, func(c *trace.Call) error {
			if row := byID[c.ID]; row != nil {
				row.Status = trace.StatusDescendantError
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(unpriced) == 0 {
		return nil
	}
	usage, err := h.cfg.Trace.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: projectID, CallIDs: unpriced, IncludeCosts: true})
	if errors.Is(err, trace.ErrTraceTooLarge) {
		return nil // a trace too large to add up keeps its own (empty) numbers
	}
	if err != nil {
		return err
	}
	for id, models := range usage.CallUsage {
		row := byID[id]
		if row == nil || len(models) == 0 {
			continue
		}
		var tokens int64
		for _, u := range models {
			tokens += max(u.TotalTokens, u.PromptTokens+u.CompletionTokens)
		}
		cost, priced := usageCost(models)
		row.Tokens = tokens
		if priced && row.Cost == "" {
			row.Cost = formatCost(cost)
		}
	}
	return nil
}
