package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"

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

type modelOutput struct{ Body *training.Model }

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
}

type modelLogOutput struct{ Body *training.LogRes }

type checkpointListInput struct {
	ModelID string `path:"model_id"`
	After   string `query:"after" doc:"id of the last checkpoint of the previous page"`
	Limit   int    `query:"limit" default:"20" minimum:"1" maximum:"100"`
	Order   string `query:"order" default:"asc" enum:"asc,desc"`
}

type checkpointListOutput struct {
	Body *training.Page[training.Checkpoint]
}

type checkpointDeleteInput struct {
	ModelID string `path:"model_id"`
	Body    struct {
		_     struct{} `additionalProperties:"true"`
		Steps []int64  `json:"steps"`
	}
}

type checkpointDeleteOutput struct {
	Body *training.DeleteCheckpointsRes
}

type modelDeleteOutput struct{ Body *training.DeleteModelRes }

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

type jobIDOutput struct {
	Body struct {
		ID string `json:"id"`
	}
}

type jobPath struct {
	JobID string `path:"training_job_id"`
}

type jobOutput struct{ Body *training.Job }

type eventListInput struct {
	JobID string `path:"training_job_id"`
	After string `query:"after" doc:"id of the last event already seen"`
	Limit int    `query:"limit" default:"20" minimum:"1" maximum:"100"`
}

type eventListOutput struct {
	Body *training.Page[training.Event]
}

