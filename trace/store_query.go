package trace

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// toCall converts a stored row into the call reads return; book, when not
// nil, adds summary.weave.costs.
func (r *callRow) toCall(book *priceBook) *Call {
	c := &Call{
		ProjectID: r.ProjectID, ID: r.ID, OpName: deref(r.OpName), DisplayName: emptyToNil(r.DisplayName),
		TraceID: deref(r.TraceID), ParentID: r.ParentID, ThreadID: r.ThreadID, TurnID: r.TurnID,
		EndedAt: r.EndedAt, Exception: r.Exception,
		Attributes: rawOr(r.Attributes, "{}"), Inputs: rawOr(r.Inputs, "{}"), Output: rawOr(r.Output, "null"),
		PfUserID: r.PfUserID, PfRunID: r.PfRunID, PfRunStep: r.PfRunStep, PfRunStepEnd: r.PfRunStepEnd,
		DeletedAt: r.DeletedAt,
	}
	if r.StartedAt != nil {
		c.StartedAt = r.StartedAt.UTC()
	}
	if c.EndedAt != nil {
		t := c.EndedAt.UTC()
		c.EndedAt = &t
	}
	var stored []byte
	if r.Summary != nil {
		stored = []byte(*r.Summary)
	}
	var costs []byte
	if book != nil {
		costs = book.costsJSON(ownUsage(stored), c.StartedAt)
	}
	c.Summary = rebuildSummary(stored, c, costs)
	return c
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func rawOr(s *string, fallback string) json.RawMessage {
	if s == nil {
		return json.RawMessage(fallback)
	}
	return json.RawMessage(*s)
}

// MarshalJSON encodes the call, limited to the query's columns when it came
// from a query that named some.
func (c *Call) MarshalJSON() ([]byte, error) {
	type plain Call
	b, err := json.Marshal((*plain)(c))
	if err != nil || c.columns == nil {
		return b, err
	}
	return selectColumns(b, c.columns), nil
}

// visible restricts q to calls reads may return: of the project, started,
// not deleted.
func visible(q *bun.SelectQuery, projectID string) *bun.SelectQuery {
	return q.Where("c.project_id = ?", projectID).Where("c.started_at IS NOT NULL").Where("c.deleted_at IS NULL")
}

// CallRead implements [Service].
func (s *Store) CallRead(ctx context.Context, req *CallReadReq) (*CallReadRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	var row callRow
	err := visible(s.db.NewSelect().Model(&row).ExcludeColumn(searchColumns...), req.ProjectID).Where("c.id = ?", req.ID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return &CallReadRes{}, nil
	}
	if err != nil {
		return nil, err
	}
	book, err := s.priceBook(ctx, req.ProjectID, req.IncludeCosts)
	if err != nil {
		return nil, err
	}
	return &CallReadRes{Call: row.toCall(book)}, nil
}

// filtered builds the select of a query's calls, without order or paging.
func (s *Store) filtered(q *bun.SelectQuery, projectID string, f *CallsFilter) (*bun.SelectQuery, error) {
	if _, _, err := weft.ParseProjectID(projectID); err != nil {
		return nil, err
	}
	q = visible(q, projectID)
	for _, in := range []struct {
		column string
		values []string
		// emptyMatchesNone: an empty (not nil) list matches nothing rather
		// than being no filter.
		emptyMatchesNone bool
	}{
		{"c.id", f.CallIDs, false}, {"c.trace_id", f.TraceIDs, false}, {"c.parent_id", f.ParentIDs, false},
		{"c.thread_id", f.ThreadIDs, true}, {"c.turn_id", f.TurnIDs, true},
		{"c.pf_user_id", f.UserIDs, false}, {"c.pf_run_id", qualifiedRunIDs(projectID, f.RunIDs), false},
	} {
		if len(in.values) > 0 || (in.emptyMatchesNone && in.values != nil) {
			q = whereIn(q, "? IN (?)", in.column, in.values)
		}
	}
	if len(f.OpNames) > 0 {
		cond := s.opNamesCondition(f.OpNames)
		q = q.Where(cond.SQL, cond.Args...)
	}
	if len(f.Models) > 0 {
		q = s.whereModels(q, f.Models)
	}
	if f.TraceRootsOnly {
		q = q.Where("c.parent_id IS NULL")
	}
	if f.StartedFrom != nil {
		q = q.Where("c.started_at >= ?", f.StartedFrom.UTC())
	}
	if f.StartedBefore != nil {
		q = q.Where("c.started_at < ?", f.StartedBefore.UTC())
	}
	if len(f.Statuses) > 0 {
		cond, err := statusCondition(s.dialect, f.Statuses, f.TraceStatuses, projectID)
		if err != nil {
			return nil, err
		}
		q = q.Where(cond.SQL, cond.Args...)
	}
	if f.Search != "" {
		cond, err := s.searchCondition(f.Search)
		if err != nil {
			return nil, err
		}
		q = q.Where(cond.SQL, cond.Args...)
	}
	if f.HasFeedback {
		q = q.Where(hasFeedback)
	}
	if f.HasChildren {
		q = q.Where(hasChildren)
	}
	for _, refs := range []struct {
		column string
		values []string
	}{{"c.input_refs", f.InputRefs}, {"c.output_refs", f.OutputRefs}} {
		if len(refs.values) == 0 {
			continue
		}
		q = whereIn(q, s.dialect.JSONArrayHasAny(), refs.column, refs.values)
	}
	return q, nil
}

// whereModels keeps the calls of CallsFilter.Models: a call of one model
// reads the usage_model column; only a call of several models (usage_model
// NULL, the calls_several_models index's predicate) reads calls.usage for
// its models, as perModel counts it once per model. The names are bound.
func (s *Store) whereModels(q *bun.SelectQuery, models []string) *bun.SelectQuery {
	m := s.dialect.JSONObjectMembers("c.usage")
	cond := "(?0 IN (?1) OR (c.usage_model IS NULL AND c.usage <> '{}' AND EXISTS (SELECT 1 FROM " + m.From + " WHERE " + m.Key + " IN (?1))))"
	return whereIn(q, cond, "c.usage_model", models)
}

// qualifiedRunIDs reads each run id without a "/" as a run of projectID.
func qualifiedRunIDs(projectID string, runIDs []string) []string {
	if len(runIDs) == 0 {
		return runIDs
	}
	out := make([]string, len(runIDs))
	for i, id := range runIDs {
		if !strings.Contains(id, "/") {
			id = projectID + "/" + id
		}
		out[i] = id
	}
	return out
}

// VersionWildcard ends an op_names entry that names every version of an op:
// "weave:///<entity>/<project>/op/<name>:*".
const VersionWildcard = ":*"

// opNamesCondition holds for calls whose op_name is one of names, or, for a
// name ending in VersionWildcard, starts with that name up to and including
// its colon. A prefix is a range of the byte order ([prefix, prefix with
// its colon replaced by the next byte)), which an index of op_name reads.
func (s *Store) opNamesCondition(names []string) database.Expr {
	var exact []string
	var parts []string
	var args []any
	for _, name := range names {
		if strings.ContainsRune(name, 0) {
			continue // names nothing stored
		}
		prefix, wildcard := strings.CutSuffix(name, VersionWildcard)
		if !wildcard {
			exact = append(exact, name)
			continue
		}
		column := s.dialect.ByteOrder("c.op_name")
		parts = append(parts, "("+column+" >= ? AND "+column+" < ?)")
		args = append(args, prefix+":", prefix+";")
	}
	if len(exact) > 0 {
		parts = append(parts, "c.op_name IN (?)")
		args = append(args, bun.In(exact))
	}
	if len(parts) == 0 {
		return database.Expr{SQL: "1 = 0"}
	}
	return database.Expr{SQL: "(" + strings.Join(parts, " OR ") + ")", Args: args}
}

// hasFeedback holds for calls with feedback: a feedback row of the same
// project whose trace_ref is the call's ref in either scheme (feedback keeps
// refs as sent). It reads the feedback table through its (project_id,
// trace_ref) index, in the call's own project (colocated on Citus).
const hasFeedback = `EXISTS (SELECT 1 FROM feedback AS f WHERE f.project_id = c.project_id
	AND f.trace_ref IN ('weave:///' || c.project_id || '/call/' || c.id, 'trace:///' || c.project_id || '/call/' || c.id))`

// hasChildren holds for calls with a visible child, found through the
// (project_id, parent_id) index in the call's own project.
const hasChildren = `EXISTS (SELECT 1 FROM calls AS ch WHERE ch.project_id = c.project_id
	AND ch.parent_id = c.id AND ch.started_at IS NOT NULL AND ch.deleted_at IS NULL)`

// whereIn adds cond, whose placeholders (? in turn, or ?0 and ?1) are column
// and the list of values.
// A value holding NUL names nothing stored (no stored text holds one) and
// cannot be a bound value, so it is left out; when none is left, nothing
// matches.
func whereIn(q *bun.SelectQuery, cond, column string, values []string) *bun.SelectQuery {
	values = slices.DeleteFunc(slices.Clone(values), func(v string) bool { return strings.ContainsRune(v, 0) })
	if len(values) == 0 {
		return q.Where("1 = 0")
	}
	return q.Where(cond, bun.Safe(column), bun.In(values))
}

// queried is filtered with the request's query as well.
func (s *Store) queried(q *bun.SelectQuery, projectID string, f *CallsFilter, query json.RawMessage, expand []string) (*bun.SelectQuery, error) {
	q, err := s.filtered(q, projectID, f)
	if err != nil {
		return nil, err
	}
	conds, err := s.compileQuery(query, projectID, expand)
	if err != nil {
		return nil, err
	}
	for _, cond := range conds {
		q = q.Where(cond.SQL, cond.Args...)
	}
	return q, nil
}

// CallsQuery implements [Service].
func (s *Store) CallsQuery(ctx context.Context, req *CallsQueryReq, yield func(*Call) error) error {
	q, err := s.queried(s.db.NewSelect().Model((*callRow)(nil)).ExcludeColumn(searchColumns...), req.ProjectID, &req.Filter, req.Query, req.ExpandColumns)
	if err != nil {
		return err
	}
	sortBy := req.SortBy
	if sortBy == nil {
		sortBy = []SortBy{{Field: "started_at", Direction: "asc"}}
	}
	book, err := s.priceBook(ctx, req.ProjectID, req.IncludeCosts || slices.ContainsFunc(sortBy, func(sb SortBy) bool { return sb.Field == SortCost }))
	if err != nil {
		return err
	}
	hasID := false
	var keys []sortKey
	for _, sb := range sortBy {
		key, err := s.sortKeyOf(sb.Field, req.ProjectID, book, req.ExpandColumns)
		if err != nil {
			return err
		}
		direction := strings.ToLower(sb.Direction)
		if direction != "" && direction != "asc" && direction != "desc" {
			return weft.WithFields(ErrInvalidQuery, map[string]any{"param": "sort_by"}, "sort direction must be asc or desc")
		}
		terms := key.terms
		if terms == nil {
			terms = []sortTerm{{expr: key.expr, nullsLast: key.nullsLast}}
		}
		for _, t := range terms {
			order := " ASC"
			if cmp.Or(t.direction, direction) == "desc" {
				order = " DESC"
			}
			if t.nullsLast {
				order += " NULLS LAST"
			}
			q = q.OrderExpr(t.expr.SQL+order, t.expr.Args...)
		}
		hasID = hasID || sb.Field == "id"
		keys = append(keys, key)
	}
	if !hasID {
		q = q.OrderExpr("c.id ASC")
	}
	// A single numeric key is read with each call of a page: the cursor of
	// the next page. An unbounded read has no next page, and streams through
	// a PostgreSQL cursor whose FETCH the driver knows by its text, and so
	// by one shape of row: it reads the calls' columns alone.
	cursorKey := len(keys) == 1 && keys[0].numeric && req.Limit > 0
	if cursorKey {
		q = q.ColumnExpr("CAST(("+keys[0].expr.SQL+") AS DOUBLE PRECISION) AS sort_key", keys[0].expr.Args...)
	}
	if req.After != nil {
		if q, err = keysetAfter(q, sortBy, keys, req.After); err != nil {
			return err
		}
	}
	if req.Limit < 0 || req.Offset < 0 {
		return weft.Errorf(ErrInvalidQuery, "limit and offset must not be negative")
	}
	q = page(q, req.Limit, req.Offset)
	columns := columnSet(req.Columns, req.IncludeCosts)
	if !req.IncludeCosts {
		book = nil
	}
	emit := func(rows *sql.Rows) (int, error) {
		n := 0
		for rows.Next() {
			var row callRow
			if err := s.db.ScanRow(ctx, rows, &row); err != nil {
				return n, err
			}
			n++
			c := row.toCall(book)
			c.columns = columns
			c.cursor = CallsCursor{StartedAt: c.StartedAt, ID: c.ID}
			if cursorKey && row.SortKey.Valid {
				c.cursor.Key = &row.SortKey.Float64
			}
			if err := yield(c); err != nil {
				return n, err
			}
		}
		return n, rows.Err()
	}
	if s.dialect.Has(database.Cursors) && req.Limit == 0 {
		return s.streamThroughCursor(ctx, q, emit)
	}
	rows, err := q.Rows(ctx)
	if err != nil {
		return err
	}
	defer rows.Close()
	_, err = emit(rows)
	return err
}

// keysetAfter restricts q to the calls after cursor in the query's order,
// a single key (either direction) then id ascending: the next page, found
// through an index of the key however deep it is. The key is started_at
// (cursor.StartedAt) or a numeric one (cursor.Key, nil for a call without a
// value, which sorts last).
func keysetAfter(q *bun.SelectQuery, sortBy []SortBy, keys []sortKey, cursor *CallsCursor) (*bun.SelectQuery, error) {
	if len(sortBy) != 1 || (sortBy[0].Field != "started_at" && !keys[0].numeric) {
		return nil, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "sort_by"},
			"a cursor pages only a query sorted by one field: started_at or a numeric one (%s, %s, %s, %s)",
			SortLatency, SortTotalTokens, SortCost, SortReactions)
	}
	before, after := ">=", ">"
	if strings.EqualFold(sortBy[0].Direction, "desc") {
		before, after = "<=", "<"
	}
	// The first bound alone is a range of the index, where the database
	// starts reading; the second drops the cursor's own value up to its id.
	if sortBy[0].Field == "started_at" {
		at := cursor.StartedAt.UTC()
		return q.Where("c.started_at "+before+" ?", at).Where("(c.started_at "+after+" ? OR c.id > ?)", at, cursor.ID), nil
	}
	key := keys[0]
	if cursor.Key == nil {
		if !key.nullsLast {
			return nil, weft.WithFields(ErrInvalidQuery, map[string]any{"param": "after"}, "the cursor has no value of the sort key")
		}
		return q.Where("("+key.expr.SQL+") IS NULL", key.expr.Args...).Where("c.id > ?", cursor.ID), nil
	}
	v := *cursor.Key
	args := slices.Concat(key.expr.Args, []any{v}, key.expr.Args, []any{v, cursor.ID})
	cond := "((" + key.expr.SQL + ") " + before + " ? AND ((" + key.expr.SQL + ") " + after + " ? OR c.id > ?))"
	if key.nullsLast {
		cond = "(" + cond + " OR (" + key.expr.SQL + ") IS NULL)"
		args = append(args, key.expr.Args...)
	}
	return q.Where(cond, args...), nil
}

