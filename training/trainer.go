package training

import (
	"context"
	"encoding/json"
)

// Trainer runs one training job: it reads the job's inputs, reports progress
// through report, and returns the new checkpoint's files. A Trainer must call
// report.Started before any report.Step. Returning an error fails this attempt;
// the job is retried until its attempts are used up, then fails with the error's
// text as training_failed's error_message. ctx ends when the job is cancelled or
// times out. Package training/trainertest checks an implementation against
// this contract (exectrainer's and localtrainer's tests run it).
type Trainer interface {
	Train(ctx context.Context, job *TrainJob, report Reporter) (*TrainResult, error)
}

// TrainJob is what a Trainer gets: the job, its model, the checkpoint to start
// from and the data.
type TrainJob struct {
	ID        string
	Kind      string // KindRL or KindSFT
	Attempt   int
	ProjectID string
	ModelID   string
	ModelName string
	BaseModel string
	// Step is the step of the checkpoint training starts from; the result is
	// saved as Step+1.
	Step int64
	// PreviousCheckpointDir holds the files of checkpoint Step, or is "" when that
	// checkpoint has none (the untrained step 0).
	PreviousCheckpointDir string
	// WorkDir is an empty directory for the trainer's scratch files and its
	// output checkpoint; it is removed after the job.
	WorkDir string

	// TrajectoryGroups (RL) are the groups exactly as the client sent them.
	TrajectoryGroups json.RawMessage
	// ExperimentalConfig (RL) is the job's config with nulls dropped and
	// kimi_k2_tau spelled variant_k2_tau; "{}" when none was sent.
	ExperimentalConfig json.RawMessage

	// SFTDataFile (SFT) is a JSON-lines file, one conversation per line
	// ({"messages": [...], "tools": [...]} or a trajectory with
	// messages_and_choices).
	SFTDataFile string
	// SFTConfig (SFT) is the config as sent ({batch_size, learning_rate}); "{}"
	// when none was sent.
	SFTConfig json.RawMessage
}

// Reporter records a running job's progress as events.
type Reporter interface {
	// Started records training_started with the number of gradient steps the
	// trainer will run.
	Started(ctx context.Context, numSequences int) error
	// Step records one gradient_step; only numbers (and booleans, as 0/1) are
	// kept so that every value reads as a float. An RL job's steps also get
	// the metrics of its trajectory groups (reward, reward_std_dev,
	// exception_rate, num_groups_submitted, ...) under the names the trainer
	// did not report.
	Step(ctx context.Context, metrics map[string]any) error
}

// TrainResult is a finished job's output.
type TrainResult struct {
	// CheckpointDir holds the new checkpoint's files (a LoRA adapter directory).
	// "" means nothing was trained: the new step reuses the previous files.
	CheckpointDir string
	// Metrics are added to the new checkpoint's metrics, next to the averages of
	// the gradient steps.
	Metrics map[string]float64
}
