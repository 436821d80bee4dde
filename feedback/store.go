package feedback

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// Store is the bun-backed [Service].
type Store struct {
	db     *weft.DB
	calls  CallLookup
	specs  AnnotationSpecs
	now    func() time.Time
	emojis emojiAliases
	// statsRange is Config.StatsMaxRange.
	statsRange time.Duration
}

var _ Service = (*Store)(nil)

// New returns a Store over cfg.DB.
func New(cfg Config) (*Store, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	return &Store{db: cfg.DB, calls: cfg.Calls, specs: cfg.AnnotationSpecs, now: cfg.Now, emojis: loadEmojiAliases(), statsRange: cfg.StatsMaxRange}, nil
}

// clock returns the current time in UTC at the microsecond precision both
// databases keep, so that what is returned equals what is read back.
func (s *Store) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// actingUser returns the caller's user id.
func actingUser(ctx context.Context) (string, error) {
	if id := weft.UserID(ctx); id != "" {
		return id, nil
	}
	return "", ErrNoUser
}

func checkProject(projectID string) error {
	_, _, err := weft.ParseProjectID(projectID)
	return err
}

// Create implements Service.
func (s *Store) Create(ctx context.Context, req CreateReq) (CreateRes, error) {
	rows, err := s.validate(ctx, []CreateReq{req}, false)
	if err != nil {
		return CreateRes{}, err
	}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return s.insertFeedback(ctx, tx, rows, false)
	})
	if err != nil {
		return CreateRes{}, err
	}
	return rows[0].result(), nil
}

// BatchCreate implements Service.
func (s *Store) BatchCreate(ctx context.Context, req BatchCreateReq) (BatchCreateRes, error) {
	rows, err := s.validate(ctx, req.Batch, true)
	if err != nil {
		return BatchCreateRes{}, err
	}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return s.insertFeedback(ctx, tx, rows, true)
	})
	if err != nil {
		return BatchCreateRes{}, err
	}
	res := BatchCreateRes{Res: make([]CreateRes, len(rows))}
	for i, row := range rows {
		res.Res[i] = row.result()
	}
	return res, nil
}

// Replace implements Service.
func (s *Store) Replace(ctx context.Context, req ReplaceReq) (CreateRes, error) {
	rows, err := s.validate(ctx, []CreateReq{req.CreateReq}, false)
	if err != nil {
		return CreateRes{}, err
	}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().Model((*feedbackRow)(nil)).
			Where("project_id = ?", req.ProjectID).Where("id = ?", req.FeedbackID).Exec(ctx); err != nil {
			return err
		}
		return s.insertFeedback(ctx, tx, rows, false)
	})
	if err != nil {
		return CreateRes{}, err
	}
	return rows[0].result(), nil
}

// validate checks every request and returns the rows to store. In a batch an
// error names the index of the first bad item.
func (s *Store) validate(ctx context.Context, reqs []CreateReq, batch bool) ([]*feedbackRow, error) {
	user, err := actingUser(ctx)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	rows := make([]*feedbackRow, len(reqs))
	seen := make(map[string]int, len(reqs))
	schemas := valueSchemas{specs: s.specs}
	for i, req := range reqs {
		row, err := s.newRow(req, user, now)
		if err == nil && s.specs != nil && row.AnnotationRef != nil {
			if class, _, _ := classify(row.FeedbackType); class == classAnnotation {
				err = schemas.check(ctx, row)
			}
		}
		if err == nil {
			key := row.ProjectID + "\x00" + row.ID
			if first, dup := seen[key]; dup {
				err = weft.Errorf(ErrInvalidFeedback, "id %s is also used by item %d", row.ID, first)
			}
			seen[key] = i
		}
		if err != nil {
			if batch {
				return nil, fmt.Errorf("batch[%d]: %w", i, err)
			}
			return nil, err
		}
		rows[i] = row
	}
	return rows, nil
}

