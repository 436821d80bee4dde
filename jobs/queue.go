package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
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

// Defaults of [Config].
const (
	// DefaultPollInterval is how often idle workers look for jobs.
	DefaultPollInterval = time.Second
	// DefaultRescueAfter is how long a job may look running before its
	// worker is taken to have died, unless its kind's own timeout is longer.
	DefaultRescueAfter = time.Minute
)

// Config configures [New].
type Config struct {
	// Logger receives River's logs. Defaults to slog.Default().
	Logger *slog.Logger
	// PollInterval is how often idle workers look for jobs (PostgreSQL also
	// wakes them when a job is inserted). Defaults to [DefaultPollInterval].
	PollInterval time.Duration
	// RescueAfter is how long a job may look running before it is taken to
	// have lost its worker and is retried; a kind whose worker declares a
	// longer Timeout waits that long instead. Defaults to
	// [DefaultRescueAfter].
	RescueAfter time.Duration
}

func (cfg *Config) setDefaults() error {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PollInterval < 0 || cfg.RescueAfter < 0 {
		return errors.New("jobs: Config durations must not be negative")
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.RescueAfter == 0 {
		cfg.RescueAfter = DefaultRescueAfter
	}
	return nil
}

// Queue is a process's River client over a weft database. Register workers
// with [Register], then insert jobs and [Queue.Start] working them; the
// client is built when the queue is first used, so registrations come
// first. A Queue is safe for concurrent use.
type Queue struct {
	db  *weft.DB
	cfg Config

	mu      sync.Mutex
	workers *river.Workers
	kinds   int
	queues  map[string]river.QueueConfig
	client  client
	err     error
}

// New returns a queue over db, whose River tables [Migrate] created.
func New(db *weft.DB, cfg Config) (*Queue, error) {
	if db == nil {
		return nil, errors.New("jobs: a database is required")
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	return &Queue{db: db, cfg: cfg, workers: river.NewWorkers(), queues: map[string]river.QueueConfig{}}, nil
}

// Register adds w, the worker of the jobs of kind T, and has the queue work
// River queue name with up to workers jobs at once (0: the kind is known,
// for inserts and rescues, but this process works none of it). Workers of
// one queue name add up. It fails once the queue has been used.
func Register[T river.JobArgs](q *Queue, name string, workers int, w river.Worker[T]) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.client != nil || q.err != nil {
		return errors.New("jobs: workers must be registered before the queue is first used")
	}
	if workers < 0 {
		return fmt.Errorf("jobs: queue %s: workers must not be negative", name)
	}
	if err := river.AddWorkerSafely(q.workers, w); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	q.kinds++
	if workers > 0 {
		c := q.queues[name]
		c.MaxWorkers += workers
		q.queues[name] = c
	}
	return nil
}

// client is what the Queue needs from a River client, whatever its driver's
// transaction type.
type client interface {
	insert(ctx context.Context, params []river.InsertManyParams) error
	insertTx(ctx context.Context, tx Tx, params []river.InsertManyParams) error
	enqueue(ctx context.Context, params river.InsertManyParams, then func(ctx context.Context, tx Tx, jobID int64) error) error
	cancel(ctx context.Context, jobID int64) error
	rescue(ctx context.Context, jobID int64, claim, reason string) (bool, error)
	states(ctx context.Context, jobIDs []int64) (map[int64]rivertype.JobState, error)
	start(ctx context.Context) error
	stop(ctx context.Context) error
}

// use returns the River client, building it on first use.
func (q *Queue) use() (client, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.client == nil && q.err == nil {
		q.client, q.err = q.build()
	}
	return q.client, q.err
}

func (q *Queue) build() (client, error) {
	cfg := &river.Config{
		Logger:               q.cfg.Logger.With("component", "river"),
		FetchPollInterval:    q.cfg.PollInterval,
		FetchCooldown:        min(q.cfg.PollInterval, 100*time.Millisecond),
		RescueStuckJobsAfter: q.cfg.RescueAfter,
		// Each kind's worker declares its own timeout; River's default
		// (one minute) would cut the long ones short.
		JobTimeout: -1,
	}
	if q.kinds > 0 {
		cfg.Workers = q.workers
	}
	if len(q.queues) > 0 {
		cfg.Queues = maps.Clone(q.queues)
	}
	working := len(q.queues) > 0
	if q.db.Postgres() {
		c, err := river.NewClient(riverpgxv5.New(q.db.Pool()), cfg)
		if err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		pool := q.db.Pool()
		return &riverClient[pgx.Tx]{client: c, working: working, tx: func(tx Tx) (pgx.Tx, error) {
			if tx.Pgx == nil {
				return nil, errors.New("jobs: a PostgreSQL insert needs a pgx transaction")
			}
			return tx.Pgx, nil
		}, begin: func(ctx context.Context) (Tx, error) {
			tx, err := pool.Begin(ctx)
			return Tx{Pgx: tx}, err
		}}, nil
	}
	cfg.PollOnly = true
	c, err := river.NewClient(riversqlite.New(q.db.DB.DB), cfg)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	sqldb := q.db.DB.DB
	return &riverClient[*sql.Tx]{client: c, working: working, tx: func(tx Tx) (*sql.Tx, error) {
		if tx.SQL == nil {
			return nil, errors.New("jobs: a SQLite insert needs a database/sql transaction")
		}
		return tx.SQL, nil
	}, begin: func(ctx context.Context) (Tx, error) {
		tx, err := sqldb.BeginTx(ctx, nil)
		return Tx{SQL: tx}, err
	}}, nil
}

// Insert inserts jobs in a transaction of its own.
func (q *Queue) Insert(ctx context.Context, params ...river.InsertManyParams) error {
	c, err := q.use()
	if err != nil {
		return err
	}
	return c.insert(ctx, params)
}

// InsertTx inserts jobs inside tx: they exist when tx commits and never if
// it rolls back.
func (q *Queue) InsertTx(ctx context.Context, tx Tx, params ...river.InsertManyParams) error {
	c, err := q.use()
	if err != nil {
		return err
	}
	return c.insertTx(ctx, tx, params)
}

// Enqueue inserts the job of params and runs then with its id, in one
// transaction: the caller's rows that name the job (written through tx)
// exist exactly when the job does.
func (q *Queue) Enqueue(ctx context.Context, params river.InsertManyParams, then func(ctx context.Context, tx Tx, jobID int64) error) error {
	c, err := q.use()
	if err != nil {
		return err
	}
	return c.enqueue(ctx, params, then)
}

// Cancel cancels job jobID: a queued job never runs, a running one's
// context is cancelled. A job that no longer exists is no error.
func (q *Queue) Cancel(ctx context.Context, jobID int64) error {
	c, err := q.use()
	if err != nil {
		return err
	}
	return c.cancel(ctx, jobID)
}

// Rescue makes the running job jobID available again at once (or discards
// it after its last attempt), recording reason as the attempt's error, as
// River's rescuer does for a stuck job, but when the caller knows the
// attempt died (its lease expired) rather than after RescueAfter. It runs in
// one transaction with claim (SQL with its values), which must change
// exactly one row; otherwise, or when the job is not running, it changes
// nothing and reports false.
func (q *Queue) Rescue(ctx context.Context, jobID int64, claim, reason string) (bool, error) {
	c, err := q.use()
	if err != nil {
		return false, err
	}
	return c.rescue(ctx, jobID, claim, reason)
}

// States returns the state of each of jobIDs that still exists.
func (q *Queue) States(ctx context.Context, jobIDs []int64) (map[int64]rivertype.JobState, error) {
	c, err := q.use()
	if err != nil {
		return nil, err
	}
	return c.states(ctx, jobIDs)
}

// Start starts working the registered queues; a process that works none
// does nothing.
func (q *Queue) Start(ctx context.Context) error {
	c, err := q.use()
	if err != nil {
		return err
	}
	return c.start(ctx)
}

// Stop lets running jobs finish until ctx ends, then cancels them (River
// retries them later) and waits a little for them to return.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	c := q.client
	q.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.stop(ctx)
}

