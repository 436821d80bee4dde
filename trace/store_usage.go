package trace

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
)

// counts is one model's usage of one call or subtree: the token counters and,
// when costs are asked for, their prices.
type counts struct {
	requests, prompt, completion, total, cacheRead, cacheCreation float64
	promptCost, completionCost, cacheReadCost, cacheCreationCost  float64
}

func (c *counts) add(o *counts) {
	c.requests += o.requests
	c.prompt += o.prompt
	c.completion += o.completion
	c.total += o.total
	c.cacheRead += o.cacheRead
	c.cacheCreation += o.cacheCreation
	c.promptCost += o.promptCost
	c.completionCost += o.completionCost
	c.cacheReadCost += o.cacheReadCost
	c.cacheCreationCost += o.cacheCreationCost
}

// sameCounts reports whether c equals o in every counter (prices aside).
func (c *counts) sameCounts(o *counts) bool {
	return c.requests == o.requests && c.prompt == o.prompt && c.completion == o.completion &&
		c.total == o.total && c.cacheRead == o.cacheRead && c.cacheCreation == o.cacheCreation
}

func (c *counts) anyCount() bool {
	return c.requests != 0 || c.prompt != 0 || c.completion != 0 || c.total != 0 || c.cacheRead != 0 || c.cacheCreation != 0
}

func (c *counts) anyCost() bool {
	return c.promptCost != 0 || c.completionCost != 0 || c.cacheReadCost != 0 || c.cacheCreationCost != 0
}

// ownUsage reads a stored summary's "usage": per model, input_tokens folded
// into prompt_tokens and output_tokens into completion_tokens, a zero
// total_tokens replaced by prompt+completion, non-numbers read as 0.
func ownUsage(summary []byte) map[string]*counts {
	if len(summary) == 0 {
		return nil
	}
	var s struct {
		Usage map[string]map[string]json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(summary, &s) != nil || len(s.Usage) == 0 {
		return nil
	}
	out := make(map[string]*counts, len(s.Usage))
	for model, fields := range s.Usage {
		n := func(k string) float64 {
			raw, ok := fields[k]
			if !ok { // most summaries name few counters: skip the parse and its error
				return 0
			}
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				return 0
			}
			return f
		}
		c := &counts{
			requests:      n("requests"),
			prompt:        n("prompt_tokens") + n("input_tokens"),
			completion:    n("completion_tokens") + n("output_tokens"),
			total:         n("total_tokens"),
			cacheRead:     n("cache_read_input_tokens"),
			cacheCreation: n("cache_creation_input_tokens"),
		}
		if c.total == 0 {
			c.total = c.prompt + c.completion
		}
		out[model] = c
	}
	return out
}

// storedUsage encodes a call's own usage for the calls.usage column: a JSON
// object mapping each model to [requests, prompt, completion, total,
// cache_read, cache_creation], "{}" for none. Floats are written in their
// shortest exact form, so reading them back gives the same numbers.
func storedUsage(usage map[string]*counts) string {
	if len(usage) == 0 {
		return "{}"
	}
	b := []byte{'{'}
	for i, model := range slices.Sorted(maps.Keys(usage)) {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(model)
		b = append(append(b, name...), ':', '[')
		c := usage[model]
		for j, n := range [...]float64{c.requests, c.prompt, c.completion, c.total, c.cacheRead, c.cacheCreation} {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, n, 'g', -1, 64)
		}
		b = append(b, ']')
	}
	return string(append(b, '}'))
}

// parseStoredUsage reads what storedUsage wrote.
func parseStoredUsage(stored string) map[string]*counts {
	if stored == "{}" {
		return nil
	}
	var models map[string][6]float64
	if json.Unmarshal([]byte(stored), &models) != nil {
		return nil
	}
	out := make(map[string]*counts, len(models))
	for model, n := range models {
		out[model] = &counts{requests: n[0], prompt: n[1], completion: n[2], total: n[3], cacheRead: n[4], cacheCreation: n[5]}
	}
	return out
}

// usageCall is what usage loads per call: the stored usage, or the summary
// when the row predates the usage column, and the start time only when costs
// are asked for.
type usageCall struct {
	ID         string    `bun:"id"`
	ParentID   *string   `bun:"parent_id"`
	StartedAt  time.Time `bun:"started_at"`
	Unfinished bool      `bun:"unfinished"`
	Usage      *string   `bun:"usage"`
	Summary    *string   `bun:"summary"`
}

