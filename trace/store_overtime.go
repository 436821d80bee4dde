package trace

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// Groupings of [CallsOverTimeReq]: what a series of the answer is per.
const (
	GroupNone   = ""
	GroupOp     = "op_name"
	GroupUser   = "wb_user_id"
	GroupStatus = "status"
	// GroupModel counts a trace once per model of its root's own usage
	// (summary.usage), and those without usage under "".
	GroupModel = "model"
)

// MaxTimeBuckets bounds the intervals of one [CallsOverTimeReq]: a 30-day
// range by the hour is 720.
const MaxTimeBuckets = 1000

// LatencyBounds are the upper bounds, in milliseconds, of the latency
// histogram of a [TimeBucket] (its last bin holds what is longer).
var LatencyBounds = []float64{10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000}

// CallsOverTimeReq asks for a project's traces (root calls) started in
// [From, To), counted per interval of Width and per group.
type CallsOverTimeReq struct {
	ProjectID string
	From, To  time.Time
	// Width is the interval, at least a minute; (To - From) / Width is at
	// most MaxTimeBuckets.
	Width time.Duration
	// GroupBy is GroupNone, GroupOp, GroupUser, GroupStatus or GroupModel.
	GroupBy string
}

// TimeBucket is what the traces of one group started in one interval came
// to.
type TimeBucket struct {
	// Start is the start of the interval.
	Start time.Time
	// Group is the op name, the user id, the status or the model ("" for
	// GroupNone, and for traces without one).
	Group  string
	Calls  int64
	Errors int64 // traces whose root raised
	// Tokens are the roots' own total tokens over their models; Cost their
	// priced usage (0 when none is priced).
	Tokens int64
	Cost   float64
	// Latency counts the ended roots by latency, bin i up to
	// LatencyBounds[i] (and the last bin beyond them).
	Latency []int64
}

// Percentile estimates the p-th quantile (0 < p < 1) of the bucket's
// latencies in milliseconds from its histogram, linearly within a bin (the
// last bin reads as its lower bound); NaN without an ended call.
func (b *TimeBucket) Percentile(p float64) float64 { return histogramPercentile(b.Latency, p) }

// histogramPercentile is TimeBucket.Percentile over the bins of counts.
func histogramPercentile(counts []int64, p float64) float64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return math.NaN()
	}
	rank := p * float64(n)
	var below int64
	for i, c := range counts {
		if c == 0 || float64(below+c) < rank {
			below += c
			continue
		}
		lo := 0.0
		if i > 0 {
			lo = LatencyBounds[i-1]
		}
		if i == len(LatencyBounds) {
			return lo
		}
		return lo + (LatencyBounds[i]-lo)*(rank-float64(below))/float64(c)
	}
	return LatencyBounds[len(LatencyBounds)-1]
}

// CallsOverTime implements [Service]. It runs two grouped queries over the
// roots of the range: one of their counts, errors, tokens and latency bins,
// and one of their token counters per model (the roots of several models
// once per model), which are priced here at the price in effect at the start
// of their interval. Both read the calls columns derived at write time
// (latency_ms, usage_model and the token counters; see perModel), not JSON.
func (s *Store) CallsOverTime(ctx context.Context, req *CallsOverTimeReq) ([]TimeBucket, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	switch {
	case req.Width < time.Minute || req.Width%time.Second != 0:
		return nil, weft.Errorf(ErrInvalidQuery, "the interval must be whole seconds, at least a minute")
	case !req.From.Before(req.To):
		return nil, weft.Errorf(ErrInvalidQuery, "the range must end after it starts")
	case req.To.Sub(req.From)/req.Width > MaxTimeBuckets:
		return nil, weft.Errorf(ErrInvalidQuery, "at most %d intervals: choose a wider interval or a shorter range", MaxTimeBuckets)
	}
	// group is the group's text given the usage model's, for the selects of
	// perModel.
	var group func(model string) database.Expr
	switch req.GroupBy {
	case GroupNone:
		group = func(string) database.Expr { return database.Expr{SQL: "NULL"} }
	case GroupOp:
		group = func(string) database.Expr { return database.Expr{SQL: "c.op_name"} }
	case GroupUser:
		group = func(string) database.Expr { return database.Expr{SQL: "c.pf_user_id"} }
	case GroupStatus:
		group = func(string) database.Expr { return statusExpr(s.dialect) }
	case GroupModel:
		group = func(model string) database.Expr { return database.Expr{SQL: model} }
	default:
		return nil, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "group_by"}, "group by one of op_name, wb_user_id, status, model")
	}
	book, err := s.priceBook(ctx, req.ProjectID, true)
	if err != nil {
		return nil, err
	}
	bucket := database.Expr{SQL: s.dialect.TimeBucket("c.started_at"), Args: []any{req.From.Unix(), int64(req.Width / time.Second)}}
	roots := func(q *bun.SelectQuery) (*bun.SelectQuery, error) {
		return visible(q, req.ProjectID).Where("c.parent_id IS NULL").
			Where("c.started_at >= ?", req.From.UTC()).Where("c.started_at < ?", req.To.UTC()), nil
	}
	// The traces: one row each (each per model when grouped by model).
	traceColumns := func(q *bun.SelectQuery, model string, tokens string) *bun.SelectQuery {
		g := group(model)
		bin := latencyBin("c.latency_ms")
		return q.ColumnExpr(bucket.SQL+" AS bucket", bucket.Args...).ColumnExpr(g.SQL+" AS grp", g.Args...).
			ColumnExpr("CASE WHEN "+failedCondition+" THEN 1 ELSE 0 END AS failed").
			ColumnExpr(tokens+" AS tokens").ColumnExpr(bin.SQL+" AS bin", bin.Args...)
	}
	var traces *bun.SelectQuery
	if req.GroupBy == GroupModel {
		traces, err = s.perModel(roots, true, func(q *bun.SelectQuery, model string, counter func(int) string) *bun.SelectQuery {
			return traceColumns(q, model, counter(usageTotal))
		})
	} else {
		// Rows written before the counter columns read calls.usage.
		traces, err = roots(traceColumns(s.db.NewSelect().TableExpr("calls AS c"), "",
			"COALESCE(c.total_tokens, "+s.dialect.JSONObjectArraySum("c.usage", usageTotal)+")"))
	}
	if err != nil {
		return nil, err
	}
	buckets := map[timeBucketKey]*TimeBucket{}
	err = s.db.RunInTx(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, tx bun.Tx) error {
		if s.dialect.Has(database.JIT) {
			if _, err := tx.ExecContext(ctx, "SET LOCAL jit = off"); err != nil {
				return err
			}
		}
		return s.overTime(ctx, tx, req, traces, buckets, book, group, bucket, roots)
	})
	if err != nil {
		return nil, err
	}
	out := make([]TimeBucket, 0, len(buckets))
	for _, b := range buckets {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b TimeBucket) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	})
	return out, nil
}

