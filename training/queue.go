package training

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/weftlabs/weft"
)

// queueName is the River queue training jobs run on.
const queueName = "weft_training"

// jobArgs is the River job: it names the training job to run; everything else
// is read from training_jobs when the job runs.
type jobArgs struct {
	TrainingJobID string `json:"training_job_id"`
}

func (jobArgs) Kind() string { return "weft_training_job" }

// MigrateQueue returns the migration step that creates River's tables in db, to
// run under weft's migration lock:
//
//	err := weft.Migrate(ctx, db, training.MigrateQueue(db))
func MigrateQueue(db *weft.DB) func(context.Context) error {
	return func(ctx context.Context) error {
		var err error
		if db.Postgres() {
			err = migrateRiver(ctx, riverpgxv5.New(db.Pool()))
		} else {
			err = migrateRiver(ctx, riversqlite.New(db.DB.DB))
		}
		if err != nil {
			return fmt.Errorf("river: %w", err)
		}
		return nil
	}
}

func migrateRiver[TTx any](ctx context.Context, driver riverdriver.Driver[TTx]) error {
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// queue is what the Store needs from River, independent of the driver's
// transaction type.
type queue interface {
	// enqueue runs statements (SQL built by bun) and inserts the River job for
	// jobID in one transaction; the River job's id is appended by statements'
	// builder, which receives it.
	enqueue(ctx context.Context, jobID string, maxAttempts int, statements func(riverJobID int64) []string) error
	cancel(ctx context.Context, riverJobID int64) error
	// rescue makes the running River job riverJobID available again (or
	// discards it after its last attempt), recording reason as the attempt's
	// error, in one transaction with claim (SQL built by bun), which must
	// change exactly one row; otherwise, or when the River job is not
	// running, it changes nothing and reports false.
	rescue(ctx context.Context, riverJobID int64, claim, reason string) (bool, error)
	// states returns the River state of each job that still exists.
	states(ctx context.Context, riverJobIDs []int64) (map[int64]rivertype.JobState, error)
	start(ctx context.Context) error
	stop(ctx context.Context) error
}

// riverQueue is a queue over a River client whose transactions are TTx.
type riverQueue[TTx any] struct {
	client   *river.Client[TTx]
	begin    func(ctx context.Context) (TTx, error)
	exec     func(ctx context.Context, tx TTx, query string) (rowsAffected int64, err error)
	commit   func(ctx context.Context, tx TTx) error
	rollback func(ctx context.Context, tx TTx) error
	working  bool
}

func (q *riverQueue[TTx]) enqueue(ctx context.Context, jobID string, maxAttempts int, statements func(int64) []string) (err error) {
	tx, err := q.begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = q.rollback(context.WithoutCancel(ctx), tx)
		}
	}()
	res, err := q.client.InsertTx(ctx, tx, jobArgs{TrainingJobID: jobID}, &river.InsertOpts{Queue: queueName, MaxAttempts: maxAttempts})
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	for _, stmt := range statements(res.Job.ID) {
		if _, err := q.exec(ctx, tx, stmt); err != nil {
			return err
		}
	}
	return q.commit(ctx, tx)
}

func (q *riverQueue[TTx]) rescue(ctx context.Context, riverJobID int64, claim, reason string) (rescued bool, err error) {
	tx, err := q.begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() {
		if !rescued {
			_ = q.rollback(context.WithoutCancel(ctx), tx)
		}
	}()
	if n, err := q.exec(ctx, tx, claim); err != nil || n != 1 {
		return false, err
	}
	exec := q.client.Driver().UnwrapExecutor(tx)
	job, err := exec.JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: riverJobID, Schema: q.client.Schema()})
	if errors.Is(err, rivertype.ErrNotFound) {
		return false, nil
	}
	if err != nil || job.State != rivertype.JobStateRunning {
		return false, err
	}
	// What River's own rescuer records for a stuck job, after the lease
	// rather than the job timeout, and available at once: the attempt died,
	// there is nothing to back off from.
	now := time.Now().UTC()
	state, finalized := rivertype.JobStateAvailable, (*time.Time)(nil)
	if job.Attempt >= job.MaxAttempts {
		state, finalized = rivertype.JobStateDiscarded, &now
	}
	attemptErr, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: job.Attempt, Error: reason})
	if err != nil {
		return false, err
	}
	if _, err := exec.JobRescueMany(ctx, &riverdriver.JobRescueManyParams{ID: []int64{riverJobID}, Error: [][]byte{attemptErr},
		FinalizedAt: []*time.Time{finalized}, ScheduledAt: []time.Time{now}, State: []string{string(state)},
		StuckHorizon: now, Schema: q.client.Schema()}); err != nil {
		return false, err
	}
	if err := q.commit(ctx, tx); err != nil {
		return false, err
	}
	return true, nil
}

