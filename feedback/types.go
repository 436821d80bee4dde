package feedback

import (
	"encoding/json"
	"time"
)

// CreateReq is one feedback row to store (POST /feedback/create, and each item
// of /feedback/batch/create).
//
// Optional fields are pointers so that the JSON null the Weave SDKs send for
// absent values is accepted.
type CreateReq struct {
	ProjectID string `json:"project_id" doc:"<entity>/<project>"`
	// TraceRef is the ref of the call or object the feedback is about. WeaveRef
	// is its Weave spelling; give one of them.
	TraceRef     string          `json:"trace_ref,omitempty" doc:"call or object ref the feedback is attached to"`
	WeaveRef     string          `json:"weave_ref,omitempty" doc:"alias of trace_ref"`
	FeedbackType string          `json:"feedback_type" minLength:"1" maxLength:"256"`
	Payload      json.RawMessage `json:"payload" type:"object" doc:"free-form JSON object, stored exactly as sent"`
	// ID is used as the row id when given; otherwise a UUIDv7 is generated.
	// Storing a second row with an existing id replaces the first.
	ID            *string `json:"id,omitempty" nullable:"true"`
	Creator       *string `json:"creator,omitempty" nullable:"true"`
	AnnotationRef *string `json:"annotation_ref,omitempty" nullable:"true" doc:"annotation spec object ref (annotation types only)"`
	RunnableRef   *string `json:"runnable_ref,omitempty" nullable:"true" doc:"scorer op or object ref (runnable types only)"`
	CallRef       *string `json:"call_ref,omitempty" nullable:"true" doc:"ref of the scorer's call (runnable types only)"`
	TriggerRef    *string `json:"trigger_ref,omitempty" nullable:"true" doc:"object ref of the trigger (runnable types only)"`
	QueueID       *string `json:"queue_id,omitempty" nullable:"true" doc:"live annotation queue of the same project"`

	// Typed scorer and span columns (runnable and agent types only for scorer_*).
	ScorerTags              []string        `json:"scorer_tags,omitempty"`
	ScorerTagReasons        json.RawMessage `json:"scorer_tag_reasons,omitempty" type:"object" nullable:"true"`
	ScorerTagConfidences    json.RawMessage `json:"scorer_tag_confidences,omitempty" type:"object" nullable:"true"`
	ScorerRatings           json.RawMessage `json:"scorer_ratings,omitempty" type:"object" nullable:"true"`
	ScorerRatingReasons     json.RawMessage `json:"scorer_rating_reasons,omitempty" type:"object" nullable:"true"`
	ScorerRatingConfidences json.RawMessage `json:"scorer_rating_confidences,omitempty" type:"object" nullable:"true"`
	ScorerTraceID           *string         `json:"scorer_trace_id,omitempty" nullable:"true"`
	SpanAgentName           *string         `json:"span_agent_name,omitempty" nullable:"true"`
	SpanAgentVersion        *string         `json:"span_agent_version,omitempty" nullable:"true"`
	SpanStatusCode          *string         `json:"span_status_code,omitempty" nullable:"true"`
	SpanConversationID      *string         `json:"span_conversation_id,omitempty" nullable:"true"`
	SpanTraceID             *string         `json:"span_trace_id,omitempty" nullable:"true"`

	// PFUserID and WBUserID are accepted and ignored: the acting user comes
	// from the context (weft.UserID).
	PFUserID *string `json:"pf_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
	WBUserID *string `json:"wb_user_id,omitempty" nullable:"true" doc:"ignored; set by the server"`
}

// CreateRes is the stored row's id, creation time, author and payload after
// processing (a reaction's payload gains its aliases).
type CreateRes struct {
	ID        string          `json:"id"`
	CreatedAt time.Time       `json:"created_at"`
	PFUserID  string          `json:"pf_user_id"`
	WBUserID  string          `json:"wb_user_id" doc:"alias of pf_user_id"`
	Payload   json.RawMessage `json:"payload"`
}

// BatchCreateReq is POST /feedback/batch/create.
type BatchCreateReq struct {
	Batch []CreateReq `json:"batch" maxItems:"100000"`
}

// BatchCreateRes answers each item in request order.
type BatchCreateRes struct {
	Res []CreateRes `json:"res"`
}

// ReplaceReq is a create request plus the id of the row it replaces.
type ReplaceReq struct {
	CreateReq
	FeedbackID string `json:"feedback_id" minLength:"1"`
}

// QueryReq is POST /feedback/query.
type QueryReq struct {
	ProjectID string `json:"project_id"`
	// Fields names the columns to return (all when empty).
	Fields []string `json:"fields,omitempty"`
	// Query filters rows; see [Service.Query] for the operators.
	Query  *Query   `json:"query,omitempty"`
	SortBy []SortBy `json:"sort_by,omitempty"`
	Limit  *int     `json:"limit,omitempty" nullable:"true" minimum:"0"`
	Offset *int     `json:"offset,omitempty" nullable:"true" minimum:"0"`
}

// Query wraps a filter expression in Weave's {"$expr": …} form.
type Query struct {
	Expr json.RawMessage `json:"$expr" example:"{\"$or\":[{\"$eq\":[{\"$getField\":\"id\"},{\"$literal\":\"01936f4e-0000-7000-8000-000000000001\"}]}]}"`
}

// SortBy orders results by one field, "asc" or "desc".
type SortBy struct {
	Field     string `json:"field"`
	Direction string `json:"direction,omitempty" enum:"asc,desc,ASC,DESC"`
}

// QueryRes holds the selected columns of each matching row and the number of
// rows the filter matches before limit and offset.
type QueryRes struct {
	Result     []map[string]any `json:"result"`
	TotalCount int              `json:"total_count"`
}

// PurgeReq is POST /feedback/purge: Query must be `id == <literal>` or an $or of
// such comparisons.
type PurgeReq struct {
	ProjectID string `json:"project_id"`
	Query     Query  `json:"query"`
}

// PurgeRes counts the rows deleted.
type PurgeRes struct {
	NumDeleted int `json:"num_deleted"`
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
