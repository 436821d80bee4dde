package trace

import (
	"context"
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/weftlabs/weft/internal/database"

	"github.com/weftlabs/weft"
)

// Store is the bun-backed [Service].
type Store struct {
	db      *weft.DB
	dialect database.Dialect
	now     func() time.Time
	feed    *Feed
	hook    WriteHook
	// statsRange is Config.StatsMaxRange.
	statsRange time.Duration
}

var _ Service = (*Store)(nil)

// New returns a Store over cfg.DB.
func New(cfg Config) (*Store, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	return &Store{db: cfg.DB, dialect: database.DialectOf(cfg.DB), now: cfg.Now, feed: cfg.Feed, hook: cfg.Hook, statsRange: cfg.StatsMaxRange}, nil
}

// callRow is a row of the calls table.
type callRow struct {
	bun.BaseModel `bun:"table:calls,alias:c"`

	ProjectID    string     `bun:"project_id,pk"`
	ID           string     `bun:"id,pk"`
	TraceID      *string    `bun:"trace_id"`
	ParentID     *string    `bun:"parent_id"`
	ThreadID     *string    `bun:"thread_id"`
	TurnID       *string    `bun:"turn_id"`
	OpName       *string    `bun:"op_name"`
	DisplayName  *string    `bun:"display_name"`
	StartedAt    *time.Time `bun:"started_at"`
	EndedAt      *time.Time `bun:"ended_at"`
	Attributes   *string    `bun:"attributes"`
	Inputs       *string    `bun:"inputs"`
	OtelDump     *string    `bun:"otel_dump"`
	InputRefs    *string    `bun:"input_refs"`
	Output       *string    `bun:"output"`
	OutputRefs   *string    `bun:"output_refs"`
	Summary      *string    `bun:"summary"`
	Exception    *string    `bun:"exception"`
	PfUserID     *string    `bun:"pf_user_id"`
	PfRunID      *string    `bun:"pf_run_id"`
	PfRunStep    *int64     `bun:"pf_run_step"`
	PfRunStepEnd *int64     `bun:"pf_run_step_end"`
	DeletedAt    *time.Time `bun:"deleted_at"`
	// Usage is derived from Summary when the end is written (see storedUsage),
	// and so are its one model and its counters summed over its models (see
	// usageTotals).
	Usage               *string  `bun:"usage"`
	UsageModel          *string  `bun:"usage_model"`
	PromptTokens        *float64 `bun:"prompt_tokens"`
	CompletionTokens    *float64 `bun:"completion_tokens"`
	TotalTokens         *float64 `bun:"total_tokens"`
	CacheReadTokens     *float64 `bun:"cache_read_tokens"`
	CacheCreationTokens *float64 `bun:"cache_creation_tokens"`
	// InputsText and OutputText are the searchable text of Inputs and Output
	// (see searchText), derived when the start and the end are written.
	InputsText *string `bun:"inputs_text"`
	OutputText *string `bun:"output_text"`
	// LatencyMs is database.Dialect.ElapsedMillis from StartedAt to
	// EndedAt once both are known, kept for aggregations over many calls
	// (see latencyOf and upsert).
	LatencyMs *int64 `bun:"latency_ms"`
	// Status is the call's summary.weave.status (see callStatus): running
	// when its start is written first, its end's status once that is; a
	// root's is descendant_error rather than success once another call of
	// its trace raised (see rollUp).
	Status *string `bun:"status"`
	// SortKey is the value of a query's numeric sort key, read for the
	// cursor of the next page; never stored.
	SortKey sql.NullFloat64 `bun:"sort_key,scanonly"`
}