// cursorBatch is how many rows one FETCH of a streaming cursor reads.
const cursorBatch = 1000

// streamThroughCursor runs an unbounded query through a PostgreSQL cursor.
// Planned as a plain query, a whole-project scan in started_at order is a
// sequential scan and a sort, so the first row waits for every row; planned as
// a cursor (told that the first rows matter most) it walks the (project_id,
// started_at, id) index and the first rows leave at once. Memory stays one
// batch either way.
func (s *Store) streamThroughCursor(ctx context.Context, q *bun.SelectQuery, emit func(*sql.Rows) (int, error)) error {
	tx, err := s.db.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	// The query is rendered by bun with its values quoted inline, so it runs
	// as plain SQL without placeholders.
	if _, err := tx.ExecContext(ctx, "SET LOCAL cursor_tuple_fraction = 0.001"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DECLARE weft_calls_stream NO SCROLL CURSOR FOR "+q.String()); err != nil {
		return err
	}
	for {
		rows, err := tx.QueryContext(ctx, fmt.Sprintf("FETCH %d FROM weft_calls_stream", cursorBatch))
		if err != nil {
			return err
		}
		n, err := emit(rows)
		rows.Close()
		if err != nil || n < cursorBatch {
			return err
		}
	}
}

// CallsQueryStats implements [Service].
func (s *Store) CallsQueryStats(ctx context.Context, req *CallsQueryStatsReq) (*CallsQueryStatsRes, error) {
	inner, err := s.queried(s.db.NewSelect().TableExpr("calls AS c").ColumnExpr("1"), req.ProjectID, &req.Filter, req.Query, req.ExpandColumns)
	if err != nil {
		return nil, err
	}
	if req.Limit < 0 {
		return nil, weft.Errorf(ErrInvalidQuery, "limit must not be negative")
	}
	if req.Limit > 0 {
		inner = inner.Limit(int64(req.Limit))
	}
	var n int64
	if err := s.db.NewSelect().TableExpr("(?) AS matched", inner).ColumnExpr("count(*)").Scan(ctx, &n); err != nil {
		return nil, err
	}
	return &CallsQueryStatsRes{Count: n}, nil
}

