package training

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"

	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/training/blob"
)

// work runs one attempt of a training job for River. It returns nil when the
// job reached its terminal event (or already had one), an error to have River
// retry the attempt.
func (s *Store) work(ctx context.Context, rj *river.Job[jobArgs]) (err error) {
	job, err := s.jobRow(ctx, rj.Args.TrainingJobID, true)
	if errors.Is(err, ErrJobNotFound) {
		return nil // the model was deleted
	}
	if err != nil {
		return err
	}
	if job.Status.Terminal() {
		return nil
	}
	// Jobs of one model run one at a time, oldest first: each starts from the
	// checkpoint the previous one made.
	busy, err := s.db.NewSelect().Model((*jobRow)(nil)).
		Where("project_id = ? AND model_id = ? AND status IN (?) AND id <> ?", job.ProjectID, job.ModelID,
			bun.In([]JobStatus{StatusQueued, StatusRunning}), job.ID).
		Where("(created_at < ? OR (created_at = ? AND id < ?))", job.CreatedAt, job.CreatedAt, job.ID).Exists(ctx)
	if err != nil {
		return err
	}
	if busy {
		return river.JobSnooze(s.cfg.PollInterval)
	}
	if set, ok := s.cfg.Trainer.(baseModelRunner); ok && s.cfg.OtherWorkers {
		if model, err := s.modelRow(ctx, s.db, job.ModelID); err == nil && !set.Runs(model.Base) {
			return river.JobSnooze(s.cfg.PollInterval) // another process's trainer runs it
		}
	}
	if claimed, err := s.claim(ctx, job, rj.Attempt); err != nil || !claimed {
		return err
	}

	ctx, stop := s.holdLease(ctx, job, rj.Attempt)
	defer stop()
	defer func() {
		if err != nil { // River retries it: queued until then
			s.release(context.WithoutCancel(ctx), job, rj.Attempt)
		}
	}()
	res, rows, err := s.train(ctx, job, rj.Attempt)
	if err != nil && (errors.Is(err, errJobEnded) || errors.Is(context.Cause(ctx), errLeaseLost)) {
		// The job ended meanwhile (cancelled) or another attempt holds it:
		// this attempt has nothing to report and nothing to retry.
		return nil
	}
	if err != nil {
		var dataErr *dataError
		permanent := errors.As(err, &dataErr) || errors.Is(err, ErrUntrainable)
		if permanent || rj.Attempt >= rj.MaxAttempts {
			msg := err.Error()
			if rj.MaxAttempts > 1 && !permanent {
				msg = fmt.Sprintf("%s (after %d attempts)", msg, rj.Attempt)
			}
			if _, ferr := s.finish(context.WithoutCancel(ctx), job, StatusFailed, msg); ferr != nil {
				return ferr
			}
			s.cfg.Logger.WarnContext(ctx, "training job failed", "job_id", job.ID, "error", msg)
			return nil
		}
		s.cfg.Logger.WarnContext(ctx, "training attempt failed; retrying", "job_id", job.ID, "attempt", rj.Attempt, "error", err)
		return err
	}
	return s.complete(ctx, job, res, rows)
}