// Column groups written by each kind of write. A start never touches end
// columns and the other way round, which is what lets them arrive in any order.
var (
	startColumns = []string{"trace_id", "parent_id", "thread_id", "turn_id", "op_name", "started_at",
		"attributes", "inputs", "otel_dump", "input_refs", "pf_user_id", "pf_run_id", "pf_run_step", "inputs_text"}
	endColumns = []string{"ended_at", "output", "output_refs", "summary", "exception", "pf_run_step_end", "usage", "output_text", "status",
		"usage_model", "prompt_tokens", "completion_tokens", "total_tokens", "cache_read_tokens", "cache_creation_tokens"}
)

// pending is what one batch writes to one call: the merge, in order, of the
// batch's starts, ends and renames of that call.
type pending struct {
	row      callRow
	hasStart bool
	hasEnd   bool
}

// writeSet accumulates a batch's writes per call, in first-seen order.
type writeSet struct {
	order []*pending
	byKey map[[2]string]*pending
}

func (w *writeSet) get(projectID, id string) *pending {
	if w.byKey == nil {
		w.byKey = map[[2]string]*pending{}
	}
	k := [2]string{projectID, id}
	p := w.byKey[k]
	if p == nil {
		p = &pending{row: callRow{ProjectID: projectID, ID: id}}
		w.byKey[k] = p
		w.order = append(w.order, p)
	}
	return p
}

func (w *writeSet) addStart(s *startFields) {
	p := w.get(s.projectID, s.id)
	p.hasStart = true
	r := &p.row
	r.TraceID, r.ParentID, r.ThreadID, r.TurnID = &s.traceID, s.parentID, s.threadID, s.turnID
	r.OpName, r.StartedAt = &s.opName, &s.startedAt
	r.Attributes, r.Inputs, r.OtelDump, r.InputRefs = &s.attributes, &s.inputs, s.otelDump, s.inputRefs
	r.PfUserID, r.PfRunID, r.PfRunStep = s.userID, s.runID, s.runStep
	r.InputsText = &s.inputsText
	if !p.hasEnd {
		running := StatusRunning
		r.Status = &running
	}
	if s.displayName != nil {
		r.DisplayName = s.displayName
	}
}

func (w *writeSet) addEnd(e *endFields) {
	p := w.get(e.projectID, e.id)
	p.hasEnd = true
	r := &p.row
	r.EndedAt, r.Output, r.OutputRefs, r.Summary, r.Usage = &e.endedAt, &e.output, e.outputRefs, &e.summary, &e.usage
	r.Exception, r.PfRunStepEnd = e.exception, e.runStepEnd
	r.OutputText = &e.outputText
	r.Status = &e.status
	r.UsageModel = e.usageModel
	r.PromptTokens, r.CompletionTokens, r.TotalTokens = &e.tokens[usagePrompt], &e.tokens[usageCompletion], &e.tokens[usageTotal]
	r.CacheReadTokens, r.CacheCreationTokens = &e.tokens[usageCacheRead], &e.tokens[usageCacheCreation]
	if e.displayName != nil {
		r.DisplayName = e.displayName
	}
}

func (w *writeSet) addName(projectID, id, name string) {
	w.get(projectID, id).row.DisplayName = &name
}

// groups splits the set by kind of write (start and end, start only, end
// only, rename only), so that one statement per group never touches a row
// twice. Index: [hasStart][hasEnd].
func (w *writeSet) groups() [2][2][]callRow {
	var groups [2][2][]callRow
	for _, p := range w.order {
		p.row.LatencyMs = latencyOf(p.row.StartedAt, p.row.EndedAt)
		groups[b2i(p.hasStart)][b2i(p.hasEnd)] = append(groups[b2i(p.hasStart)][b2i(p.hasEnd)], p.row)
	}
	return groups
}

// latencyOf is a call's latency_ms: the whole milliseconds from started to
// ended, truncated toward zero as database.Dialect.ElapsedMillis computes
// them (both times are whole microseconds, see normalizeTime); nil until
// both are known.
func latencyOf(started, ended *time.Time) *int64 {
	if started == nil || ended == nil {
		return nil
	}
	ms := ended.Sub(*started).Microseconds() / 1000
	return &ms
}