// ownUsage is the call's own usage per model.
func (c *usageCall) ownUsage() map[string]*counts {
	switch {
	case c.Usage != nil:
		return parseStoredUsage(*c.Usage)
	case c.Summary != nil:
		return ownUsage([]byte(*c.Summary))
	}
	return nil
}

// usageLimit is a usage request's limit: DefaultUsageLimit when not given,
// else a number from 1 to MaxUsageLimit.
func usageLimit(given *int) (int, error) {
	if given == nil {
		return DefaultUsageLimit, nil
	}
	if *given < 1 || *given > MaxUsageLimit {
		return 0, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "limit"}, "limit must be between 1 and %d", MaxUsageLimit)
	}
	return *given, nil
}

// CallsUsage implements [Service].
//
// Every requested id is a key of CallUsage; ids that are unknown, not started
// or deleted map to an empty map. The calls of the requested calls' traces are
// loaded in groups of traces of at most Limit calls; a group over the limit is
// split, and a single trace over it fails with ErrTraceTooLarge, so numbers are
// never partial. UnfinishedCallIDs lists, sorted, every loaded call without an
// end.
//
// Roll-up rule (double counting). A call's usage for a model is its own
// summary.usage entry combined with the sum of its children's rolled-up
// usage. Both official SDKs already add children's usage into the parent's
// summary before sending the end, so adding them again would report twice the
// truth. Therefore: when the call's own entry equals the children's summed
// roll-up in every counter (requests, prompt, completion, total, cache read,
// cache creation; input/output tokens folded into prompt/completion first), it
// is the SDK's copy of them and counts once; otherwise its own numbers were
// spent besides its children's and the two are added. Being merely larger is
// not enough: a parent that made its own, bigger request adds to its
// children. A model only the children used is their sum. Costs follow the
// same choice as the counters they price.
func (s *Store) CallsUsage(ctx context.Context, req *CallsUsageReq) (*CallsUsageRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	limit, err := usageLimit(req.Limit)
	if err != nil {
		return nil, err
	}
	res := &CallsUsageRes{CallUsage: map[string]map[string]*Usage{}, UnfinishedCallIDs: []string{}}
	for _, id := range req.CallIDs {
		res.CallUsage[id] = map[string]*Usage{}
	}
	if len(req.CallIDs) == 0 {
		return res, nil
	}
	var traceIDs []string
	err = visible(s.db.NewSelect().Model((*callRow)(nil)), req.ProjectID).
		ColumnExpr("DISTINCT c.trace_id").Where("c.id IN (?)", bun.In(slices.Collect(maps.Keys(res.CallUsage)))).
		OrderExpr("c.trace_id").Scan(ctx, &traceIDs)
	if err != nil {
		return nil, err
	}
	book, err := s.priceBook(ctx, req.ProjectID, req.IncludeCosts)
	if err != nil {
		return nil, err
	}
	agg := usageAggregation{res: res, book: book, includeCosts: req.IncludeCosts}
	if err := s.usageOfTraces(ctx, req.ProjectID, traceIDs, limit, &agg); err != nil {
		return nil, err
	}
	slices.Sort(res.UnfinishedCallIDs)
	return res, nil
}

// TraceUsage implements [Service]. Calls whose parent was not loaded are the
// roots of the roll-up.
func (s *Store) TraceUsage(ctx context.Context, req *TraceUsageReq) (*TraceUsageRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	limit, err := usageLimit(req.Limit)
	if err != nil {
		return nil, err
	}
	q, err := s.queried(s.usageSelect(req.IncludeCosts), req.ProjectID, &req.Filter, req.Query, nil)
	if err != nil {
		return nil, err
	}
	var calls []usageCall
	if err := q.OrderExpr("c.started_at ASC, c.id ASC").Limit(int64(limit)).Scan(ctx, &calls); err != nil {
		return nil, err
	}
	book, err := s.priceBook(ctx, req.ProjectID, req.IncludeCosts)
	if err != nil {
		return nil, err
	}
	res := &CallsUsageRes{CallUsage: make(map[string]map[string]*Usage, len(calls))}
	for _, c := range calls {
		res.CallUsage[c.ID] = map[string]*Usage{}
	}
	agg := usageAggregation{res: res, book: book, includeCosts: req.IncludeCosts}
	agg.add(calls)
	return &TraceUsageRes{CallUsage: res.CallUsage}, nil
}

