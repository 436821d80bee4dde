package trace

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// defaultPrices is the built-in price table used when a project has no price
// of its own for a model. Prices are USD per token, taken from the list prices
// per million tokens on OpenAI's pricing page (https://openai.com/api/pricing/)
// and Anthropic's (https://www.anthropic.com/pricing#api), as published in
// 2025. They are a fallback: /cost/create sets a project's own prices, which
// take precedence.
var defaultPrices = []Price{
	defaultPrice("gpt-4", "openai", 30, 60, 0),
	defaultPrice("gpt-4-turbo", "openai", 10, 30, 0),
	defaultPrice("gpt-4o", "openai", 2.5, 10, 1.25),
	defaultPrice("gpt-4o-mini", "openai", 0.15, 0.6, 0.075),
	defaultPrice("gpt-4.1", "openai", 2, 8, 0.5),
	defaultPrice("gpt-4.1-mini", "openai", 0.4, 1.6, 0.1),
	defaultPrice("gpt-4.1-nano", "openai", 0.1, 0.4, 0.025),
	defaultPrice("gpt-3.5-turbo", "openai", 0.5, 1.5, 0),
	defaultPrice("o3-mini", "openai", 1.1, 4.4, 0.55),
	defaultPrice("claude-3-5-sonnet", "anthropic", 3, 15, 0.3),
	defaultPrice("claude-3-5-haiku", "anthropic", 0.8, 4, 0.08),
}

// defaultPricesDate is the effective date of the built-in table.
var defaultPricesDate = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func defaultPrice(llm, provider string, promptPerM, completionPerM, cacheReadPerM float64) Price {
	return Price{
		ID: "default-" + llm, LLMID: llm, ProviderID: provider, PricingLevel: "default", PricingLevelID: "default",
		EffectiveDate: defaultPricesDate, PromptTokenCost: promptPerM / 1e6, CompletionTokenCost: completionPerM / 1e6,
		CacheReadInputTokenCost: cacheReadPerM / 1e6, PromptTokenCostUnit: "USD", CompletionTokenCostUnit: "USD",
		CreatedAt: defaultPricesDate,
	}
}

// priceRow is a row of llm_prices.
type priceRow struct {
	bun.BaseModel `bun:"table:llm_prices,alias:p"`

	ProjectID                   string    `bun:"project_id,pk"`
	ID                          string    `bun:"id,pk"`
	LLMID                       string    `bun:"llm_id"`
	ProviderID                  string    `bun:"provider_id"`
	EffectiveDate               time.Time `bun:"effective_date"`
	PromptTokenCost             float64   `bun:"prompt_token_cost"`
	CompletionTokenCost         float64   `bun:"completion_token_cost"`
	CacheReadInputTokenCost     float64   `bun:"cache_read_input_token_cost"`
	CacheCreationInputTokenCost float64   `bun:"cache_creation_input_token_cost"`
	PromptTokenCostUnit         string    `bun:"prompt_token_cost_unit"`
	CompletionTokenCostUnit     string    `bun:"completion_token_cost_unit"`
	CreatedBy                   string    `bun:"created_by"`
	CreatedAt                   time.Time `bun:"created_at"`
}

func (r *priceRow) price() Price {
	return Price{
		ID: r.ID, LLMID: r.LLMID, ProviderID: r.ProviderID, PricingLevel: "project", PricingLevelID: r.ProjectID,
		EffectiveDate: r.EffectiveDate.UTC(), PromptTokenCost: r.PromptTokenCost, CompletionTokenCost: r.CompletionTokenCost,
		CacheReadInputTokenCost: r.CacheReadInputTokenCost, CacheCreationInputTokenCost: r.CacheCreationInputTokenCost,
		PromptTokenCostUnit: r.PromptTokenCostUnit, CompletionTokenCostUnit: r.CompletionTokenCostUnit,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(),
	}
}

// priceBook answers "what did this model cost at that time" for one project.
type priceBook struct {
	byModel map[string][]Price // project prices first, then defaults
}

