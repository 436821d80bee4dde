package training

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weftlabs/weft"
)

// Model is a registered trainable model (as /v1/preview/models returns it).
type Model struct {
	ID        string    `json:"id"`
	Entity    string    `json:"entity"`
	Project   string    `json:"project"`
	Name      string    `json:"name"`
	BaseModel string    `json:"base_model"`
	RunID     *string   `json:"run_id"`
	CreatedAt time.Time `json:"created_at"`
}

// ProjectID is "<entity>/<project>".
func (m *Model) ProjectID() string { return m.Entity + "/" + m.Project }

// Checkpoint is one saved adapter of a model. Step 0 is the untrained adapter
// created with the model; every successful job adds the next step.
type Checkpoint struct {
	ID      string             `json:"id"`
	Step    int64              `json:"step"`
	Metrics map[string]float64 `json:"metrics"`
	// BlobPrefix is where the checkpoint's files are in the blob store ("" for
	// the untrained step 0).
	BlobPrefix string `json:"-"`
	// JobID is the job that made the checkpoint ("" for step 0): the job
	// that trained from the step before.
	JobID     string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
}

// Job kinds.
const (
	KindRL  = "rl"
	KindSFT = "sft"
)

// JobStatus is where a job is in its life: QUEUED → RUNNING → COMPLETED, or
// FAILED / CANCELLED from either.
type JobStatus string

// Job statuses.
const (
	StatusQueued    JobStatus = "QUEUED"
	StatusRunning   JobStatus = "RUNNING"
	StatusCompleted JobStatus = "COMPLETED"
	StatusFailed    JobStatus = "FAILED"
	StatusCancelled JobStatus = "CANCELLED"
)

// Terminal reports whether no more events can follow.
func (s JobStatus) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Job is a training job as GET /v1/preview/training-jobs/{id} shows it.
type Job struct {
	ID            string     `json:"id"`
	ModelID       string     `json:"model_id"`
	Kind          string     `json:"kind"`
	Status        JobStatus  `json:"status"`
	ErrorMessage  *string    `json:"error_message"`
	CreatedAt     time.Time  `json:"created_at"`
	TrainingStart *time.Time `json:"training_start"`
	TrainingEnd   *time.Time `json:"training_end"`
	projectID     string
}

// ProjectID is the project of the job's model.
func (j *Job) ProjectID() string { return j.projectID }

// Event types.
const (
	EventTrainingStarted = "training_started"
	EventGradientStep    = "gradient_step"
	EventTrainingEnded   = "training_ended"
	EventTrainingFailed  = "training_failed"
)

// Event is one entry of a job's event log.
type Event struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Page is one page of a cursor-paginated list. FirstID and LastID are "" when
// Data is empty.
type Page[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
	FirstID string `json:"first_id"`
	LastID  string `json:"last_id"`
}

// Order of a checkpoint list.
const (
	OrderAsc  = "asc"
	OrderDesc = "desc"
)

// ListParams pages a list: items strictly after the item with id After (in the
// list's order), at most Limit of them (1..100, 0 = 20).
type ListParams struct {
	After string
	Limit int
	// Order is OrderAsc (default) or OrderDesc; events are always ascending.
	Order string
}

// CreateModelReq registers a model. Entity "" means the caller's default entity.
type CreateModelReq struct {
	Entity         *string `json:"entity"`
	Project        string  `json:"project"`
	Name           string  `json:"name"`
	BaseModel      string  `json:"base_model"`
	ReturnExisting *bool   `json:"return_existing"`
}

// EntityFor returns the entity the model is registered in: Entity, or when it
// is nil or "" the default entity of the caller in ctx.
func (r *CreateModelReq) EntityFor(ctx context.Context) string {
	if r.Entity != nil && *r.Entity != "" {
		return *r.Entity
	}
	p, _ := weft.PrincipalFrom(ctx)
	return p.DefaultEntity
}

// DeleteModelRes reports what DeleteModel removed.
type DeleteModelRes struct {
	ModelID            string `json:"model_id"`
	DeletedCheckpoints int    `json:"deleted_checkpoints"`
	DeletedRun         bool   `json:"deleted_run"`
}

// DeleteCheckpointsRes reports what DeleteCheckpoints removed.
type DeleteCheckpointsRes struct {
	DeletedCount  int     `json:"deleted_count"`
	NotFoundSteps []int64 `json:"not_found_steps"`
}

