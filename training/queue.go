package training

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/jobs"
)

// queueName is the River queue training jobs run on.
const queueName = "weft_training"

// jobArgs is the River job: it names the training job to run; everything else
// is read from training_jobs when the job runs.
type jobArgs struct {
	TrainingJobID string `json:"training_job_id"`
}

func (jobArgs) Kind() string { return "weft_training_job" }

// MigrateQueue returns the migration step that creates the job queue's
// tables in db, to run under weft's migration lock (it is [jobs.Migrate]):
//
//	err := weft.Migrate(ctx, db, training.MigrateQueue(db))
func MigrateQueue(db *weft.DB) func(context.Context) error { return jobs.Migrate(db) }

// useQueue registers the training worker on cfg.Jobs, or on a queue of the
// Store's own when there is none (which Start and Stop then run).
func (s *Store) useQueue() error {
	q := s.cfg.Jobs
	if q == nil {
		var err error
		q, err = jobs.New(s.db, jobs.Config{Logger: s.cfg.Logger, PollInterval: s.cfg.PollInterval, RescueAfter: s.cfg.RescueAfter})
		if err != nil {
			return err
		}
		s.ownsQueue = true
	}
	s.queue = q
	return jobs.Register(q, queueName, s.cfg.Workers, &riverWorker{m: s})
}

// insertParams is the River job of training job jobID.
func (s *Store) insertParams(jobID string) river.InsertManyParams {
	return river.InsertManyParams{Args: jobArgs{TrainingJobID: jobID},
		InsertOpts: &river.InsertOpts{Queue: queueName, MaxAttempts: s.cfg.MaxAttempts}}
}

// riverWorker runs training jobs for River.
type riverWorker struct {
	river.WorkerDefaults[jobArgs]
	m *Store
}

func (w *riverWorker) Work(ctx context.Context, job *river.Job[jobArgs]) error {
	return w.m.work(ctx, job)
}

func (w *riverWorker) Timeout(*river.Job[jobArgs]) time.Duration { return w.m.cfg.JobTimeout }

// NextRetry retries a failed attempt after RetryDelay × attempt: a crashed
// trainer is retried soon, not after River's default minutes-long backoff.
func (w *riverWorker) NextRetry(job *river.Job[jobArgs]) time.Time {
	return time.Now().Add(w.m.cfg.RetryDelay * time.Duration(max(job.Attempt, 1)))
}
