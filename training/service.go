package training

import (
	"context"
	"encoding/json"
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

	// ListModels pages a project's models in creation order; After is a model
	// id. An unknown project has none.
	ListModels(ctx context.Context, projectID string, p ListParams) (*Page[Model], error)
	// ListJobs pages a model's jobs in creation order; After is a job id.
	ListJobs(ctx context.Context, modelID string, p ListParams) (*Page[Job], error)
	// EachEvent calls fn with every event of a job after the event with id
	// after ("" from the first), in order, reading them in batches: the way to
	// read a long job whole (a page of ListEvents holds at most 100).
	EachEvent(ctx context.Context, jobID, after string, fn func(Event) error) error
	// StepLogs returns the trajectory groups logged for a model at step (every
	// split, oldest first, at most 200 logs).
	StepLogs(ctx context.Context, modelID string, step int64) ([]StepLog, error)
	// JobTrajectories returns the trajectory groups an RL job trains on, as
	// sent; nil for an SFT job, whose data is at its training_data_url.
	// ErrJobNotFound when there is no such job.
	JobTrajectories(ctx context.Context, jobID string) (json.RawMessage, error)
}
