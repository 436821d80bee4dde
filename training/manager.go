package training

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/training/blob"
)

// Service is the training control plane behind the /v1/preview routes. The
// caller is taken from the context (weft.WithPrincipal); authorization is the
// transport's job (the model's project is in Model and Job).
type Service interface {
	// CreateModel registers a model, unique by name within its project, with an
	// untrained step-0 checkpoint. Entity nil or "" means the caller's default
	// entity. An existing name is ErrModelExists unless ReturnExisting is true
	// and the base model matches; then the stored model is returned unchanged.
	CreateModel(ctx context.Context, req *CreateModelReq) (*Model, error)
	// GetModel returns a model; ErrModelNotFound when there is none.
	GetModel(ctx context.Context, modelID string) (*Model, error)
	// DeleteModel removes a model with its checkpoints (and their files), logs,
	// jobs and events. Running jobs are cancelled.
	DeleteModel(ctx context.Context, modelID string) (*DeleteModelRes, error)
	// Log validates trajectory groups, stores them for (model, split, current
	// step) and merges their metrics, named "{split}/{metric}", into the current
	// checkpoint's metrics. The current step is the latest checkpoint's (0 when
	// none).
	Log(ctx context.Context, modelID string, req *LogReq) (*LogRes, error)
	// ListCheckpoints pages a model's checkpoints by step, ascending unless
	// p.Order is OrderDesc; After is the id of a checkpoint of this model
	// (ErrCursorNotFound otherwise) and means "after it in this order".
	ListCheckpoints(ctx context.Context, modelID string, p ListParams) (*Page[Checkpoint], error)
	// DeleteCheckpoints removes the checkpoints at steps and reports the steps
	// that had none.
	DeleteCheckpoints(ctx context.Context, modelID string, steps []int64) (*DeleteCheckpointsRes, error)
	// CreateJob validates an RL job, stores it and enqueues it in one
	// transaction, and returns it QUEUED; the work happens later on a worker.
	// Jobs of one model run one at a time in creation order.
	CreateJob(ctx context.Context, req *CreateJobReq) (*Job, error)
	// CreateSFTJob is CreateJob for supervised fine-tuning. The data URL is only
	// checked for shape here: data that cannot be read fails the job
	// (training_failed), not the request. Posting the same model and URL while
	// an earlier such job has not failed returns that job.
	CreateSFTJob(ctx context.Context, req *CreateSFTJobReq) (*Job, error)
	// GetJob returns a job's status; ErrJobNotFound when there is none.
	GetJob(ctx context.Context, jobID string) (*Job, error)
	// CancelJob ends a job that has not finished with training_failed
	// {error_message: "training job cancelled"} and stops its worker. A job that
	// already finished is returned unchanged.
	CancelJob(ctx context.Context, jobID string) (*Job, error)
	// ListEvents pages a job's events in the order they happened; After is the
	// id of an event of this job (ErrCursorNotFound otherwise). Exactly one
	// terminal event (training_ended or training_failed) ends every job, and
	// nothing follows it.
	ListEvents(ctx context.Context, jobID string, p ListParams) (*Page[Event], error)
}

// Config configures [New].
type Config struct {
	// DB holds the training tables and River's queue (migrate it with
	// weft.Migrate(ctx, db, MigrateQueue(db))). Required.
	DB *weft.DB
	// Blobs stores checkpoint files. Defaults to the directory
	// "data/checkpoints" under the working directory.
	Blobs blob.Store
	// Trainer runs jobs in this process. Required when Workers > 0.
	Trainer Trainer
	// Workers is how many jobs this process runs at once. 0 (the default) makes
	// a process that only accepts jobs; workers elsewhere run them.
	Workers int
	// Objects reads SFT data given as object references. Defaults to none: such
	// jobs fail with a message saying so.
	Objects ObjectReader
	// HTTPClient downloads SFT data from http(s) URLs. Defaults to a client
	// with a 10 minute timeout.
	HTTPClient *http.Client
	// MaxDataBytes bounds downloaded SFT data. Defaults to 1 GiB.
	MaxDataBytes int64
	// MaxAttempts is how often a job is tried before it fails. Defaults to 3.
	MaxAttempts int
	// RetryDelay is the wait before retry n (times n). Defaults to 2 seconds.
	RetryDelay time.Duration
	// JobTimeout bounds one attempt. Defaults to 24 hours.
	JobTimeout time.Duration
	// RescueAfter is how long a job may look running before it is taken to have
	// lost its worker and is retried (River's rescuer). Defaults to
	// JobTimeout + 10 minutes; must exceed JobTimeout.
	RescueAfter time.Duration
	// PollInterval is how often idle workers look for jobs (PostgreSQL also
	// wakes them on insert). Defaults to 1 second.
	PollInterval time.Duration
	// WatchdogInterval is how often the watchdog looks for jobs the queue gave
	// up on. Defaults to 10 seconds.
	WatchdogInterval time.Duration
	// Logger receives job failures and watchdog actions. Defaults to slog.Default().
	Logger *slog.Logger
}

