package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/timeseries"
)

// CallStatsReq asks for Weave's /calls/stats: call metrics and token usage
// of the calls started in a window, per time bucket (see package
// timeseries for the window and its buckets).
type CallStatsReq struct {
	ProjectID string     `json:"project_id"`
	Start     time.Time  `json:"start" doc:"Inclusive start time (UTC, ISO 8601)"`
	End       *time.Time `json:"end,omitempty" doc:"Exclusive end time; now when omitted"`
	// Granularity is the bucket width in seconds; chosen from the window's
	// length when omitted, widened to keep within 10,000 buckets.
	Granularity  *int64            `json:"granularity,omitempty"`
	UsageMetrics []UsageMetricSpec `json:"usage_metrics,omitempty" doc:"Token and cost metrics, per bucket and model"`
	CallMetrics  []CallMetricSpec  `json:"call_metrics,omitempty" doc:"Call metrics (latency, counts), per bucket"`
	Filter       CallsFilter       `json:"filter,omitzero"`
	Timezone     string            `json:"timezone,omitempty" doc:"IANA time zone the buckets align to (default UTC)"`
}

// UsageMetricSpec is one usage metric and its aggregations. Aggregations
// omitted is ["sum"]; an empty list with no percentiles is ["sum"] too.
type UsageMetricSpec struct {
	Metric       string    `json:"metric" enum:"input_tokens,output_tokens,total_tokens,cache_read_input_tokens,cache_creation_input_tokens,input_cost,output_cost,total_cost"`
	Aggregations []string  `json:"aggregations,omitempty" enum:"sum,avg,min,max,count,count_true,count_false"`
	Percentiles  []float64 `json:"percentiles,omitempty"`
}

// CallMetricSpec is one call metric and its aggregations, as
// UsageMetricSpec.
type CallMetricSpec struct {
	Metric       string    `json:"metric" enum:"latency_ms,call_count,error_count"`
	Aggregations []string  `json:"aggregations,omitempty" enum:"sum,avg,min,max,count,count_true,count_false"`
	Percentiles  []float64 `json:"percentiles,omitempty"`
}

// CallStatsRes is the resolved window and its buckets. UsageBuckets has a
// row per bucket and model (every model seen in the window, in every bucket,
// ordered by bucket then model): timestamp, model, each "<agg>_<metric>"
// and "p<n>_<metric>", count. CallBuckets has a row per bucket: timestamp,
// the metrics, count. Sums, counts and averages of an empty bucket are 0;
// minimums, maximums and percentiles null.
type CallStatsRes struct {
	Start        time.Time  `json:"start"`
	End          time.Time  `json:"end"`
	Granularity  int64      `json:"granularity"`
	Timezone     string     `json:"timezone"`
	UsageBuckets []StatsRow `json:"usage_buckets"`
	CallBuckets  []StatsRow `json:"call_buckets"`
}

// resolveMetric is a requested metric with Weave's defaults: aggregations
// omitted are ["sum"], and so is none with no percentiles.
func resolveMetric(metric string, aggregations []string, percentiles []float64) (timeseries.Metric, error) {
	m := timeseries.Metric{Name: metric, Percentiles: percentiles}
	if aggregations == nil {
		aggregations = []string{"sum"}
	}
	for _, a := range aggregations {
		m.Aggregations = append(m.Aggregations, timeseries.Aggregation(a))
	}
	if len(m.Aggregations) == 0 && len(m.Percentiles) == 0 {
		m.Aggregations = []timeseries.Aggregation{timeseries.Sum}
	}
	return m, timeseries.CheckPercentiles(percentiles)
}

// usageColumns are the metrics read from the calls.usage column: the index
// of each in a model's stored counters (see storedUsage).
var usageColumns = map[string]int{
	"input_tokens": usagePrompt, "output_tokens": usageCompletion, "total_tokens": usageTotal,
	"cache_read_input_tokens": usageCacheRead, "cache_creation_input_tokens": usageCacheCreation,
}

