package training

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
	"strings"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
)

// CreateModel implements Service.
func (s *Store) CreateModel(ctx context.Context, req *CreateModelReq) (*Model, error) {
	entity := req.EntityFor(ctx)
	if entity == "" {
		return nil, fieldErrorf("entity", "Field required: the API key has no default entity")
	}
	projectID := entity + "/" + req.Project
	if _, _, err := weft.ParseProjectID(projectID); err != nil {
		return nil, fieldErrorf("project", "entity and project must be 1 to 128 characters without '/', ':' or control characters")
	}
	if req.Name == "" || strings.ContainsAny(req.Name, "/:") || len(req.Name) > 128 {
		return nil, fieldErrorf("name", "must be 1 to 128 characters without '/' or ':'")
	}
	if strings.TrimSpace(req.BaseModel) == "" {
		return nil, fieldErrorf("base_model", "must not be empty")
	}
	returnExisting := req.ReturnExisting != nil && *req.ReturnExisting
	t := s.now()
	row := &modelRow{ProjectID: projectID, ID: newID(), Entity: entity, Project: req.Project, Name: req.Name,
		Base: req.BaseModel, CreatedBy: weft.UserID(ctx), CreatedAt: t}
	row.RunID = row.ID
	var existing modelRow
	for attempt := 0; ; attempt++ {
		err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			err := tx.NewSelect().Model(&existing).Where("project_id = ? AND name = ?", projectID, req.Name).Scan(ctx)
			if err == nil {
				return errExists
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
				return err
			}
			if _, err := tx.NewInsert().Model(&idRow{ID: row.ID, ProjectID: projectID, Kind: idKindModel}).Exec(ctx); err != nil {
				return err
			}
			_, err = tx.NewInsert().Model(&checkpointRow{ProjectID: projectID, ModelID: row.ID, Step: 0, ID: newID(),
				Metrics: "{}", CreatedAt: t}).Exec(ctx)
			return err
		})
		switch {
		case err == nil:
			return row.model(), nil
		case errors.Is(err, errExists):
			if !returnExisting {
				return nil, weft.Errorf(ErrModelExists, "model %q already exists in project %s", req.Name, projectID)
			}
			if existing.Base != req.BaseModel {
				return nil, weft.Errorf(ErrModelExists, "model %q already exists in project %s with base model %q", req.Name, projectID, existing.Base)
			}
			return existing.model(), nil
		case attempt == 0 && database.UniqueViolation(err):
			continue // registered concurrently: read it
		default:
			return nil, err
		}
	}
}

var errExists = errors.New("exists")

// GetModel implements Service.
func (s *Store) GetModel(ctx context.Context, modelID string) (*Model, error) {
	row, err := s.modelRow(ctx, s.db, modelID)
	if err != nil {
		return nil, err
	}
	return row.model(), nil
}