// LogReq logs trajectory groups for a split ("val" when empty).
type LogReq struct {
	Split            *string           `json:"split"`
	TrajectoryGroups []TrajectoryGroup `json:"trajectory_groups"`
	// RawGroups is trajectory_groups exactly as sent (filled by UnmarshalJSON),
	// stored instead of a re-encoding so that no key the client sent is lost.
	RawGroups json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the request and keeps trajectory_groups as sent.
func (r *LogReq) UnmarshalJSON(b []byte) error {
	type plain LogReq
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	return keepRawGroups(b, &r.RawGroups)
}

func keepRawGroups(b []byte, raw *json.RawMessage) error {
	var groups struct {
		TrajectoryGroups json.RawMessage `json:"trajectory_groups"`
	}
	if err := json.Unmarshal(b, &groups); err != nil {
		return err
	}
	if string(groups.TrajectoryGroups) != "null" {
		*raw = groups.TrajectoryGroups
	}
	return nil
}

// LogRes is what Log computed and stored.
type LogRes struct {
	Step    int64              `json:"step"`
	Metrics map[string]float64 `json:"metrics"`
}

// CreateJobReq creates an RL training job.
type CreateJobReq struct {
	ModelID            string              `json:"model_id"`
	TrajectoryGroups   []TrajectoryGroup   `json:"trajectory_groups"`
	ExperimentalConfig *ExperimentalConfig `json:"experimental_config"`
	// RawGroups: see LogReq.
	RawGroups json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the request and keeps trajectory_groups as sent.
func (r *CreateJobReq) UnmarshalJSON(b []byte) error {
	type plain CreateJobReq
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	return keepRawGroups(b, &r.RawGroups)
}

// CreateSFTJobReq creates a supervised fine-tuning job. TrainingFolderURL is an
// older client's name for TrainingDataURL. Config ({batch_size, learning_rate},
// learning_rate one number or one per batch) is handed to the trainer as sent.
type CreateSFTJobReq struct {
	ModelID            string          `json:"model_id"`
	TrainingDataURL    *string         `json:"training_data_url"`
	TrainingFolderURL  *string         `json:"training_folder_url"`
	Config             json.RawMessage `json:"config"`
	ExperimentalConfig json.RawMessage `json:"experimental_config"`
}

// ExperimentalConfig tunes an RL job. Every field is optional; nil means the
// trainer's default. Unknown keys are kept in Extra and passed to the trainer.
type ExperimentalConfig struct {
	AdvantageBalance                             *float64 `json:"advantage_balance,omitempty"`
	Epsilon                                      *float64 `json:"epsilon,omitempty"`
	EpsilonHigh                                  *float64 `json:"epsilon_high,omitempty"`
	ImportanceSamplingLevel                      *string  `json:"importance_sampling_level,omitempty"`
	VariantK2Tau                                 *float64 `json:"variant_k2_tau,omitempty"`
	LearningRate                                 *float64 `json:"learning_rate,omitempty"`
	MaskProbRatio                                *bool    `json:"mask_prob_ratio,omitempty"`
	MaxNegativeAdvantageImportanceSamplingWeight *float64 `json:"max_negative_advantage_importance_sampling_weight,omitempty"`
	PPO                                          *bool    `json:"ppo,omitempty"`
	PrecalculateLogprobs                         *bool    `json:"precalculate_logprobs,omitempty"`
	ScaleRewards                                 *bool    `json:"scale_rewards,omitempty"`
	// Extra holds keys this version does not know (newer clients send more).
	Extra map[string]json.RawMessage `json:"-"`
}

// UnmarshalJSON reads the wire form, where variant_k2_tau is spelled
// kimi_k2_tau, and keeps unknown keys in Extra.
func (c *ExperimentalConfig) UnmarshalJSON(b []byte) error {
	type plain ExperimentalConfig
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	if raw, ok := all["kimi_k2_tau"]; ok && p.VariantK2Tau == nil {
		if err := json.Unmarshal(raw, &p.VariantK2Tau); err != nil {
			return err
		}
	}
	*c = ExperimentalConfig(p)
	for _, known := range experimentalKeys {
		delete(all, known)
	}
	delete(all, "kimi_k2_tau")
	for k, v := range all {
		if string(v) == "null" {
			delete(all, k)
		}
	}
	if len(all) > 0 {
		c.Extra = all
	}
	return nil
}

// MarshalJSON writes the known fields and Extra.
func (c ExperimentalConfig) MarshalJSON() ([]byte, error) {
	type plain ExperimentalConfig
	b, err := json.Marshal(plain(c))
	if err != nil || len(c.Extra) == 0 {
		return b, err
	}
	all := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range c.Extra {
		all[k] = v
	}
	return json.Marshal(all)
}

var experimentalKeys = []string{"advantage_balance", "epsilon", "epsilon_high", "importance_sampling_level",
	"variant_k2_tau", "learning_rate", "mask_prob_ratio", "max_negative_advantage_importance_sampling_weight",
	"ppo", "precalculate_logprobs", "scale_rewards"}

// TrajectoryGroup is a set of rollouts of one scenario (the trajectory_groups items of log and training-job requests). Unknown
// keys are accepted and kept in the stored request.
type TrajectoryGroup struct {
	Trajectories []Trajectory      `json:"trajectories"`
	Exceptions   []json.RawMessage `json:"exceptions,omitempty"`
	Metadata     map[string]any    `json:"metadata,omitempty"`
	Metrics      map[string]any    `json:"metrics,omitempty"`
	Logs         []any             `json:"logs,omitempty"`
}

// Trajectory is one rollout: the conversation (plain messages and sampled
// choices), its tools, its reward and its metrics.
type Trajectory struct {
	MessagesAndChoices  []json.RawMessage `json:"messages_and_choices"`
	Reward              *float64          `json:"reward"`
	Tools               []json.RawMessage `json:"tools,omitempty"`
	AdditionalHistories []json.RawMessage `json:"additional_histories,omitempty"`
	Metrics             map[string]any    `json:"metrics,omitempty"`
	Metadata            map[string]any    `json:"metadata,omitempty"`
	Logs                []any             `json:"logs,omitempty"`
}