// upsert is the multi-row statement of one group: insert, or on conflict
// overwrite the group's columns (a rename keeps the stored name when the
// write carries none), and the latency of the stored and written times.
func upsert(db bun.IDB, rows []callRow, hasStart, hasEnd bool) *bun.InsertQuery {
	q := db.NewInsert().Model(&rows).On("CONFLICT (project_id, id) DO UPDATE").
		Set("display_name = COALESCE(EXCLUDED.display_name, c.display_name)")
	started, ended := "c.started_at", "c.ended_at"
	if hasStart {
		for _, col := range startColumns {
			q = q.Set(col + " = EXCLUDED." + col)
		}
		started = "EXCLUDED.started_at"
		if !hasEnd {
			// A start written after its end keeps the end's status.
			q = q.Set("status = COALESCE(c.status, EXCLUDED.status)")
		}
	}
	if hasEnd {
		for _, col := range endColumns {
			q = q.Set(col + " = EXCLUDED." + col)
		}
		ended = "EXCLUDED.ended_at"
	}
	if hasStart || hasEnd {
		q = q.Set("latency_ms = " + database.DialectOf(db).ElapsedMillis(started, ended))
	}
	return q
}

// flush writes the set with one multi-row upsert per group.
func (s *Store) flush(ctx context.Context, db bun.IDB, w *writeSet) error {
	query := func(q string) ([]string, error) {
		var out []string
		err := db.NewRaw(q).Scan(ctx, &out)
		return out, err
	}
	exec := func(q string) error {
		_, err := db.ExecContext(ctx, q)
		return err
	}
	if err := s.lockRollUps(w, exec); err != nil {
		return err
	}
	groups := w.groups()
	for hasStart := range 2 {
		for hasEnd := range 2 {
			if rows := groups[hasStart][hasEnd]; len(rows) > 0 {
				if _, err := upsert(db, rows, hasStart == 1, hasEnd == 1).Exec(ctx); err != nil {
					return err
				}
			}
		}
	}
	return s.rollUp(w, query, exec)
}

// traceRoots is an update of the visible roots of the traces of the calls
// ids of projectID (as "calls AS c").
func (s *Store) traceRoots(db bun.IDB, projectID string, ids []string) *bun.UpdateQuery {
	return db.NewUpdate().TableExpr("calls AS c").Where("c.project_id = ?", projectID).
		Where("c.parent_id IS NULL AND c.deleted_at IS NULL").
		Where("c.trace_id IN (SELECT x.trace_id FROM calls AS x WHERE x.project_id = ? AND x.id IN (?))", projectID, bun.In(ids))
}

// flushTx writes the set in one transaction through bun, with the hook.
func (s *Store) flushTx(ctx context.Context, w *writeSet) error {
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := s.flush(ctx, tx, w); err != nil {
			return err
		}
		return s.callHook(ctx, WriteTx{SQL: tx.Tx}, w)
	})
}

// write writes a set of starts and ends in one transaction: COPY where
// PostgreSQL can, else upserts. A single start or end is written so too:
// any of them may change its trace's root (see pending.mayChangeRoot), and
// a call must never be committed without that roll-up.
func (s *Store) write(ctx context.Context, w *writeSet) error {
	if s.dialect.Has(database.Copy) {
		return s.flushPostgres(ctx, w)
	}
	return s.flushTx(ctx, w)
}

// copyColumns are the calls columns a COPY fills, in callRow order.
var copyColumns = []string{"project_id", "id", "trace_id", "parent_id", "thread_id", "turn_id", "op_name", "display_name",
	"started_at", "ended_at", "attributes", "inputs", "otel_dump", "input_refs", "output", "output_refs", "summary",
	"exception", "pf_user_id", "pf_run_id", "pf_run_step", "pf_run_step_end", "usage", "inputs_text", "output_text",
	"usage_model", "prompt_tokens", "completion_tokens", "total_tokens", "cache_read_tokens", "cache_creation_tokens", "latency_ms", "status"}