// insertFeedback checks the queues the rows name and writes the rows in one
// statement; a row whose id exists replaces it.
func (s *Store) insertFeedback(ctx context.Context, tx bun.Tx, rows []*feedbackRow, batch bool) error {
	if len(rows) == 0 {
		return nil
	}
	if err := checkQueues(ctx, tx, rows, batch); err != nil {
		return err
	}
	q := tx.NewInsert().Model(&rows).On("CONFLICT (project_id, id) DO UPDATE")
	for _, column := range feedbackColumns {
		q = q.Set(column + " = EXCLUDED." + column)
	}
	_, err := q.Exec(ctx)
	return err
}

// feedbackColumns are the stored columns besides the key.
var feedbackColumns = []string{
	"trace_ref", "pf_user_id", "creator", "created_at", "feedback_type", "payload",
	"annotation_ref", "runnable_ref", "call_ref", "trigger_ref", "queue_id",
	"scorer_tags", "scorer_tag_reasons", "scorer_tag_confidences", "scorer_ratings",
	"scorer_rating_reasons", "scorer_rating_confidences", "scorer_trace_id",
	"span_agent_name", "span_agent_version", "span_status_code", "span_conversation_id", "span_trace_id",
}

// checkQueues requires every queue_id to name a live queue of the row's project.
func checkQueues(ctx context.Context, tx bun.IDB, rows []*feedbackRow, batch bool) error {
	wanted := map[[2]string]bool{}
	for _, row := range rows {
		if row.QueueID != nil {
			wanted[[2]string{row.ProjectID, *row.QueueID}] = false
		}
	}
	for key := range wanted {
		exists, err := tx.NewSelect().Table("annotation_queues").
			Where("project_id = ?", key[0]).Where("id = ?", key[1]).Where("deleted_at IS NULL").Exists(ctx)
		if err != nil {
			return err
		}
		wanted[key] = exists
	}
	for i, row := range rows {
		if row.QueueID != nil && !wanted[[2]string{row.ProjectID, *row.QueueID}] {
			err := weft.Errorf(ErrUnknownQueue, "Queue %s not found or has been deleted", truncate(*row.QueueID))
			if batch {
				return fmt.Errorf("batch[%d]: %w", i, err)
			}
			return err
		}
	}
	return nil
}

// Purge implements Service.
func (s *Store) Purge(ctx context.Context, req PurgeReq) (PurgeRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return PurgeRes{}, err
	}
	ids, err := purgeIDs(req.Query.Expr)
	if err != nil {
		return PurgeRes{}, err
	}
	res, err := s.db.NewDelete().Model((*feedbackRow)(nil)).
		Where("project_id = ?", req.ProjectID).Where("id IN (?)", bun.List(ids)).Exec(ctx)
	if err != nil {
		return PurgeRes{}, err
	}
	n, err := res.RowsAffected()
	return PurgeRes{NumDeleted: int(n)}, err
}

