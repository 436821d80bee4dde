package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/training"
)

// The request bodies below document the wire shape and accept null for every
// optional field and unknown keys anywhere (newer clients send more); the
// handlers decode RawBody into the training package's request types.

type modelCreateInput struct {
	Body struct {
		_              struct{} `additionalProperties:"true"`
		Entity         *string  `json:"entity,omitempty" nullable:"true" doc:"defaults to the API key's entity"`
		Project        string   `json:"project"`
		Name           string   `json:"name"`
		BaseModel      string   `json:"base_model"`
		ReturnExisting *bool    `json:"return_existing,omitempty" nullable:"true" doc:"return the model of that name if it exists (default false: 409)"`
	}
	RawBody []byte
}

type modelPath struct {
	ModelID string `path:"model_id"`
}

// trajectoryGroupsField documents trajectory_groups (an array of group
// objects) and is validated as such, but is not decoded here: the
// handler decodes the raw body into the training types once. Decoding it into
// generic maps only to drop them was the largest cost of posting a job.
type trajectoryGroupsField struct{}

func (trajectoryGroupsField) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeArray, Items: &huma.Schema{Type: huma.TypeObject, AdditionalProperties: true},
		Examples: []any{[]any{map[string]any{
			"trajectories": []any{map[string]any{
				"messages_and_choices": []any{
					map[string]any{"role": "user", "content": "2+2?"},
					map[string]any{"role": "assistant", "content": "4"},
				},
				"reward":   1,
				"metrics":  map[string]any{"correct": 1},
				"metadata": map[string]any{"task": "arithmetic"},
			}},
			"metadata": map[string]any{"step": "1"},
		}}}}
}

func (*trajectoryGroupsField) UnmarshalJSON([]byte) error { return nil }

type modelLogInput struct {
	ModelID string `path:"model_id"`
	Body    struct {
		_                struct{}              `additionalProperties:"true"`
		Split            *string               `json:"split,omitempty" nullable:"true" doc:"default val"`
		TrajectoryGroups trajectoryGroupsField `json:"trajectory_groups"`
	}
	RawBody []byte
	log     training.LogReq // RawBody, decoded
}

type checkpointListInput struct {
	ModelID string `path:"model_id"`
	After   string `query:"after" doc:"id of the last checkpoint of the previous page"`
	Limit   int    `query:"limit" default:"20" minimum:"1" maximum:"100"`
	Order   string `query:"order" default:"asc" enum:"asc,desc"`
}

type checkpointDeleteInput struct {
	ModelID string `path:"model_id"`
	Body    struct {
		_     struct{} `additionalProperties:"true"`
		Steps []int64  `json:"steps"`
	}
}

type jobCreateInput struct {
	Body struct {
		_                  struct{}              `additionalProperties:"true"`
		ModelID            string                `json:"model_id"`
		TrajectoryGroups   trajectoryGroupsField `json:"trajectory_groups"`
		ExperimentalConfig any                   `json:"experimental_config,omitempty" type:"object" nullable:"true" doc:"object; null or missing keys use the trainer's defaults; kimi_k2_tau is variant_k2_tau"`
	}
	RawBody []byte
}

type sftJobCreateInput struct {
	Body struct {
		_                  struct{} `additionalProperties:"true"`
		ModelID            string   `json:"model_id"`
		TrainingDataURL    *string  `json:"training_data_url,omitempty" nullable:"true" doc:"http(s) URL, trace:///<entity>/<project>/object/<name>:<version> or wandb-artifact:///<entity>/<project>/<name>:<version>"`
		TrainingFolderURL  *string  `json:"training_folder_url,omitempty" nullable:"true" doc:"older name of training_data_url"`
		Config             any      `json:"config,omitempty" type:"object" nullable:"true" doc:"{batch_size, learning_rate}"`
		ExperimentalConfig any      `json:"experimental_config,omitempty" type:"object" nullable:"true"`
	}
	RawBody []byte
}

// jobIDOutputBody answers a job creation with the new job's id.
type jobIDOutputBody struct {
	ID string `json:"id"`
}

