package monitor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/trace"
)

// Backfill states.
const (
	// BackfillRunning: calls are still being found or scored.
	BackfillRunning = "running"
	// BackfillDone: every call of the range was dispatched and every
	// verdict it asked for was given (or failed with its reason).
	BackfillDone = "done"
	// BackfillCancelled: the backfill was cancelled; verdicts given before
	// stay, queued work was dropped.
	BackfillCancelled = "cancelled"
	// BackfillFailed: the backfill could not go on (its monitor was
	// deleted); Error says why.
	BackfillFailed = "failed"
)

// BackfillReq starts a backfill: a monitor run over the calls that started
// in [StartedFrom, StartedBefore), however long ago they ended.
type BackfillReq struct {
	ProjectID string `json:"-"`
	// MonitorID is the monitor's object id; its newest version runs,
	// active or not.
	MonitorID string `json:"monitor_id" minLength:"1" maxLength:"128" doc:"object id of the monitor to run"`
	// StartedFrom bounds the range below (inclusive); nil is no bound.
	StartedFrom *time.Time `json:"started_from,omitempty" doc:"calls started at or after this instant (default: no bound)"`
	// StartedBefore bounds the range above (exclusive); nil is the instant
	// the backfill starts.
	StartedBefore *time.Time `json:"started_before,omitempty" doc:"calls started before this instant (default: now)"`
}

// Backfill is a backfill and its progress.
type Backfill struct {
	ID            string     `json:"id"`
	ProjectID     string     `json:"project_id"`
	MonitorID     string     `json:"monitor_id"`
	StartedFrom   *time.Time `json:"started_from,omitempty"`
	StartedBefore time.Time  `json:"started_before"`
	State         string     `json:"state" enum:"running,done,cancelled,failed"`
	Error         string     `json:"error,omitempty"`
	// CallsMatched are the calls of the range the monitor's filter selects
	// (ended or not), found so far; CallsSampled, those its sampling rate
	// takes; CallsDispatched, the sampled calls whose deterministic scorers
	// have run and whose judge requests are queued. Planned says every call
	// of the range has been found.
	CallsMatched    int64 `json:"calls_matched"`
	CallsSampled    int64 `json:"calls_sampled"`
	CallsDispatched int64 `json:"calls_dispatched"`
	Planned         bool  `json:"planned"`
	// Verdicts counts the verdicts this backfill gave, by state. A call
	// already scored by a scorer version (live, or by another backfill)
	// keeps that verdict and is not counted here.
	Verdicts   VerdictCounts `json:"verdicts"`
	CreatedBy  string        `json:"created_by"`
	CreatedAt  time.Time     `json:"created_at"`
	FinishedAt *time.Time    `json:"finished_at,omitempty"`
}

// VerdictCounts counts verdicts by state.
type VerdictCounts struct {
	Pending int64 `json:"pending"`
	Done    int64 `json:"done"`
	Error   int64 `json:"error"`
}

// backfillRow is a row of monitor_backfills.
type backfillRow struct {
	bun.BaseModel `bun:"table:monitor_backfills,alias:b"`

	ProjectID       string     `bun:"project_id,pk"`
	ID              string     `bun:"id,pk"`
	MonitorID       string     `bun:"monitor_id,notnull"`
	StartedFrom     *time.Time `bun:"started_from"`
	StartedBefore   time.Time  `bun:"started_before,notnull"`
	State           string     `bun:"state,notnull"`
	Error           *string    `bun:"error"`
	CallsMatched    int64      `bun:"calls_matched,notnull"`
	CallsSampled    int64      `bun:"calls_sampled,notnull"`
	Chunks          int        `bun:"chunks,notnull"`
	CursorStartedAt *time.Time `bun:"cursor_started_at"`
	CursorID        *string    `bun:"cursor_id"`
	Planned         bool       `bun:"planned,notnull"`
	CreatedBy       string     `bun:"created_by,notnull"`
	CreatedAt       time.Time  `bun:"created_at,notnull"`
	FinishedAt      *time.Time `bun:"finished_at"`
}

