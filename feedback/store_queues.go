package feedback

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
)

type queueRow struct {
	bun.BaseModel `bun:"table:annotation_queues"`

	ProjectID   string     `bun:"project_id,pk"`
	ID          string     `bun:"id,pk"`
	Name        string     `bun:"name"`
	Description string     `bun:"description"`
	ScorerRefs  []string   `bun:"scorer_refs,type:text"`
	CreatedAt   time.Time  `bun:"created_at"`
	CreatedBy   string     `bun:"created_by"`
	UpdatedAt   time.Time  `bun:"updated_at"`
	DeletedAt   *time.Time `bun:"deleted_at"`
}

func (r *queueRow) queue() Queue {
	refs := r.ScorerRefs
	if refs == nil {
		refs = []string{}
	}
	return Queue{ID: r.ID, ProjectID: r.ProjectID, Name: r.Name, Description: r.Description, ScorerRefs: refs,
		CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy, UpdatedAt: r.UpdatedAt, DeletedAt: r.DeletedAt}
}

type itemRow struct {
	bun.BaseModel `bun:"table:annotation_queue_items"`

	ProjectID     string     `bun:"project_id,pk"`
	ID            string     `bun:"id,pk"`
	QueueID       string     `bun:"queue_id"`
	CallID        string     `bun:"call_id"`
	CallStartedAt time.Time  `bun:"call_started_at"`
	CallEndedAt   *time.Time `bun:"call_ended_at"`
	CallOpName    string     `bun:"call_op_name"`
	CallTraceID   string     `bun:"call_trace_id"`
	DisplayFields []string   `bun:"display_fields,type:text"`
	AddedBy       *string    `bun:"added_by"`
	CreatedAt     time.Time  `bun:"created_at"`
	CreatedBy     string     `bun:"created_by"`
	UpdatedAt     time.Time  `bun:"updated_at"`
	DeletedAt     *time.Time `bun:"deleted_at"`

	// Computed by the items query.
	AnnotationState string  `bun:"annotation_state,scanonly"`
	AnnotatorUserID *string `bun:"annotator_user_id,scanonly"`
	PositionInQueue *int64  `bun:"position_in_queue,scanonly"`
}

func (r *itemRow) item() QueueItem {
	fields := r.DisplayFields
	if fields == nil {
		fields = []string{}
	}
	return QueueItem{ID: r.ID, ProjectID: r.ProjectID, QueueID: r.QueueID, CallID: r.CallID,
		CallStartedAt: r.CallStartedAt, CallEndedAt: r.CallEndedAt, CallOpName: r.CallOpName, CallTraceID: r.CallTraceID,
		DisplayFields: fields, AddedBy: r.AddedBy, AnnotationState: r.AnnotationState, AnnotatorUserID: r.AnnotatorUserID,
		CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy, UpdatedAt: r.UpdatedAt, DeletedAt: r.DeletedAt,
		PositionInQueue: r.PositionInQueue}
}

type progressRow struct {
	bun.BaseModel `bun:"table:annotator_queue_items_progress"`

	ProjectID       string     `bun:"project_id,pk"`
	ID              string     `bun:"id,pk"`
	QueueItemID     string     `bun:"queue_item_id"`
	QueueID         string     `bun:"queue_id"`
	AnnotatorID     string     `bun:"annotator_id"`
	AnnotationState string     `bun:"annotation_state"`
	CreatedAt       time.Time  `bun:"created_at"`
	UpdatedAt       time.Time  `bun:"updated_at"`
	DeletedAt       *time.Time `bun:"deleted_at"`
}

// CreateQueue implements QueueService.
func (s *Store) CreateQueue(ctx context.Context, req CreateQueueReq) (CreateQueueRes, error) {
	user, err := actingUser(ctx)
	if err != nil {
		return CreateQueueRes{}, err
	}
	if err := checkProject(req.ProjectID); err != nil {
		return CreateQueueRes{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return CreateQueueRes{}, err
	}
	now := s.clock()
	row := &queueRow{ProjectID: req.ProjectID, ID: id.String(), Name: req.Name, Description: req.Description,
		ScorerRefs: req.ScorerRefs, CreatedAt: now, CreatedBy: user, UpdatedAt: now}
	if row.ScorerRefs == nil {
		row.ScorerRefs = []string{}
	}
	if _, err := s.db.NewInsert().Model(row).Exec(ctx); err != nil {
		return CreateQueueRes{}, err
	}
	return CreateQueueRes{ID: row.ID}, nil
}

// liveQueue reads a live queue or returns ErrQueueNotFound.
func liveQueue(ctx context.Context, db bun.IDB, projectID, queueID string) (*queueRow, error) {
	row := new(queueRow)
	err := db.NewSelect().Model(row).Where("project_id = ?", projectID).Where("id = ?", queueID).
		Where("deleted_at IS NULL").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.Errorf(ErrQueueNotFound, "Annotation queue %s not found", truncate(queueID))
	}
	return row, err
}

