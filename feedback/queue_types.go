package feedback

import (
	"context"
	"time"
)

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

// Annotation states of a queue item.
const (
	StateUnstarted  = "unstarted"
	StateInProgress = "in_progress"
	StateCompleted  = "completed"
	StateSkipped    = "skipped"
)

// MaxQueueNameLength is the longest queue name, in characters (the maxLength
// of the name fields below). A name search longer than this can match nothing
// and is refused.
const MaxQueueNameLength = 1024

// Queue is an annotation queue.
type Queue struct {
	ID          string     `json:"id"`
	ProjectID   string     `json:"project_id"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	ScorerRefs  []string   `json:"scorer_refs"`
	CreatedAt   time.Time  `json:"created_at"`
	CreatedBy   string     `json:"created_by"`
	UpdatedAt   time.Time  `json:"updated_at"`
	DeletedAt   *time.Time `json:"deleted_at"`
}

// CreateQueueReq is POST /annotation_queues.
type CreateQueueReq struct {
	ProjectID   string   `json:"project_id"`
	Name        string   `json:"name" minLength:"1" maxLength:"1024"`
	Description string   `json:"description,omitempty" maxLength:"65536"`
	ScorerRefs  []string `json:"scorer_refs,omitempty"`
	PFUserID    *string  `json:"pf_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
	WBUserID    *string  `json:"wb_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
}

// CreateQueueRes is the new queue's id.
type CreateQueueRes struct {
	ID string `json:"id"`
}

// UpdateQueueReq is PUT /annotation_queues/{queue_id}; nil fields stay.
type UpdateQueueReq struct {
	ProjectID   string   `json:"project_id"`
	QueueID     string   `json:"-"`
	Name        *string  `json:"name,omitempty" nullable:"true" minLength:"1" maxLength:"1024"`
	Description *string  `json:"description,omitempty" nullable:"true" maxLength:"65536"`
	ScorerRefs  []string `json:"scorer_refs,omitempty"`
	PFUserID    *string  `json:"pf_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
	WBUserID    *string  `json:"wb_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
}

// QueryQueuesReq is POST /annotation_queues/query.
type QueryQueuesReq struct {
	ProjectID string   `json:"project_id"`
	Name      *string  `json:"name,omitempty" nullable:"true" doc:"case-insensitive substring of the name (at most 1024 characters)"`
	SortBy    []SortBy `json:"sort_by,omitempty"`
	Limit     *int     `json:"limit,omitempty" nullable:"true" minimum:"0"`
	Offset    *int     `json:"offset,omitempty" nullable:"true" minimum:"0"`
}

// QueryQueuesRes lists queues.
type QueryQueuesRes struct {
	Queues []Queue `json:"queues"`
}

// AddQueueItemsReq is POST /annotation_queues/{queue_id}/items.
type AddQueueItemsReq struct {
	ProjectID     string   `json:"project_id"`
	QueueID       string   `json:"-"`
	CallIDs       []string `json:"call_ids" maxItems:"100000"`
	DisplayFields []string `json:"display_fields,omitempty"`
	PFUserID      *string  `json:"pf_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
	WBUserID      *string  `json:"wb_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
}

// AddQueueItemsRes counts added items and duplicates.
type AddQueueItemsRes struct {
	AddedCount int `json:"added_count"`
	Duplicates int `json:"duplicates"`
}

// QueueItem is one call in a queue.
type QueueItem struct {
	ID              string     `json:"id"`
	ProjectID       string     `json:"project_id"`
	QueueID         string     `json:"queue_id"`
	CallID          string     `json:"call_id"`
	CallStartedAt   time.Time  `json:"call_started_at"`
	CallEndedAt     *time.Time `json:"call_ended_at"`
	CallOpName      string     `json:"call_op_name"`
	CallTraceID     string     `json:"call_trace_id"`
	DisplayFields   []string   `json:"display_fields"`
	AddedBy         *string    `json:"added_by"`
	AnnotationState string     `json:"annotation_state"`
	AnnotatorUserID *string    `json:"annotator_user_id"`
	CreatedAt       time.Time  `json:"created_at"`
	CreatedBy       string     `json:"created_by"`
	UpdatedAt       time.Time  `json:"updated_at"`
	DeletedAt       *time.Time `json:"deleted_at"`
	PositionInQueue *int64     `json:"position_in_queue"`
}

// QueueItemsFilter selects items; set fields are ANDed.
type QueueItemsFilter struct {
	ID               *string  `json:"id,omitempty" nullable:"true"`
	CallID           *string  `json:"call_id,omitempty" nullable:"true"`
	CallOpName       *string  `json:"call_op_name,omitempty" nullable:"true"`
	CallTraceID      *string  `json:"call_trace_id,omitempty" nullable:"true"`
	AddedBy          *string  `json:"added_by,omitempty" nullable:"true"`
	AnnotationStates []string `json:"annotation_states,omitempty"`
}

// QueryQueueItemsReq is POST /annotation_queues/{queue_id}/items/query.
type QueryQueueItemsReq struct {
	ProjectID       string            `json:"project_id"`
	QueueID         string            `json:"-"`
	Filter          *QueueItemsFilter `json:"filter,omitempty"`
	SortBy          []SortBy          `json:"sort_by,omitempty"`
	Limit           *int              `json:"limit,omitempty" nullable:"true" minimum:"0"`
	Offset          *int              `json:"offset,omitempty" nullable:"true" minimum:"0"`
	IncludePosition bool              `json:"include_position,omitempty"`
}

// QueryQueueItemsRes lists items.
type QueryQueueItemsRes struct {
	Items []QueueItem `json:"items"`
}

// ItemProgressReq is POST /annotation_queues/{queue_id}/items/{item_id}/progress.
type ItemProgressReq struct {
	ProjectID       string  `json:"project_id"`
	QueueID         string  `json:"-"`
	ItemID          string  `json:"-"`
	AnnotationState string  `json:"annotation_state"`
	PFUserID        *string `json:"pf_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
	WBUserID        *string `json:"wb_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
}

// ItemProgressRes is the item after the update.
type ItemProgressRes struct {
	Item QueueItem `json:"item"`
}

// QueueStatsReq is POST /annotation_queues/stats.
type QueueStatsReq struct {
	ProjectID string   `json:"project_id"`
	QueueIDs  []string `json:"queue_ids" maxItems:"10000"`
}

// QueueStats counts one queue's items.
type QueueStats struct {
	QueueID        string `json:"queue_id"`
	TotalItems     int    `json:"total_items"`
	CompletedItems int    `json:"completed_items"`
}

// QueueStatsRes lists stats in request order.
type QueueStatsRes struct {
	Stats []QueueStats `json:"stats"`
}