// backfillChunk is a row of monitor_backfill_chunks: one dispatch job of a
// backfill.
type backfillChunk struct {
	bun.BaseModel `bun:"table:monitor_backfill_chunks,alias:k"`

	ProjectID  string `bun:"project_id,pk"`
	BackfillID string `bun:"backfill_id,pk"`
	Seq        int    `bun:"seq,pk"`
	JobID      int64  `bun:"job_id,notnull"`
	Calls      int    `bun:"calls,notnull"`
	Done       bool   `bun:"done,notnull"`
}

// backfillArgs is the job that plans a backfill: it walks the range in
// started_at order, a page at a time, and queues one dispatch job per page
// of sampled calls, in the transaction that moves its cursor.
type backfillArgs struct {
	ProjectID  string `json:"project_id"`
	BackfillID string `json:"backfill_id"`
}

func (backfillArgs) Kind() string { return "weft_monitor_backfill" }

type backfillWorker struct {
	river.WorkerDefaults[backfillArgs]
	m *Monitors
}

func (w *backfillWorker) Work(ctx context.Context, job *river.Job[backfillArgs]) error {
	err := w.m.plan(ctx, job.Args)
	if err != nil && job.Attempt >= job.MaxAttempts && !isSnooze(err) {
		w.m.endBackfill(context.WithoutCancel(ctx), job.Args.ProjectID, job.Args.BackfillID, BackfillFailed,
			fmt.Sprintf("finding the calls failed: %v", err))
	}
	return err
}

func (w *backfillWorker) Timeout(*river.Job[backfillArgs]) time.Duration { return w.m.cfg.JobTimeout }

func (w *backfillWorker) NextRetry(job *river.Job[backfillArgs]) time.Time {
	return time.Now().Add(w.m.cfg.RetryDelay * time.Duration(job.Attempt))
}

func isSnooze(err error) bool {
	var snooze *river.JobSnoozeError
	return errors.As(err, &snooze)
}

// StartBackfill starts running a monitor over past calls: the calls of
// req.ProjectID that started in the range and match the monitor's filter
// are sampled at its rate and scored by each of its scorers, once per
// (call, scorer version): a call that already has a verdict of a scorer
// version keeps it. The caller (weft.PrincipalFrom(ctx)) is recorded as
// its creator; judges run with the authority of the monitor's publisher,
// as they do live. An unknown monitor is ErrMonitorNotFound; a range that
// ends before it starts, ErrInvalidBackfill.
func (m *Monitors) StartBackfill(ctx context.Context, req BackfillReq) (*Backfill, error) {
	now := m.now()
	before := now
	if req.StartedBefore != nil {
		before = req.StartedBefore.UTC()
	}
	var from *time.Time
	if req.StartedFrom != nil {
		f := req.StartedFrom.UTC()
		if !f.Before(before) {
			return nil, weft.Errorf(ErrInvalidBackfill, "started_from (%s) must come before started_before (%s)",
				f.Format(time.RFC3339Nano), before.Format(time.RFC3339Nano))
		}
		from = &f
	}
	rows, err := m.activeMonitors(ctx, req.ProjectID, req.MonitorID)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, weft.Errorf(ErrMonitorNotFound, "project %s has no monitor %q", req.ProjectID, req.MonitorID)
	}
	row := &backfillRow{ProjectID: req.ProjectID, ID: uuid.Must(uuid.NewV7()).String(), MonitorID: req.MonitorID,
		StartedFrom: from, StartedBefore: before, State: BackfillRunning, CreatedBy: weft.UserID(ctx), CreatedAt: now}
	job := river.InsertManyParams{Args: backfillArgs{ProjectID: row.ProjectID, BackfillID: row.ID},
		InsertOpts: &river.InsertOpts{Queue: dispatchQueue, MaxAttempts: dispatchMaxAttempts}}
	err = m.cfg.Jobs.Enqueue(ctx, job, func(ctx context.Context, tx jobs.Tx, _ int64) error {
		_, err := tx.Exec(ctx, m.db.NewInsert().Model(row).String())
		return err
	})
	if err != nil {
		return nil, err
	}
	return m.Backfill(ctx, row.ProjectID, row.ID)
}

