package feedback

import (
	"context"
	"time"
)

// Service stores feedback and annotation queues. Every method is scoped to the
// request's project; the acting user comes from the context (weft.UserID) and
// a user id in a request is ignored. A nil error means the change is committed.
type Service interface {
	// Create validates and stores one feedback row (see [Service.BatchCreate]
	// for the rules). It is not idempotent: sending it twice stores two rows
	// unless the request carries an id.
	Create(ctx context.Context, req CreateReq) (CreateRes, error)

	// BatchCreate validates every item first and then stores them all in one
	// transaction; answers are in request order. One invalid item fails the
	// whole batch with an error naming its index ("batch[3]: …") and nothing is
	// written. Rules, each an ErrInvalid (400) unless said otherwise:
	//   - trace_ref (or weave_ref) is a trace:/// or weave:/// ref of the same
	//     project, of any kind ("weave:///e/p/obj/123:abc" is fine); the call
	//     or object it names need not exist yet.
	//   - id, when given, is a UUID and unique within the batch; otherwise a
	//     UUIDv7 is generated. created_at is the server's clock.
	//   - reaction types: payload {"emoji": <exactly one emoji>}; the stored
	//     payload gains "alias", "detoned" and "detoned_alias".
	//   - note types: payload {"note": <1 to 1024 characters>}.
	//   - annotation types "<prefix>annotation.<name>": annotation_ref is an
	//     object ref with a digest, of the same project, named <name>; payload
	//     is {"value": …}. With Config.AnnotationSpecs set, the spec is read
	//     and the value must satisfy its schema (ErrInvalidAnnotationValue); a
	//     missing or deleted spec is ErrAnnotationSpec. Without it the spec is
	//     not read.
	//   - runnable types "<prefix>runnable.<name>": runnable_ref is an op or
	//     object ref with a digest, of the same project, named <name>; an op
	//     also needs call_ref (a call ref); trigger_ref, when given, is an
	//     object ref; payload is {"output": …}.
	//   - any other type carries none of annotation_ref, runnable_ref, call_ref,
	//     trigger_ref, nor scorer_* fields.
	//   - the stored payload is a JSON object (else ErrValidation, 422) of at
	//     most 1 MiB.
	//   - queue_id, when given, names a live queue of the same project.
	// <prefix> is "wandb." or "trace.".
	BatchCreate(ctx context.Context, req BatchCreateReq) (BatchCreateRes, error)

	// Replace validates the new row completely, then in one transaction deletes
	// the row req.FeedbackID (absent is fine) and stores the new one, which
	// gets a new id (req.ID when given) and a new created_at. When validation
	// or the write fails nothing changes.
	Replace(ctx context.Context, req ReplaceReq) (CreateRes, error)

	// Query lists feedback rows of the project. Filter operators: $eq, $gt,
	// $gte, $lt, $lte, $in, $and, $or, $not over {"$getField": column or
	// "payload.<path>"} and {"$literal": value}. Unknown fields and
	// operators, and NUL characters in literals, field names and paths, are
	// ErrInvalidQuery. A \u0000 inside a stored payload string compares as
	// U+FFFD on PostgreSQL. Sorted by sort_by (columns or payload paths),
	// then created_at and id ascending; limit/offset apply after sorting;
	// TotalCount counts every row the filter matches.
	Query(ctx context.Context, req QueryReq) (QueryRes, error)

	// Purge deletes the rows whose ids the query names; unknown ids are not
	// an error. Any other query, or an id holding NUL, is ErrInvalidQuery.
	Purge(ctx context.Context, req PurgeReq) (PurgeRes, error)

	// PayloadSchema discovers the leaf paths of the payloads of feedback
	// created in a window, and their value types, as Weave's
	// /feedback/payload_schema does (see [PayloadSchemaReq]).
	PayloadSchema(ctx context.Context, req PayloadSchemaReq) (PayloadSchemaRes, error)

	// Stats aggregates values of the payloads of feedback created in a
	// window, per time bucket and over the whole window, as Weave's
	// /feedback/stats does (see [StatsReq]). A bad window, path or
	// aggregation is ErrInvalidQuery.
	Stats(ctx context.Context, req StatsReq) (StatsRes, error)

	// Aggregate counts the scorer tags and sums the scorer ratings of
	// feedback created in a window, per time bucket and group, as Weave's
	// /feedback/aggregate does (see [AggregateReq]). A bad window or
	// bucket width is ErrInvalidQuery.
	Aggregate(ctx context.Context, req AggregateReq) (AggregateRes, error)

	QueueService
}

