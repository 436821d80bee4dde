package trace

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/trace/callquery"
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
	// GroupFeedback groups traces by the value of a feedback field
	// (CallsOverTimeReq.Field) in their root's newest feedback row of its
	// type, such as a scorer's verdict; those without under "".
	GroupFeedback = "feedback"
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
	// GroupBy is GroupNone, GroupOp, GroupUser, GroupStatus, GroupModel or
	// GroupFeedback.
	GroupBy string
	// Field is GroupFeedback's feedback field of the calls query language
	// (package callquery), such as a scorer's verdict
	// feedback.[wandb.runnable.<scorer>].payload.output.
	Field string
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

// CallsOverTime implements [Service]. One grouped query reads the roots of
// the range once, per interval, group, latency bin and model: their count,
// latency and token counters, which are priced here at the price in effect
// at the start of their interval. It reads the calls columns derived at
// write time (status, latency_ms, usage_model and the token counters; see
// perModel), not JSON, and on PostgreSQL from the calls_roots_dashboard
// index alone. Two small queries add what that index does not hold: the
// errors (over the calls_roots_failed index) and the costs of roots of
// several models (over calls_several_models).
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
	// join, when set, is the join of the roots with what group reads.
	var join *database.Expr
	switch req.GroupBy {
	case GroupNone:
		group = func(string) database.Expr { return database.Expr{SQL: "NULL"} }
	case GroupOp:
		group = func(string) database.Expr { return database.Expr{SQL: "c.op_name"} }
	case GroupUser:
		group = func(string) database.Expr { return database.Expr{SQL: "c.pf_user_id"} }
	case GroupStatus:
		// The status column, which calls_roots_dashboard holds, rather
		// than statusExpr's reading of every root's summary.
		group = func(string) database.Expr { return database.Expr{SQL: "c.status"} }
	case GroupModel:
		group = func(model string) database.Expr { return database.Expr{SQL: model} }
	case GroupFeedback:
		f, err := callquery.ParseField(req.Field)
		if err != nil || f.Kind != callquery.Feedback {
			return nil, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "field"}, "group by a feedback field such as feedback.[wandb.runnable.<scorer>].payload.output")
		}
		newest := (&queryCompiler{dialect: s.dialect, projectID: req.ProjectID}).newestFeedbackByCall(f)
		join = &database.Expr{SQL: "LEFT JOIN " + newest.SQL + " AS fv ON fv.call_id = c.id", Args: newest.Args}
		group = func(string) database.Expr { return database.Expr{SQL: "COALESCE(fv.value, '')"} }
	default:
		return nil, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "group_by"}, "group by one of op_name, wb_user_id, status, model, feedback")
	}
	book, err := s.priceBook(ctx, req.ProjectID, true)
	if err != nil {
		return nil, err
	}
	q, err := s.overTimeQueries(req, group, join)
	if err != nil {
		return nil, err
	}
	buckets := map[timeBucketKey]*TimeBucket{}
	err = s.db.RunInTx(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, tx bun.Tx) error {
		if s.dialect.Has(database.PlannerSettings) {
			// Without JIT compilation, which costs seconds on a loaded
			// machine where the queries take a fraction of one; with the
			// memory to group in a hash table rather than sort every root
			// on disk (the planner cannot tell how few groups the interval
			// and bin expressions make, and guesses one per row).
			for _, set := range []string{"SET LOCAL jit = off", "SET LOCAL work_mem = '32MB'"} {
				if _, err := tx.ExecContext(ctx, set); err != nil {
					return err
				}
			}
		}
		return q.run(ctx, tx, req, buckets, book)
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

// overTimeCounters are the token counters CallsOverTime sums, by stored
// usage index.
var overTimeCounters = []int{usagePrompt, usageCompletion, usageTotal, usageCacheRead, usageCacheCreation}

// overTimeQueries are CallsOverTime's grouped queries.
type overTimeQueries struct {
	// traces has a row per interval, group, latency bin and model: the
	// count of the roots and the sums of their counters. Grouped by model,
	// a root of several models is in each model's rows; otherwise in one
	// row without a model, its counters summed over its models, and priced
	// from several.
	traces *bun.SelectQuery
	// several has a row per interval, group and model of the roots of
	// several models: the sums of their counters (nil when grouped by
	// model).
	several *bun.SelectQuery
	// failed has a row per interval and group: the count of the roots that
	// raised.
	failed *bun.SelectQuery
}

// overTimeQueries builds the queries of req, whose groups group names,
// reading the roots joined by join when it is set.
func (s *Store) overTimeQueries(req *CallsOverTimeReq, group func(model string) database.Expr, join *database.Expr) (*overTimeQueries, error) {
	bucket := database.Expr{SQL: s.dialect.TimeBucket("c.started_at"), Args: []any{req.From.Unix(), int64(req.Width / time.Second)}}
	roots := func(q *bun.SelectQuery) (*bun.SelectQuery, error) {
		if join != nil {
			q = q.Join(join.SQL, join.Args...)
		}
		return visible(q, req.ProjectID).Where("c.parent_id IS NULL").
			Where("c.started_at >= ?", req.From.UTC()).Where("c.started_at < ?", req.To.UTC()), nil
	}
	keyColumns := func(q *bun.SelectQuery, model string) *bun.SelectQuery {
		g := group(model)
		return q.ColumnExpr(bucket.SQL+" AS bucket", bucket.Args...).ColumnExpr(g.SQL+" AS grp", g.Args...)
	}
	usageColumns := func(q *bun.SelectQuery, model string, counter func(int) string) *bun.SelectQuery {
		q = keyColumns(q, model).ColumnExpr(model + " AS model")
		for _, i := range overTimeCounters {
			q = q.ColumnExpr(counter(i) + " AS n" + itoa(i))
		}
		return q
	}
	traceColumns := func(q *bun.SelectQuery, model string, counter func(int) string) *bun.SelectQuery {
		bin := latencyBin("c.latency_ms")
		return usageColumns(q, model, counter).ColumnExpr(bin.SQL+" AS bin", bin.Args...)
	}
	failedColumns := func(q *bun.SelectQuery, model string, _ func(int) string) *bun.SelectQuery {
		return keyColumns(q, model)
	}
	failedRoots := func(q *bun.SelectQuery) (*bun.SelectQuery, error) {
		q, err := roots(q)
		return q.Where(failedCondition), err
	}
	var traces, several, failed *bun.SelectQuery
	var err error
	if req.GroupBy == GroupModel {
		if traces, err = s.perModel(roots, true, traceColumns); err != nil {
			return nil, err
		}
		if failed, err = s.perModel(failedRoots, true, failedColumns); err != nil {
			return nil, err
		}
	} else {
		if traces, err = roots(traceColumns(s.db.NewSelect().TableExpr("calls AS c"), "c.usage_model", usageCounter)); err != nil {
			return nil, err
		}
		// Rows written before the counter columns (NULL there) add their
		// tokens here.
		severalColumns := func(q *bun.SelectQuery, model string, counter func(int) string) *bun.SelectQuery {
			return usageColumns(q, model, counter).ColumnExpr("CASE WHEN c.total_tokens IS NULL THEN " + counter(usageTotal) + " END AS tokens")
		}
		if several, err = s.severalModels(roots, severalColumns); err != nil {
			return nil, err
		}
		if failed, err = failedRoots(failedColumns(s.db.NewSelect().TableExpr("calls AS c"), "", nil)); err != nil {
			return nil, err
		}
		several = s.db.NewSelect().TableExpr("(?) AS u", several).ColumnExpr("bucket, grp, model, sum(tokens)").GroupExpr("bucket, grp, model")
		several = sumCounters(several)
	}
	traces = sumCounters(s.db.NewSelect().TableExpr("(?) AS t", traces).ColumnExpr("bucket, grp, model, bin, count(*)").
		GroupExpr("bucket, grp, model, bin"))
	failed = s.db.NewSelect().TableExpr("(?) AS f", failed).ColumnExpr("bucket, grp, count(*)").GroupExpr("bucket, grp")
	return &overTimeQueries{traces: traces, several: several, failed: failed}, nil
}

// sumCounters adds the sums of overTimeCounters' columns to q.
func sumCounters(q *bun.SelectQuery) *bun.SelectQuery {
	for _, i := range overTimeCounters {
		q = q.ColumnExpr("sum(n" + itoa(i) + ")")
	}
	return q
}

// run runs the queries on tx into buckets, priced from book.
func (q *overTimeQueries) run(ctx context.Context, tx bun.Tx, req *CallsOverTimeReq, buckets map[timeBucketKey]*TimeBucket, book *priceBook) error {
	// bucketOf is the bucket of a row's interval and group, and its key;
	// nil unless it exists or add.
	bucketOf := func(k timeBucketKey, grp *string, add bool) (timeBucketKey, *TimeBucket) {
		if grp != nil {
			k.group = *grp
		}
		b := buckets[k]
		if b == nil && add {
			b = &TimeBucket{Start: req.From.Add(time.Duration(k.bucket) * req.Width).UTC(), Group: k.group, Latency: make([]int64, len(LatencyBounds)+1)}
			buckets[k] = b
		}
		return k, b
	}
	// The counters per bucket and model, priced once all are read.
	usage := map[modelKey]*[len(usageCounterColumns)]float64{}
	addUsage := func(key timeBucketKey, b *TimeBucket, model *string, sums []*float64) {
		if b == nil || model == nil {
			return
		}
		k := modelKey{key, *model}
		n := usage[k]
		if n == nil {
			n = new([len(usageCounterColumns)]float64)
			usage[k] = n
		}
		for j, i := range overTimeCounters {
			if sums[j] != nil {
				n[i] += *sums[j]
			}
		}
	}
	sums := make([]*float64, len(overTimeCounters))
	counters := make([]any, len(sums))
	for i := range sums {
		counters[i] = &sums[i]
	}
	var k timeBucketKey
	var grp, model *string
	var bin *int64
	var calls int64
	var tokens *float64
	err := scanRows(ctx, q.traces.Conn(tx), append([]any{&k.bucket, &grp, &model, &bin, &calls}, counters...), func() {
		key, b := bucketOf(k, grp, true)
		b.Calls += calls
		if total := sums[slices.Index(overTimeCounters, usageTotal)]; total != nil {
			b.Tokens += int64(*total)
		}
		if bin != nil {
			b.Latency[*bin] += calls
		}
		addUsage(key, b, model, sums)
	})
	if err != nil {
		return err
	}
	if q.several != nil {
		// A trace whose status changed between the reads has no bucket.
		err := scanRows(ctx, q.several.Conn(tx), append([]any{&k.bucket, &grp, &model, &tokens}, counters...), func() {
			key, b := bucketOf(k, grp, false)
			if b != nil && tokens != nil {
				b.Tokens += int64(*tokens)
			}
			addUsage(key, b, model, sums)
		})
		if err != nil {
			return err
		}
	}
	err = scanRows(ctx, q.failed.Conn(tx), []any{&k.bucket, &grp, &calls}, func() {
		if _, b := bucketOf(k, grp, false); b != nil {
			b.Errors += calls
		}
	})
	if err != nil {
		return err
	}
	// In the order of the models, so that a bucket's cost adds up the same
	// however its rows came.
	keys := slices.SortedFunc(maps.Keys(usage), func(a, b modelKey) int {
		return cmp.Or(cmp.Compare(a.bucket, b.bucket), strings.Compare(a.group, b.group), strings.Compare(a.model, b.model))
	})
	for _, k := range keys {
		b := buckets[k.timeBucketKey]
		price, ok := book.best(k.model, b.Start)
		if !ok {
			continue
		}
		for _, c := range price.parts(*usage[k]) {
			b.Cost += c
		}
	}
	return nil
}

// modelKey names the usage of one model in a TimeBucket.
type modelKey struct {
	timeBucketKey
	model string
}

// scanRows runs q and scans each row into dest, then calls row.
func scanRows(ctx context.Context, q *bun.SelectQuery, dest []any, row func()) error {
	rows, err := q.Rows(ctx)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return err
		}
		row()
	}
	return errors.Join(rows.Err(), rows.Close())
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