// riverClient is a client over a River driver whose transactions are TTx.
type riverClient[TTx any] struct {
	client  *river.Client[TTx]
	working bool
	tx      func(Tx) (TTx, error)
	begin   func(ctx context.Context) (Tx, error)
}

func (c *riverClient[TTx]) insert(ctx context.Context, params []river.InsertManyParams) error {
	_, err := c.client.InsertMany(ctx, params)
	return err
}

func (c *riverClient[TTx]) insertTx(ctx context.Context, tx Tx, params []river.InsertManyParams) error {
	t, err := c.tx(tx)
	if err != nil {
		return err
	}
	_, err = c.client.InsertManyTx(ctx, t, params)
	return err
}

func (c *riverClient[TTx]) enqueue(ctx context.Context, params river.InsertManyParams,
	then func(ctx context.Context, tx Tx, jobID int64) error) (err error) {
	tx, err := c.begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.rollback(context.WithoutCancel(ctx))
		}
	}()
	t, err := c.tx(tx)
	if err != nil {
		return err
	}
	res, err := c.client.InsertTx(ctx, t, params.Args, params.InsertOpts)
	if err != nil {
		return fmt.Errorf("jobs: enqueue: %w", err)
	}
	if err := then(ctx, tx, res.Job.ID); err != nil {
		return err
	}
	return tx.commit(ctx)
}

