package trace

import "github.com/uptrace/bun"

// usageTotals is what the calls columns usage_model, prompt_tokens,
// completion_tokens, total_tokens, cache_read_tokens and
// cache_creation_tokens keep of a call's own usage, so that aggregations
// over many calls read numbers instead of parsing calls.usage per row: its
// model when it has exactly one (nil with none or several), and each counter
// summed over its models, indexed as a stored usage array.
func usageTotals(usage map[string]*counts) (model *string, sums [usageCacheCreation + 1]float64) {
	for name, c := range usage {
		if len(usage) == 1 {
			model = &name
		}
		for i, n := range [...]float64{c.requests, c.prompt, c.completion, c.total, c.cacheRead, c.cacheCreation} {
			sums[i] += n
		}
	}
	return model, sums
}

// usageCounterColumns are the columns of usageTotals' sums, by stored usage
// index (requests have none).
var usageCounterColumns = [...]string{usagePrompt: "c.prompt_tokens", usageCompletion: "c.completion_tokens",
	usageTotal: "c.total_tokens", usageCacheRead: "c.cache_read_tokens", usageCacheCreation: "c.cache_creation_tokens"}

// usageColumnsFunc adds a select's columns given the text of the usage
// model and of each counter (by stored usage index).
type usageColumnsFunc func(q *bun.SelectQuery, model string, counter func(index int) string) *bun.SelectQuery

// usageCounter is the column of a counter of usageTotals' sums.
func usageCounter(index int) string { return usageCounterColumns[index] }

// perModel is a select of one row per call and model of its own usage, over
// the calls that where selects (from "calls AS c"), with the columns that
// columns adds. A call of one model reads it and its counters from
// usageTotals' columns; only calls of several models parse calls.usage (see
// severalModels). withNone adds a row per call without usage, its model and
// counters NULL.
func (s *Store) perModel(where func(*bun.SelectQuery) (*bun.SelectQuery, error), withNone bool, columns usageColumnsFunc) (*bun.SelectQuery, error) {
	one := columns(s.db.NewSelect().TableExpr("calls AS c"), "c.usage_model", usageCounter)
	if withNone {
		// A call without usage stores "{}" (NULL before the usage column).
		one = one.Where("(c.usage_model IS NOT NULL OR c.usage IS NULL OR c.usage = '{}')")
	} else {
		one = one.Where("c.usage_model IS NOT NULL")
	}
	one, err := where(one)
	if err != nil {
		return nil, err
	}
	several, err := s.severalModels(where, columns)
	if err != nil {
		return nil, err
	}
	return s.db.NewSelect().TableExpr("(? UNION ALL ?) AS per_model", one, several), nil
}

// severalModels is perModel's select of the calls of several models: a row
// per call and model, read from calls.usage. Its condition is the predicate
// of the calls_several_models partial index, so that only those calls are
// read from the table (a root of one model or none has none to add). Its
// models are a join, not a second FROM item, so that a join where adds
// after them may read c (CallsOverTime's by feedback).
func (s *Store) severalModels(where func(*bun.SelectQuery) (*bun.SelectQuery, error), columns usageColumnsFunc) (*bun.SelectQuery, error) {
	m := s.dialect.JSONObjectMembers("c.usage")
	return where(columns(s.db.NewSelect().TableExpr("calls AS c").Join("CROSS JOIN "+m.From), m.Key, m.Elem).
		Where("c.usage_model IS NULL AND c.usage <> '{}'"))
}
