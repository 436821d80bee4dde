package feedback

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/timeseries"
)

// Bounds of one /feedback/aggregate request, besides its window
// (Config.StatsMaxRange) and its buckets (at most 10,000).
const (
	// MaxAggregateFilterValues bounds each filter list of a request.
	MaxAggregateFilterValues = 1000
	// MaxAggregateGroups bounds the (bucket, group) rows of an answer.
	MaxAggregateGroups = 10_000
)

// aggregateRatingKey is the scorer_ratings key rating_min and rating_max
// read: where agent monitors put their score.
const aggregateRatingKey = "_rating_"

// AggregateReq asks for Weave's /feedback/aggregate: the scorer tags and
// ratings of a project's feedback created in [after_ms, before_ms), per time
// bucket and group.
type AggregateReq struct {
	ProjectID string `json:"project_id"`
	AfterMS   int64  `json:"after_ms" minimum:"0" doc:"inclusive lower bound on created_at, ms since the epoch"`
	BeforeMS  int64  `json:"before_ms" minimum:"0" doc:"exclusive upper bound on created_at, ms since the epoch"`
	// TimeBucketSeconds cuts the window into buckets of that width from the
	// epoch; none when null.
	TimeBucketSeconds *int64 `json:"time_bucket_seconds,omitempty" nullable:"true" minimum:"1"`
	// FeedbackTypes keeps rows whose feedback_type starts with one of them
	// (a trailing "*" is dropped).
	FeedbackTypes []string `json:"feedback_types,omitempty"`
	// Tags keeps rows carrying any of them.
	Tags []string `json:"tags,omitempty"`
	// RatingMin and RatingMax keep rows whose "_rating_" rating is within
	// them (rows without one fail either).
	RatingMin *float64 `json:"rating_min,omitempty" nullable:"true"`
	RatingMax *float64 `json:"rating_max,omitempty" nullable:"true"`
	// MonitorIDs and ScorerIDs match the object id of trigger_ref and
	// runnable_ref: exactly, or by prefix when ending in "*".
	MonitorIDs     []string `json:"monitor_ids,omitempty"`
	ScorerIDs      []string `json:"scorer_ids,omitempty"`
	SpanAgentNames []string `json:"span_agent_names,omitempty"`
	// SpanTypes match the second-to-last segment of weave_ref.
	SpanTypes []string `json:"span_types,omitempty" enum:"agent_turn,agent_conversation"`
	GroupBy   []string `json:"group_by,omitempty" enum:"scorer_id,span_agent_name,span_agent_version,span_status_code"`
}

// AggregateRes is Weave's FeedbackAggregateRes: the (bucket, group) rows
// that hold feedback, ordered by bucket then group; with neither buckets
// nor group_by, exactly one row.
type AggregateRes struct {
	TimeBucketSeconds *int64            `json:"time_bucket_seconds"`
	AfterMS           int64             `json:"after_ms"`
	BeforeMS          int64             `json:"before_ms"`
	Buckets           []AggregateBucket `json:"buckets"`
}

// AggregateBucket is one (time bucket, group) row.
type AggregateBucket struct {
	TimeBucketStartMS *int64            `json:"time_bucket_start_ms"`
	Group             map[string]string `json:"group"`
	TotalCount        int64             `json:"total_count"`
	// ScoredCount counts the rows with at least one tag or rating.
	ScoredCount  int64              `json:"scored_count"`
	TagCounts    map[string]int64   `json:"tag_counts"`
	RatingCounts map[string]int64   `json:"rating_counts"`
	RatingSums   map[string]float64 `json:"rating_sums"`
}

// aggregateRow is what /feedback/aggregate reads of a feedback row.
type aggregateRow struct {
	CreatedAt        time.Time `bun:"created_at"`
	FeedbackType     string    `bun:"feedback_type"`
	TraceRef         string    `bun:"trace_ref"`
	RunnableRef      *string   `bun:"runnable_ref"`
	TriggerRef       *string   `bun:"trigger_ref"`
	ScorerTags       string    `bun:"scorer_tags"`
	ScorerRatings    string    `bun:"scorer_ratings"`
	SpanAgentName    string    `bun:"span_agent_name"`
	SpanAgentVersion string    `bun:"span_agent_version"`
	SpanStatusCode   string    `bun:"span_status_code"`
}