func (cfg *Config) setDefaults() error {
	if cfg.DB == nil {
		return errors.New("training: Config.DB is required")
	}
	if cfg.Workers < 0 {
		return errors.New("training: Config.Workers must not be negative")
	}
	if cfg.Workers > 0 && cfg.Trainer == nil {
		return errors.New("training: Config.Trainer is required when Workers > 0")
	}
	if cfg.Blobs == nil {
		dir, err := blob.NewDir("data/checkpoints")
		if err != nil {
			return err
		}
		cfg.Blobs = dir
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Minute}
	}
	if cfg.MaxDataBytes == 0 {
		cfg.MaxDataBytes = 1 << 30
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = 2 * time.Second
	}
	if cfg.JobTimeout == 0 {
		cfg.JobTimeout = 24 * time.Hour
	}
	if cfg.RescueAfter == 0 {
		cfg.RescueAfter = cfg.JobTimeout + 10*time.Minute
	}
	if cfg.RescueAfter <= cfg.JobTimeout {
		return errors.New("training: Config.RescueAfter must exceed JobTimeout")
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.WatchdogInterval == 0 {
		cfg.WatchdogInterval = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return nil
}

// Manager is the bun-backed [Service]; with Workers it also runs jobs.
type Manager struct {
	cfg   Config
	db    *weft.DB
	queue queue

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

var _ Service = (*Manager)(nil)

// New returns a Manager over cfg.DB. Call Start to run workers and the
// watchdog, Stop to end them.
func New(cfg Config) (*Manager, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, db: cfg.DB}
	q, err := newQueue(cfg.DB, &m.cfg, m.work)
	if err != nil {
		return nil, fmt.Errorf("training: %w", err)
	}
	m.queue = q
	return m, nil
}

// Start starts this process's workers (Config.Workers) and the watchdog. They
// run until Stop or until ctx ends.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cancel != nil {
		return errors.New("training: already started")
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if err := m.queue.start(ctx); err != nil {
		cancel()
		return fmt.Errorf("training: start queue: %w", err)
	}
	m.cancel, m.done = cancel, make(chan struct{})
	go func() {
		defer close(m.done)
		m.watch(ctx)
	}()
	return nil
}

// Stop stops the workers, waiting until ctx ends for running jobs (which are
// then cancelled and retried elsewhere), and the watchdog.
func (m *Manager) Stop(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cancel == nil {
		return nil
	}
	err := m.queue.stop(ctx)
	m.cancel()
	<-m.done
	m.cancel = nil
	return err
}

// --- rows

type modelRow struct {
	bun.BaseModel `bun:"table:training_models"`

	ProjectID string    `bun:"project_id,pk"`
	ID        string    `bun:"id,pk"`
	Entity    string    `bun:"entity"`
	Project   string    `bun:"project"`
	Name      string    `bun:"name"`
	Base      string    `bun:"base_model"`
	RunID     string    `bun:"run_id"`
	CreatedBy string    `bun:"created_by"`
	CreatedAt time.Time `bun:"created_at"`
}

func (r *modelRow) model() *Model {
	runID := r.RunID
	return &Model{ID: r.ID, Entity: r.Entity, Project: r.Project, Name: r.Name, BaseModel: r.Base, RunID: &runID, CreatedAt: r.CreatedAt}
}