func (s *Store) modelRow(ctx context.Context, db bun.IDB, modelID string) (*modelRow, error) {
	projectID, err := projectOf(ctx, db, idKindModel, modelID)
	if err == nil {
		var row modelRow
		err = db.NewSelect().Model(&row).Where("project_id = ? AND id = ?", projectID, modelID).Scan(ctx)
		if err == nil {
			return &row, nil
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.Errorf(ErrModelNotFound, "model %s not found", modelID)
	}
	return nil, err
}

// DeleteModel implements Service.
func (s *Store) DeleteModel(ctx context.Context, modelID string) (*DeleteModelRes, error) {
	model, err := s.modelRow(ctx, s.db, modelID)
	if err != nil {
		return nil, err
	}
	var riverJobs []int64
	res := &DeleteModelRes{ModelID: modelID, DeletedRun: true}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var jobs []jobRow
		if err := tx.NewSelect().Model(&jobs).Column("id", "river_job_id", "status").
			Where("project_id = ? AND model_id = ?", model.ProjectID, modelID).Scan(ctx); err != nil {
			return err
		}
		ids := make([]string, 0, len(jobs))
		for _, j := range jobs {
			ids = append(ids, j.ID)
			if !j.Status.Terminal() && j.RiverJobID != 0 {
				riverJobs = append(riverJobs, j.RiverJobID)
			}
		}
		if len(ids) > 0 {
			if _, err := tx.NewDelete().Model((*eventRow)(nil)).Where("project_id = ? AND job_id IN (?)", model.ProjectID, bun.In(ids)).Exec(ctx); err != nil {
				return err
			}
		}
		for _, q := range []*bun.DeleteQuery{
			tx.NewDelete().Model((*jobRow)(nil)),
			tx.NewDelete().Model((*logRow)(nil)),
		} {
			if _, err := q.Where("project_id = ? AND model_id = ?", model.ProjectID, modelID).Exec(ctx); err != nil {
				return err
			}
		}
		r, err := tx.NewDelete().Model((*checkpointRow)(nil)).Where("project_id = ? AND model_id = ?", model.ProjectID, modelID).Exec(ctx)
		if err != nil {
			return err
		}
		n, _ := r.RowsAffected()
		res.DeletedCheckpoints = int(n)
		// One statement per id: each is routed to the one shard that holds it.
		for _, id := range append(ids, modelID) {
			if _, err := tx.NewDelete().Model((*idRow)(nil)).Where("id = ?", id).Exec(ctx); err != nil {
				return err
			}
		}
		_, err = tx.NewDelete().Model((*modelRow)(nil)).Where("project_id = ? AND id = ?", model.ProjectID, modelID).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, id := range riverJobs {
		if err := s.queue.Cancel(ctx, id); err != nil {
			s.cfg.Logger.WarnContext(ctx, "cancel queued job of deleted model", "river_job_id", id, "error", err)
		}
	}
	if err := s.cfg.Blobs.DeletePrefix(ctx, modelPrefix(modelID)); err != nil {
		s.cfg.Logger.WarnContext(ctx, "delete checkpoint files", "model_id", modelID, "error", err)
	}
	return res, nil
}

func modelPrefix(modelID string) string { return "models/" + modelID + "/" }

// --- checkpoints

// latestCheckpoint returns the highest-step checkpoint, or nil when none.
func latestCheckpoint(ctx context.Context, db bun.IDB, projectID, modelID string) (*checkpointRow, error) {
	var row checkpointRow
	err := db.NewSelect().Model(&row).Where("project_id = ? AND model_id = ?", projectID, modelID).
		Order("step DESC").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &row, nil
}

// ListCheckpoints implements Service.
func (s *Store) ListCheckpoints(ctx context.Context, modelID string, p ListParams) (*Page[Checkpoint], error) {
	if err := p.check(true); err != nil {
		return nil, err
	}
	model, err := s.modelRow(ctx, s.db, modelID)
	if err != nil {
		return nil, err
	}
	q := s.db.NewSelect().Model((*checkpointRow)(nil)).Where("project_id = ? AND model_id = ?", model.ProjectID, modelID)
	cmp, order := ">", "step ASC"
	if p.Order == OrderDesc {
		cmp, order = "<", "step DESC"
	}
	if p.After != "" {
		var after checkpointRow
		err := s.db.NewSelect().Model(&after).Column("step").
			Where("project_id = ? AND model_id = ? AND id = ?", model.ProjectID, modelID, p.After).Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, weft.Errorf(ErrCursorNotFound, "checkpoint %s (after) not found for model %s", p.After, modelID)
		}
		if err != nil {
			return nil, err
		}
		q = q.Where("step "+cmp+" ?", after.Step)
	}
	var rows []checkpointRow
	if err := q.Order(order).Limit(int64(p.Limit)+1).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	return page(rows, p.Limit, func(r checkpointRow) Checkpoint { return r.checkpoint() }, func(c Checkpoint) string { return c.ID }), nil
}

// check validates and defaults p.
func (p *ListParams) check(ordered bool) error {
	if p.Limit == 0 {
		p.Limit = 20
	}
	if p.Limit < 1 || p.Limit > 100 {
		return fieldErrorf("limit", "must be between 1 and 100")
	}
	if p.Order == "" || !ordered {
		p.Order = OrderAsc
	}
	if p.Order != OrderAsc && p.Order != OrderDesc {
		return fieldErrorf("order", "must be asc or desc")
	}
	return nil
}