// priceBook loads the prices of projectID; nil when costs are not wanted.
func (s *Store) priceBook(ctx context.Context, projectID string, wanted bool) (*priceBook, error) {
	if !wanted {
		return nil, nil
	}
	var rows []priceRow
	if err := s.db.NewSelect().Model(&rows).Where("project_id = ?", projectID).Scan(ctx); err != nil {
		return nil, err
	}
	book := &priceBook{byModel: map[string][]Price{}}
	for i := range rows {
		book.byModel[rows[i].LLMID] = append(book.byModel[rows[i].LLMID], rows[i].price())
	}
	for _, p := range defaultPrices {
		book.byModel[p.LLMID] = append(book.byModel[p.LLMID], p)
	}
	return book, nil
}

// datedModel matches model names with a release date suffix
// ("gpt-4o-2024-08-06"), priced like the undated name when no price names them.
var datedModel = regexp.MustCompile(`^(.*)-\d{4}-\d{2}-\d{2}$`)

// candidates are the prices that may price model, best first for a call
// started at any time after all of them took effect: project prices before
// defaults, then the latest effective date. A dated name
// ("gpt-4o-2024-08-06") that no price names takes the prices of the undated
// one. None when no price names the model.
func (b *priceBook) candidates(model string) []Price {
	candidates := b.byModel[model]
	if len(candidates) == 0 {
		if m := datedModel.FindStringSubmatch(model); m != nil {
			candidates = b.byModel[m[1]]
		}
	}
	return slices.SortedStableFunc(slices.Values(candidates), func(x, y Price) int {
		if lx, ly := x.PricingLevel == "project", y.PricingLevel == "project"; lx != ly {
			if lx {
				return -1
			}
			return 1
		}
		return y.EffectiveDate.Compare(x.EffectiveDate)
	})
}

// pick is the price of a call started at among candidates (in the order of
// [priceBook.candidates]): the first one in effect by then, or the first one
// when none is.
func pick(candidates []Price, at time.Time) Price {
	for _, p := range candidates {
		if !p.EffectiveDate.After(at) {
			return p
		}
	}
	return candidates[0]
}

// best picks the price of model for a call started at: prices in effect by
// then first, then project prices over defaults, then the latest effective
// date. ok is false when no price names the model.
func (b *priceBook) best(model string, at time.Time) (Price, bool) {
	candidates := b.candidates(model)
	if len(candidates) == 0 {
		return Price{}, false
	}
	return pick(candidates, at), true
}

// Indexes of the counters in a stored usage array (storedUsage).
const (
	usageRequests = iota
	usagePrompt
	usageCompletion
	usageTotal
	usageCacheRead
	usageCacheCreation
)

// costParts is the one definition of what a model's usage costs: each part
// charges one counter, less the counters it exempts (cached prompt tokens
// are charged at their own price, not the prompt's), at one price. Go
// ([priceBook.price]) and SQL ([priceBook.costSQL]) both read it.
var costParts = [...]struct {
	charged int
	exempt  []int
	price   func(Price) float64
}{
	{usagePrompt, []int{usageCacheRead, usageCacheCreation}, func(p Price) float64 { return p.PromptTokenCost }},
	{usageCompletion, nil, func(p Price) float64 { return p.CompletionTokenCost }},
	{usageCacheRead, nil, func(p Price) float64 { return p.CacheReadInputTokenCost }},
	{usageCacheCreation, nil, func(p Price) float64 { return p.CacheCreationInputTokenCost }},
}

// price fills the cost fields of usage for a call started at.
func (b *priceBook) price(usage map[string]*counts, at time.Time) {
	for model, u := range usage {
		p, ok := b.best(model, at)
		if !ok {
			continue
		}
		costs := p.parts([...]float64{u.requests, u.prompt, u.completion, u.total, u.cacheRead, u.cacheCreation})
		u.promptCost, u.completionCost, u.cacheReadCost, u.cacheCreationCost = costs[0], costs[1], costs[2], costs[3]
	}
}

// parts is what each of [costParts] charges for the usage counters n
// (indexed as a stored usage array) at price p.
func (p Price) parts(n [usageCacheCreation + 1]float64) [len(costParts)]float64 {
	var costs [len(costParts)]float64
	for i, part := range costParts {
		tokens := n[part.charged]
		for _, e := range part.exempt {
			tokens -= n[e]
		}
		costs[i] = tokens * part.price(p)
	}
	return costs
}