// flushPostgres writes the set in one PostgreSQL transaction on the pgx
// connection under bun. Calls whose start and end come together (what the
// SDKs send) are COPYed when none of them exists yet — the common case, and
// several times cheaper than an upsert; if one does exist the COPY is rolled
// back to a savepoint and the group is upserted like the others.
func (s *Store) flushPostgres(ctx context.Context, w *writeSet) error {
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return s.flushTx(ctx, w)
		}
		tx, err := pc.Conn().Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
		query := func(q string) ([]string, error) {
			rows, err := tx.Query(ctx, q)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, pgx.RowTo[string])
		}
		exec := func(q string) error {
			_, err := tx.Exec(ctx, q)
			return err
		}
		if err := s.lockRollUps(w, exec); err != nil {
			return err
		}
		groups := w.groups()
		for hasStart := range 2 {
			for hasEnd := range 2 {
				rows := groups[hasStart][hasEnd]
				if len(rows) == 0 {
					continue
				}
				if hasStart == 1 && hasEnd == 1 {
					copied, err := copyNew(ctx, tx, rows)
					if err != nil {
						return err
					}
					if copied {
						continue
					}
				}
				if _, err := tx.Exec(ctx, upsert(s.db, rows, hasStart == 1, hasEnd == 1).String()); err != nil {
					return err
				}
			}
		}
		if err := s.rollUp(w, query, exec); err != nil {
			return err
		}
		if err := s.callHook(ctx, WriteTx{Pgx: tx}, w); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
}

// copyNew COPYs rows into calls inside a savepoint; copied is false (and
// nothing written) when one of them already exists.
func copyNew(ctx context.Context, tx pgx.Tx, rows []callRow) (copied bool, err error) {
	if _, err := tx.Exec(ctx, "SAVEPOINT weft_copy_calls"); err != nil {
		return false, err
	}
	values := make([][]any, len(rows))
	for i := range rows {
		r := &rows[i]
		values[i] = []any{r.ProjectID, r.ID, r.TraceID, r.ParentID, r.ThreadID, r.TurnID, r.OpName, r.DisplayName,
			r.StartedAt, r.EndedAt, r.Attributes, r.Inputs, r.OtelDump, r.InputRefs, r.Output, r.OutputRefs, r.Summary,
			r.Exception, r.PfUserID, r.PfRunID, r.PfRunStep, r.PfRunStepEnd, r.Usage, r.InputsText, r.OutputText,
			r.UsageModel, r.PromptTokens, r.CompletionTokens, r.TotalTokens, r.CacheReadTokens, r.CacheCreationTokens, r.LatencyMs, r.Status}
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"calls"}, copyColumns, pgx.CopyFromRows(values))
	if database.UniqueViolation(err) {
		_, err = tx.Exec(ctx, "ROLLBACK TO SAVEPOINT weft_copy_calls")
		return false, err
	}
	if err != nil {
		return false, err
	}
	_, err = tx.Exec(ctx, "RELEASE SAVEPOINT weft_copy_calls")
	return err == nil, err
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CallStart implements [Service].
func (s *Store) CallStart(ctx context.Context, req *CallStartReq) (*CallStartRes, error) {
	f, err := checkStart(ctx, &req.Start)
	if err != nil {
		return nil, err
	}
	var w writeSet
	w.addStart(f)
	if err := s.write(ctx, &w); err != nil {
		return nil, err
	}
	s.published(ctx, writtenCalls(&w))
	return &CallStartRes{ID: f.id, TraceID: f.traceID}, nil
}

// CallEnd implements [Service].
func (s *Store) CallEnd(ctx context.Context, req *CallEndReq) (*CallEndRes, error) {
	f, err := checkEnd(&req.End)
	if err != nil {
		return nil, err
	}
	var w writeSet
	w.addEnd(f)
	if err := s.write(ctx, &w); err != nil {
		return nil, err
	}
	s.published(ctx, writtenCalls(&w))
	return &CallEndRes{}, nil
}