// train prepares the job's files, runs the trainer and stores the new
// checkpoint's files. It returns the trainer's result with the blob prefix of
// the files in CheckpointDir, and the gradient-step rows.
func (s *Store) train(ctx context.Context, job *jobRow, attempt int) (*TrainResult, []map[string]float64, error) {
	model, err := s.modelRow(ctx, s.db, job.ModelID)
	if err != nil {
		return nil, nil, err
	}
	latest, err := latestCheckpoint(ctx, s.db, job.ProjectID, job.ModelID)
	if err != nil {
		return nil, nil, err
	}
	work, err := os.MkdirTemp("", "weft-training-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(work) //nolint:errcheck // scratch
	tj := &TrainJob{ID: job.ID, Kind: job.Kind, Attempt: attempt, ProjectID: job.ProjectID, ModelID: model.ID,
		ModelName: model.Name, BaseModel: model.Base, WorkDir: filepath.Join(work, "work")}
	if err := os.Mkdir(tj.WorkDir, 0o700); err != nil {
		return nil, nil, err
	}
	var batch map[string]float64 // RL: the submitted groups' metrics
	if latest != nil {
		tj.Step = latest.Step
		if latest.BlobPrefix != "" {
			dir := filepath.Join(work, "previous_checkpoint")
			if _, err := blob.GetDir(ctx, s.cfg.Blobs, latest.BlobPrefix, dir); err != nil {
				return nil, nil, fmt.Errorf("read checkpoint %d: %w", latest.Step, err)
			}
			tj.PreviousCheckpointDir = dir
		}
	}
	switch job.Kind {
	case KindRL:
		tj.TrajectoryGroups = json.RawMessage(job.Input)
		tj.ExperimentalConfig = json.RawMessage(job.ExperimentalConfig)
		var groups []TrajectoryGroup
		if json.Unmarshal([]byte(job.Input), &groups) == nil {
			batch = groupMetrics(groups)
		}
	case KindSFT:
		var in sftInput
		if err := json.Unmarshal([]byte(job.Input), &in); err != nil {
			return nil, nil, &dataError{msg: "stored job input is unreadable: " + err.Error()}
		}
		ref, err := parseDataURL(in.TrainingDataURL)
		if err != nil {
			return nil, nil, &dataError{msg: err.Error()}
		}
		tj.SFTConfig = in.Config
		tj.SFTDataFile = filepath.Join(work, "train.jsonl")
		if _, err := s.fetchSFTData(ctx, ref, tj.SFTDataFile); err != nil {
			return nil, nil, err
		}
	}
	rep := &reporter{m: s, job: job, batch: batch}
	res, err := s.cfg.Trainer.Train(ctx, tj, rep)
	if err != nil {
		return nil, nil, err
	}
	if res == nil {
		res = &TrainResult{}
	}
	if !rep.hasStarted() {
		// A trainer that found nothing to train may say nothing; the client
		// still needs training_started before the end.
		if err := rep.Started(ctx, 0); err != nil {
			return nil, nil, err
		}
	}
	out := &TrainResult{Metrics: res.Metrics}
	switch {
	case res.CheckpointDir != "":
		prefix := modelPrefix(model.ID) + "jobs/" + job.ID + "/"
		if err := blob.PutDir(ctx, s.cfg.Blobs, prefix, res.CheckpointDir); err != nil {
			return nil, nil, fmt.Errorf("store checkpoint files: %w", err)
		}
		out.CheckpointDir = prefix
	case latest != nil:
		out.CheckpointDir = latest.BlobPrefix // nothing trained: same adapter, next step
	}
	if batch != nil {
		if out.Metrics == nil {
			out.Metrics = map[string]float64{}
		}
		for k, v := range prefixed("train", batch) {
			if _, ok := out.Metrics[k]; !ok {
				out.Metrics[k] = v
			}
		}
	}
	return out, rep.rowsCopy(), nil
}

// complete commits the next checkpoint and training_ended in one transaction,
// so the checkpoint is listed before the end is visible.
func (s *Store) complete(ctx context.Context, job *jobRow, res *TrainResult, rows []map[string]float64) error {
	metrics := stepAverages(rows)
	maps.Copy(metrics, res.Metrics)
	metricsJSON, _ := json.Marshal(finiteMetrics(metrics))
	_, err := s.appendEvent(ctx, job, EventTrainingEnded, struct{}{}, StatusCompleted, "", func(ctx context.Context, tx bun.Tx) error {
		latest, err := latestCheckpoint(ctx, tx, job.ProjectID, job.ModelID)
		if err != nil {
			return err
		}
		step := int64(1)
		if latest != nil {
			step = latest.Step + 1
		}
		_, err = tx.NewInsert().Model(&checkpointRow{ProjectID: job.ProjectID, ModelID: job.ModelID, Step: step, ID: newID(),
			Metrics: string(metricsJSON), BlobPrefix: res.CheckpointDir, JobID: job.ID, CreatedAt: s.now()}).Exec(ctx)
		return err
	})
	return err
}

// reporter turns a trainer's reports into events. An RL job's gradient
// steps also carry the metrics of the submitted groups (reward,
// reward_std_dev, exception_rate, num_groups_*, ...), as the reference
// trainer's rows do, where the trainer reported no value of the same name.
type reporter struct {
	m     *Store
	job   *jobRow
	batch map[string]float64

	mu      sync.Mutex
	started bool
	rows    []map[string]float64
}

var errJobEnded = errors.New("training job already ended (cancelled)")

func (r *reporter) Started(ctx context.Context, numSequences int) error {
	ok, err := r.m.appendEvent(ctx, r.job, EventTrainingStarted, map[string]any{"num_sequences": numSequences}, "", "", nil)
	if err != nil {
		return err
	}
	if !ok {
		return errJobEnded
	}
	r.mu.Lock()
	r.started = true
	r.mu.Unlock()
	return nil
}

func (r *reporter) Step(ctx context.Context, metrics map[string]any) error {
	if !r.hasStarted() {
		return errors.New("trainer reported a gradient_step before training_started")
	}
	row := numericData(metrics)
	for k, v := range r.batch {
		if _, ok := row[k]; !ok {
			row[k] = v
		}
	}
	ok, err := r.m.appendEvent(ctx, r.job, EventGradientStep, row, "", "", nil)
	if err != nil {
		return err
	}
	if !ok {
		return errJobEnded
	}
	r.mu.Lock()
	r.rows = append(r.rows, row)
	r.mu.Unlock()
	return nil
}

func (r *reporter) hasStarted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

func (r *reporter) rowsCopy() []map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]float64(nil), r.rows...)
}