// CallStats implements [Service].
func (s *Store) CallStats(ctx context.Context, req *CallStatsReq) (*CallStatsRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	w, err := timeseries.Resolve(req.Start, req.End, req.Granularity, req.Timezone, time.Now(), s.statsRange)
	if err != nil {
		return nil, weft.Errorf(ErrInvalidQuery, "%v", err)
	}
	res := &CallStatsRes{Start: w.Start, End: w.End, Granularity: w.Granularity, Timezone: w.Location.String(),
		UsageBuckets: []StatsRow{}, CallBuckets: []StatsRow{}}

	var tokens []timeseries.Metric
	costs := map[string]bool{}
	for _, u := range req.UsageMetrics {
		m, err := resolveMetric(u.Metric, u.Aggregations, u.Percentiles)
		if err != nil {
			return nil, weft.Errorf(ErrInvalidQuery, "usage_metrics: %v", err)
		}
		switch u.Metric {
		case "input_cost", "output_cost", "total_cost":
			costs[u.Metric] = true
			continue
		}
		if _, ok := usageColumns[u.Metric]; !ok {
			return nil, weft.Errorf(ErrInvalidQuery, "usage_metrics: unknown metric %q", u.Metric)
		}
		tokens = append(tokens, m)
	}
	// Costs are the summed tokens times the model's price, as Weave
	// computes them: they need the input and output sums.
	ensureSum := func(metric string) {
		for i := range tokens {
			if tokens[i].Name == metric {
				if !slices.Contains(tokens[i].Aggregations, timeseries.Sum) {
					tokens[i].Aggregations = append(tokens[i].Aggregations, timeseries.Sum)
				}
				return
			}
		}
		tokens = append(tokens, timeseries.Metric{Name: metric, Aggregations: []timeseries.Aggregation{timeseries.Sum}})
	}
	if costs["input_cost"] || costs["total_cost"] {
		ensureSum("input_tokens")
	}
	if costs["output_cost"] || costs["total_cost"] {
		ensureSum("output_tokens")
	}
	var calls []timeseries.Metric
	for _, c := range req.CallMetrics {
		m, err := resolveMetric(c.Metric, c.Aggregations, c.Percentiles)
		if err != nil {
			return nil, weft.Errorf(ErrInvalidQuery, "call_metrics: %v", err)
		}
		if s.callMetricValue(c.Metric) == "" {
			return nil, weft.Errorf(ErrInvalidQuery, "call_metrics: unknown metric %q", c.Metric)
		}
		calls = append(calls, m)
	}

	filter := req.Filter
	filter.StartedFrom, filter.StartedBefore = &w.Start, &w.End
	if len(tokens) > 0 {
		rows, err := s.bucketStats(ctx, req.ProjectID, &filter, w, tokens, func(counter func(int) string, metric string) string {
			return counter(usageColumns[metric])
		}, true)
		if err != nil {
			return nil, err
		}
		if len(costs) > 0 {
			if err := s.priceUsageBuckets(ctx, req.ProjectID, rows, costs, time.Now()); err != nil {
				return nil, err
			}
		}
		res.UsageBuckets = rows
	}
	if len(calls) > 0 {
		rows, err := s.bucketStats(ctx, req.ProjectID, &filter, w, calls, func(_ func(int) string, metric string) string {
			return s.callMetricValue(metric)
		}, false)
		if err != nil {
			return nil, err
		}
		res.CallBuckets = rows
	}
	return res, nil
}

// callMetricValue is a call metric's value per call; "" for an unknown one.
func (s *Store) callMetricValue(metric string) string {
	switch metric {
	case "latency_ms":
		// database.Dialect.ElapsedMillis, generated as a column.
		return "c.latency_ms"
	case "call_count":
		return "1"
	case "error_count":
		return "CASE WHEN c.exception IS NOT NULL THEN 1 ELSE 0 END"
	}
	return ""
}