// Backfill returns a backfill of projectID and its progress; an unknown
// one is ErrBackfillNotFound.
func (m *Monitors) Backfill(ctx context.Context, projectID, id string) (*Backfill, error) {
	var row backfillRow
	err := m.db.NewSelect().Model(&row).Where("project_id = ? AND id = ?", projectID, id).Scan(ctx)
	if isNoRows(err) {
		return nil, weft.Errorf(ErrBackfillNotFound, "project %s has no backfill %q", projectID, id)
	}
	if err != nil {
		return nil, err
	}
	return m.progress(ctx, &row)
}

// maxBackfillsListed bounds a listing of backfills.
const maxBackfillsListed = 100

// Backfills returns the newest backfills of projectID (of one monitor
// when monitorID is set), newest first, with their progress.
func (m *Monitors) Backfills(ctx context.Context, projectID, monitorID string) ([]Backfill, error) {
	var rows []backfillRow
	q := m.db.NewSelect().Model(&rows).Where("project_id = ?", projectID)
	if monitorID != "" {
		q = q.Where("monitor_id = ?", monitorID)
	}
	if err := q.OrderExpr("created_at DESC, id DESC").Limit(maxBackfillsListed).Scan(ctx); err != nil {
		return nil, err
	}
	out := make([]Backfill, 0, len(rows))
	for i := range rows {
		b, err := m.progress(ctx, &rows[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *b)
	}
	return out, nil
}

// CancelBackfill stops a running backfill: its queued dispatch jobs are
// cancelled, the judge requests it queued are dropped (their pending
// verdicts removed, so a later backfill or live scoring may give them), and
// a job of it that is running stops at its next step. Verdicts already
// given stay. A judge whose answer was already in when the cancel
// committed (it checks the backfill again after answering) may still store
// that verdict: it is a whole verdict of a call in the range, already paid
// for, and storing it is what "given" means; a judge still waiting for its
// answer stores nothing. Cancelling a backfill that has ended changes
// nothing.
func (m *Monitors) CancelBackfill(ctx context.Context, projectID, id string) (*Backfill, error) {
	if _, err := m.Backfill(ctx, projectID, id); err != nil {
		return nil, err
	}
	now := m.now()
	_, err := m.db.NewUpdate().Model((*backfillRow)(nil)).Set("state = ?", BackfillCancelled).Set("finished_at = ?", now).
		Where("project_id = ? AND id = ? AND state = ?", projectID, id, BackfillRunning).Exec(ctx)
	if err != nil {
		return nil, err
	}
	var chunks []backfillChunk
	if err := m.db.NewSelect().Model(&chunks).Column("job_id").
		Where("project_id = ? AND backfill_id = ? AND NOT done", projectID, id).Scan(ctx); err != nil {
		return nil, err
	}
	for _, c := range chunks {
		if err := m.cfg.Jobs.Cancel(ctx, c.JobID); err != nil {
			return nil, err
		}
	}
	if err := m.dropPending(ctx, projectID, id); err != nil {
		return nil, err
	}
	return m.Backfill(ctx, projectID, id)
}

// dropPending removes the verdicts a cancelled backfill still waits for.
func (m *Monitors) dropPending(ctx context.Context, projectID, backfillID string) error {
	_, err := m.db.NewDelete().Model((*verdictRow)(nil)).
		Where("project_id = ? AND backfill_id = ? AND state = ?", projectID, backfillID, StatePending).Exec(ctx)
	return err
}

// progress reads a backfill's progress; a running one whose work is all
// done is recorded as done.
func (m *Monitors) progress(ctx context.Context, row *backfillRow) (*Backfill, error) {
	b := &Backfill{ID: row.ID, ProjectID: row.ProjectID, MonitorID: row.MonitorID, StartedFrom: utc(row.StartedFrom),
		StartedBefore: row.StartedBefore.UTC(), State: row.State, CallsMatched: row.CallsMatched, CallsSampled: row.CallsSampled,
		Planned: row.Planned, CreatedBy: row.CreatedBy, CreatedAt: row.CreatedAt.UTC(), FinishedAt: utc(row.FinishedAt)}
	if row.Error != nil {
		b.Error = *row.Error
	}
	var chunks struct {
		Dispatched int64 `bun:"dispatched"`
		Open       int64 `bun:"open"`
	}
	err := m.db.NewSelect().Model((*backfillChunk)(nil)).
		ColumnExpr("COALESCE(SUM(CASE WHEN done THEN calls ELSE 0 END), 0) AS dispatched").
		ColumnExpr("COALESCE(SUM(CASE WHEN done THEN 0 ELSE 1 END), 0) AS open").
		Where("project_id = ? AND backfill_id = ?", row.ProjectID, row.ID).Scan(ctx, &chunks)
	if err != nil {
		return nil, err
	}
	b.CallsDispatched = chunks.Dispatched
	var counts []struct {
		State string `bun:"state"`
		N     int64  `bun:"n"`
	}
	err = m.db.NewSelect().Model((*verdictRow)(nil)).Column("state").ColumnExpr("count(*) AS n").
		Where("project_id = ? AND backfill_id = ?", row.ProjectID, row.ID).Group("state").Scan(ctx, &counts)
	if err != nil {
		return nil, err
	}
	for _, c := range counts {
		switch c.State {
		case StatePending:
			b.Verdicts.Pending = c.N
		case StateDone:
			b.Verdicts.Done = c.N
		case StateError:
			b.Verdicts.Error = c.N
		}
	}
	if b.State == BackfillRunning && b.Planned && chunks.Open == 0 && b.Verdicts.Pending == 0 {
		now := m.now()
		res, err := m.db.NewUpdate().Model((*backfillRow)(nil)).Set("state = ?", BackfillDone).Set("finished_at = ?", now).
			Where("project_id = ? AND id = ? AND state = ?", row.ProjectID, row.ID, BackfillRunning).Exec(ctx)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			b.State, b.FinishedAt = BackfillDone, &now
		}
	}
	return b, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// backfillRunning reports whether backfill id of projectID is still
// running: its jobs do nothing once it is not.
func (m *Monitors) backfillRunning(ctx context.Context, projectID, id string) (bool, error) {
	var state string
	err := m.db.NewSelect().Model((*backfillRow)(nil)).Column("state").
		Where("project_id = ? AND id = ?", projectID, id).Scan(ctx, &state)
	if isNoRows(err) {
		return false, nil
	}
	return state == BackfillRunning, err
}

// endBackfill records that a running backfill ended in state, and why.
func (m *Monitors) endBackfill(ctx context.Context, projectID, id, state, reason string) {
	q := m.db.NewUpdate().Model((*backfillRow)(nil)).Set("state = ?", state).Set("finished_at = ?", m.now()).
		Where("project_id = ? AND id = ? AND state = ?", projectID, id, BackfillRunning)
	if reason != "" {
		q = q.Set("error = ?", clip(reason, 2000))
	}
	if _, err := q.Exec(ctx); err != nil {
		m.cfg.Logger.ErrorContext(ctx, "recording a backfill's end", "project_id", projectID, "backfill_id", id, "error", err)
	}
	if state != BackfillDone {
		if err := m.dropPending(ctx, projectID, id); err != nil {
			m.cfg.Logger.ErrorContext(ctx, "dropping a backfill's pending verdicts", "project_id", projectID, "backfill_id", id, "error", err)
		}
	}
}

// errPlanMoved: another run of the planner moved the cursor first (or the
// backfill was cancelled); this run's page is dropped.
var errPlanMoved = errors.New("monitor: the backfill moved on under this planner")

// plan runs a planner job until the range is walked, the backfill stops
// running, or half the job's time is spent (then it continues as the same
// job, from its cursor).
func (m *Monitors) plan(ctx context.Context, args backfillArgs) error {
	deadline := time.Now().Add(m.cfg.JobTimeout / 2)
	for {
		var row backfillRow
		err := m.db.NewSelect().Model(&row).Where("project_id = ? AND id = ?", args.ProjectID, args.BackfillID).Scan(ctx)
		if isNoRows(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if row.State != BackfillRunning || row.Planned {
			return nil
		}
		if time.Now().After(deadline) {
			return river.JobSnooze(0)
		}
		mons, err := m.activeMonitors(ctx, args.ProjectID, row.MonitorID)
		if err != nil {
			return err
		}
		if len(mons) == 0 {
			m.endBackfill(ctx, args.ProjectID, args.BackfillID, BackfillFailed, "the monitor was deleted")
			return nil
		}
		mon, err := mons[0].monitor()
		if err != nil {
			return err
		}
		if err := m.planPage(ctx, &row, mon); err != nil && !errors.Is(err, errPlanMoved) {
			return err
		}
	}
}

// planPage reads the next page of the backfill's calls after its cursor and
// queues a dispatch job for those the monitor samples, in the transaction
// that moves the cursor; a page shorter than a chunk ends the planning.
func (m *Monitors) planPage(ctx context.Context, row *backfillRow, mon *Monitor) error {
	req := &trace.CallsQueryReq{ProjectID: row.ProjectID, Query: mon.Query, Columns: []string{"id"}, Limit: m.cfg.BackfillChunk,
		SortBy: []trace.SortBy{{Field: "started_at", Direction: "asc"}},
		Filter: trace.CallsFilter{OpNames: mon.OpNames, StartedFrom: row.StartedFrom, StartedBefore: &row.StartedBefore}}
	if row.CursorStartedAt != nil && row.CursorID != nil {
		req.After = &trace.CallsCursor{StartedAt: *row.CursorStartedAt, ID: *row.CursorID}
	}
	var matched int64
	var last trace.CallsCursor
	var sampled []string
	err := m.cfg.Calls.CallsQuery(ctx, req, func(c *trace.Call) error {
		matched++
		last = c.Cursor()
		if Sampled(mon.ObjectID, c.ID, mon.SamplingRate) {
			sampled = append(sampled, c.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	moved := m.db.NewUpdate().Model((*backfillRow)(nil)).
		Set("calls_matched = calls_matched + ?", matched).Set("calls_sampled = calls_sampled + ?", len(sampled)).
		Where("project_id = ? AND id = ? AND state = ? AND calls_matched = ? AND chunks = ?",
			row.ProjectID, row.ID, BackfillRunning, row.CallsMatched, row.Chunks)
	if matched > 0 {
		at := last.StartedAt.UTC()
		moved = moved.Set("cursor_started_at = ?", at).Set("cursor_id = ?", last.ID)
	}
	if matched < int64(m.cfg.BackfillChunk) {
		moved = moved.Set("planned = ?", true)
	}
	if len(sampled) == 0 {
		res, err := moved.Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errPlanMoved
		}
		return nil
	}
	moved = moved.Set("chunks = chunks + 1")
	job := m.dispatchJob(dispatchArgs{ProjectID: row.ProjectID, CallIDs: sampled, At: m.now(), MonitorID: row.MonitorID,
		BackfillID: row.ID, Chunk: row.Chunks})
	return m.cfg.Jobs.Enqueue(ctx, job, func(ctx context.Context, tx jobs.Tx, jobID int64) error {
		n, err := tx.Exec(ctx, moved.String())
		if err != nil {
			return err
		}
		if n != 1 {
			return errPlanMoved
		}
		chunk := &backfillChunk{ProjectID: row.ProjectID, BackfillID: row.ID, Seq: row.Chunks, JobID: jobID, Calls: len(sampled)}
		_, err = tx.Exec(ctx, m.db.NewInsert().Model(chunk).String())
		return err
	})
}

// chunkDone records that a backfill's dispatch job has done its work.
func (m *Monitors) chunkDone(ctx context.Context, args dispatchArgs) error {
	_, err := m.db.NewUpdate().Model((*backfillChunk)(nil)).Set("done = ?", true).
		Where("project_id = ? AND backfill_id = ? AND seq = ?", args.ProjectID, args.BackfillID, args.Chunk).Exec(ctx)
	return err
}