type jobPath struct {
	JobID string `path:"training_job_id"`
}

type eventListInput struct {
	JobID string `path:"training_job_id"`
	After string `query:"after" doc:"id of the last event already seen"`
	Limit int    `query:"limit" default:"20" minimum:"1" maximum:"100"`
}

func (h *Handler) registerTraining() {
	svc := h.cfg.Training
	op := func(id, method, path, summary string) huma.Operation {
		return huma.Operation{OperationID: id, Method: method, Path: "/v1/preview" + path, Summary: summary, Tags: []string{"training"}}
	}
	// Model and job routes read the model or job they touch, for its project.
	modelNamed := func(ctx context.Context, id string) (*training.Model, []string, error) {
		m, err := svc.GetModel(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		return m, one(m.ProjectID()), nil
	}
	jobNamed := func(ctx context.Context, id string) (*training.Job, []string, error) {
		j, err := svc.GetJob(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		return j, one(j.ProjectID()), nil
	}
	modelInPath := func(ctx context.Context, in *modelPath) (string, []string, error) {
		_, projects, err := modelNamed(ctx, in.ModelID)
		return in.ModelID, projects, err
	}
	jobInPath := func(ctx context.Context, in *jobPath) (string, []string, error) {
		_, projects, err := jobNamed(ctx, in.JobID)
		return in.JobID, projects, err
	}

	route(h, op("training-model-create", http.MethodPost, "/models", "Register a model (or get it with return_existing)"), true,
		func(ctx context.Context, in *modelCreateInput) (*training.CreateModelReq, []string, error) {
			req := &training.CreateModelReq{}
			if err := decodeTraining(in.RawBody, req); err != nil {
				return nil, nil, err
			}
			entity := req.EntityFor(ctx)
			req.Entity = &entity
			projectID := entity + "/" + req.Project
			if _, _, err := weft.ParseProjectID(projectID); err != nil {
				return nil, nil, &training.FieldError{Path: "project", Msg: err.Error()}
			}
			return req, one(projectID), nil
		}, svc.CreateModel)
	route(h, op("training-model-get", http.MethodGet, "/models/{model_id}", "Get a model"), false,
		func(ctx context.Context, in *modelPath) (*training.Model, []string, error) {
			return modelNamed(ctx, in.ModelID)
		},
		found[*training.Model])
	route(h, op("training-model-delete", http.MethodDelete, "/models/{model_id}", "Delete a model, its checkpoints, jobs and events"), true,
		modelInPath, svc.DeleteModel)
	route(h, op("training-model-log", http.MethodPost, "/models/{model_id}/log", "Log trajectories and calculate metrics"), true,
		func(ctx context.Context, in *modelLogInput) (*modelLogInput, []string, error) {
			if err := decodeTraining(in.RawBody, &in.log); err != nil {
				return nil, nil, err
			}
			_, projects, err := modelNamed(ctx, in.ModelID)
			return in, projects, err
		}, func(ctx context.Context, in *modelLogInput) (*training.LogRes, error) {
			return svc.Log(ctx, in.ModelID, &in.log)
		})
	route(h, op("training-checkpoint-list", http.MethodGet, "/models/{model_id}/checkpoints", "List a model's checkpoints"), false,
		func(ctx context.Context, in *checkpointListInput) (*checkpointListInput, []string, error) {
			_, projects, err := modelNamed(ctx, in.ModelID)
			return in, projects, err
		}, func(ctx context.Context, in *checkpointListInput) (*training.Page[training.Checkpoint], error) {
			return svc.ListCheckpoints(ctx, in.ModelID, training.ListParams{After: in.After, Limit: in.Limit, Order: in.Order})
		})
	route(h, op("training-checkpoint-delete", http.MethodDelete, "/models/{model_id}/checkpoints", "Delete checkpoints by step"), true,
		func(ctx context.Context, in *checkpointDeleteInput) (*checkpointDeleteInput, []string, error) {
			_, projects, err := modelNamed(ctx, in.ModelID)
			return in, projects, err
		}, func(ctx context.Context, in *checkpointDeleteInput) (*training.DeleteCheckpointsRes, error) {
			return svc.DeleteCheckpoints(ctx, in.ModelID, in.Body.Steps)
		})
	route(h, op("training-job-create", http.MethodPost, "/training-jobs", "Queue an RL training job"), true,
		func(ctx context.Context, in *jobCreateInput) (*training.CreateJobReq, []string, error) {
			req := &training.CreateJobReq{}
			if err := decodeTraining(in.RawBody, req); err != nil {
				return nil, nil, err
			}
			_, projects, err := modelNamed(ctx, req.ModelID)
			return req, projects, err
		}, jobCreated(svc.CreateJob))
	route(h, op("training-sft-job-create", http.MethodPost, "/sft-training-jobs", "Queue a supervised fine-tuning job"), true,
		func(ctx context.Context, in *sftJobCreateInput) (*training.CreateSFTJobReq, []string, error) {
			req := &training.CreateSFTJobReq{}
			if err := decodeTraining(in.RawBody, req); err != nil {
				return nil, nil, err
			}
			_, projects, err := modelNamed(ctx, req.ModelID)
			return req, projects, err
		}, jobCreated(svc.CreateSFTJob))
	route(h, op("training-job-get", http.MethodGet, "/training-jobs/{training_job_id}", "Get a training job's status"), false,
		func(ctx context.Context, in *jobPath) (*training.Job, []string, error) {
			return jobNamed(ctx, in.JobID)
		},
		found[*training.Job])
	route(h, op("training-job-cancel", http.MethodPost, "/training-jobs/{training_job_id}/cancel", "Cancel a training job"), true,
		jobInPath, svc.CancelJob)
	route(h, op("training-job-events", http.MethodGet, "/training-jobs/{training_job_id}/events", "List a training job's events"), false,
		func(ctx context.Context, in *eventListInput) (*eventListInput, []string, error) {
			_, projects, err := jobNamed(ctx, in.JobID)
			return in, projects, err
		}, func(ctx context.Context, in *eventListInput) (*training.Page[training.Event], error) {
			return svc.ListEvents(ctx, in.JobID, training.ListParams{After: in.After, Limit: in.Limit})
		})

	// Handlers that read RawBody besides Body are documented by huma as taking
	// raw bytes; document the JSON body they validate and decode instead.
	for path, input := range map[string]reflect.Type{
		"/models":                reflect.TypeFor[modelCreateInput](),
		"/models/{model_id}/log": reflect.TypeFor[modelLogInput](),
		"/training-jobs":         reflect.TypeFor[jobCreateInput](),
		"/sft-training-jobs":     reflect.TypeFor[sftJobCreateInput](),
	} {
		body, _ := input.FieldByName("Body")
		schema := h.api.OpenAPI().Components.Schemas.Schema(body.Type, true, input.Name()+"Body")
		h.api.OpenAPI().Paths["/v1/preview"+path].Post.RequestBody.Content = map[string]*huma.MediaType{
			"application/json": {Schema: schema},
		}
	}
}

// jobCreated answers a job creation with the job's id.
func jobCreated[Req any](create func(context.Context, *Req) (*training.Job, error)) func(context.Context, *Req) (jobIDOutputBody, error) {
	return func(ctx context.Context, req *Req) (jobIDOutputBody, error) {
		job, err := create(ctx, req)
		if err != nil {
			return jobIDOutputBody{}, err
		}
		return jobIDOutputBody{ID: job.ID}, nil
	}
}

// decodeTraining decodes a request body the schema already accepted into the
// training package's type (which reads nulls, aliases and raw groups); a value
// of the wrong type is a 422 at its field.
func decodeTraining(raw []byte, v any) error {
	err := json.Unmarshal(raw, v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		return &training.FieldError{Path: typeErr.Field, Msg: "expected " + typeErr.Type.Kind().String() + ", got " + typeErr.Value}
	default:
		return &training.FieldError{Msg: err.Error()}
	}
}
