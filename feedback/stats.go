package feedback

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/internal/timeseries"
	"github.com/weftlabs/weft/trace"
)

// StatsReq asks for Weave's /feedback/stats: values read from the payloads
// of a project's feedback created in a window, aggregated per time bucket
// and over the whole window (see package timeseries for the window).
type StatsReq struct {
	ProjectID string     `json:"project_id"`
	Start     time.Time  `json:"start" doc:"Inclusive start time (UTC, ISO 8601)"`
	End       *time.Time `json:"end,omitempty" doc:"Exclusive end time; now when omitted"`
	// FeedbackType and TriggerRef select rows as PayloadSchemaReq's do.
	FeedbackType *string `json:"feedback_type,omitempty"`
	TriggerRef   *string `json:"trigger_ref,omitempty"`
	// Granularity is the bucket width in seconds; chosen from the window's
	// length when omitted.
	Granularity *int64       `json:"granularity,omitempty"`
	Timezone    string       `json:"timezone,omitempty" doc:"IANA time zone the buckets align to (default UTC)"`
	Metrics     []MetricSpec `json:"metrics,omitempty"`
}

// MetricSpec is a value in payloads and what to compute of it. JSONPath is a
// dot path of letters, digits, "_" and " " ("output.score"). A numeric value
// is a JSON number there, a boolean one true (1) or false (0), a categorical
// one a string (counted only); anything else is no value. Aggregations
// default to avg, min and max for numeric values, count_true and
// count_false for booleans, count for categorical ones; percentiles apply to
// numeric values only.
type MetricSpec struct {
	JSONPath     string    `json:"json_path"`
	ValueType    string    `json:"value_type,omitempty" enum:"numeric,boolean,categorical"`
	Aggregations []string  `json:"aggregations,omitempty" enum:"sum,avg,min,max,count,count_true,count_false"`
	Percentiles  []float64 `json:"percentiles,omitempty"`
}

// StatsRes is the resolved window, a row per bucket (timestamp, then per
// metric "<agg>_<slug>" and "p<n>_<slug>", the slug being the path with dots
// and spaces as "_", then count, the rows of the bucket) and, per slug, the
// aggregations over the whole window ("avg", "p95", …).
type StatsRes struct {
	Start       time.Time                      `json:"start"`
	End         time.Time                      `json:"end"`
	Granularity int64                          `json:"granularity"`
	Timezone    string                         `json:"timezone"`
	Buckets     []trace.StatsRow               `json:"buckets"`
	WindowStats map[string]map[string]*float64 `json:"window_stats"`
}

// statsMetric is a resolved MetricSpec.
type statsMetric struct {
	timeseries.Metric
	path      []string
	valueType string
}

func resolveStatsMetric(m MetricSpec) (statsMetric, error) {
	path := strings.TrimSpace(m.JSONPath)
	if path == "" || !statsPathPattern.MatchString(path) {
		return statsMetric{}, weft.Errorf(ErrInvalidQuery, "json_path may only hold letters, digits, \"_\", \".\" and \" \", got %q", m.JSONPath)
	}
	out := statsMetric{Metric: timeseries.Metric{Name: strings.NewReplacer(".", "_", " ", "_").Replace(path)}, path: strings.Split(path, "."), valueType: m.ValueType}
	if out.valueType == "" {
		out.valueType = "numeric"
	}
	aggs := m.Aggregations
	switch out.valueType {
	case "numeric":
		if len(aggs) == 0 {
			aggs = []string{"avg", "min", "max"}
		}
		out.Percentiles = m.Percentiles
	case "boolean":
		if len(aggs) == 0 {
			aggs = []string{"count_true", "count_false"}
		}
	case "categorical":
		if len(aggs) == 0 {
			aggs = []string{"count"}
		}
		for _, a := range aggs {
			if a != string(timeseries.Count) {
				return statsMetric{}, weft.Errorf(ErrInvalidQuery, "json_path %q: a categorical value is only counted, not %s", path, a)
			}
		}
	default:
		return statsMetric{}, weft.Errorf(ErrInvalidQuery, "value_type must be numeric, boolean or categorical, got %q", m.ValueType)
	}
	for _, a := range aggs {
		out.Aggregations = append(out.Aggregations, timeseries.Aggregation(a))
	}
	if err := timeseries.CheckPercentiles(out.Percentiles); err != nil {
		return statsMetric{}, weft.Errorf(ErrInvalidQuery, "%v", err)
	}
	return out, nil
}