// watch is the watchdog: every WatchdogInterval (and at once on start) it
// queues again the jobs whose running attempt's lease expired, and ends, with
// training_failed, the jobs that have not finished but that the queue no longer
// runs (River discarded them after their last attempt's worker died, they were
// cancelled in the queue, or their queue row is gone).
func (s *Store) watch(ctx context.Context) {
	ticker := time.NewTicker(s.cfg.WatchdogInterval)
	defer ticker.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.WarnContext(ctx, "training watchdog", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Sweep runs one watchdog pass (Start runs it periodically) and returns how
// many jobs it ended.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	jobs, err := s.activeJobs(ctx)
	if err != nil {
		return 0, err
	}
	ids := make([]int64, 0, len(jobs))
	for _, j := range jobs {
		ids = append(ids, j.RiverJobID)
	}
	states, err := s.queue.States(ctx, ids)
	if err != nil {
		return 0, err
	}
	ended := 0
	for i := range jobs {
		job := &jobs[i]
		if s.leaseHeld(job) {
			continue // an attempt is working on it, whatever the queue says
		}
		state, found := states[job.RiverJobID]
		if found && state == rivertype.JobStateRunning {
			if err := s.rescue(ctx, job); err != nil {
				return ended, err
			}
			continue
		}
		var msg string
		switch {
		case !found:
			msg = "training job was lost from the queue"
		case state == rivertype.JobStateDiscarded:
			msg = "training job stopped: its worker died or failed on every attempt"
		case state == rivertype.JobStateCancelled:
			msg = "training job cancelled"
		case state == rivertype.JobStateCompleted:
			msg = "training job ended without a result"
		default:
			continue
		}
		// Re-read: the job may have ended between the two queries.
		if ok, err := s.finish(ctx, job, StatusFailed, msg); err != nil {
			return ended, err
		} else if ok {
			ended++
			s.cfg.Logger.WarnContext(ctx, "watchdog ended training job", "job_id", job.ID, "reason", msg)
		}
	}
	return ended, nil
}

// maxActiveJobs bounds the jobs one watchdog scan reads across projects.
const maxActiveJobs = 500

// activeJobs returns up to maxActiveJobs queued or running jobs of every
// project, oldest first, across projects (acrossProjects).
func (s *Store) activeJobs(ctx context.Context) ([]jobRow, error) {
	var jobs []jobRow
	err := s.acrossProjects(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&jobs).Column(jobColumns...).
			Where("status IN (?)", bun.In([]JobStatus{StatusQueued, StatusRunning})).
			Order("created_at ASC").Limit(maxActiveJobs).Scan(ctx)
	})
	return jobs, err
}

// acrossProjects runs read, one of weft's two deliberate cross-project
// queries (the worker's active jobs, at most maxActiveJobs; the models of a
// caller's entities, at most MaxModelsOf), each bounded by a LIMIT, in a
// read-only transaction: on a distributed database it reads every shard, so
// it allows that for its own transaction (citus.multi_task_query_log_level,
// which a deployment may set to make any other multi-shard query an error;
// on plain PostgreSQL the setting is an inert placeholder).
func (s *Store) acrossProjects(ctx context.Context, read func(context.Context, bun.Tx) error) error {
	return s.db.RunInTx(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, tx bun.Tx) error {
		if database.DialectOf(s.db).Has(database.ExtensionSettings) {
			if _, err := tx.ExecContext(ctx, "SET LOCAL citus.multi_task_query_log_level = 'off'"); err != nil {
				return err
			}
		}
		return read(ctx, tx)
	})
}
