package trace

import (
	"cmp"
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft"
)

// ThreadsQueryReq asks for the threads of a project: the conversations whose
// turns are calls with a thread_id.
type ThreadsQueryReq struct {
	ProjectID string         `json:"project_id"`
	Filter    *ThreadsFilter `json:"filter,omitempty"`
	// SortBy orders by thread_id, turn_count, start_time, last_updated,
	// p50_turn_duration_ms or p99_turn_duration_ms; nil means last_updated
	// descending. Threads without a value come last in either direction, and
	// thread_id ascending breaks ties.
	SortBy []SortBy `json:"sort_by,omitempty"`
	Limit  *int     `json:"limit,omitempty" nullable:"true" minimum:"0"`
	Offset *int     `json:"offset,omitempty" nullable:"true" minimum:"0"`
}

// ThreadsFilter selects threads: only their turns started after
// AfterDatetime and before BeforeDatetime count, and only the threads
// ThreadIDs names (a nil or empty list: every thread).
type ThreadsFilter struct {
	AfterDatetime  *time.Time `json:"after_datetime,omitempty" nullable:"true"`
	BeforeDatetime *time.Time `json:"before_datetime,omitempty" nullable:"true"`
	ThreadIDs      []string   `json:"thread_ids,omitempty" nullable:"true"`
}

// Thread is a thread as Weave reports it, made of its turns (the calls that
// are their own turn: turn_id = id).
type Thread struct {
	ThreadID string `json:"thread_id"`
	// TurnCount counts the turns.
	TurnCount int64 `json:"turn_count"`
	// StartTime is when the first turn started; LastUpdated when the last one
	// ended (null while none has).
	StartTime   time.Time  `json:"start_time"`
	LastUpdated *time.Time `json:"last_updated"`
	// FirstTurnID is the turn that started first; LastTurnID the one that
	// ended last.
	FirstTurnID *string `json:"first_turn_id"`
	LastTurnID  *string `json:"last_turn_id"`
	// The median and 99th percentile of the ended turns' durations in
	// milliseconds (linear between the nearest ranks); null while none
	// ended.
	P50TurnDurationMS *float64 `json:"p50_turn_duration_ms"`
	P99TurnDurationMS *float64 `json:"p99_turn_duration_ms"`
}

// threadSortFields are the fields threads sort by.
var threadSortFields = map[string]bool{"thread_id": true, "turn_count": true, "start_time": true, "last_updated": true,
	"p50_turn_duration_ms": true, "p99_turn_duration_ms": true}

// threadRow is a row of the threads query.
type threadRow struct {
	ThreadID    string          `bun:"thread_id"`
	TurnCount   int64           `bun:"turn_count"`
	StartTime   time.Time       `bun:"start_time"`
	LastUpdated *time.Time      `bun:"last_updated"`
	FirstTurnID *string         `bun:"first_turn_id"`
	LastTurnID  *string         `bun:"last_turn_id"`
	P50         sql.NullFloat64 `bun:"p50"`
	P99         sql.NullFloat64 `bun:"p99"`
}

// percentile is the p = num/den percentile of the ranked durations of a
// group (d, d_rank from 0, n of them): linear between the two nearest ranks.
func percentile(num, den int) string {
	pos := "((n - 1) * " + itoa(num) + ")"
	lo := "(" + pos + " / " + itoa(den) + ")"
	frac := "((" + pos + " % " + itoa(den) + ") * 1.0 / " + itoa(den) + ")"
	at := func(rank string) string { return "max(CASE WHEN d_rank = " + rank + " THEN d END)" }
	return "(" + at(lo) + " + " + frac + " * (coalesce(" + at(lo+" + 1") + ", " + at(lo) + ") - " + at(lo) + "))"
}