func (c *riverClient[TTx]) cancel(ctx context.Context, jobID int64) error {
	_, err := c.client.JobCancel(ctx, jobID)
	if errors.Is(err, river.ErrNotFound) {
		return nil
	}
	return err
}

func (c *riverClient[TTx]) rescue(ctx context.Context, jobID int64, claim, reason string) (rescued bool, err error) {
	tx, err := c.begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() {
		if !rescued {
			_ = tx.rollback(context.WithoutCancel(ctx))
		}
	}()
	if n, err := tx.Exec(ctx, claim); err != nil || n != 1 {
		return false, err
	}
	t, err := c.tx(tx)
	if err != nil {
		return false, err
	}
	exec := c.client.Driver().UnwrapExecutor(t)
	job, err := exec.JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: jobID, Schema: c.client.Schema()})
	if errors.Is(err, rivertype.ErrNotFound) {
		return false, nil
	}
	if err != nil || job.State != rivertype.JobStateRunning {
		return false, err
	}
	// Available at once: the attempt died, there is nothing to back off
	// from.
	now := time.Now().UTC()
	state, finalized := rivertype.JobStateAvailable, (*time.Time)(nil)
	if job.Attempt >= job.MaxAttempts {
		state, finalized = rivertype.JobStateDiscarded, &now
	}
	attemptErr, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: job.Attempt, Error: reason})
	if err != nil {
		return false, err
	}
	if _, err := exec.JobRescueMany(ctx, &riverdriver.JobRescueManyParams{ID: []int64{jobID}, Error: [][]byte{attemptErr},
		FinalizedAt: []*time.Time{finalized}, ScheduledAt: []time.Time{now}, State: []string{string(state)},
		StuckHorizon: now, Schema: c.client.Schema()}); err != nil {
		return false, err
	}
	if err := tx.commit(ctx); err != nil {
		return false, err
	}
	return true, nil
}

func (c *riverClient[TTx]) states(ctx context.Context, ids []int64) (map[int64]rivertype.JobState, error) {
	out := make(map[int64]rivertype.JobState, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	res, err := c.client.JobList(ctx, river.NewJobListParams().IDs(ids...).First(len(ids)))
	if err != nil {
		return nil, err
	}
	for _, j := range res.Jobs {
		out[j.ID] = j.State
	}
	return out, nil
}

func (c *riverClient[TTx]) start(ctx context.Context) error {
	if !c.working {
		return nil
	}
	return c.client.Start(ctx)
}

// cancelWait is how long stop waits, after cancelling the running jobs, for
// them to return.
const cancelWait = 10 * time.Second

func (c *riverClient[TTx]) stop(ctx context.Context) error {
	if !c.working {
		return nil
	}
	err := c.client.Stop(ctx)
	if err == nil || ctx.Err() == nil {
		return err
	}
	cancelCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
	defer cancel()
	return c.client.StopAndCancel(cancelCtx)
}

// Migrate returns the migration step that creates River's tables in db, to
// run under weft's migration lock:
//
//	err := weft.Migrate(ctx, db, jobs.Migrate(db))
func Migrate(db *weft.DB) func(context.Context) error {
	return func(ctx context.Context) error {
		var err error
		if db.Postgres() {
			err = migrate(ctx, riverpgxv5.New(db.Pool()))
		} else {
			err = migrate(ctx, riversqlite.New(db.DB.DB))
		}
		if err != nil {
			return fmt.Errorf("river: %w", err)
		}
		return nil
	}
}

func migrate[TTx any](ctx context.Context, driver riverdriver.Driver[TTx]) error {
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}
