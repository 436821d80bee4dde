package feedback

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
)

// defaultItemsLimit is the page size when a request gives none.
const defaultItemsLimit = 50

// itemSortFields are the fields items may be sorted by.
var itemSortFields = []string{"call_started_at", "call_op_name", "created_at", "updated_at"}

// latestProgress selects column of the most recently updated live progress
// record of item s; the ordering rides the annotator_progress_latest index. Its
// one argument is the project: a value, not the outer row's column, so that on
// a distributed database the statement runs on the project's shard.
func latestProgress(column string) string {
	return `(SELECT p.` + column + ` FROM annotator_queue_items_progress AS p
 WHERE p.project_id = ? AND p.queue_item_id = s.id AND p.deleted_at IS NULL
 ORDER BY p.updated_at DESC, p.id DESC LIMIT 1)`
}

// QueryQueueItems implements QueueService.
func (s *Store) QueryQueueItems(ctx context.Context, req QueryQueueItemsReq) (QueryQueueItemsRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return QueryQueueItemsRes{}, err
	}
	rows, err := queryItems(ctx, s.db, req)
	if err != nil {
		return QueryQueueItemsRes{}, err
	}
	res := QueryQueueItemsRes{Items: make([]QueueItem, len(rows))}
	for i := range rows {
		res.Items[i] = rows[i].item()
	}
	return res, nil
}

// queryItems runs the items query. Positions come from ROW_NUMBER over the
// queue's live items in the requested order, in a subquery that no filter
// reaches, so they count the whole queue; the outer query filters, computes
// states, and pages in the same order (which the planner can take from the
// window's input and stop early).
func queryItems(ctx context.Context, db bun.IDB, req QueryQueueItemsReq) ([]itemRow, error) {
	order := sortClause(req.SortBy, itemSortFields, "")
	if order == "" {
		order = "created_at ASC, "
	}
	order += "id ASC"

	var states []string
	if req.Filter != nil {
		states = req.Filter.AnnotationStates
	}
	limit, offset := defaultItemsLimit, 0
	if req.Limit != nil {
		limit = *req.Limit
	}
	if req.Offset != nil {
		offset = *req.Offset
	}

	// positioned: the queue's live items (with positions), then the filters
	// on item columns.
	var positioned strings.Builder
	var args []any
	positioned.WriteString("SELECT it.*")
	if req.IncludePosition {
		positioned.WriteString(", ROW_NUMBER() OVER (ORDER BY " + order + ") AS position_in_queue")
	} else {
		positioned.WriteString(", CAST(NULL AS BIGINT) AS position_in_queue")
	}
	positioned.WriteString(" FROM annotation_queue_items AS it WHERE it.project_id = ? AND it.queue_id = ? AND it.deleted_at IS NULL")
	args = append(args, req.ProjectID, req.QueueID)
	filtered := "SELECT i.* FROM (" + positioned.String() + ") AS i WHERE 1 = 1"
	if f := req.Filter; f != nil {
		for _, eq := range []struct {
			column string
			value  *string
		}{{"id", f.ID}, {"call_id", f.CallID}, {"call_op_name", f.CallOpName}, {"call_trace_id", f.CallTraceID}, {"added_by", f.AddedBy}} {
			if eq.value != nil {
				filtered += " AND i." + eq.column + " = ?"
				args = append(args, *eq.value)
			}
		}
	}
	// withState adds each item's state to the items of the subquery %s.
	withState := "SELECT s.*, COALESCE(" + latestProgress("annotation_state") + ", 'unstarted') AS annotation_state, " +
		latestProgress("annotator_id") + " AS annotator_user_id FROM (%s) AS s"
	args = append([]any{req.ProjectID, req.ProjectID}, args...)
	var query string
	switch {
	case states == nil:
		// Without a state filter the page is cut first, so states are
		// computed for the returned items only.
		query = strings.Replace(withState, "%s", filtered+" ORDER BY "+order+" LIMIT ? OFFSET ?", 1) + " ORDER BY " + order
		args = append(args, limit, offset)
	case len(states) == 0:
		query = strings.Replace(withState, "%s", filtered, 1) + " WHERE 1 = 0"
	default:
		query = "SELECT * FROM (" + strings.Replace(withState, "%s", filtered, 1) + ") AS st WHERE st.annotation_state IN (?) ORDER BY " + order + " LIMIT ? OFFSET ?"
		args = append(args, bun.List(states), limit, offset)
	}
	var rows []itemRow
	if err := db.NewRaw(query, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	return rows, nil
}

// UpdateItemProgress implements QueueService.
func (s *Store) UpdateItemProgress(ctx context.Context, req ItemProgressReq) (QueueItem, error) {
	user, err := actingUser(ctx)
	if err != nil {
		return QueueItem{}, err
	}
	if err := checkProject(req.ProjectID); err != nil {
		return QueueItem{}, err
	}
	if !slices.Contains([]string{StateInProgress, StateCompleted, StateSkipped}, req.AnnotationState) {
		return QueueItem{}, weft.Errorf(ErrInvalidProgress, "annotation_state must be in_progress, completed or skipped, not %q", truncate(req.AnnotationState))
	}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		exists, err := tx.NewSelect().Model((*itemRow)(nil)).Where("project_id = ?", req.ProjectID).
			Where("queue_id = ?", req.QueueID).Where("id = ?", req.ItemID).Where("deleted_at IS NULL").Exists(ctx)
		if err != nil {
			return err
		}
		if !exists {
			return weft.Errorf(ErrInvalidProgress, "item %s is not in queue %s", truncate(req.ItemID), truncate(req.QueueID))
		}
		record := new(progressRow)
		err = tx.NewSelect().Model(record).Where("project_id = ?", req.ProjectID).Where("queue_item_id = ?", req.ItemID).
			Where("annotator_id = ?", user).Where("deleted_at IS NULL").Scan(ctx)
		hasRecord := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := checkTransition(hasRecord, record.AnnotationState, req.AnnotationState); err != nil {
			return err
		}
		now := s.clock()
		if hasRecord {
			record.AnnotationState, record.UpdatedAt = req.AnnotationState, now
			_, err = tx.NewUpdate().Model(record).Column("annotation_state", "updated_at").WherePK().Exec(ctx)
			return err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		_, err = tx.NewInsert().Model(&progressRow{ProjectID: req.ProjectID, ID: id.String(), QueueItemID: req.ItemID,
			QueueID: req.QueueID, AnnotatorID: user, AnnotationState: req.AnnotationState, CreatedAt: now, UpdatedAt: now}).Exec(ctx)
		return err
	})
	if err != nil {
		return QueueItem{}, err
	}
	rows, err := queryItems(ctx, s.db, QueryQueueItemsReq{ProjectID: req.ProjectID, QueueID: req.QueueID,
		Filter: &QueueItemsFilter{ID: &req.ItemID}})
	if err != nil {
		return QueueItem{}, err
	}
	if len(rows) != 1 {
		return QueueItem{}, weft.Errorf(ErrInvalidProgress, "item %s is not in queue %s", truncate(req.ItemID), truncate(req.QueueID))
	}
	return rows[0].item(), nil
}