// purgeIDs accepts `id == literal` or an $or of such, as Weave does.
func purgeIDs(expr json.RawMessage) ([]string, error) {
	refuse := weft.Errorf(ErrInvalidQuery, "Can only purge feedback by specifying one or more feedback ids")
	op, arg, err := singleKey(expr)
	if err != nil {
		return nil, refuse
	}
	parts := []json.RawMessage{expr}
	if op == "$or" {
		if json.Unmarshal(arg, &parts) != nil || len(parts) == 0 {
			return nil, refuse
		}
	}
	ids := make([]string, 0, len(parts))
	for _, part := range parts {
		op, arg, err := singleKey(part)
		var operands []json.RawMessage
		if err != nil || op != "$eq" || json.Unmarshal(arg, &operands) != nil || len(operands) != 2 {
			return nil, refuse
		}
		field, err := fieldOperand(operands[0])
		lit, litErr := literalOperand(operands[1])
		id, isString := lit.value.(string)
		if err != nil || litErr != nil || field.column != "id" || !isString {
			return nil, refuse
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Query implements Service.
func (s *Store) Query(ctx context.Context, req QueryReq) (QueryRes, error) {
	if err := checkProject(req.ProjectID); err != nil {
		return QueryRes{}, err
	}
	for _, f := range req.Fields {
		if _, ok := outputField(f); !ok {
			return QueryRes{}, weft.Errorf(ErrInvalidQuery, "Unknown field: %q", truncate(f))
		}
	}
	c := compiler{dialect: database.DialectOf(s.db)}
	var rows []feedbackRow
	q := s.db.NewSelect().Model(&rows).Where("project_id = ?", req.ProjectID)
	if req.Query != nil && !isNull(req.Query.Expr) {
		cond, err := c.condition(req.Query.Expr)
		if err != nil {
			return QueryRes{}, err
		}
		q = q.Where(cond.sql, cond.args...)
	}
	for _, sort := range req.SortBy {
		dir := "ASC"
		if strings.EqualFold(sort.Direction, "desc") {
			dir = "DESC"
		}
		field, err := resolveField(sort.Field)
		if err != nil {
			return QueryRes{}, err
		}
		if field.column != "" {
			q = q.OrderExpr(field.column + " " + dir)
		} else {
			v := c.sortValue(field.path)
			q = q.OrderExpr(v.sql+" "+dir, v.args...)
		}
	}
	q = q.OrderExpr("created_at ASC, id ASC")
	if req.Limit != nil {
		q = q.Limit(int64(*req.Limit))
	}
	if req.Offset != nil {
		q = q.Offset(int64(*req.Offset))
	}
	total, err := q.ScanAndCount(ctx)
	if err != nil && err != sql.ErrNoRows {
		return QueryRes{}, err
	}
	res := QueryRes{Result: make([]map[string]any, len(rows)), TotalCount: int(total)}
	for i := range rows {
		res.Result[i] = rows[i].fields(req.Fields)
	}
	return res, nil
}

// outputField maps a requested field to the key of rowMap.
func outputField(name string) (string, bool) {
	switch name {
	case "project_id", "payload", "scorer_tags", "scorer_tag_reasons", "scorer_tag_confidences",
		"scorer_ratings", "scorer_rating_reasons", "scorer_rating_confidences":
		return name, true
	}
	_, ok := columnOf(name)
	return name, ok
}

// fields renders the row with the requested keys (every key when none). JSON
// columns are returned as stored.
func (r *feedbackRow) fields(names []string) map[string]any {
	all := map[string]any{
		"id": r.ID, "project_id": r.ProjectID, "trace_ref": r.TraceRef, "weave_ref": r.TraceRef,
		"pf_user_id": r.PFUserID, "wb_user_id": r.PFUserID, "creator": r.Creator, "created_at": r.CreatedAt,
		"feedback_type": r.FeedbackType, "payload": json.RawMessage(r.Payload),
		"annotation_ref": r.AnnotationRef, "runnable_ref": r.RunnableRef, "call_ref": r.CallRef,
		"trigger_ref": r.TriggerRef, "queue_id": r.QueueID,
		"scorer_tags": json.RawMessage(r.ScorerTags), "scorer_tag_reasons": json.RawMessage(r.ScorerTagReasons),
		"scorer_tag_confidences": json.RawMessage(r.ScorerTagConfidences), "scorer_ratings": json.RawMessage(r.ScorerRatings),
		"scorer_rating_reasons":     json.RawMessage(r.ScorerRatingReasons),
		"scorer_rating_confidences": json.RawMessage(r.ScorerRatingConfidences), "scorer_trace_id": r.ScorerTraceID,
		"span_agent_name": r.SpanAgentName, "span_agent_version": r.SpanAgentVersion, "span_status_code": r.SpanStatusCode,
		"span_conversation_id": r.SpanConversationID, "span_trace_id": r.SpanTraceID,
	}
	if len(names) == 0 {
		return all
	}
	picked := make(map[string]any, len(names))
	for _, name := range names {
		picked[name] = all[name]
	}
	return picked
}