// usageSelect selects what usage reads of each call of the project.
func (s *Store) usageSelect(withStart bool) *bun.SelectQuery {
	q := s.db.NewSelect().Model((*callRow)(nil)).
		Column("c.id", "c.parent_id", "c.usage").
		ColumnExpr("c.ended_at IS NULL AS unfinished").
		ColumnExpr("CASE WHEN c.usage IS NULL THEN c.summary END AS summary")
	if withStart {
		q = q.Column("c.started_at")
	}
	return q
}

// usageOfTraces loads the calls of traceIDs (at most limit) and aggregates
// them, splitting the traces in halves while they hold more than limit calls.
func (s *Store) usageOfTraces(ctx context.Context, projectID string, traceIDs []string, limit int, agg *usageAggregation) error {
	if len(traceIDs) == 0 {
		return nil
	}
	var calls []usageCall
	err := visible(s.usageSelect(agg.book != nil), projectID).Where("c.trace_id IN (?)", bun.In(traceIDs)).Limit(int64(limit)+1).Scan(ctx, &calls)
	if err != nil {
		return err
	}
	if len(calls) > limit {
		if len(traceIDs) == 1 {
			return weft.Errorf(ErrTraceTooLarge, "Cannot compute complete usage: a single trace exceeds the %d-call aggregation limit", limit)
		}
		half := len(traceIDs) / 2
		if err := s.usageOfTraces(ctx, projectID, traceIDs[:half], limit, agg); err != nil {
			return err
		}
		return s.usageOfTraces(ctx, projectID, traceIDs[half:], limit, agg)
	}
	agg.add(calls)
	return nil
}

type usageAggregation struct {
	res          *CallsUsageRes
	book         *priceBook
	includeCosts bool
}

// add rolls up one complete group of traces and fills the requested ids in it.
func (a *usageAggregation) add(calls []usageCall) {
	byID := make(map[string]*usageCall, len(calls))
	for i := range calls {
		byID[calls[i].ID] = &calls[i]
	}
	children := map[string][]string{}
	for _, c := range calls {
		if c.Unfinished {
			a.res.UnfinishedCallIDs = append(a.res.UnfinishedCallIDs, c.ID)
		}
		if c.ParentID != nil && byID[*c.ParentID] != nil && *c.ParentID != c.ID {
			children[*c.ParentID] = append(children[*c.ParentID], c.ID)
		}
	}
	totals := make(map[string]map[string]*counts, len(calls))
	var rollUp func(id string, depth int) map[string]*counts
	rollUp = func(id string, depth int) map[string]*counts {
		if t, ok := totals[id]; ok || depth > len(calls) { // depth guards against parent cycles
			return t
		}
		totals[id] = nil
		c := byID[id]
		own := c.ownUsage()
		if a.book != nil {
			a.book.price(own, c.StartedAt)
		}
		if len(children[id]) == 0 { // a leaf: nothing to combine
			totals[id] = own
			return own
		}
		childSum := map[string]*counts{}
		for _, child := range children[id] {
			for model, u := range rollUp(child, depth+1) {
				if childSum[model] == nil {
					childSum[model] = &counts{}
				}
				childSum[model].add(u)
			}
		}
		total := map[string]*counts{}
		for model, u := range own {
			t := *u
			if sum := childSum[model]; sum != nil && !u.sameCounts(sum) {
				t.add(sum)
			}
			total[model] = &t
		}
		for model, sum := range childSum {
			if total[model] == nil {
				total[model] = sum
			}
		}
		totals[id] = total
		return total
	}
	for id := range a.res.CallUsage {
		if byID[id] == nil {
			continue
		}
		out := map[string]*Usage{}
		for model, u := range rollUp(id, 0) {
			if !u.anyCount() && !(a.includeCosts && u.anyCost()) {
				continue
			}
			out[model] = u.usage(a.includeCosts)
		}
		a.res.CallUsage[id] = out
	}
}

func (c *counts) usage(withCosts bool) *Usage {
	u := &Usage{
		Requests: int64(c.requests), PromptTokens: int64(c.prompt), CompletionTokens: int64(c.completion),
		TotalTokens: int64(c.total), CacheReadInputTokens: int64(c.cacheRead), CacheCreationInputTokens: int64(c.cacheCreation),
	}
	if withCosts {
		u.PromptTokensTotalCost = &c.promptCost
		u.CompletionTokensTotalCost = &c.completionCost
		u.CacheReadInputTokensTotalCost = &c.cacheReadCost
		u.CacheCreationInputTokensTotalCost = &c.cacheCreationCost
	}
	return u
}
