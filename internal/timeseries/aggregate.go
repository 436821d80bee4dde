package timeseries

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft/internal/database"
)

// Metric is one metric of a stats request and what to compute of it.
type Metric struct {
	Name         string
	Aggregations []Aggregation
	Percentiles  []float64
}

// Groups are metrics aggregated per bucket and key.
type Groups struct {
	metrics []Metric
	groups  map[groupKey][]any // count, then each aggregation's *float64
	keys    map[string]bool
	pcts    []*Percentiles
}

type groupKey struct {
	bucket int64
	key    string
}

// Aggregate aggregates metrics over the rows of base, a select with the
// columns b (a bucket index), k (a second key, text) and m0, m1, … (each
// metric's value, NULL where it has none): sums, counts, extremes and
// averages in one grouped query, then one ranking query per metric with
// percentiles.
func Aggregate(ctx context.Context, db bun.IDB, d database.Dialect, base *bun.SelectQuery, metrics []Metric) (*Groups, error) {
	g := &Groups{metrics: metrics, groups: map[groupKey][]any{}, keys: map[string]bool{}, pcts: make([]*Percentiles, len(metrics))}
	q := db.NewSelect().TableExpr("(?) AS t", base).ColumnExpr("b, k, count(*)")
	aggs := 0
	for i, m := range metrics {
		for _, a := range m.Aggregations {
			sql, err := a.SQL(d, fmt.Sprintf("m%d", i))
			if err != nil {
				return nil, err
			}
			q = q.ColumnExpr(sql)
			aggs++
		}
	}
	rows, err := q.GroupExpr("b, k").Rows(ctx)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var k groupKey
		var n int64
		vals := make([]*float64, aggs)
		dest := []any{&k.bucket, &k.key, &n}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		out := []any{n}
		for _, v := range vals {
			out = append(out, v)
		}
		g.groups[k] = out
		g.keys[k.key] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	for i, m := range metrics {
		if len(m.Percentiles) == 0 || len(g.groups) == 0 {
			continue
		}
		p := NewPercentiles(m.Percentiles)
		sub := db.NewSelect().TableExpr("(?) AS t", base).ColumnExpr(fmt.Sprintf("b AS g, k, m%d AS v", i))
		query := p.Query(database.Expr{SQL: sub.String()})
		prow, err := db.QueryContext(ctx, query.SQL, query.Args...)
		if err != nil {
			return nil, err
		}
		for prow.Next() {
			var b, r, n int64
			var k string
			var v float64
			if err := prow.Scan(&b, &k, &r, &n, &v); err != nil {
				prow.Close()
				return nil, err
			}
			p.Add(fmt.Sprint(b, "\x00", k), r, n, v)
		}
		if err := errors.Join(prow.Err(), prow.Close()); err != nil {
			return nil, err
		}
		g.pcts[i] = p
	}
	return g, nil
}

// Keys are the second keys seen, sorted.
func (g *Groups) Keys() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range g.keys {
			if !yield(k) {
				return
			}
		}
	})
}

// Fill sets, through set, the values of bucket b and key k as Weave names
// and orders them: each metric's aggregations ("sum_<metric>"; an empty
// bucket's sums, counts and averages 0, its extremes null), then its
// percentiles ("p95_<metric>", null without values), and last "count", the
// rows of the group.
func (g *Groups) Fill(b int64, k string, set func(name string, v any)) {
	row := g.groups[groupKey{b, k}]
	col := 1
	for i, m := range g.metrics {
		for _, a := range m.Aggregations {
			var v any
			if row != nil && row[col].(*float64) != nil {
				v = *row[col].(*float64)
			} else if a.ZeroWhenEmpty() {
				v = 0
			}
			set(Alias(a, m.Name), v)
			col++
		}
		for _, pc := range m.Percentiles {
			var v any
			if g.pcts[i] != nil {
				if x, ok := g.pcts[i].Value(fmt.Sprint(b, "\x00", k), pc); ok {
					v = x
				}
			}
			set(PercentileAlias(pc, m.Name), v)
		}
	}
	var n int64
	if row != nil {
		n = row[0].(int64)
	}
	set("count", n)
}