// bucketStats aggregates metrics over the calls filter selects, per bucket
// of w, and per model of their usage when perModel is set (see
// Store.perModel; counter is then a usage counter's column); value is a
// metric's value per call. It answers every bucket of w (for every model
// seen).
func (s *Store) bucketStats(ctx context.Context, projectID string, filter *CallsFilter, w timeseries.Window,
	metrics []timeseries.Metric, value func(counter func(int) string, metric string) string, perModel bool) ([]StatsRow, error) {
	index := w.Index(s.dialect, "c.started_at")
	columns := func(q *bun.SelectQuery, model string, counter func(int) string) *bun.SelectQuery {
		q = q.ColumnExpr(index.SQL+" AS b", index.Args...).ColumnExpr(model + " AS k")
		for i, m := range metrics {
			q = q.ColumnExpr(fmt.Sprintf("%s AS m%d", value(counter, m.Name), i))
		}
		return q
	}
	where := func(q *bun.SelectQuery) (*bun.SelectQuery, error) { return s.filtered(q, projectID, filter) }
	var base *bun.SelectQuery
	var err error
	if perModel {
		base, err = s.perModel(where, false, columns)
	} else {
		base, err = where(columns(s.db.NewSelect().TableExpr("calls AS c"), "''", nil))
	}
	if err != nil {
		return nil, err
	}
	groups, err := timeseries.Aggregate(ctx, s.db, s.dialect, base, metrics)
	if err != nil {
		return nil, weft.Errorf(ErrInvalidQuery, "%v", err)
	}
	models := groups.Keys()
	if !perModel {
		models = []string{""}
	}
	var out []StatsRow
	for b := range w.Buckets() {
		for _, model := range models {
			var row StatsRow
			row.Set("timestamp", w.Timestamp(b))
			if perModel {
				row.Set("model", model)
			}
			groups.Fill(int64(b), model, row.Set)
			out = append(out, row)
		}
	}
	return out, nil
}

// priceUsageBuckets adds the asked cost metrics to usage rows: the bucket's
// summed input (output) tokens of the model times its prompt (completion)
// price in effect at (Weave prices every bucket at the newest price), the
// project's own price over the built-in one; 0 for a model without a price.
func (s *Store) priceUsageBuckets(ctx context.Context, projectID string, rows []StatsRow, costs map[string]bool, at time.Time) error {
	book, err := s.priceBook(ctx, projectID, true)
	if err != nil {
		return err
	}
	for i := range rows {
		row := &rows[i]
		price, _ := book.best(row.Get("model").(string), at)
		in, _ := row.Get("sum_input_tokens").(float64)
		out, _ := row.Get("sum_output_tokens").(float64)
		inCost, outCost := in*price.PromptTokenCost, out*price.CompletionTokenCost
		if costs["input_cost"] {
			row.Set("sum_input_cost", inCost)
		}
		if costs["output_cost"] {
			row.Set("sum_output_cost", outCost)
		}
		if costs["total_cost"] {
			row.Set("sum_total_cost", inCost+outCost)
		}
	}
	return nil
}

// StatsRow is one bucket of a stats answer (/calls/stats, /feedback/stats):
// named values in the order Weave writes them.
type StatsRow struct {
	names  []string
	values []any
}

// Set sets name to v, keeping the name's place when it is already set.
func (r *StatsRow) Set(name string, v any) {
	if i := slices.Index(r.names, name); i >= 0 {
		r.values[i] = v
		return
	}
	r.names, r.values = append(r.names, name), append(r.values, v)
}

// Get is the value of name (nil when unset).
func (r *StatsRow) Get(name string) any {
	if i := slices.Index(r.names, name); i >= 0 {
		return r.values[i]
	}
	return nil
}

// MarshalJSON writes the row as one object.
func (r StatsRow) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, name := range r.names {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(r.values[i])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}