// UpsertBatch implements [Service]. The valid items are merged per call in
// batch order and written in one transaction with one multi-row statement per
// kind of write.
func (s *Store) UpsertBatch(ctx context.Context, req *UpsertBatchReq) (*UpsertBatchRes, error) {
	res := &UpsertBatchRes{Res: make([]BatchResult, len(req.Batch))}
	var w writeSet
	for i, item := range req.Batch {
		r := &res.Res[i]
		switch {
		case item.Err != nil:
			r.Err = item.Err
		case item.Mode == ModeStart && item.Start != nil:
			f, err := checkStart(ctx, item.Start)
			if err != nil {
				r.Err = err
				continue
			}
			w.addStart(f)
			r.ID, r.TraceID = f.id, f.traceID
		case item.Mode == ModeEnd && item.End != nil:
			f, err := checkEnd(item.End)
			if err != nil {
				r.Err = err
				continue
			}
			w.addEnd(f)
		default:
			r.Err = weft.Errorf(ErrInvalidCall, "batch item %d: mode must be %q with req.start or %q with req.end", i, ModeStart, ModeEnd)
		}
	}
	if len(w.order) == 0 {
		return res, nil
	}
	if err := s.write(ctx, &w); err != nil {
		return nil, err
	}
	s.published(ctx, writtenCalls(&w))
	return res, nil
}

// CallsComplete implements [Service]: each record is a start and an end.
func (s *Store) CallsComplete(ctx context.Context, req *CallsCompleteReq) (*UpsertBatchRes, error) {
	batch := make([]BatchItem, 0, 2*len(req.Batch))
	for _, c := range req.Batch {
		projectID := c.ProjectID
		if projectID == "" {
			projectID = req.ProjectID
		}
		var err error
		switch {
		case req.ProjectID != "" && projectID != req.ProjectID:
			err = weft.Errorf(ErrInvalidCall, "project_id %q differs from the project in the path", clip(c.ProjectID))
		case c.ID == "" || c.TraceID == "":
			err = weft.Errorf(ErrInvalidCall, "id and trace_id are required")
		}
		c.ProjectID = projectID
		start, end := c.Parts()
		batch = append(batch, BatchItem{Mode: ModeStart, Start: start, Err: err}, BatchItem{Mode: ModeEnd, End: end, Err: err})
	}
	res, err := s.UpsertBatch(ctx, &UpsertBatchReq{Batch: batch})
	if err != nil {
		return nil, err
	}
	// One result per completed call: the start's ids, or the first failure.
	out := &UpsertBatchRes{Res: make([]BatchResult, len(req.Batch))}
	for i := range req.Batch {
		start, end := res.Res[2*i], res.Res[2*i+1]
		out.Res[i] = start
		if start.Err == nil && end.Err != nil {
			out.Res[i] = BatchResult{Err: end.Err}
		}
	}
	return out, nil
}

// CallUpdate implements [Service].
func (s *Store) CallUpdate(ctx context.Context, req *CallUpdateReq) (*CallUpdateRes, error) {
	if _, _, err := weft.ParseProjectID(req.ProjectID); err != nil {
		return nil, err
	}
	if err := checkCallID("call_id", req.CallID); err != nil {
		return nil, err
	}
	if req.DisplayName == "" {
		return nil, weft.Errorf(ErrInvalidCall, "display_name is required")
	}
	if err := checkText("display_name", &req.DisplayName, maxDisplayNameLength); err != nil {
		return nil, err
	}
	var w writeSet
	w.addName(req.ProjectID, req.CallID, req.DisplayName)
	// A rename changes no status: one statement, no roll-up to keep with it.
	if err := s.flush(ctx, s.db, &w); err != nil {
		return nil, err
	}
	s.published(ctx, writtenCalls(&w))
	return &CallUpdateRes{}, nil
}