// Aggregate implements [Service].
func (s *Store) Aggregate(ctx context.Context, req AggregateReq) (AggregateRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return AggregateRes{}, err
	}
	if err := checkAggregate(req, s.statsRange); err != nil {
		return AggregateRes{}, err
	}
	after, before := time.UnixMilli(req.AfterMS).UTC(), time.UnixMilli(req.BeforeMS).UTC()
	rows, err := s.db.NewSelect().TableExpr("feedback").
		Column("created_at", "feedback_type", "trace_ref", "runnable_ref", "trigger_ref", "scorer_tags", "scorer_ratings",
			"span_agent_name", "span_agent_version", "span_status_code").
		Where("project_id = ?", req.ProjectID).Where("created_at >= ?", after).Where("created_at < ?", before).
		Rows(ctx)
	if err != nil {
		return AggregateRes{}, err
	}
	defer rows.Close()
	type key struct {
		bucket int64
		group  string // the group's values, NUL-separated
	}
	groups := map[key]*AggregateBucket{}
	var keys []key
	for rows.Next() {
		var r aggregateRow
		if err := s.db.ScanRow(ctx, rows, &r); err != nil {
			return AggregateRes{}, err
		}
		var tags []string
		_ = json.Unmarshal([]byte(r.ScorerTags), &tags)
		ratings := numericRatings(r.ScorerRatings)
		if !aggregateKeeps(req, &r, tags, ratings) {
			continue
		}
		var k key
		var start *int64
		if size := req.TimeBucketSeconds; size != nil {
			secs := float64(r.CreatedAt.UnixMicro()) / 1e6
			ms := int64(math.Floor(secs/float64(*size))) * *size * 1000
			k.bucket, start = ms, &ms
		}
		dims := make([]string, len(req.GroupBy))
		for i, d := range req.GroupBy {
			dims[i] = aggregateDimension(&r, d)
		}
		k.group = strings.Join(dims, "\x00")
		b := groups[k]
		if b == nil {
			if len(groups) == MaxAggregateGroups {
				return AggregateRes{}, weft.Errorf(ErrInvalidQuery, "the aggregate has more than %d (bucket, group) rows; narrow the window, widen the buckets or group by less", MaxAggregateGroups)
			}
			b = newAggregateBucket(start, req.GroupBy, dims)
			groups[k] = b
			keys = append(keys, k)
		}
		b.TotalCount++
		if len(tags) > 0 || len(ratings) > 0 {
			b.ScoredCount++
		}
		for _, t := range tags {
			b.TagCounts[t]++
		}
		for name, v := range ratings {
			b.RatingCounts[name]++
			b.RatingSums[name] += v
		}
	}
	if err := rows.Err(); err != nil {
		return AggregateRes{}, err
	}
	if req.TimeBucketSeconds == nil && len(req.GroupBy) == 0 && len(keys) == 0 {
		// No grouping at all: one row, even over nothing, as an SQL
		// aggregate without GROUP BY answers.
		keys = append(keys, key{})
		groups[key{}] = newAggregateBucket(nil, nil, nil)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.bucket, b.bucket), strings.Compare(a.group, b.group))
	})
	res := AggregateRes{TimeBucketSeconds: req.TimeBucketSeconds, AfterMS: req.AfterMS, BeforeMS: req.BeforeMS, Buckets: make([]AggregateBucket, len(keys))}
	for i, k := range keys {
		res.Buckets[i] = *groups[k]
	}
	return res, nil
}