// ReadQueue implements QueueService.
func (s *Store) ReadQueue(ctx context.Context, projectID, queueID string) (Queue, error) {
	if err := checkProject(projectID); err != nil {
		return Queue{}, err
	}
	row, err := liveQueue(ctx, s.db, projectID, queueID)
	if err != nil {
		return Queue{}, err
	}
	return row.queue(), nil
}

// UpdateQueue implements QueueService.
func (s *Store) UpdateQueue(ctx context.Context, req UpdateQueueReq) (Queue, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return Queue{}, err
	}
	var out Queue
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row, err := liveQueue(ctx, tx, req.ProjectID, req.QueueID)
		if err != nil {
			return err
		}
		if req.Name == nil && req.Description == nil && req.ScorerRefs == nil {
			out = row.queue()
			return nil
		}
		if req.Name != nil {
			row.Name = *req.Name
		}
		if req.Description != nil {
			row.Description = *req.Description
		}
		if req.ScorerRefs != nil {
			row.ScorerRefs = req.ScorerRefs
		}
		row.UpdatedAt = s.clock()
		if _, err := tx.NewUpdate().Model(row).Column("name", "description", "scorer_refs", "updated_at").WherePK().Exec(ctx); err != nil {
			return err
		}
		out = row.queue()
		return nil
	})
	return out, err
}

// DeleteQueue implements QueueService.
func (s *Store) DeleteQueue(ctx context.Context, projectID, queueID string) (Queue, error) {
	if err := checkProject(projectID); err != nil {
		return Queue{}, err
	}
	var out Queue
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row, err := liveQueue(ctx, tx, projectID, queueID)
		if err != nil {
			return err
		}
		now := s.clock()
		row.DeletedAt, row.UpdatedAt = &now, now
		if _, err := tx.NewUpdate().Model(row).Column("deleted_at", "updated_at").WherePK().Exec(ctx); err != nil {
			return err
		}
		out = row.queue()
		return nil
	})
	return out, err
}

// QueryQueues implements QueueService.
func (s *Store) QueryQueues(ctx context.Context, req QueryQueuesReq) (QueryQueuesRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return QueryQueuesRes{}, err
	}
	if req.Name != nil {
		if err := checkNameSearch(*req.Name); err != nil {
			return QueryQueuesRes{}, err
		}
	}
	var rows []queueRow
	q := s.db.NewSelect().Model(&rows).Where("project_id = ?", req.ProjectID).Where("deleted_at IS NULL")
	if req.Name != nil && *req.Name != "" {
		q = q.Where(`LOWER(name) LIKE ? ESCAPE '\'`, "%"+escapeLike(strings.ToLower(*req.Name))+"%")
	}
	order := sortClause(req.SortBy, []string{"id", "name", "created_at", "updated_at"}, "")
	if order == "" {
		order = "created_at DESC, "
	}
	q = q.OrderExpr(order + "id ASC")
	if req.Limit != nil {
		q = q.Limit(int64(*req.Limit))
	}
	if req.Offset != nil {
		q = q.Offset(int64(*req.Offset))
	}
	if err := q.Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return QueryQueuesRes{}, err
	}
	res := QueryQueuesRes{Queues: make([]Queue, len(rows))}
	for i := range rows {
		res.Queues[i] = rows[i].queue()
	}
	return res, nil
}

// checkNameSearch bounds a name search: it becomes a LIKE pattern, which
// SQLite refuses beyond 50,000 bytes, and no name is longer than
// MaxQueueNameLength anyway; a NUL cannot be a bound value.
func checkNameSearch(name string) error {
	if utf8.RuneCountInString(name) > MaxQueueNameLength {
		return weft.Errorf(ErrInvalidQuery, "name search is longer than a queue name can be (%d characters)", MaxQueueNameLength)
	}
	if strings.IndexByte(name, 0) >= 0 {
		return weft.Errorf(ErrInvalidQuery, "name search must not contain NUL characters (\\u0000)")
	}
	return nil
}