// Cost is what one request of promptTokens and completionTokens (none of
// them cached) costs at p, in its unit (PromptTokenCostUnit), as a call's
// costs charge it.
func (p Price) Cost(promptTokens, completionTokens int64) float64 {
	costs := p.parts([...]float64{1, float64(promptTokens), float64(completionTokens), float64(promptTokens + completionTokens), 0, 0})
	var sum float64
	for _, c := range costs {
		sum += c
	}
	return sum
}

// ModelPrice returns the price a call of model in projectID started at at
// is charged: the project's own price of the model (from /cost/create) in
// effect by then, else the built-in one, as the calls' costs pick it. ok is
// false when no price names the model.
func (s *Store) ModelPrice(ctx context.Context, projectID, model string, at time.Time) (p Price, ok bool, err error) {
	book, err := s.priceBook(ctx, projectID, true)
	if err != nil {
		return Price{}, false, err
	}
	p, ok = book.best(model, at)
	return p, ok, nil
}

// costSQL is the priced cost of a call's own usage (the stored usage column
// of the call read as c), the sum over its models of what
// [priceBook.price] charges: the same prices picked by start time, the same
// parts. NULL when no model of the call is priced, as the cost column shows
// none. Every price and name is a bound value.
func (b *priceBook) costSQL(d database.Dialect) database.Expr {
	m := d.JSONObjectMembers("c.usage")
	models := slices.Sorted(maps.Keys(b.byModel))
	known := make([]any, len(models))
	for i, model := range models {
		known[i] = model
	}
	// The name the book prices a member under: its own, or the undated one.
	var sql strings.Builder
	args := []any{bun.In(known)}
	sql.WriteString("(SELECT sum(CASE (CASE WHEN " + m.Key + " IN (?) THEN " + m.Key + " WHEN " + d.DateSuffixed(m.Key) +
		" THEN substr(" + m.Key + ", 1, length(" + m.Key + ") - 11) END)")
	formula := func(p Price) {
		sql.WriteString("(")
		for i, part := range costParts {
			if i > 0 {
				sql.WriteString(" + ")
			}
			sql.WriteString("(" + m.Elem(part.charged))
			for _, e := range part.exempt {
				sql.WriteString(" - " + m.Elem(e))
			}
			sql.WriteString(") * ?")
			args = append(args, part.price(p))
		}
		sql.WriteString(")")
	}
	for _, model := range models {
		candidates := b.candidates(model)
		sql.WriteString(" WHEN ? THEN CASE")
		args = append(args, model)
		for _, p := range candidates {
			sql.WriteString(" WHEN c.started_at >= ? THEN ")
			args = append(args, p.EffectiveDate.UTC())
			formula(p)
		}
		sql.WriteString(" ELSE ")
		formula(candidates[0])
		sql.WriteString(" END")
	}
	sql.WriteString(" END) FROM " + m.From + ")")
	return database.Expr{SQL: sql.String(), Args: args}
}

// costEntry is one model's member of summary.weave.costs.
type costEntry struct {
	Usage
	PromptTokenCost         float64   `json:"prompt_token_cost"`
	CompletionTokenCost     float64   `json:"completion_token_cost"`
	PromptTokenCostUnit     string    `json:"prompt_token_cost_unit"`
	CompletionTokenCostUnit string    `json:"completion_token_cost_unit"`
	EffectiveDate           time.Time `json:"effective_date"`
	ProviderID              string    `json:"provider_id"`
	PricingLevel            string    `json:"pricing_level"`
	PricingLevelID          string    `json:"pricing_level_id"`
	CreatedAt               time.Time `json:"created_at"`
	CreatedBy               string    `json:"created_by"`
}

// costsJSON is summary.weave.costs for a call's own usage: one entry per
// priced model, or nil when nothing is priced.
func (b *priceBook) costsJSON(usage map[string]*counts, at time.Time) []byte {
	b.price(usage, at)
	out := map[string]costEntry{}
	for model, u := range usage {
		p, ok := b.best(model, at)
		if !ok {
			continue
		}
		out[model] = costEntry{
			Usage: *u.usage(true), PromptTokenCost: p.PromptTokenCost, CompletionTokenCost: p.CompletionTokenCost,
			PromptTokenCostUnit: p.PromptTokenCostUnit, CompletionTokenCostUnit: p.CompletionTokenCostUnit,
			EffectiveDate: p.EffectiveDate, ProviderID: p.ProviderID, PricingLevel: p.PricingLevel,
			PricingLevelID: p.PricingLevelID, CreatedAt: p.CreatedAt, CreatedBy: p.CreatedBy,
		}
	}
	if len(out) == 0 {
		return nil
	}
	b2, _ := json.Marshal(out)
	return b2
}