// overTime runs CallsOverTime's two queries on tx into buckets.
func (s *Store) overTime(ctx context.Context, tx bun.Tx, req *CallsOverTimeReq, traces *bun.SelectQuery, buckets map[timeBucketKey]*TimeBucket,
	book *priceBook, group func(model string) database.Expr, bucket database.Expr, roots func(*bun.SelectQuery) (*bun.SelectQuery, error)) error {
	get := func(k timeBucketKey) *TimeBucket {
		b := buckets[k]
		if b == nil {
			b = &TimeBucket{Start: req.From.Add(time.Duration(k.bucket) * req.Width).UTC(), Group: k.group, Latency: make([]int64, len(LatencyBounds)+1)}
			buckets[k] = b
		}
		return b
	}
	rows, err := s.db.NewSelect().TableExpr("(?) AS t", traces).
		ColumnExpr("bucket, grp, bin, count(*), sum(failed), sum(tokens)").GroupExpr("bucket, grp, bin").Conn(tx).Rows(ctx)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k timeBucketKey
		var grp *string
		var bin *int64
		var calls, failed int64
		var tokens *float64
		if err := rows.Scan(&k.bucket, &grp, &bin, &calls, &failed, &tokens); err != nil {
			rows.Close()
			return err
		}
		if grp != nil {
			k.group = *grp
		}
		b := get(k)
		b.Calls += calls
		b.Errors += failed
		if tokens != nil {
			b.Tokens += int64(*tokens)
		}
		if bin != nil {
			b.Latency[*bin] += calls
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}

	// The costs: token counters per interval, group and model, priced here.
	counters := []int{usagePrompt, usageCompletion, usageTotal, usageCacheRead, usageCacheCreation}
	usage, err := s.perModel(roots, false, func(q *bun.SelectQuery, model string, counter func(int) string) *bun.SelectQuery {
		g := group(model)
		q = q.ColumnExpr(bucket.SQL+" AS bucket", bucket.Args...).ColumnExpr(g.SQL+" AS grp", g.Args...).ColumnExpr(model + " AS model")
		for _, i := range counters {
			q = q.ColumnExpr(counter(i) + " AS n" + itoa(i))
		}
		return q
	})
	if err != nil {
		return err
	}
	q := s.db.NewSelect().TableExpr("(?) AS u", usage).ColumnExpr("bucket, grp, model").GroupExpr("bucket, grp, model")
	for _, i := range counters {
		q = q.ColumnExpr("sum(n" + itoa(i) + ")")
	}
	if rows, err = q.Conn(tx).Rows(ctx); err != nil {
		return err
	}
	for rows.Next() {
		var k timeBucketKey
		var grp *string
		var model string
		var sums [len(usageCounterColumns)]*float64
		dest := []any{&k.bucket, &grp, &model}
		for _, i := range counters {
			dest = append(dest, &sums[i])
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return err
		}
		if grp != nil {
			k.group = *grp
		}
		b := buckets[k]
		if b == nil {
			continue // a trace whose status changed between the two reads
		}
		price, ok := book.best(model, b.Start)
		if !ok {
			continue
		}
		var n [len(usageCounterColumns)]float64
		for i, v := range sums {
			if v != nil {
				n[i] = *v
			}
		}
		for _, c := range price.parts(n) {
			b.Cost += c
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	return nil
}

// timeBucketKey names a TimeBucket: its interval's number and its group.
type timeBucketKey struct {
	bucket int64
	group  string
}

// latencyBin is the number of the LatencyBounds bin of the latency column
// (trusted text): one CASE per row rather than a comparison per bin and
// aggregate; NULL for a call still running.
func latencyBin(column string) database.Expr {
	var b strings.Builder
	args := make([]any, len(LatencyBounds))
	b.WriteString("CASE WHEN " + column + " IS NULL THEN NULL")
	for i, bound := range LatencyBounds {
		b.WriteString(" WHEN " + column + " < ? THEN " + itoa(i))
		args[i] = bound
	}
	b.WriteString(" ELSE " + itoa(len(LatencyBounds)) + " END")
	return database.Expr{SQL: b.String(), Args: args}
}