type checkpointRow struct {
	bun.BaseModel `bun:"table:training_checkpoints"`

	ProjectID  string    `bun:"project_id,pk"`
	ModelID    string    `bun:"model_id,pk"`
	Step       int64     `bun:"step,pk"`
	ID         string    `bun:"id"`
	Metrics    string    `bun:"metrics"`
	BlobPrefix string    `bun:"blob_prefix"`
	JobID      string    `bun:"job_id"`
	CreatedAt  time.Time `bun:"created_at"`
}

func (r *checkpointRow) checkpoint() Checkpoint {
	c := Checkpoint{ID: r.ID, Step: r.Step, Metrics: map[string]float64{}, BlobPrefix: r.BlobPrefix, CreatedAt: r.CreatedAt}
	_ = json.Unmarshal([]byte(r.Metrics), &c.Metrics)
	return c
}

type jobRow struct {
	bun.BaseModel `bun:"table:training_jobs"`

	ProjectID          string     `bun:"project_id,pk"`
	ID                 string     `bun:"id,pk"`
	ModelID            string     `bun:"model_id"`
	Kind               string     `bun:"kind"`
	Status             JobStatus  `bun:"status"`
	Input              string     `bun:"input"`
	ExperimentalConfig string     `bun:"experimental_config"`
	RiverJobID         int64      `bun:"river_job_id,nullzero"`
	LastSeq            int64      `bun:"last_seq"`
	ErrorMessage       *string    `bun:"error_message"`
	CreatedBy          string     `bun:"created_by"`
	CreatedAt          time.Time  `bun:"created_at"`
	StartedAt          *time.Time `bun:"started_at"`
	EndedAt            *time.Time `bun:"ended_at"`
}

func (r *jobRow) job() *Job {
	return &Job{ID: r.ID, ModelID: r.ModelID, Kind: r.Kind, Status: r.Status, ErrorMessage: r.ErrorMessage,
		CreatedAt: r.CreatedAt, TrainingStart: r.StartedAt, TrainingEnd: r.EndedAt, projectID: r.ProjectID}
}

// jobColumns are the columns of a job without its (possibly large) input.
var jobColumns = []string{"project_id", "id", "model_id", "kind", "status", "river_job_id", "last_seq",
	"error_message", "created_by", "created_at", "started_at", "ended_at"}

type eventRow struct {
	bun.BaseModel `bun:"table:training_events"`

	ProjectID string    `bun:"project_id,pk"`
	JobID     string    `bun:"job_id,pk"`
	Seq       int64     `bun:"seq,pk"`
	ID        string    `bun:"id"`
	Type      string    `bun:"type"`
	Data      string    `bun:"data"`
	CreatedAt time.Time `bun:"created_at"`
}

// idRow maps a model or job id, which the training routes name without a
// project, to its project.
type idRow struct {
	bun.BaseModel `bun:"table:training_ids"`

	ID        string `bun:"id,pk"`
	ProjectID string `bun:"project_id"`
	Kind      string `bun:"kind"`
}

// The kinds of id in training_ids.
const (
	idKindModel = "model"
	idKindJob   = "job"
)

// projectOf returns the project of the model or job id (sql.ErrNoRows when
// there is none of that kind).
func projectOf(ctx context.Context, db bun.IDB, kind, id string) (string, error) {
	var row idRow
	if err := db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx); err != nil {
		return "", err
	}
	if row.Kind != kind {
		return "", sql.ErrNoRows
	}
	return row.ProjectID, nil
}

type logRow struct {
	bun.BaseModel `bun:"table:training_logs"`

	ProjectID        string    `bun:"project_id,pk"`
	ModelID          string    `bun:"model_id,pk"`
	ID               string    `bun:"id,pk"`
	Split            string    `bun:"split"`
	Step             int64     `bun:"step"`
	TrajectoryGroups string    `bun:"trajectory_groups"`
	Metrics          string    `bun:"metrics"`
	CreatedBy        string    `bun:"created_by"`
	CreatedAt        time.Time `bun:"created_at"`
}