// ThreadsQuery implements [Service].
func (s *Store) ThreadsQuery(ctx context.Context, req *ThreadsQueryReq, yield func(*Thread) error) error {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return err
	}
	turns := s.db.NewSelect().TableExpr("calls AS c").
		ColumnExpr("c.thread_id AS thread_id, c.id AS id, c.started_at AS started_at, c.ended_at AS ended_at").
		ColumnExpr(s.dialect.ElapsedMillis("c.started_at", "c.ended_at") + " AS d")
	turns = visible(turns, req.ProjectID).Where("c.turn_id = c.id").Where("c.thread_id IS NOT NULL").Where("c.thread_id <> ''")
	if f := req.Filter; f != nil {
		if len(f.ThreadIDs) > 0 {
			turns = whereIn(turns, "? IN (?)", "c.thread_id", f.ThreadIDs)
		}
		if f.AfterDatetime != nil {
			turns = turns.Where("c.started_at > ?", f.AfterDatetime.UTC())
		}
		if f.BeforeDatetime != nil {
			turns = turns.Where("c.started_at < ?", f.BeforeDatetime.UTC())
		}
	}
	ranked := s.db.NewSelect().TableExpr("(?) AS turns", turns).
		ColumnExpr("thread_id, id, started_at, ended_at, d").
		ColumnExpr("row_number() OVER (PARTITION BY thread_id ORDER BY started_at, id) AS first_rank").
		ColumnExpr("row_number() OVER (PARTITION BY thread_id ORDER BY ended_at DESC NULLS LAST, id DESC) AS last_rank").
		ColumnExpr("CASE WHEN d IS NOT NULL THEN row_number() OVER (PARTITION BY thread_id, d IS NULL ORDER BY d) - 1 END AS d_rank").
		ColumnExpr("count(d) OVER (PARTITION BY thread_id) AS n")
	q := s.db.NewSelect().TableExpr("(?) AS ranked", ranked).
		ColumnExpr("thread_id, count(*) AS turn_count, min(started_at) AS start_time, max(ended_at) AS last_updated").
		ColumnExpr("max(CASE WHEN first_rank = 1 THEN id END) AS first_turn_id").
		ColumnExpr("max(CASE WHEN last_rank = 1 AND ended_at IS NOT NULL THEN id END) AS last_turn_id").
		ColumnExpr(percentile(1, 2) + " AS p50").
		ColumnExpr(percentile(99, 100) + " AS p99").
		GroupExpr("thread_id, n")
	sortBy := req.SortBy
	if sortBy == nil {
		sortBy = []SortBy{{Field: "last_updated", Direction: "desc"}}
	}
	for _, sb := range sortBy {
		if !threadSortFields[sb.Field] {
			return weft.WithFields(ErrInvalidQuery, map[string]any{"param": "sort_by"},
				"Unsupported sort field: %s. Supported fields: thread_id, turn_count, start_time, last_updated, p50_turn_duration_ms, p99_turn_duration_ms", clip(sb.Field))
		}
		direction := strings.ToLower(sb.Direction)
		if direction != "" && direction != "asc" && direction != "desc" {
			return weft.WithFields(ErrInvalidQuery, map[string]any{"param": "sort_by"}, "sort direction must be asc or desc")
		}
		column := strings.NewReplacer("_turn_duration_ms", "").Replace(sb.Field)
		q = q.OrderExpr(column + " " + strings.ToUpper(cmp.Or(direction, "asc")) + " NULLS LAST")
	}
	q = q.OrderExpr("thread_id ASC")
	limit, offset := 0, 0
	if req.Limit != nil {
		limit = *req.Limit
	}
	if req.Offset != nil {
		offset = *req.Offset
	}
	if limit < 0 || offset < 0 {
		return weft.Errorf(ErrInvalidQuery, "limit and offset must not be negative")
	}
	if req.Limit != nil && limit == 0 {
		return nil
	}
	rows, err := page(q, limit, offset).Rows(ctx)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r threadRow
		if err := s.db.ScanRow(ctx, rows, &r); err != nil {
			return err
		}
		t := &Thread{ThreadID: r.ThreadID, TurnCount: r.TurnCount, StartTime: r.StartTime.UTC(), FirstTurnID: r.FirstTurnID, LastTurnID: r.LastTurnID}
		if r.LastUpdated != nil {
			at := r.LastUpdated.UTC()
			t.LastUpdated = &at
		}
		if r.P50.Valid {
			t.P50TurnDurationMS = &r.P50.Float64
		}
		if r.P99.Valid {
			t.P99TurnDurationMS = &r.P99.Float64
		}
		if err := yield(t); err != nil {
			return err
		}
	}
	return rows.Err()
}

func itoa(n int) string { return strconv.Itoa(n) }
