package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft/feedback"
)

// queueIDInput names a queue in the path and its project in the query.
type queueIDInput struct {
	QueueID   string `path:"queue_id"`
	ProjectID string `query:"project_id" required:"true" doc:"<entity>/<project>"`
}

// queueBodyInput is a request body for the queue named in the path.
type queueBodyInput[T any] struct {
	QueueID string `path:"queue_id"`
	Body    T
}

// itemProgressInput is the body of a progress update of one queue item.
type itemProgressInput struct {
	QueueID string `path:"queue_id"`
	ItemID  string `path:"item_id"`
	Body    feedback.ItemProgressReq
}

// queueOutput wraps a queue as {"queue": …}.
type queueOutput struct {
	Queue feedback.Queue `json:"queue"`
}

func (h *Handler) registerFeedback() {
	svc := h.cfg.Feedback
	op := func(id, method, path, summary string) huma.Operation {
		return huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary, Tags: []string{"feedback"}}
	}
	post := func(id, path, summary string) huma.Operation { return op(id, http.MethodPost, path, summary) }
	route(h, post("feedback-create", "/feedback/create", "Store one feedback row"), true,
		fromBody(func(r *feedback.CreateReq) string { return r.ProjectID }), byValue(svc.Create))
	route(h, post("feedback-batch-create", "/feedback/batch/create", "Store feedback rows, all or none"), true,
		func(_ context.Context, in *body[feedback.BatchCreateReq]) (*feedback.BatchCreateReq, []string, error) {
			projects := make([]string, len(in.Body.Batch))
			for i, item := range in.Body.Batch {
				projects[i] = item.ProjectID
			}
			return &in.Body, projects, nil
		}, byValue(svc.BatchCreate))
	route(h, post("feedback-replace", "/feedback/replace", "Replace a feedback row with a new one"), true,
		fromBody(func(r *feedback.ReplaceReq) string { return r.ProjectID }), byValue(svc.Replace))
	route(h, post("feedback-query", "/feedback/query", "List feedback rows"), false,
		fromBody(func(r *feedback.QueryReq) string { return r.ProjectID }), byValue(svc.Query))
	route(h, post("feedback-purge", "/feedback/purge", "Delete feedback rows by id"), true,
		fromBody(func(r *feedback.PurgeReq) string { return r.ProjectID }), byValue(svc.Purge))
	route(h, post("feedback-payload-schema", "/feedback/payload_schema", "The paths of feedback payloads and their value types"), false,
		fromBody(func(r *feedback.PayloadSchemaReq) string { return r.ProjectID }), byValue(svc.PayloadSchema))
	route(h, post("feedback-stats", "/feedback/stats", "Values of feedback payloads aggregated per time bucket"), false,
		fromBody(func(r *feedback.StatsReq) string { return r.ProjectID }), byValue(svc.Stats))
	route(h, post("feedback-aggregate", "/feedback/aggregate", "Scorer tags and ratings of feedback per time bucket and group"), false,
		fromBody(func(r *feedback.AggregateReq) string { return r.ProjectID }), byValue(svc.Aggregate))

	route(h, post("annotation-queue-create", "/annotation_queues", "Create an annotation queue"), true,
		fromBody(func(r *feedback.CreateQueueReq) string { return r.ProjectID }), byValue(svc.CreateQueue))
	queueInPath := func(_ context.Context, in *queueIDInput) (*queueIDInput, []string, error) {
		return in, one(in.ProjectID), nil
	}
	route(h, op("annotation-queue-read", http.MethodGet, "/annotation_queues/{queue_id}", "Read an annotation queue"), false,
		queueInPath, func(ctx context.Context, in *queueIDInput) (queueOutput, error) {
			q, err := svc.ReadQueue(ctx, in.ProjectID, in.QueueID)
			return queueOutput{Queue: q}, err
		})
	route(h, op("annotation-queue-update", http.MethodPut, "/annotation_queues/{queue_id}", "Change an annotation queue"), true,
		func(_ context.Context, in *queueBodyInput[feedback.UpdateQueueReq]) (*feedback.UpdateQueueReq, []string, error) {
			in.Body.QueueID = in.QueueID
			return &in.Body, one(in.Body.ProjectID), nil
		}, func(ctx context.Context, req *feedback.UpdateQueueReq) (queueOutput, error) {
			q, err := svc.UpdateQueue(ctx, *req)
			return queueOutput{Queue: q}, err
		})
	route(h, op("annotation-queue-delete", http.MethodDelete, "/annotation_queues/{queue_id}", "Delete an annotation queue"), true,
		queueInPath, func(ctx context.Context, in *queueIDInput) (queueOutput, error) {
			q, err := svc.DeleteQueue(ctx, in.ProjectID, in.QueueID)
			return queueOutput{Queue: q}, err
		})
	route(h, post("annotation-queues-query", "/annotation_queues/query", "List annotation queues"), false,
		fromBody(func(r *feedback.QueryQueuesReq) string { return r.ProjectID }), byValue(svc.QueryQueues))
	route(h, post("annotation-queue-items-add", "/annotation_queues/{queue_id}/items", "Add calls to an annotation queue"), true,
		func(_ context.Context, in *queueBodyInput[feedback.AddQueueItemsReq]) (*feedback.AddQueueItemsReq, []string, error) {
			in.Body.QueueID = in.QueueID
			return &in.Body, one(in.Body.ProjectID), nil
		}, byValue(svc.AddQueueItems))
	route(h, post("annotation-queue-items-query", "/annotation_queues/{queue_id}/items/query", "List the items of an annotation queue"), false,
		func(_ context.Context, in *queueBodyInput[feedback.QueryQueueItemsReq]) (*feedback.QueryQueueItemsReq, []string, error) {
			in.Body.QueueID = in.QueueID
			return &in.Body, one(in.Body.ProjectID), nil
		}, byValue(svc.QueryQueueItems))
	route(h, post("annotation-queue-item-progress", "/annotation_queues/{queue_id}/items/{item_id}/progress", "Record the caller's progress on a queue item"), true,
		func(_ context.Context, in *itemProgressInput) (*feedback.ItemProgressReq, []string, error) {
			in.Body.QueueID, in.Body.ItemID = in.QueueID, in.ItemID
			return &in.Body, one(in.Body.ProjectID), nil
		}, func(ctx context.Context, req *feedback.ItemProgressReq) (feedback.ItemProgressRes, error) {
			item, err := svc.UpdateItemProgress(ctx, *req)
			return feedback.ItemProgressRes{Item: item}, err
		})
	route(h, post("annotation-queues-stats", "/annotation_queues/stats", "Count items of annotation queues"), false,
		fromBody(func(r *feedback.QueueStatsReq) string { return r.ProjectID }), byValue(svc.QueueStats))
}