// CallsDelete implements [Service]. Descendants are found by following
// parent_id links from the requested ids inside the project, to any depth.
func (s *Store) CallsDelete(ctx context.Context, req *CallsDeleteReq) (*CallsDeleteRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	if len(req.CallIDs) > MaxDeleteIDs {
		return nil, weft.Errorf(ErrTooManyIDs, "Request too large")
	}
	requested := map[string]bool{}
	for _, id := range req.CallIDs {
		if err := checkCallID("call_ids", id); err != nil {
			return nil, err
		}
		requested[id] = true
	}
	if len(requested) == 0 {
		return &CallsDeleteRes{}, nil
	}
	ids := slices.Sorted(maps.Keys(requested))
	var tree []string
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		err := tx.NewRaw(`WITH RECURSIVE tree(id) AS (
				SELECT id FROM calls WHERE project_id = ? AND id IN (?)
				UNION
				SELECT c.id FROM calls AS c JOIN tree AS t ON c.parent_id = t.id WHERE c.project_id = ?
			) SELECT id FROM tree`, req.ProjectID, bun.In(ids), req.ProjectID).Scan(ctx, &tree)
		if err != nil {
			return err
		}
		if len(tree) == 0 {
			return nil
		}
		_, err = tx.NewUpdate().Model((*callRow)(nil)).Set("deleted_at = ?", s.now().UTC()).
			Where("project_id = ?", req.ProjectID).Where("id IN (?)", bun.In(tree)).Where("deleted_at IS NULL").Exec(ctx)
		if err != nil {
			return err
		}
		// The roots left whose trace no longer holds a call that raised
		// are successes again, unless their summary rolled errors up.
		rolledUp := descendantErrors(s.dialect)
		_, err = s.traceRoots(tx, req.ProjectID, tree).Set("status = ?", StatusSuccess).
			Where("c.status = ?", StatusDescendantError).
			Where("NOT (COALESCE("+rolledUp.SQL+", 0) > 0)", rolledUp.Args...).
			Where("NOT "+failedInTrace, req.ProjectID).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.published(ctx, map[string][]string{req.ProjectID: tree})
	n := len(requested)
	for _, id := range tree {
		if !requested[id] {
			n++
		}
	}
	return &CallsDeleteRes{NumDeleted: n}, nil
}

// page applies limit and offset (0: none). SQLite accepts OFFSET only after a
// LIMIT, so an offset alone gets the largest one.
func page(q *bun.SelectQuery, limit, offset int) *bun.SelectQuery {
	if limit > 0 {
		q = q.Limit(int64(limit))
	}
	if offset > 0 {
		if limit == 0 {
			q = q.Limit(math.MaxInt64)
		}
		q = q.Offset(int64(offset))
	}
	return q
}