// escapeLike makes every character of s match itself in a LIKE pattern with
// ESCAPE '\'.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// sortClause renders the allowed sort entries as "<prefix>field DIR, …, "
// (empty when none is allowed); entries naming other fields are dropped.
func sortClause(sortBy []SortBy, allowed []string, prefix string) string {
	var b strings.Builder
	for _, sort := range sortBy {
		if !slices.Contains(allowed, sort.Field) {
			continue
		}
		dir := "ASC"
		if strings.EqualFold(sort.Direction, "desc") {
			dir = "DESC"
		}
		b.WriteString(prefix + sort.Field + " " + dir + ", ")
	}
	return b.String()
}

// itemInsertChunk bounds the rows of one INSERT statement.
const itemInsertChunk = 2000

// AddQueueItems implements QueueService.
func (s *Store) AddQueueItems(ctx context.Context, req AddQueueItemsReq) (AddQueueItemsRes, error) {
	user, err := actingUser(ctx)
	if err != nil {
		return AddQueueItemsRes{}, err
	}
	if err := checkProject(req.ProjectID); err != nil {
		return AddQueueItemsRes{}, err
	}
	if s.calls == nil {
		return AddQueueItemsRes{}, ErrCallLookupUnavailable
	}
	if _, err := liveQueue(ctx, s.db, req.ProjectID, req.QueueID); err != nil {
		return AddQueueItemsRes{}, err
	}
	var present []string
	if len(req.CallIDs) > 0 {
		err := s.db.NewSelect().Model((*itemRow)(nil)).Column("call_id").
			Where("project_id = ?", req.ProjectID).Where("queue_id = ?", req.QueueID).Where("deleted_at IS NULL").
			Where("call_id IN (?)", bun.List(req.CallIDs)).Scan(ctx, &present)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return AddQueueItemsRes{}, err
		}
	}
	res := AddQueueItemsRes{}
	seen := make(map[string]bool, len(req.CallIDs))
	for _, id := range present {
		seen[id] = true
	}
	var wanted []string
	for _, id := range req.CallIDs {
		if seen[id] {
			res.Duplicates++
			continue
		}
		seen[id] = true
		wanted = append(wanted, id)
	}
	if len(wanted) == 0 {
		return res, nil
	}
	// Looked up before the transaction: the lookup may need a connection of
	// its own.
	calls, err := s.calls.LookupCalls(ctx, req.ProjectID, wanted)
	if err != nil {
		return AddQueueItemsRes{}, err
	}
	display := req.DisplayFields
	if display == nil {
		display = []string{}
	}
	now := s.clock()
	pending := make(map[string]bool, len(wanted))
	for _, id := range wanted {
		pending[id] = true
	}
	rows := make([]itemRow, 0, len(calls))
	for _, call := range calls {
		if !pending[call.ID] {
			continue // not asked for, or returned twice
		}
		delete(pending, call.ID)
		id, err := uuid.NewV7()
		if err != nil {
			return AddQueueItemsRes{}, err
		}
		rows = append(rows, itemRow{ProjectID: req.ProjectID, ID: id.String(), QueueID: req.QueueID, CallID: call.ID,
			CallStartedAt: call.StartedAt.UTC(), CallEndedAt: utcPtr(call.EndedAt), CallOpName: call.OpName,
			CallTraceID: call.TraceID, DisplayFields: display, AddedBy: &user, CreatedAt: now, CreatedBy: user, UpdatedAt: now})
	}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := liveQueue(ctx, tx, req.ProjectID, req.QueueID); err != nil {
			return err
		}
		for chunk := range slices.Chunk(rows, itemInsertChunk) {
			r, err := tx.NewInsert().Model(&chunk).
				On("CONFLICT (project_id, queue_id, call_id) WHERE deleted_at IS NULL DO NOTHING").Exec(ctx)
			if err != nil {
				return err
			}
			n, err := r.RowsAffected()
			if err != nil {
				return err
			}
			res.AddedCount += int(n)
			res.Duplicates += len(chunk) - int(n) // added by a concurrent request
		}
		return nil
	})
	if err != nil {
		return AddQueueItemsRes{}, err
	}
	return res, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