// rlInput and sftInput are a job's stored input.
type sftInput struct {
	TrainingDataURL string          `json:"training_data_url"`
	Config          json.RawMessage `json:"config"`
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

func now() time.Time { return time.Now().UTC() }

// --- models

// CreateModel implements Service.
func (m *Manager) CreateModel(ctx context.Context, req *CreateModelReq) (*Model, error) {
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
	t := now()
	row := &modelRow{ProjectID: projectID, ID: newID(), Entity: entity, Project: req.Project, Name: req.Name,
		Base: req.BaseModel, CreatedBy: weft.UserID(ctx), CreatedAt: t}
	row.RunID = row.ID
	var existing modelRow
	for attempt := 0; ; attempt++ {
		err := m.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
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
func (m *Manager) GetModel(ctx context.Context, modelID string) (*Model, error) {
	row, err := m.modelRow(ctx, m.db, modelID)
	if err != nil {
		return nil, err
	}
	return row.model(), nil
}

func (m *Manager) modelRow(ctx context.Context, db bun.IDB, modelID string) (*modelRow, error) {
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
func (m *Manager) DeleteModel(ctx context.Context, modelID string) (*DeleteModelRes, error) {
	model, err := m.modelRow(ctx, m.db, modelID)
	if err != nil {
		return nil, err
	}
	var riverJobs []int64
	res := &DeleteModelRes{ModelID: modelID, DeletedRun: true}
	err = m.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
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
		if err := m.queue.cancel(ctx, id); err != nil {
			m.cfg.Logger.WarnContext(ctx, "cancel queued job of deleted model", "river_job_id", id, "error", err)
		}
	}
	if err := m.cfg.Blobs.DeletePrefix(ctx, modelPrefix(modelID)); err != nil {
		m.cfg.Logger.WarnContext(ctx, "delete checkpoint files", "model_id", modelID, "error", err)
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
func (m *Manager) ListCheckpoints(ctx context.Context, modelID string, p ListParams) (*Page[Checkpoint], error) {
	if err := p.check(true); err != nil {
		return nil, err
	}
	model, err := m.modelRow(ctx, m.db, modelID)
	if err != nil {
		return nil, err
	}
	q := m.db.NewSelect().Model((*checkpointRow)(nil)).Where("project_id = ? AND model_id = ?", model.ProjectID, modelID)
	cmp, order := ">", "step ASC"
	if p.Order == OrderDesc {
		cmp, order = "<", "step DESC"
	}
	if p.After != "" {
		var after checkpointRow
		err := m.db.NewSelect().Model(&after).Column("step").
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
func (m *Manager) DeleteCheckpoints(ctx context.Context, modelID string, steps []int64) (*DeleteCheckpointsRes, error) {
	model, err := m.modelRow(ctx, m.db, modelID)
	if err != nil {
		return nil, err
	}
	res := &DeleteCheckpointsRes{NotFoundSteps: []int64{}}
	var orphaned []string
	err = m.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
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
		if err := m.cfg.Blobs.DeletePrefix(ctx, prefix); err != nil {
			m.cfg.Logger.WarnContext(ctx, "delete checkpoint files", "prefix", prefix, "error", err)
		}
	}
	return res, nil
}

// --- log

// Log implements Service.
func (m *Manager) Log(ctx context.Context, modelID string, req *LogReq) (*LogRes, error) {
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
	model, err := m.modelRow(ctx, m.db, modelID)
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
	err = m.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
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
			TrajectoryGroups: string(groups), Metrics: string(metricsJSON), CreatedBy: weft.UserID(ctx), CreatedAt: now()}).Exec(ctx)
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

// --- jobs

// CreateJob implements Service.
func (m *Manager) CreateJob(ctx context.Context, req *CreateJobReq) (*Job, error) {
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
	return m.enqueueJob(ctx, req.ModelID, KindRL, string(groups), string(config))
}

// CreateSFTJob implements Service.
func (m *Manager) CreateSFTJob(ctx context.Context, req *CreateSFTJobReq) (*Job, error) {
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
	config := json.RawMessage("{}")
	if len(req.Config) > 0 && string(req.Config) != "null" {
		if !isObject(req.Config) {
			return nil, fieldErrorf("config", "must be an object")
		}
		config = req.Config
	}
	model, err := m.modelRow(ctx, m.db, req.ModelID)
	if err != nil {
		return nil, err
	}
	if ref.projectID != "" && ref.projectID != model.ProjectID {
		return nil, fieldErrorf("training_data_url", "the training data must be in the model's project %s", model.ProjectID)
	}
	input, _ := json.Marshal(sftInput{TrainingDataURL: dataURL, Config: config})
	var existing jobRow
	err = m.db.NewSelect().Model(&existing).Column(jobColumns...).
		Where("project_id = ? AND model_id = ? AND kind = ? AND input = ? AND status NOT IN (?)",
			model.ProjectID, model.ID, KindSFT, string(input), bun.In([]JobStatus{StatusFailed, StatusCancelled})).
		Order("created_at DESC").Limit(1).Scan(ctx)
	if err == nil {
		return existing.job(), nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	return m.enqueueJob(ctx, req.ModelID, KindSFT, string(input), "{}")
}

func (m *Manager) enqueueJob(ctx context.Context, modelID, kind, input, config string) (*Job, error) {
	model, err := m.modelRow(ctx, m.db, modelID)
	if err != nil {
		return nil, err
	}
	row := &jobRow{ProjectID: model.ProjectID, ID: newID(), ModelID: modelID, Kind: kind, Status: StatusQueued,
		Input: input, ExperimentalConfig: config, CreatedBy: weft.UserID(ctx), CreatedAt: now()}
	err = m.queue.enqueue(ctx, row.ID, m.cfg.MaxAttempts, func(riverJobID int64) []string {
		row.RiverJobID = riverJobID
		return []string{
			m.db.NewInsert().Model(row).String(),
			m.db.NewInsert().Model(&idRow{ID: row.ID, ProjectID: row.ProjectID, Kind: idKindJob}).String(),
		}
	})
	if err != nil {
		return nil, err
	}
	return row.job(), nil
}

// GetJob implements Service.
func (m *Manager) GetJob(ctx context.Context, jobID string) (*Job, error) {
	row, err := m.jobRow(ctx, jobID, false)
	if err != nil {
		return nil, err
	}
	return row.job(), nil
}

func (m *Manager) jobRow(ctx context.Context, jobID string, withInput bool) (*jobRow, error) {
	projectID, err := projectOf(ctx, m.db, idKindJob, jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, weft.Errorf(ErrJobNotFound, "training job %s not found", jobID)
	}
	if err != nil {
		return nil, err
	}
	var row jobRow
	q := m.db.NewSelect().Model(&row).Where("project_id = ? AND id = ?", projectID, jobID)
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
func (m *Manager) CancelJob(ctx context.Context, jobID string) (*Job, error) {
	row, err := m.jobRow(ctx, jobID, false)
	if err != nil {
		return nil, err
	}
	if _, err := m.finish(ctx, row, StatusCancelled, "training job cancelled"); err != nil {
		return nil, err
	}
	if row.RiverJobID != 0 {
		if err := m.queue.cancel(ctx, row.RiverJobID); err != nil {
			m.cfg.Logger.WarnContext(ctx, "cancel queued job", "job_id", jobID, "error", err)
		}
	}
	return m.GetJob(ctx, jobID)
}

// --- events

// ListEvents implements Service.
func (m *Manager) ListEvents(ctx context.Context, jobID string, p ListParams) (*Page[Event], error) {
	if err := p.check(false); err != nil {
		return nil, err
	}
	job, err := m.jobRow(ctx, jobID, false)
	if err != nil {
		return nil, err
	}
	q := m.db.NewSelect().Model((*eventRow)(nil)).Where("project_id = ? AND job_id = ?", job.ProjectID, jobID)
	if p.After != "" {
		var after eventRow
		err := m.db.NewSelect().Model(&after).Column("seq").
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
func (m *Manager) appendEvent(ctx context.Context, job *jobRow, typ string, data any, terminal JobStatus, errMsg string,
	before func(ctx context.Context, tx bun.Tx) error) (bool, error) {
	payload, err := json.Marshal(data)
	if err != nil {
		return false, err
	}
	appended := false
	err = m.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		appended = false
		t := now()
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
func (m *Manager) finish(ctx context.Context, job *jobRow, status JobStatus, msg string) (bool, error) {
	return m.appendEvent(ctx, job, EventTrainingFailed, map[string]any{"error_message": msg}, status, msg, nil)
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
