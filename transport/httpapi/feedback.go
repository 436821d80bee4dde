package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft/feedback"
)

// body is an operation input or output that is just a JSON body.
type body[T any] struct {
	Body T
}

// QueueIDInput names a queue in the path and its project in the query.
type QueueIDInput struct {
	QueueID   string `path:"queue_id"`
	ProjectID string `query:"project_id" required:"true" doc:"<entity>/<project>"`
}

// QueueBodyInput is a request body for the queue named in the path.
type QueueBodyInput[T any] struct {
	QueueID string `path:"queue_id"`
	Body    T
}

// ItemProgressInput is the body of a progress update of one queue item.
type ItemProgressInput struct {
	QueueID string `path:"queue_id"`
	ItemID  string `path:"item_id"`
	Body    feedback.ItemProgressReq
}

// queueOutput wraps a queue as {"queue": …}.
type queueOutput struct {
	Queue feedback.Queue `json:"queue"`
}

// feedbackRoute registers one weave-style feedback operation whose body names
// the project: it authorizes the project (write for writes), then calls run.
func feedbackRoute[I, O any](h *Handler, op huma.Operation, write bool, project func(*I) []string, run func(context.Context, *I) (O, error)) {
	op.Tags = []string{"feedback"}
	huma.Register(h.api, *h.operation(styleWeave, op), func(ctx context.Context, in *I) (*body[O], error) {
		for _, projectID := range project(in) {
			if err := h.authorize(ctx, projectID, write); err != nil {
				return nil, err
			}
		}
		out, err := run(ctx, in)
		if err != nil {
			return nil, err
		}
		return &body[O]{Body: out}, nil
	})
}

func one(projectID string) []string { return []string{projectID} }

func (h *Handler) registerFeedback() {
	svc := h.cfg.Feedback
	post := func(id, path, summary string) huma.Operation {
		return huma.Operation{OperationID: id, Method: http.MethodPost, Path: path, Summary: summary}
	}
	feedbackRoute(h, post("feedback-create", "/feedback/create", "Store one feedback row"), true,
		func(in *body[feedback.CreateReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *body[feedback.CreateReq]) (feedback.CreateRes, error) {
			return svc.Create(ctx, in.Body)
		})
	feedbackRoute(h, post("feedback-batch-create", "/feedback/batch/create", "Store feedback rows, all or none"), true,
		func(in *body[feedback.BatchCreateReq]) []string {
			var projects []string
			seen := map[string]bool{}
			for _, item := range in.Body.Batch {
				if !seen[item.ProjectID] {
					seen[item.ProjectID] = true
					projects = append(projects, item.ProjectID)
				}
			}
			return projects
		},
		func(ctx context.Context, in *body[feedback.BatchCreateReq]) (feedback.BatchCreateRes, error) {
			return svc.BatchCreate(ctx, in.Body)
		})
	feedbackRoute(h, post("feedback-replace", "/feedback/replace", "Replace a feedback row with a new one"), true,
		func(in *body[feedback.ReplaceReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *body[feedback.ReplaceReq]) (feedback.CreateRes, error) {
			return svc.Replace(ctx, in.Body)
		})
	feedbackRoute(h, post("feedback-query", "/feedback/query", "List feedback rows"), false,
		func(in *body[feedback.QueryReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *body[feedback.QueryReq]) (feedback.QueryRes, error) {
			return svc.Query(ctx, in.Body)
		})
	feedbackRoute(h, post("feedback-purge", "/feedback/purge", "Delete feedback rows by id"), true,
		func(in *body[feedback.PurgeReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *body[feedback.PurgeReq]) (feedback.PurgeRes, error) {
			return svc.Purge(ctx, in.Body)
		})

	feedbackRoute(h, post("annotation-queue-create", "/annotation_queues", "Create an annotation queue"), true,
		func(in *body[feedback.CreateQueueReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *body[feedback.CreateQueueReq]) (feedback.CreateQueueRes, error) {
			return svc.CreateQueue(ctx, in.Body)
		})
	feedbackRoute(h, huma.Operation{OperationID: "annotation-queue-read", Method: http.MethodGet, Path: "/annotation_queues/{queue_id}", Summary: "Read an annotation queue"}, false,
		func(in *QueueIDInput) []string { return one(in.ProjectID) },
		func(ctx context.Context, in *QueueIDInput) (queueOutput, error) {
			q, err := svc.ReadQueue(ctx, in.ProjectID, in.QueueID)
			return queueOutput{Queue: q}, err
		})
	feedbackRoute(h, huma.Operation{OperationID: "annotation-queue-update", Method: http.MethodPut, Path: "/annotation_queues/{queue_id}", Summary: "Change an annotation queue"}, true,
		func(in *QueueBodyInput[feedback.UpdateQueueReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *QueueBodyInput[feedback.UpdateQueueReq]) (queueOutput, error) {
			in.Body.QueueID = in.QueueID
			q, err := svc.UpdateQueue(ctx, in.Body)
			return queueOutput{Queue: q}, err
		})
	feedbackRoute(h, huma.Operation{OperationID: "annotation-queue-delete", Method: http.MethodDelete, Path: "/annotation_queues/{queue_id}", Summary: "Delete an annotation queue"}, true,
		func(in *QueueIDInput) []string { return one(in.ProjectID) },
		func(ctx context.Context, in *QueueIDInput) (queueOutput, error) {
			q, err := svc.DeleteQueue(ctx, in.ProjectID, in.QueueID)
			return queueOutput{Queue: q}, err
		})
	feedbackRoute(h, post("annotation-queues-query", "/annotation_queues/query", "List annotation queues"), false,
		func(in *body[feedback.QueryQueuesReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *body[feedback.QueryQueuesReq]) (feedback.QueryQueuesRes, error) {
			return svc.QueryQueues(ctx, in.Body)
		})
	feedbackRoute(h, post("annotation-queue-items-add", "/annotation_queues/{queue_id}/items", "Add calls to an annotation queue"), true,
		func(in *QueueBodyInput[feedback.AddQueueItemsReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *QueueBodyInput[feedback.AddQueueItemsReq]) (feedback.AddQueueItemsRes, error) {
			in.Body.QueueID = in.QueueID
			return svc.AddQueueItems(ctx, in.Body)
		})
	feedbackRoute(h, post("annotation-queue-items-query", "/annotation_queues/{queue_id}/items/query", "List the items of an annotation queue"), false,
		func(in *QueueBodyInput[feedback.QueryQueueItemsReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *QueueBodyInput[feedback.QueryQueueItemsReq]) (feedback.QueryQueueItemsRes, error) {
			in.Body.QueueID = in.QueueID
			return svc.QueryQueueItems(ctx, in.Body)
		})
	feedbackRoute(h, post("annotation-queue-item-progress", "/annotation_queues/{queue_id}/items/{item_id}/progress", "Record the caller's progress on a queue item"), true,
		func(in *ItemProgressInput) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *ItemProgressInput) (feedback.ItemProgressRes, error) {
			in.Body.QueueID, in.Body.ItemID = in.QueueID, in.ItemID
			item, err := svc.UpdateItemProgress(ctx, in.Body)
			return feedback.ItemProgressRes{Item: item}, err
		})
	feedbackRoute(h, post("annotation-queues-stats", "/annotation_queues/stats", "Count items of annotation queues"), false,
		func(in *body[feedback.QueueStatsReq]) []string { return one(in.Body.ProjectID) },
		func(ctx context.Context, in *body[feedback.QueueStatsReq]) (feedback.QueueStatsRes, error) {
			return svc.QueueStats(ctx, in.Body)
		})
}