// CostCreate implements [Service].
func (s *Store) CostCreate(ctx context.Context, req *CostCreateReq) (*CostCreateRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	if len(req.Costs) == 0 {
		return nil, weft.Errorf(ErrInvalidCall, "costs must name at least one model")
	}
	now := normalizeTime(s.now())
	res := &CostCreateRes{IDs: [][2]string{}}
	rows := make([]priceRow, 0, len(req.Costs))
	for _, llm := range slices.Sorted(maps.Keys(req.Costs)) {
		in := req.Costs[llm]
		if llm == "" || len(llm) > maxOpNameLength || checkText("llm_id", &llm, -1) != nil {
			return nil, weft.Errorf(ErrInvalidCall, "llm_id %q must be 1..%d characters", clip(llm), maxOpNameLength)
		}
		if in.PromptTokenCost < 0 || in.CompletionTokenCost < 0 || in.CacheReadInputTokenCost < 0 || in.CacheCreationInputTokenCost < 0 {
			return nil, weft.Errorf(ErrInvalidCall, "costs of %q must not be negative", clip(llm))
		}
		r := priceRow{
			ProjectID: req.ProjectID, ID: newID(), LLMID: llm, ProviderID: orDefault(in.ProviderID, "default"),
			EffectiveDate: now, PromptTokenCost: in.PromptTokenCost, CompletionTokenCost: in.CompletionTokenCost,
			CacheReadInputTokenCost: in.CacheReadInputTokenCost, CacheCreationInputTokenCost: in.CacheCreationInputTokenCost,
			PromptTokenCostUnit: orDefault(in.PromptTokenCostUnit, "USD"), CompletionTokenCostUnit: orDefault(in.CompletionTokenCostUnit, "USD"),
			CreatedBy: weft.UserID(ctx), CreatedAt: now,
		}
		if in.EffectiveDate != nil {
			r.EffectiveDate = normalizeTime(*in.EffectiveDate)
		}
		for _, t := range []string{r.ProviderID, r.PromptTokenCostUnit, r.CompletionTokenCostUnit} {
			if err := checkText("provider_id and units", &t, maxOpNameLength); err != nil {
				return nil, err
			}
		}
		rows = append(rows, r)
		res.IDs = append(res.IDs, [2]string{llm, r.ID})
	}
	if _, err := s.db.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

func orDefault(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// CostQuery implements [Service].
func (s *Store) CostQuery(ctx context.Context, req *CostQueryReq) (*CostQueryRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	var rows []priceRow
	q := s.db.NewSelect().Model(&rows).Where("project_id = ?", req.ProjectID).
		OrderExpr("llm_id ASC, effective_date DESC, id ASC")
	if len(req.LLMIDs) > 0 {
		q = q.Where("llm_id IN (?)", bun.In(req.LLMIDs))
	}
	q = page(q, req.Limit, req.Offset)
	if err := q.Scan(ctx); err != nil {
		return nil, err
	}
	res := &CostQueryRes{Results: make([]Price, len(rows))}
	for i := range rows {
		res.Results[i] = rows[i].price()
	}
	return res, nil
}

// CostPurge implements [Service].
func (s *Store) CostPurge(ctx context.Context, req *CostPurgeReq) (*CostPurgeRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	if len(req.IDs) == 0 && len(req.LLMIDs) == 0 {
		return nil, weft.Errorf(ErrInvalidCall, "name the prices to purge with ids or llm_ids")
	}
	q := s.db.NewDelete().Model((*priceRow)(nil)).Where("project_id = ?", req.ProjectID)
	q = q.WhereGroup(" AND ", func(q *bun.DeleteQuery) *bun.DeleteQuery {
		if len(req.IDs) > 0 {
			q = q.WhereOr("id IN (?)", bun.In(req.IDs))
		}
		if len(req.LLMIDs) > 0 {
			q = q.WhereOr("llm_id IN (?)", bun.In(req.LLMIDs))
		}
		return q
	})
	r, err := q.Exec(ctx)
	if err != nil {
		return nil, err
	}
	n, _ := r.RowsAffected()
	return &CostPurgeRes{NumDeleted: int(n)}, nil
}
