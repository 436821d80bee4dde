package training

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
)

// errLeaseLost ends an attempt whose job is no longer its own: the job ended
// (cancelled by its owner, failed by the watchdog) or its lease expired and
// the job was queued again.
var errLeaseLost = errors.New("training attempt no longer holds its job")

// holdLease returns a context for attempt at job that renews the attempt's
// lease every PollInterval and ends, besides with ctx, as soon as a renewal
// finds the job no longer the attempt's: then the attempt stops downloading,
// planning or training instead of working for a job no one waits for. The
// queue's own cancellation does not reach an attempt in every case (another
// process's cancel on SQLite), so the job's row is what it watches. A renewal
// that fails (the database away) is retried at the next tick: the lease
// covers a few of them.
func (s *Store) holdLease(ctx context.Context, job *jobRow, attempt int) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		ticker := time.NewTicker(s.cfg.PollInterval)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			res, err := s.db.NewUpdate().Model((*jobRow)(nil)).Set("heartbeat_at = ?", s.now()).
				Where("project_id = ? AND id = ? AND status = ? AND attempt = ?", job.ProjectID, job.ID, StatusRunning, attempt).Exec(ctx)
			if err != nil {
				continue
			}
			if n, err := res.RowsAffected(); err == nil && n == 0 {
				cancel(errLeaseLost)
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// leaseHeld reports whether a running attempt holds job: it is running and
// its lease has not expired.
func (s *Store) leaseHeld(job *jobRow) bool {
	last := job.HeartbeatAt
	if last == nil {
		last = job.StartedAt // claimed before leases existed
	}
	return job.Status == StatusRunning && last != nil && s.now().Sub(*last) < s.cfg.Lease
}

// claim makes attempt the holder of job, when the job is queued or its
// running attempt's lease has expired. It reports false, with nil or the
// snooze River retries after, when it may not: the job ended (nothing to
// do) or a live attempt holds it (one River lost track of: this one waits).
func (s *Store) claim(ctx context.Context, job *jobRow, attempt int) (bool, error) {
	now := s.now()
	res, err := s.db.NewUpdate().Model((*jobRow)(nil)).Set("status = ?", StatusRunning).
		Set("started_at = COALESCE(started_at, ?)", now).Set("attempt = ?", attempt).Set("heartbeat_at = ?", now).
		Where("project_id = ? AND id = ?", job.ProjectID, job.ID).
		Where("(status = ? OR status = ? AND (heartbeat_at IS NULL OR heartbeat_at <= ?))", StatusQueued, StatusRunning, now.Add(-s.cfg.Lease)).
		Exec(ctx)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return n == 1, err
	}
	current, err := s.jobRow(ctx, job.ID, false)
	if errors.Is(err, ErrJobNotFound) || err == nil && current.Status.Terminal() {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return false, river.JobSnooze(s.cfg.PollInterval)
}

// release gives job back to the queue after attempt failed and will be
// retried: the job is queued again, and the retry need not wait for the lease
// to expire. A job that ended, or that another attempt holds, is left alone.
func (s *Store) release(ctx context.Context, job *jobRow, attempt int) {
	_, err := s.db.NewUpdate().Model((*jobRow)(nil)).Set("status = ?", StatusQueued).Set("heartbeat_at = NULL").
		Where("project_id = ? AND id = ? AND status = ? AND attempt = ?", job.ProjectID, job.ID, StatusRunning, attempt).Exec(ctx)
	if err != nil {
		// The lease then expires instead.
		s.cfg.Logger.WarnContext(ctx, "release training job", "job_id", job.ID, "error", err)
	}
}

// rescue queues job again when its running attempt's lease has expired (the
// attempt's process was killed or lost the database) while the queue still
// has it running: the attempt counts as failed, and with none left the queue
// discards the job, which the watchdog's next pass fails. The job's row is
// claimed in the same transaction, so of several watchdogs (and a late
// renewal) one wins.
func (s *Store) rescue(ctx context.Context, job *jobRow) error {
	if job.Status != StatusRunning {
		return nil
	}
	horizon := s.now().Add(-s.cfg.Lease)
	claim := s.db.NewUpdate().Model((*jobRow)(nil)).Set("status = ?", StatusQueued).Set("heartbeat_at = NULL").
		Where("project_id = ? AND id = ? AND status = ? AND attempt = ?", job.ProjectID, job.ID, StatusRunning, job.Attempt).
		Where("(heartbeat_at IS NULL OR heartbeat_at <= ?)", horizon)
	rescued, err := s.queue.Rescue(ctx, job.RiverJobID, claim.String(), "training attempt lost its lease: its worker stopped renewing it")
	if err != nil || !rescued {
		return err
	}
	s.cfg.Logger.WarnContext(ctx, "watchdog queued a training job again: its running attempt's lease expired", "job_id", job.ID, "attempt", job.Attempt)
	return nil
}