// page cuts rows (fetched with limit+1) into a page.
func page[R, T any](rows []R, limit int, conv func(R) T, id func(T) string) *Page[T] {
	out := &Page[T]{Object: "list", Data: make([]T, 0, min(len(rows), limit))}
	if len(rows) > limit {
		out.HasMore = true
		rows = rows[:limit]
	}
	for _, r := range rows {
		out.Data = append(out.Data, conv(r))
	}
	if len(out.Data) > 0 {
		out.FirstID = id(out.Data[0])
		out.LastID = id(out.Data[len(out.Data)-1])
	}
	return out
}

// DeleteCheckpoints implements Service.
func (s *Store) DeleteCheckpoints(ctx context.Context, modelID string, steps []int64) (*DeleteCheckpointsRes, error) {
	model, err := s.modelRow(ctx, s.db, modelID)
	if err != nil {
		return nil, err
	}
	res := &DeleteCheckpointsRes{NotFoundSteps: []int64{}}
	var orphaned []string
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res.DeletedCount, res.NotFoundSteps, orphaned = 0, []int64{}, nil
		seen := map[int64]bool{}
		for _, step := range steps {
			if seen[step] {
				continue
			}
			seen[step] = true
			var gone []checkpointRow
			err := tx.NewDelete().Model(&gone).Where("project_id = ? AND model_id = ? AND step = ?", model.ProjectID, modelID, step).
				Returning("blob_prefix").Scan(ctx)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if len(gone) == 0 {
				res.NotFoundSteps = append(res.NotFoundSteps, step)
				continue
			}
			res.DeletedCount++
			if prefix := gone[0].BlobPrefix; prefix != "" {
				// A checkpoint that trained nothing shares its predecessor's files.
				shared, err := tx.NewSelect().Model((*checkpointRow)(nil)).Where("project_id = ? AND model_id = ? AND blob_prefix = ?", model.ProjectID, modelID, prefix).Exists(ctx)
				if err != nil {
					return err
				}
				if !shared {
					orphaned = append(orphaned, prefix)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, prefix := range orphaned {
		if err := s.cfg.Blobs.DeletePrefix(ctx, prefix); err != nil {
			s.cfg.Logger.WarnContext(ctx, "delete checkpoint files", "prefix", prefix, "error", err)
		}
	}
	return res, nil
}

// --- log

// Log implements Service.
func (s *Store) Log(ctx context.Context, modelID string, req *LogReq) (*LogRes, error) {
	split := "val"
	if req.Split != nil && *req.Split != "" {
		split = *req.Split
	}
	if strings.Contains(split, "/") {
		return nil, fieldErrorf("split", "must not contain '/'")
	}
	if req.TrajectoryGroups == nil {
		return nil, fieldErrorf("trajectory_groups", "Field required")
	}
	if err := validateGroups("trajectory_groups", req.TrajectoryGroups); err != nil {
		return nil, err
	}
	model, err := s.modelRow(ctx, s.db, modelID)
	if err != nil {
		return nil, err
	}
	metrics := prefixed(split, groupMetrics(req.TrajectoryGroups))
	groups, err := rawGroups(req.RawGroups, req.TrajectoryGroups)
	if err != nil {
		return nil, err
	}
	metricsJSON, _ := json.Marshal(metrics)
	res := &LogRes{Metrics: metrics}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		latest, err := latestCheckpoint(ctx, tx, model.ProjectID, modelID)
		if err != nil {
			return err
		}
		if latest != nil {
			res.Step = latest.Step
			merged := latest.checkpoint().Metrics
			maps.Copy(merged, metrics)
			b, _ := json.Marshal(merged)
			if _, err := tx.NewUpdate().Model((*checkpointRow)(nil)).Set("metrics = ?", string(b)).
				Where("project_id = ? AND model_id = ? AND step = ?", model.ProjectID, modelID, latest.Step).Exec(ctx); err != nil {
				return err
			}
		}
		_, err = tx.NewInsert().Model(&logRow{ProjectID: model.ProjectID, ModelID: modelID, ID: newID(), Split: split, Step: res.Step,
			TrajectoryGroups: string(groups), Metrics: string(metricsJSON), CreatedBy: weft.UserID(ctx), CreatedAt: s.now()}).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// rawGroups returns the groups as the client sent them when the transport kept
// them, else re-encoded.
func rawGroups(raw json.RawMessage, groups []TrajectoryGroup) (json.RawMessage, error) {
	if len(raw) > 0 {
		return raw, nil
	}
	return json.Marshal(groups)
}