func (q *riverQueue[TTx]) cancel(ctx context.Context, riverJobID int64) error {
	_, err := q.client.JobCancel(ctx, riverJobID)
	if errors.Is(err, river.ErrNotFound) {
		return nil
	}
	return err
}

func (q *riverQueue[TTx]) states(ctx context.Context, ids []int64) (map[int64]rivertype.JobState, error) {
	out := make(map[int64]rivertype.JobState, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	res, err := q.client.JobList(ctx, river.NewJobListParams().IDs(ids...).First(len(ids)))
	if err != nil {
		return nil, err
	}
	for _, j := range res.Jobs {
		out[j.ID] = j.State
	}
	return out, nil
}

func (q *riverQueue[TTx]) start(ctx context.Context) error {
	if !q.working {
		return nil
	}
	return q.client.Start(ctx)
}

// cancelWait is how long stop waits, after cancelling the running attempts,
// for them to return.
const cancelWait = 10 * time.Second

// stop lets the running attempts finish until ctx ends, then cancels them
// (River retries them) and waits up to cancelWait for them to return.
func (q *riverQueue[TTx]) stop(ctx context.Context) error {
	if !q.working {
		return nil
	}
	err := q.client.Stop(ctx)
	if err == nil || ctx.Err() == nil {
		return err
	}
	cancelCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
	defer cancel()
	return q.client.StopAndCancel(cancelCtx)
}

// newQueue builds the River client for m's database: pgx on PostgreSQL, the
// SQLite driver on SQLite. With cfg.Workers > 0 the client also works jobs.
func newQueue(db *weft.DB, cfg *Config, work func(ctx context.Context, job *river.Job[jobArgs]) error) (queue, error) {
	riverCfg := &river.Config{
		Logger:               cfg.Logger.With("component", "river"),
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		RetryPolicy:          retryPolicy{delay: cfg.RetryDelay},
		FetchPollInterval:    cfg.PollInterval,
		FetchCooldown:        min(cfg.PollInterval, 100*time.Millisecond),
		MaxAttempts:          cfg.MaxAttempts,
	}
	if cfg.Workers > 0 {
		workers := river.NewWorkers()
		if err := river.AddWorkerSafely(workers, &riverWorker{work: work, timeout: cfg.JobTimeout}); err != nil {
			return nil, err
		}
		riverCfg.Workers = workers
		riverCfg.Queues = map[string]river.QueueConfig{queueName: {MaxWorkers: cfg.Workers}}
	}
	if db.Postgres() {
		client, err := river.NewClient(riverpgxv5.New(db.Pool()), riverCfg)
		if err != nil {
			return nil, err
		}
		pool := db.Pool()
		return &riverQueue[pgx.Tx]{
			client: client, working: cfg.Workers > 0,
			begin: func(ctx context.Context) (pgx.Tx, error) { return pool.Begin(ctx) },
			exec: func(ctx context.Context, tx pgx.Tx, query string) (int64, error) {
				tag, err := tx.Exec(ctx, query)
				return tag.RowsAffected(), err
			},
			commit:   func(ctx context.Context, tx pgx.Tx) error { return tx.Commit(ctx) },
			rollback: func(ctx context.Context, tx pgx.Tx) error { return tx.Rollback(ctx) },
		}, nil
	}
	sqldb := db.DB.DB
	riverCfg.PollOnly = true
	client, err := river.NewClient(riversqlite.New(sqldb), riverCfg)
	if err != nil {
		return nil, err
	}
	return &riverQueue[*sql.Tx]{
		client: client, working: cfg.Workers > 0,
		begin: func(ctx context.Context) (*sql.Tx, error) { return sqldb.BeginTx(ctx, nil) },
		exec: func(ctx context.Context, tx *sql.Tx, query string) (int64, error) {
			res, err := tx.ExecContext(ctx, query)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		},
		commit:   func(_ context.Context, tx *sql.Tx) error { return tx.Commit() },
		rollback: func(_ context.Context, tx *sql.Tx) error { return tx.Rollback() },
	}, nil
}

// riverWorker runs training jobs for River.
type riverWorker struct {
	river.WorkerDefaults[jobArgs]
	work    func(ctx context.Context, job *river.Job[jobArgs]) error
	timeout time.Duration
}

func (w *riverWorker) Work(ctx context.Context, job *river.Job[jobArgs]) error {
	return w.work(ctx, job)
}

func (w *riverWorker) Timeout(*river.Job[jobArgs]) time.Duration { return w.timeout }

// retryPolicy retries a failed attempt after delay × attempt: a crashed trainer
// is retried soon, not after River's default minutes-long backoff.
type retryPolicy struct{ delay time.Duration }

func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(p.delay * time.Duration(max(job.Attempt, 1)))
}
