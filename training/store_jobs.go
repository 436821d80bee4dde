package training

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/jobs"
)

// CreateJob implements Service.
func (s *Store) CreateJob(ctx context.Context, req *CreateJobReq) (*Job, error) {
	if req.TrajectoryGroups == nil {
		return nil, fieldErrorf("trajectory_groups", "Field required")
	}
	if err := validateGroups("trajectory_groups", req.TrajectoryGroups); err != nil {
		return nil, err
	}
	if err := validateExperimental(req.ExperimentalConfig); err != nil {
		return nil, err
	}
	groups, err := rawGroups(req.RawGroups, req.TrajectoryGroups)
	if err != nil {
		return nil, err
	}
	config := []byte("{}")
	if req.ExperimentalConfig != nil {
		config, _ = json.Marshal(req.ExperimentalConfig)
	}
	return s.enqueueJob(ctx, req.ModelID, KindRL, string(groups), string(config))
}

// CreateSFTJob implements Service.
func (s *Store) CreateSFTJob(ctx context.Context, req *CreateSFTJobReq) (*Job, error) {
	dataURL := ""
	for _, u := range []*string{req.TrainingDataURL, req.TrainingFolderURL} {
		if u != nil && *u != "" {
			dataURL = *u
			break
		}
	}
	if dataURL == "" {
		return nil, fieldErrorf("training_data_url", "Field required")
	}
	ref, err := parseDataURL(dataURL)
	if err != nil {
		return nil, err
	}
	if err := s.checkDataHost(ref); err != nil {
		return nil, err
	}
	config := json.RawMessage("{}")
	if len(req.Config) > 0 && string(req.Config) != "null" {
		if !isObject(req.Config) {
			return nil, fieldErrorf("config", "must be an object")
		}
		config = req.Config
	}
	model, err := s.modelRow(ctx, s.db, req.ModelID)
	if err != nil {
		return nil, err
	}
	if ref.projectID != "" && ref.projectID != model.ProjectID {
		return nil, fieldErrorf("training_data_url", "the training data must be in the model's project %s", model.ProjectID)
	}
	input, _ := json.Marshal(sftInput{TrainingDataURL: dataURL, Config: config})
	var existing jobRow
	err = s.db.NewSelect().Model(&existing).Column(jobColumns...).
		Where("project_id = ? AND model_id = ? AND kind = ? AND input = ? AND status NOT IN (?)",
			model.ProjectID, model.ID, KindSFT, string(input), bun.In([]JobStatus{StatusFailed, StatusCancelled})).
		Order("created_at DESC").Limit(1).Scan(ctx)
	if err == nil {
		return existing.job(), nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	return s.enqueueJob(ctx, req.ModelID, KindSFT, string(input), "{}")
}

func (s *Store) enqueueJob(ctx context.Context, modelID, kind, input, config string) (*Job, error) {
	model, err := s.modelRow(ctx, s.db, modelID)
	if err != nil {
		return nil, err
	}
	row := &jobRow{ProjectID: model.ProjectID, ID: newID(), ModelID: modelID, Kind: kind, Status: StatusQueued,
		Input: input, ExperimentalConfig: config, CreatedBy: weft.UserID(ctx), CreatedAt: s.now()}
	err = s.queue.Enqueue(ctx, s.insertParams(row.ID), func(ctx context.Context, tx jobs.Tx, riverJobID int64) error {
		row.RiverJobID = riverJobID
		if _, err := tx.Exec(ctx, s.db.NewInsert().Model(row).String()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, s.db.NewInsert().Model(&idRow{ID: row.ID, ProjectID: row.ProjectID, Kind: idKindJob}).String())
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := s.unrunnable(model.Base); err != nil {
		// The client learns it from the events at once instead of polling a job
		// that nothing will ever run.
		if _, ferr := s.finish(ctx, row, StatusFailed, err.Error()); ferr != nil {
			return nil, ferr
		}
		s.cfg.Logger.WarnContext(ctx, "training job failed", "job_id", row.ID, "error", err)
		return s.GetJob(ctx, row.ID)
	}
	return row.job(), nil
}

// GetJob implements Service.
func (s *Store) GetJob(ctx context.Context, jobID string) (*Job, error) {
	row, err := s.jobRow(ctx, jobID, false)
	if err != nil {
		return nil, err
	}
	return row.job(), nil
}

func (s *Store) jobRow(ctx context.Context, jobID string, withInput bool) (*jobRow, error) {
	projectID, err := projectOf(ctx, s.db, idKindJob, jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.Errorf(ErrJobNotFound, "training job %s not found", jobID)
	}
	if err != nil {
		return nil, err
	}
	var row jobRow
	q := s.db.NewSelect().Model(&row).Where("project_id = ? AND id = ?", projectID, jobID)
	if withInput {
		q = q.Column(append([]string{"input", "experimental_config"}, jobColumns...)...)
	} else {
		q = q.Column(jobColumns...)
	}
	err = q.Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.Errorf(ErrJobNotFound, "training job %s not found", jobID)
	}
	return &row, err
}

// CancelJob implements Service.
func (s *Store) CancelJob(ctx context.Context, jobID string) (*Job, error) {
	row, err := s.jobRow(ctx, jobID, false)
	if err != nil {
		return nil, err
	}
	if _, err := s.finish(ctx, row, StatusCancelled, "training job cancelled"); err != nil {
		return nil, err
	}
	if row.RiverJobID != 0 {
		if err := s.queue.Cancel(ctx, row.RiverJobID); err != nil {
			s.cfg.Logger.WarnContext(ctx, "cancel queued job", "job_id", jobID, "error", err)
		}
	}
	return s.GetJob(ctx, jobID)
}

// --- events

// ListEvents implements Service.
func (s *Store) ListEvents(ctx context.Context, jobID string, p ListParams) (*Page[Event], error) {
	if err := p.check(false); err != nil {
		return nil, err
	}
	job, err := s.jobRow(ctx, jobID, false)
	if err != nil {
		return nil, err
	}
	q := s.db.NewSelect().Model((*eventRow)(nil)).Where("project_id = ? AND job_id = ?", job.ProjectID, jobID)
	if p.After != "" {
		var after eventRow
		err := s.db.NewSelect().Model(&after).Column("seq").
			Where("project_id = ? AND job_id = ? AND id = ?", job.ProjectID, jobID, p.After).Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, weft.Errorf(ErrCursorNotFound, "event %s (after) not found in training job %s", p.After, jobID)
		}
		if err != nil {
			return nil, err
		}
		q = q.Where("seq > ?", after.Seq)
	}
	var rows []eventRow
	if err := q.Order("seq ASC").Limit(int64(p.Limit)+1).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	return page(rows, p.Limit, func(r eventRow) Event {
		return Event{ID: r.ID, Type: r.Type, Data: json.RawMessage(r.Data)}
	}, func(e Event) string { return e.ID }), nil
}

// appendEvent adds an event to a job that has not finished, numbering it in the
// same statement that checks the job's status. terminal (non-empty) finishes
// the job with that status in the same transaction, after before runs (the
// place to commit the new checkpoint first). It reports false when the job had
// already finished (or is gone): then nothing was written.
func (s *Store) appendEvent(ctx context.Context, job *jobRow, typ string, data any, terminal JobStatus, errMsg string,
	before func(ctx context.Context, tx bun.Tx) error) (bool, error) {
	payload, err := json.Marshal(data)
	if err != nil {
		return false, err
	}
	appended := false
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		appended = false
		t := s.now()
		set := "last_seq = last_seq + 1"
		args := []any{}
		if terminal != "" {
			set += ", status = ?, ended_at = ?"
			args = append(args, terminal, t)
			if errMsg != "" {
				set += ", error_message = ?"
				args = append(args, errMsg)
			}
		}
		args = append(args, job.ProjectID, job.ID, bun.In([]JobStatus{StatusQueued, StatusRunning}))
		var seq int64
		err := tx.NewRaw("UPDATE training_jobs SET "+set+" WHERE project_id = ? AND id = ? AND status IN (?) RETURNING last_seq", args...).Scan(ctx, &seq)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if before != nil {
			if err := before(ctx, tx); err != nil {
				return err
			}
		}
		_, err = tx.NewInsert().Model(&eventRow{ProjectID: job.ProjectID, JobID: job.ID, Seq: seq, ID: newID(), Type: typ,
			Data: string(payload), CreatedAt: t}).Exec(ctx)
		appended = err == nil
		return err
	})
	return appended, err
}

// finish writes the job's one terminal failure event, unless it already ended.
func (s *Store) finish(ctx context.Context, job *jobRow, status JobStatus, msg string) (bool, error) {
	return s.appendEvent(ctx, job, EventTrainingFailed, map[string]any{"error_message": msg}, status, msg, nil)
}

// finiteMetrics drops NaN and infinities, which JSON cannot carry.
func finiteMetrics(in map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(in))
	for k, v := range in {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}