func (h *Handler) registerTraining() {
	svc := h.cfg.Training
	op := func(id, method, path, summary string) huma.Operation {
		return *h.operation(styleWeave, huma.Operation{OperationID: id, Method: method, Path: "/v1/preview" + path,
			Summary: summary, Tags: []string{"training"}})
	}
	// model and job routes first find the resource's project, then authorize.
	modelFor := func(ctx context.Context, id string, write bool) (*training.Model, error) {
		m, err := svc.GetModel(ctx, id)
		if err != nil {
			return nil, err
		}
		return m, h.authorize(ctx, m.ProjectID(), write)
	}
	jobFor := func(ctx context.Context, id string, write bool) (*training.Job, error) {
		j, err := svc.GetJob(ctx, id)
		if err != nil {
			return nil, err
		}
		return j, h.authorize(ctx, j.ProjectID(), write)
	}

	huma.Register(h.api, op("training-model-create", http.MethodPost, "/models", "Register a model (or get it with return_existing)"),
		func(ctx context.Context, in *modelCreateInput) (*modelOutput, error) {
			var req training.CreateModelReq
			if err := decodeTraining(in.RawBody, &req); err != nil {
				return nil, err
			}
			entity := req.EntityFor(ctx)
			req.Entity = &entity
			if err := h.authorize(ctx, entity+"/"+req.Project, true); err != nil {
				if errors.Is(err, weft.ErrBadProjectID) {
					return nil, trainingError(&training.FieldError{Path: "project", Msg: err.Error()})
				}
				return nil, err
			}
			m, err := svc.CreateModel(ctx, &req)
			return &modelOutput{Body: m}, trainingError(err)
		})
	huma.Register(h.api, op("training-model-get", http.MethodGet, "/models/{model_id}", "Get a model"),
		func(ctx context.Context, in *modelPath) (*modelOutput, error) {
			m, err := modelFor(ctx, in.ModelID, false)
			return &modelOutput{Body: m}, err
		})
	huma.Register(h.api, op("training-model-delete", http.MethodDelete, "/models/{model_id}", "Delete a model, its checkpoints, jobs and events"),
		func(ctx context.Context, in *modelPath) (*modelDeleteOutput, error) {
			if _, err := modelFor(ctx, in.ModelID, true); err != nil {
				return nil, err
			}
			res, err := svc.DeleteModel(ctx, in.ModelID)
			return &modelDeleteOutput{Body: res}, err
		})
	huma.Register(h.api, op("training-model-log", http.MethodPost, "/models/{model_id}/log", "Log trajectories and calculate metrics"),
		func(ctx context.Context, in *modelLogInput) (*modelLogOutput, error) {
			var req training.LogReq
			if err := decodeTraining(in.RawBody, &req); err != nil {
				return nil, err
			}
			if _, err := modelFor(ctx, in.ModelID, true); err != nil {
				return nil, err
			}
			res, err := svc.Log(ctx, in.ModelID, &req)
			return &modelLogOutput{Body: res}, trainingError(err)
		})
	huma.Register(h.api, op("training-checkpoint-list", http.MethodGet, "/models/{model_id}/checkpoints", "List a model's checkpoints"),
		func(ctx context.Context, in *checkpointListInput) (*checkpointListOutput, error) {
			if _, err := modelFor(ctx, in.ModelID, false); err != nil {
				return nil, err
			}
			page, err := svc.ListCheckpoints(ctx, in.ModelID, training.ListParams{After: in.After, Limit: in.Limit, Order: in.Order})
			return &checkpointListOutput{Body: page}, trainingError(err)
		})
	huma.Register(h.api, op("training-checkpoint-delete", http.MethodDelete, "/models/{model_id}/checkpoints", "Delete checkpoints by step"),
		func(ctx context.Context, in *checkpointDeleteInput) (*checkpointDeleteOutput, error) {
			if _, err := modelFor(ctx, in.ModelID, true); err != nil {
				return nil, err
			}
			res, err := svc.DeleteCheckpoints(ctx, in.ModelID, in.Body.Steps)
			return &checkpointDeleteOutput{Body: res}, err
		})
	huma.Register(h.api, op("training-job-create", http.MethodPost, "/training-jobs", "Queue an RL training job"),
		func(ctx context.Context, in *jobCreateInput) (*jobIDOutput, error) {
			var req training.CreateJobReq
			if err := decodeTraining(in.RawBody, &req); err != nil {
				return nil, err
			}
			if _, err := modelFor(ctx, req.ModelID, true); err != nil {
				return nil, err
			}
			job, err := svc.CreateJob(ctx, &req)
			return jobID(job, err)
		})
	huma.Register(h.api, op("training-sft-job-create", http.MethodPost, "/sft-training-jobs", "Queue a supervised fine-tuning job"),
		func(ctx context.Context, in *sftJobCreateInput) (*jobIDOutput, error) {
			var req training.CreateSFTJobReq
			if err := decodeTraining(in.RawBody, &req); err != nil {
				return nil, err
			}
			if _, err := modelFor(ctx, req.ModelID, true); err != nil {
				return nil, err
			}
			job, err := svc.CreateSFTJob(ctx, &req)
			return jobID(job, err)
		})
	huma.Register(h.api, op("training-job-get", http.MethodGet, "/training-jobs/{training_job_id}", "Get a training job's status"),
		func(ctx context.Context, in *jobPath) (*jobOutput, error) {
			j, err := jobFor(ctx, in.JobID, false)
			return &jobOutput{Body: j}, err
		})
	huma.Register(h.api, op("training-job-cancel", http.MethodPost, "/training-jobs/{training_job_id}/cancel", "Cancel a training job"),
		func(ctx context.Context, in *jobPath) (*jobOutput, error) {
			if _, err := jobFor(ctx, in.JobID, true); err != nil {
				return nil, err
			}
			j, err := svc.CancelJob(ctx, in.JobID)
			return &jobOutput{Body: j}, err
		})
	huma.Register(h.api, op("training-job-events", http.MethodGet, "/training-jobs/{training_job_id}/events", "List a training job's events"),
		func(ctx context.Context, in *eventListInput) (*eventListOutput, error) {
			if _, err := jobFor(ctx, in.JobID, false); err != nil {
				return nil, err
			}
			page, err := svc.ListEvents(ctx, in.JobID, training.ListParams{After: in.After, Limit: in.Limit})
			return &eventListOutput{Body: page}, trainingError(err)
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

func jobID(job *training.Job, err error) (*jobIDOutput, error) {
	if err != nil {
		return nil, trainingError(err)
	}
	out := &jobIDOutput{}
	out.Body.ID = job.ID
	return out, nil
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
		return trainingError(&training.FieldError{Path: typeErr.Field, Msg: "expected " + typeErr.Type.Kind().String() + ", got " + typeErr.Value})
	default:
		return trainingError(&training.FieldError{Msg: err.Error()})
	}
}

// trainingError renders a training.FieldError as FastAPI's 422 list.
func trainingError(err error) error {
	var fe *training.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	location := "body"
	if fe.Path == "limit" || fe.Path == "order" || fe.Path == "after" {
		location = "query"
	}
	if fe.Path != "" {
		location += "." + strings.TrimPrefix(fe.Path, ".")
	}
	return renderValidation(styleWeave, "", []*huma.ErrorDetail{{Location: location, Message: fe.Msg}})
}
