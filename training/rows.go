package training

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

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
	c := Checkpoint{ID: r.ID, Step: r.Step, Metrics: map[string]float64{}, BlobPrefix: r.BlobPrefix, JobID: r.JobID, CreatedAt: r.CreatedAt}
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
	// Attempt is the queue's attempt that holds the job while it runs;
	// HeartbeatAt is when that attempt last renewed its lease.
	Attempt     int        `bun:"attempt"`
	HeartbeatAt *time.Time `bun:"heartbeat_at"`
}

func (r *jobRow) job() *Job {
	return &Job{ID: r.ID, ModelID: r.ModelID, Kind: r.Kind, Status: r.Status, ErrorMessage: r.ErrorMessage,
		CreatedAt: r.CreatedAt, TrainingStart: r.StartedAt, TrainingEnd: r.EndedAt, projectID: r.ProjectID}
}

// jobColumns are the columns of a job without its (possibly large) input.
var jobColumns = []string{"project_id", "id", "model_id", "kind", "status", "river_job_id", "last_seq",
	"error_message", "created_by", "created_at", "started_at", "ended_at", "attempt", "heartbeat_at"}

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