// checkTransition allows in_progress only as the caller's first record, and
// completed or skipped only from no record or in_progress.
func checkTransition(hasRecord bool, from, to string) error {
	if !hasRecord {
		return nil
	}
	if to == StateInProgress {
		return weft.Errorf(ErrInvalidProgress, "cannot move to in_progress: the item is already %s for this annotator", from)
	}
	if from != StateInProgress {
		return weft.Errorf(ErrInvalidProgress, "cannot move from %s to %s", from, to)
	}
	return nil
}

// QueueStats implements QueueService.
func (s *Store) QueueStats(ctx context.Context, req QueueStatsReq) (QueueStatsRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return QueueStatsRes{}, err
	}
	res := QueueStatsRes{Stats: make([]QueueStats, len(req.QueueIDs))}
	if len(req.QueueIDs) == 0 {
		return res, nil
	}
	var counted []QueueStats
	err := s.db.NewRaw(`SELECT i.queue_id AS queue_id, COUNT(*) AS total_items,
 CAST(SUM(CASE WHEN EXISTS (SELECT 1 FROM annotator_queue_items_progress AS p
   WHERE p.project_id = ? AND p.queue_item_id = i.id AND p.deleted_at IS NULL
   AND p.annotation_state IN ('completed', 'skipped')) THEN 1 ELSE 0 END) AS BIGINT) AS completed_items
 FROM annotation_queue_items AS i
 WHERE i.project_id = ? AND i.queue_id IN (?) AND i.deleted_at IS NULL
 GROUP BY i.queue_id`, req.ProjectID, req.ProjectID, bun.List(req.QueueIDs)).Scan(ctx, &counted)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return QueueStatsRes{}, err
	}
	byQueue := make(map[string]QueueStats, len(counted))
	for _, c := range counted {
		byQueue[c.QueueID] = c
	}
	for i, id := range req.QueueIDs {
		res.Stats[i] = byQueue[id]
		res.Stats[i].QueueID = id
	}
	return res, nil
}