// value is the metric's value in the payload of feedback row f, NULL where
// it has none.
func (m statsMetric) value(d database.Dialect) database.Expr {
	doc := d.JSONDoc("f.payload")
	switch m.valueType {
	case "boolean":
		typ, b := d.JSONType(doc, m.path), d.JSONScalar(doc, m.path, "boolean")
		return database.Expr{SQL: "CASE WHEN " + typ.SQL + " = 'boolean' THEN CASE WHEN " + b.SQL + " THEN 1 ELSE 0 END END", Args: append(append([]any{}, typ.Args...), b.Args...)}
	case "categorical":
		return d.JSONScalar(doc, m.path, "string")
	}
	return d.JSONScalar(doc, m.path, "number")
}

// Stats implements [Service].
func (s *Store) Stats(ctx context.Context, req StatsReq) (StatsRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return StatsRes{}, err
	}
	w, err := timeseries.Resolve(req.Start, req.End, req.Granularity, req.Timezone, time.Now(), s.statsRange)
	if err != nil {
		return StatsRes{}, weft.Errorf(ErrInvalidQuery, "%v", err)
	}
	res := StatsRes{Start: w.Start, End: w.End, Granularity: w.Granularity, Timezone: w.Location.String(),
		Buckets: []trace.StatsRow{}, WindowStats: map[string]map[string]*float64{}}
	var metrics []statsMetric
	for _, m := range req.Metrics {
		sm, err := resolveStatsMetric(m)
		if err != nil {
			return StatsRes{}, err
		}
		metrics = append(metrics, sm)
	}
	if len(metrics) == 0 {
		return res, nil
	}
	d := database.DialectOf(s.db)
	base := func(bucket database.Expr) (*bun.SelectQuery, []timeseries.Metric) {
		q := s.db.NewSelect().TableExpr("feedback AS f").ColumnExpr(bucket.SQL+" AS b", bucket.Args...).ColumnExpr("'' AS k")
		var ms []timeseries.Metric
		for i, m := range metrics {
			v := m.value(d)
			q = q.ColumnExpr(fmt.Sprintf("%s AS m%d", v.SQL, i), v.Args...)
			ms = append(ms, m.Metric)
		}
		return s.statsWindow(q, req.ProjectID, w.Start, w.End, req.FeedbackType, req.TriggerRef), ms
	}

	q, ms := base(w.Index(d, "f.created_at"))
	groups, err := timeseries.Aggregate(ctx, s.db, d, q, ms)
	if err != nil {
		return StatsRes{}, weft.Errorf(ErrInvalidQuery, "%v", err)
	}
	for b := range w.Buckets() {
		var row trace.StatsRow
		row.Set("timestamp", w.Timestamp(b))
		groups.Fill(int64(b), "", row.Set)
		res.Buckets = append(res.Buckets, row)
	}

	// The whole window: one group; Weave reports its aggregations null when
	// no row has a value, its boolean counts 0.
	q, ms = base(database.Expr{SQL: "0"})
	whole, err := timeseries.Aggregate(ctx, s.db, d, q, ms)
	if err != nil {
		return StatsRes{}, weft.Errorf(ErrInvalidQuery, "%v", err)
	}
	for _, m := range metrics {
		res.WindowStats[m.Name] = map[string]*float64{}
	}
	// Fill names values in the metrics' order: each one's aggregations,
	// then its percentiles, then count.
	type slot struct{ metric, agg string }
	var slots []slot
	for _, m := range metrics {
		for _, a := range m.Aggregations {
			slots = append(slots, slot{m.Name, string(a)})
		}
		for _, p := range m.Percentiles {
			slots = append(slots, slot{m.Name, strings.TrimSuffix(timeseries.PercentileAlias(p, ""), "_")})
		}
	}
	var values []any
	empty := false
	whole.Fill(0, "", func(name string, v any) {
		if len(values) == len(slots) {
			empty = v.(int64) == 0
			return
		}
		values = append(values, v)
	})
	for i, sl := range slots {
		var x *float64
		switch v := values[i].(type) {
		case float64:
			x = &v
		case int:
			f := float64(v)
			x = &f
		}
		if empty && sl.agg != string(timeseries.CountTrue) && sl.agg != string(timeseries.CountFalse) {
			x = nil
		}
		res.WindowStats[sl.metric][sl.agg] = x
	}
	return res, nil
}
