package training

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
)

// eventBatch is how many events EachEvent reads per statement.
const eventBatch = 5000

// maxStepLogs bounds StepLogs: a step holds one log per client call, and a
// page about one step reads them all at once.
const maxStepLogs = 200

// StepLog is one models/log call's trajectory groups, as stored.
type StepLog struct {
	ID               string             `json:"id"`
	Split            string             `json:"split"`
	Step             int64              `json:"step"`
	TrajectoryGroups json.RawMessage    `json:"trajectory_groups"`
	Metrics          map[string]float64 `json:"metrics"`
	CreatedAt        time.Time          `json:"created_at"`
}

// ListModels implements Service.
func (s *Store) ListModels(ctx context.Context, projectID string, p ListParams) (*Page[Model], error) {
	if err := p.check(false); err != nil {
		return nil, err
	}
	q := s.db.NewSelect().Model((*modelRow)(nil)).Where("project_id = ?", projectID)
	if p.After != "" {
		q = q.Where("id > ?", p.After)
	}
	var rows []modelRow
	if err := q.Order("id ASC").Limit(int64(p.Limit)+1).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	return page(rows, p.Limit, func(r modelRow) Model { return *r.model() }, func(x Model) string { return x.ID }), nil
}

// MaxModelsOf bounds the models one ModelsOf call reads, whatever limit its
// caller asks for: the query reads across projects, so its cost must not grow
// with a tenant's model count.
const MaxModelsOf = 1000

// ModelsOf lists at most limit (and at most MaxModelsOf) trained models of
// entities, by entity, project and name: the models a caller's own entities
// hold (chat's GET /v1/models lists them). No entities lists none. It is one
// of weft's two deliberate cross-project queries, beside the worker's active
// jobs (acrossProjects): on a distributed database it reads every shard.
func (s *Store) ModelsOf(ctx context.Context, entities []string, limit int) ([]Model, error) {
	if len(entities) == 0 || limit <= 0 {
		return nil, nil
	}
	limit = min(limit, MaxModelsOf)
	var rows []modelRow
	err := s.acrossProjects(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&rows).Where("entity IN (?)", bun.In(entities)).
			Order("entity ASC", "project ASC", "name ASC").Limit(int64(limit)).Scan(ctx)
	})
	if err != nil {
		return nil, err
	}
	out := make([]Model, len(rows))
	for i := range rows {
		out[i] = *rows[i].model()
	}
	return out, nil
}

// ListJobs implements Service.
func (s *Store) ListJobs(ctx context.Context, modelID string, p ListParams) (*Page[Job], error) {
	if err := p.check(false); err != nil {
		return nil, err
	}
	model, err := s.modelRow(ctx, s.db, modelID)
	if err != nil {
		return nil, err
	}
	q := s.db.NewSelect().Model((*jobRow)(nil)).Column(jobColumns...).
		Where("project_id = ? AND model_id = ?", model.ProjectID, modelID)
	if p.After != "" {
		// Job ids are UUIDv7, so their order is their creation order.
		q = q.Where("id > ?", p.After)
	}
	var rows []jobRow
	if err := q.Order("id ASC").Limit(int64(p.Limit)+1).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	return page(rows, p.Limit, func(r jobRow) Job { return *r.job() }, func(j Job) string { return j.ID }), nil
}

// EachEvent implements Service.
func (s *Store) EachEvent(ctx context.Context, jobID, after string, fn func(Event) error) error {
	job, err := s.jobRow(ctx, jobID, false)
	if err != nil {
		return err
	}
	seq := int64(0)
	if after != "" {
		var row eventRow
		err := s.db.NewSelect().Model(&row).Column("seq").
			Where("project_id = ? AND job_id = ? AND id = ?", job.ProjectID, jobID, after).Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return weft.Errorf(ErrCursorNotFound, "event %s (after) not found in training job %s", after, jobID)
		}
		if err != nil {
			return err
		}
		seq = row.Seq
	}
	for {
		var rows []eventRow
		if err := s.db.NewSelect().Model(&rows).Column("seq", "id", "type", "data").
			Where("project_id = ? AND job_id = ? AND seq > ?", job.ProjectID, jobID, seq).
			Order("seq ASC").Limit(eventBatch).Scan(ctx); err != nil {
			return err
		}
		for _, r := range rows {
			if err := fn(Event{ID: r.ID, Type: r.Type, Data: json.RawMessage(r.Data)}); err != nil {
				return err
			}
			seq = r.Seq
		}
		if len(rows) < eventBatch {
			return nil
		}
	}
}

// StepLogs implements Service.
func (s *Store) StepLogs(ctx context.Context, modelID string, step int64) ([]StepLog, error) {
	model, err := s.modelRow(ctx, s.db, modelID)
	if err != nil {
		return nil, err
	}
	var rows []logRow
	if err := s.db.NewSelect().Model(&rows).
		Where("project_id = ? AND model_id = ? AND step = ?", model.ProjectID, modelID, step).
		Order("created_at ASC", "id ASC").Limit(maxStepLogs).Scan(ctx); err != nil {
		return nil, err
	}
	out := make([]StepLog, len(rows))
	for i, r := range rows {
		out[i] = StepLog{ID: r.ID, Split: r.Split, Step: r.Step, TrajectoryGroups: json.RawMessage(r.TrajectoryGroups),
			Metrics: map[string]float64{}, CreatedAt: r.CreatedAt}
		_ = json.Unmarshal([]byte(r.Metrics), &out[i].Metrics)
	}
	return out, nil
}

// JobTrajectories implements Service.
func (s *Store) JobTrajectories(ctx context.Context, jobID string) (json.RawMessage, error) {
	row, err := s.jobRow(ctx, jobID, true)
	if err != nil || row.Kind != KindRL {
		return nil, err
	}
	return json.RawMessage(row.Input), nil
}