// checkAggregate refuses a request the route cannot serve as asked.
func checkAggregate(req AggregateReq, maxRange time.Duration) error {
	if req.BeforeMS < req.AfterMS {
		return weft.Errorf(ErrInvalidQuery, "before_ms must not be before after_ms")
	}
	window := time.Duration(req.BeforeMS-req.AfterMS) * time.Millisecond
	if window > maxRange {
		return weft.Errorf(ErrInvalidQuery, "the window from after_ms to before_ms cannot exceed %s (the server's stats range limit)", maxRange)
	}
	if size := req.TimeBucketSeconds; size != nil {
		if *size < 1 {
			return weft.Errorf(ErrInvalidQuery, "time_bucket_seconds must be at least 1")
		}
		if window.Seconds()/float64(*size) > timeseries.MaxBuckets {
			return weft.Errorf(ErrInvalidQuery, "the window holds more than %d buckets of %d seconds", timeseries.MaxBuckets, *size)
		}
	}
	for _, list := range [][]string{req.FeedbackTypes, req.Tags, req.MonitorIDs, req.ScorerIDs, req.SpanAgentNames, req.SpanTypes, req.GroupBy} {
		if len(list) > MaxAggregateFilterValues {
			return weft.Errorf(ErrInvalidQuery, "a filter list holds at most %d values", MaxAggregateFilterValues)
		}
	}
	return nil
}

func newAggregateBucket(start *int64, groupBy, dims []string) *AggregateBucket {
	b := &AggregateBucket{TimeBucketStartMS: start, Group: map[string]string{}, TagCounts: map[string]int64{},
		RatingCounts: map[string]int64{}, RatingSums: map[string]float64{}}
	for i, d := range groupBy {
		b.Group[d] = dims[i]
	}
	return b
}

// numericRatings reads the numeric members of a scorer_ratings object.
func numericRatings(text string) map[string]float64 {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal([]byte(text), &raw)
	out := map[string]float64{}
	for name, v := range raw {
		var f float64
		if json.Unmarshal(v, &f) == nil {
			out[name] = f
		}
	}
	return out
}

// aggregateKeeps applies the request's filters to a row.
func aggregateKeeps(req AggregateReq, r *aggregateRow, tags []string, ratings map[string]float64) bool {
	if len(req.FeedbackTypes) > 0 && !slices.ContainsFunc(req.FeedbackTypes, func(p string) bool {
		return strings.HasPrefix(r.FeedbackType, strings.TrimRight(p, "*"))
	}) {
		return false
	}
	if len(req.MonitorIDs) > 0 && !objectIDMatches(r.TriggerRef, req.MonitorIDs) {
		return false
	}
	if len(req.ScorerIDs) > 0 && !objectIDMatches(r.RunnableRef, req.ScorerIDs) {
		return false
	}
	if len(req.SpanAgentNames) > 0 && !slices.Contains(req.SpanAgentNames, r.SpanAgentName) {
		return false
	}
	if len(req.SpanTypes) > 0 {
		segments := strings.Split(r.TraceRef, "/")
		spanType := ""
		if len(segments) >= 2 {
			spanType = segments[len(segments)-2]
		}
		if !slices.Contains(req.SpanTypes, spanType) {
			return false
		}
	}
	if len(req.Tags) > 0 && !slices.ContainsFunc(req.Tags, func(t string) bool { return slices.Contains(tags, t) }) {
		return false
	}
	if req.RatingMin != nil || req.RatingMax != nil {
		rating, ok := ratings[aggregateRatingKey]
		if !ok || (req.RatingMin != nil && !(rating >= *req.RatingMin)) || (req.RatingMax != nil && !(rating <= *req.RatingMax)) {
			return false
		}
	}
	return true
}

// refObjectID is a ref's object id: its last path segment before any
// ":digest".
func refObjectID(ref *string) string {
	if ref == nil {
		return ""
	}
	last := (*ref)[strings.LastIndex(*ref, "/")+1:]
	id, _, _ := strings.Cut(last, ":")
	return id
}

// objectIDMatches matches a ref's object id against ids: exactly, or by
// prefix for an id ending in "*".
func objectIDMatches(ref *string, ids []string) bool {
	id := refObjectID(ref)
	return slices.ContainsFunc(ids, func(want string) bool {
		if prefix, ok := strings.CutSuffix(want, "*"); ok {
			return strings.HasPrefix(id, strings.TrimRight(prefix, "*"))
		}
		return id == want
	})
}

// aggregateDimension is a row's value of a group_by dimension.
func aggregateDimension(r *aggregateRow, dimension string) string {
	switch dimension {
	case "scorer_id":
		return refObjectID(r.RunnableRef)
	case "span_agent_name":
		return r.SpanAgentName
	case "span_agent_version":
		return r.SpanAgentVersion
	}
	return r.SpanStatusCode
}