// CallLookup reads the fields of calls that annotation queue items cache. The
// trace store implements it; [Service.AddQueueItems] skips ids it does not
// return.
type CallLookup interface {
	// LookupCalls returns the live calls among ids, in any order.
	LookupCalls(ctx context.Context, projectID string, ids []string) ([]CallInfo, error)
}

// CallInfo is what a queue item keeps of its call.
type CallInfo struct {
	ID        string
	OpName    string
	TraceID   string
	StartedAt time.Time
	EndedAt   *time.Time
}

// QueueService manages annotation queues, their items and annotators'
// progress. Queues, items and progress records are soft-deleted; deleted ones
// are invisible to every method.
type QueueService interface {
	// CreateQueue stores a new queue (UUIDv7 id) created by the caller.
	CreateQueue(ctx context.Context, req CreateQueueReq) (CreateQueueRes, error)
	// ReadQueue returns a live queue, or ErrQueueNotFound.
	ReadQueue(ctx context.Context, projectID, queueID string) (Queue, error)
	// UpdateQueue changes the fields given and bumps updated_at; with no field
	// given the queue is returned unchanged. ErrQueueNotFound when absent.
	UpdateQueue(ctx context.Context, req UpdateQueueReq) (Queue, error)
	// DeleteQueue soft-deletes a live queue and returns it. ErrQueueNotFound
	// when absent or already deleted.
	DeleteQueue(ctx context.Context, projectID, queueID string) (Queue, error)
	// QueryQueues lists live queues, by default newest first (created_at desc,
	// id asc). Name filters by case-insensitive substring, every character
	// matching itself (% and _ too); a name longer than MaxQueueNameLength or
	// holding NUL is ErrInvalidQuery. Sort fields: id, name, created_at,
	// updated_at; others are ignored.
	QueryQueues(ctx context.Context, req QueryQueuesReq) (QueryQueuesRes, error)
	// AddQueueItems adds one item per call id that the CallLookup finds and the
	// queue does not hold yet, caching the call's op name, trace id and times.
	// Ids already in the queue (or repeated in the request) count as
	// duplicates; unknown call ids are skipped. ErrQueueNotFound when the
	// queue is absent.
	AddQueueItems(ctx context.Context, req AddQueueItemsReq) (AddQueueItemsRes, error)
	// QueryQueueItems lists live items of a queue. Filters are ANDed. Sort
	// fields: call_started_at, call_op_name, created_at, updated_at (others are
	// ignored), then id asc; default created_at asc. With IncludePosition each
	// item carries its 1-based position in the whole queue in that order,
	// computed before the filters, limit and offset. Limit defaults to 50.
	// An unknown queue lists nothing.
	QueryQueueItems(ctx context.Context, req QueryQueueItemsReq) (QueryQueueItemsRes, error)
	// UpdateItemProgress records the caller's progress on an item:
	// in_progress only when the caller has no record yet; completed or skipped
	// only from none or in_progress. Other states, other transitions and items
	// not in the queue are ErrInvalidProgress. Returns the item re-read
	// (without position).
	UpdateItemProgress(ctx context.Context, req ItemProgressReq) (QueueItem, error)
	// QueueStats counts, per requested queue id in request order, the live items
	// and those with at least one completed or skipped record (zeros for
	// unknown ids).
	QueueStats(ctx context.Context, req QueueStatsReq) (QueueStatsRes, error)
}
