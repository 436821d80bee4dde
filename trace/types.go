package trace

import (
	"encoding/json"
	"time"

	"github.com/weftlabs/weft"
)

// MaxDeleteIDs bounds the ids of one CallsDelete.
const MaxDeleteIDs = 1000

// DefaultUsageLimit is CallsUsageReq.Limit when it is not given.
const DefaultUsageLimit = 10000

// StartedCall is the start record of a call, as /call/start and
// /call/upsert_batch take it. On input the Weave names wb_user_id, wb_run_id, wb_run_step are accepted beside the pf_ names;
// pf_user_id is always the acting user, whatever the body says.
type StartedCall struct {
	_ struct{} `additionalProperties:"true"`
	// decoded marks a call read from JSON: its raw members (inputs,
	// attributes, otel_dump) were checked by the decoder and need no second
	// syntax scan. Calls built in Go are checked by the store.
	decoded     bool
	ProjectID   string          `json:"project_id"`
	ID          string          `json:"id,omitempty"`
	OpName      string          `json:"op_name"`
	DisplayName *string         `json:"display_name,omitempty"`
	TraceID     string          `json:"trace_id,omitempty"`
	ParentID    *string         `json:"parent_id,omitempty"`
	ThreadID    *string         `json:"thread_id,omitempty"`
	TurnID      *string         `json:"turn_id,omitempty"`
	StartedAt   time.Time       `json:"started_at"`
	Attributes  json.RawMessage `json:"attributes,omitempty" type:"object" nullable:"true"`
	Inputs      json.RawMessage `json:"inputs,omitempty" type:"object" nullable:"true"`
	OtelDump    json.RawMessage `json:"otel_dump,omitempty" type:"object" nullable:"true"`
	// PfUserID is accepted and ignored: the service stores the acting user.
	PfUserID  *string `json:"pf_user_id,omitempty"`
	PfRunID   *string `json:"pf_run_id,omitempty"`
	PfRunStep *int64  `json:"pf_run_step,omitempty"`
}

// startedCallWire is StartedCall as clients send it: the Weave aliases beside
// the pf_ names. Its embedded fields have no UnmarshalJSON of their own, so a
// decoder fills it in one pass.
type startedCallWire struct {
	startedCallFields
	WbUserID  *string `json:"wb_user_id"`
	WbRunID   *string `json:"wb_run_id"`
	WbRunStep *int64  `json:"wb_run_step"`
}

type startedCallFields StartedCall

func (w *startedCallWire) call() StartedCall {
	s := StartedCall(w.startedCallFields)
	s.PfUserID = firstNonNil(s.PfUserID, w.WbUserID)
	s.PfRunID = firstNonNil(s.PfRunID, w.WbRunID)
	s.PfRunStep = firstNonNil(s.PfRunStep, w.WbRunStep)
	s.decoded = true
	return s
}

// UnmarshalJSON accepts the Weave aliases of the pf_ fields.
func (s *StartedCall) UnmarshalJSON(b []byte) error {
	var w startedCallWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = w.call()
	return nil
}

// EndedCall is the end record of a call, as /call/end and /call/upsert_batch
// take it. wb_run_step_end is accepted for pf_run_step_end. DisplayName, when set, renames the call (the
// TypeScript SDK repeats it on the end).
type EndedCall struct {
	_ struct{} `additionalProperties:"true"`
	// decoded marks a call read from JSON (see StartedCall.decoded).
	decoded     bool
	ProjectID   string          `json:"project_id"`
	ID          string          `json:"id"`
	EndedAt     time.Time       `json:"ended_at"`
	Summary     json.RawMessage `json:"summary,omitempty" type:"object" nullable:"true"`
	Exception   *string         `json:"exception,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
	DisplayName *string         `json:"display_name,omitempty"`
	// PfRunStepEnd is the run step at which the call ended.
	PfRunStepEnd *int64 `json:"pf_run_step_end,omitempty"`
}

// endedCallWire is EndedCall as clients send it, decoded in one pass (see
// startedCallWire).
type endedCallWire struct {
	endedCallFields
	WbRunStepEnd *int64 `json:"wb_run_step_end"`
}

type endedCallFields EndedCall

func (w *endedCallWire) call() EndedCall {
	e := EndedCall(w.endedCallFields)
	e.PfRunStepEnd = firstNonNil(e.PfRunStepEnd, w.WbRunStepEnd)
	e.decoded = true
	return e
}

// UnmarshalJSON accepts the Weave alias wb_run_step_end.
func (e *EndedCall) UnmarshalJSON(b []byte) error {
	var w endedCallWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = w.call()
	return nil
}

// CompletedCall is a call whose start and end are sent together (Weave v2
// calls/complete): the fields of StartedCall and EndedCall in one record.
type CompletedCall struct {
	_            struct{}        `additionalProperties:"true"`
	ProjectID    string          `json:"project_id,omitempty"`
	ID           string          `json:"id"`
	TraceID      string          `json:"trace_id"`
	OpName       string          `json:"op_name"`
	DisplayName  *string         `json:"display_name,omitempty"`
	ParentID     *string         `json:"parent_id,omitempty"`
	ThreadID     *string         `json:"thread_id,omitempty"`
	TurnID       *string         `json:"turn_id,omitempty"`
	StartedAt    time.Time       `json:"started_at"`
	EndedAt      time.Time       `json:"ended_at"`
	Attributes   json.RawMessage `json:"attributes,omitempty" type:"object" nullable:"true"`
	Inputs       json.RawMessage `json:"inputs,omitempty" type:"object" nullable:"true"`
	OtelDump     json.RawMessage `json:"otel_dump,omitempty" type:"object" nullable:"true"`
	Output       json.RawMessage `json:"output,omitempty"`
	Summary      json.RawMessage `json:"summary,omitempty" type:"object" nullable:"true"`
	Exception    *string         `json:"exception,omitempty"`
	PfUserID     *string         `json:"pf_user_id,omitempty"`
	PfRunID      *string         `json:"pf_run_id,omitempty"`
	PfRunStep    *int64          `json:"pf_run_step,omitempty"`
	PfRunStepEnd *int64          `json:"pf_run_step_end,omitempty"`
}

// Parts are the start and the end of the call, as UpsertBatch takes them.
func (c *CompletedCall) Parts() (*StartedCall, *EndedCall) {
	start := &StartedCall{ProjectID: c.ProjectID, ID: c.ID, OpName: c.OpName, DisplayName: c.DisplayName,
		TraceID: c.TraceID, ParentID: c.ParentID, ThreadID: c.ThreadID, TurnID: c.TurnID, StartedAt: c.StartedAt,
		Attributes: c.Attributes, Inputs: c.Inputs, OtelDump: c.OtelDump, PfRunID: c.PfRunID, PfRunStep: c.PfRunStep}
	end := &EndedCall{ProjectID: c.ProjectID, ID: c.ID, EndedAt: c.EndedAt, Summary: c.Summary,
		Exception: c.Exception, Output: c.Output, PfRunStepEnd: c.PfRunStepEnd}
	return start, end
}

// UnmarshalJSON accepts the Weave aliases of the pf_ fields.
func (c *CompletedCall) UnmarshalJSON(b []byte) error {
	type plain CompletedCall
	var w struct {
		plain
		WbUserID     *string `json:"wb_user_id"`
		WbRunID      *string `json:"wb_run_id"`
		WbRunStep    *int64  `json:"wb_run_step"`
		WbRunStepEnd *int64  `json:"wb_run_step_end"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = CompletedCall(w.plain)
	c.PfRunID = firstNonNil(c.PfRunID, w.WbRunID)
	c.PfRunStep = firstNonNil(c.PfRunStep, w.WbRunStep)
	c.PfRunStepEnd = firstNonNil(c.PfRunStepEnd, w.WbRunStepEnd)
	return nil
}

func firstNonNil[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// CallStartReq is the body of /call/start.
type CallStartReq struct {
	Start StartedCall `json:"start"`
}

// CallStartRes gives the (possibly generated) ids of the started call.
type CallStartRes struct {
	ID      string `json:"id"`
	TraceID string `json:"trace_id"`
}

// CallEndReq is the body of /call/end.
type CallEndReq struct {
	End EndedCall `json:"end"`
}

// CallEndRes is empty.
type CallEndRes struct{}

// Batch item modes.
const (
	ModeStart = "start"
	ModeEnd   = "end"
)

// BatchItem is one start or end of a batch: Mode "start" with Start set, or
// "end" with End set.
type BatchItem struct {
	Mode  string
	Start *StartedCall
	End   *EndedCall
	// Err, when set by a transport that could not decode the item, makes the
	// item fail with it (the rest of the batch is still applied).
	Err error
}

// DecodeBatchReq decodes from dec the req of one upsert_batch item: a
// CallStartReq ({"start": {…}}) for ModeStart, a CallEndReq for ModeEnd. The
// result is what json.Unmarshal into those types gives, but each record is
// read once instead of once more for its Weave aliases, which matters for
// batches of thousands. Any other mode is an error.
func DecodeBatchReq(dec *json.Decoder, mode string) (BatchItem, error) {
	item := BatchItem{Mode: mode}
	switch mode {
	case ModeStart:
		var req struct {
			Start startedCallWire `json:"start"`
		}
		if err := dec.Decode(&req); err != nil {
			return item, err
		}
		start := req.Start.call()
		item.Start = &start
	case ModeEnd:
		var req struct {
			End endedCallWire `json:"end"`
		}
		if err := dec.Decode(&req); err != nil {
			return item, err
		}
		end := req.End.call()
		item.End = &end
	default:
		return item, weft.Errorf(ErrInvalidCall, "mode must be %q or %q", ModeStart, ModeEnd)
	}
	return item, nil
}

// UpsertBatchReq is a batch of starts and ends, applied in order.
type UpsertBatchReq struct {
	Batch []BatchItem
}

// BatchResult is the outcome of one batch item: ids for a start, nothing for
// an end, or the error that made the item fail.
type BatchResult struct {
	ID      string `json:"id,omitempty"`
	TraceID string `json:"trace_id,omitempty"`
	// Err is why the item was not stored; nil when it was.
	Err error `json:"-"`
}

// UpsertBatchRes has one result per item, in order.
type UpsertBatchRes struct {
	Res []BatchResult
}

// CallsCompleteReq is the body of /v2/{entity}/{project}/calls/complete.
// ProjectID, when set (from the path), applies to the calls that name none
// and every call must be of it; when "" each call names its own project,
// so that one request may write calls of several.
type CallsCompleteReq struct {
	ProjectID string
	Batch     []CompletedCall
}

// CallUpdateReq renames a call.
type CallUpdateReq struct {
	ProjectID   string `json:"project_id"`
	CallID      string `json:"call_id"`
	DisplayName string `json:"display_name"`
}

// CallUpdateRes is empty.
type CallUpdateRes struct{}

// CallReadReq reads one call.
type CallReadReq struct {
	ProjectID    string `json:"project_id"`
	ID           string `json:"id"`
	IncludeCosts bool   `json:"include_costs,omitempty"`
}

// CallReadRes holds the call, nil when it is not visible.
type CallReadRes struct {
	Call *Call `json:"call"`
}

// Call is a call as reads return it. Summary carries a rebuilt "weave" member
// (status, latency_ms, trace_name or display_name, and costs when asked);
// every other JSON field is the exact text the client sent.
type Call struct {
	ProjectID    string          `json:"project_id"`
	ID           string          `json:"id"`
	OpName       string          `json:"op_name"`
	DisplayName  *string         `json:"display_name"`
	TraceID      string          `json:"trace_id"`
	ParentID     *string         `json:"parent_id"`
	ThreadID     *string         `json:"thread_id"`
	TurnID       *string         `json:"turn_id"`
	StartedAt    time.Time       `json:"started_at"`
	EndedAt      *time.Time      `json:"ended_at"`
	Exception    *string         `json:"exception"`
	Attributes   json.RawMessage `json:"attributes"`
	Inputs       json.RawMessage `json:"inputs"`
	Output       json.RawMessage `json:"output"`
	Summary      json.RawMessage `json:"summary"`
	PfUserID     *string         `json:"pf_user_id"`
	PfRunID      *string         `json:"pf_run_id"`
	PfRunStep    *int64          `json:"pf_run_step"`
	PfRunStepEnd *int64          `json:"pf_run_step_end"`
	DeletedAt    *time.Time      `json:"deleted_at"`

	columns map[string]bool // fields to encode, from CallsQueryReq.Columns; nil: all
	cursor  CallsCursor     // set by CallsQuery
}

// Cursor is the cursor that starts the page after this call, in the order
// of the CallsQuery that returned it (CallsQueryReq.After).
func (c *Call) Cursor() CallsCursor { return c.cursor }

// CallsFilter selects calls; every set field must match (lists match any of
// their values). A nil list is no filter, and so is an empty one, except for
// ThreadIDs and TurnIDs: an empty list of those matches nothing, as Weave
// answers it.
type CallsFilter struct {
	_ struct{} `additionalProperties:"true"`
	// OpNames matches op_name exactly, or, for an entry ending in ":*" (an
	// op ref without its version), every version of that op.
	OpNames    []string `json:"op_names,omitempty"`
	InputRefs  []string `json:"input_refs,omitempty"`
	OutputRefs []string `json:"output_refs,omitempty"`
	ParentIDs  []string `json:"parent_ids,omitempty"`
	TraceIDs   []string `json:"trace_ids,omitempty"`
	CallIDs    []string `json:"call_ids,omitempty"`
	ThreadIDs  []string `json:"thread_ids,omitempty"`
	TurnIDs    []string `json:"turn_ids,omitempty"`
	// UserIDs keeps calls made by one of these users (pf_user_id; Weave's
	// wb_user_ids is accepted for it).
	UserIDs []string `json:"pf_user_ids,omitempty"`
	// RunIDs keeps calls of one of these runs (pf_run_id; Weave's wb_run_ids
	// is accepted for it). A run id without a "/" names a run of the
	// query's project: it is read as "<entity>/<project>/<run id>", the form
	// the SDKs store.
	RunIDs         []string `json:"pf_run_ids,omitempty"`
	TraceRootsOnly bool     `json:"trace_roots_only,omitempty"`

	// The fields below serve Go callers such as the web UI's filters; they
	// are not members of the wire filter.

	// Statuses keeps calls whose status (summary.weave.status: StatusSuccess,
	// StatusError, StatusRunning, StatusDescendantError) is one of these;
	// any other value is ErrInvalidQuery.
	Statuses []string `json:"-"`
	// TraceStatuses makes Statuses read a trace root whose trace holds
	// another call that raised as StatusDescendantError (not StatusSuccess)
	// even when its summary has no status_counts: the roll-up the Python SDK
	// sends and OpenTelemetry spans and the JS SDK do not. The wire filter
	// and summary.weave.status keep Weave's reading (status_counts alone).
	TraceStatuses bool `json:"-"`
	// Models keeps calls whose own usage (summary.usage) names one of these
	// models.
	Models []string `json:"-"`
	// StartedFrom keeps calls started at or after it.
	StartedFrom *time.Time `json:"-"`
	// StartedBefore keeps calls started before it.
	StartedBefore *time.Time `json:"-"`
	// Search keeps calls whose inputs or output hold this text, compared
	// without regard to case: a substring of a string value (or a number as
	// written) in any script, LIKE metacharacters included literally. Only
	// the first MaxSearchTextBytes of each side's text are searched; a term
	// longer than MaxSearchLength is ErrInvalidQuery. Every call is searched,
	// but on PostgreSQL only trace roots are indexed (what a trace list
	// searches): with TraceRootsOnly a search reads the trigram index, without
	// it the project's calls are read one by one.
	Search string `json:"-"`
	// HasFeedback keeps calls that have feedback attached (a feedback row
	// whose trace_ref is the call's trace:/// or weave:/// ref).
	HasFeedback bool `json:"-"`
	// HasChildren keeps calls that have at least one child (a started,
	// undeleted call whose parent_id is theirs): what a tree needs to know
	// of a page of calls to draw which of them expand, in one query.
	HasChildren bool `json:"-"`
}

// UnmarshalJSON accepts Weave's wb_user_ids and wb_run_ids for pf_user_ids
// and pf_run_ids.
func (f *CallsFilter) UnmarshalJSON(b []byte) error {
	type plain CallsFilter
	var w struct {
		plain
		WbUserIDs []string `json:"wb_user_ids"`
		WbRunIDs  []string `json:"wb_run_ids"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*f = CallsFilter(w.plain)
	if f.UserIDs == nil {
		f.UserIDs = w.WbUserIDs
	}
	if f.RunIDs == nil {
		f.RunIDs = w.WbRunIDs
	}
	return nil
}

// SortBy orders a query by one field, "asc" or "desc".
type SortBy struct {
	Field     string `json:"field"`
	Direction string `json:"direction,omitempty" enum:"asc,desc"`
}

// CallsQueryReq selects, orders and pages calls. SortBy nil means
// started_at asc; an empty non-nil SortBy still orders by id asc. Columns,
// when set, limits each call to those fields plus id, project_id, trace_id,
// op_name and started_at.
type CallsQueryReq struct {
	ProjectID    string      `json:"project_id"`
	Filter       CallsFilter `json:"filter,omitzero"`
	SortBy       []SortBy    `json:"sort_by,omitempty"`
	Limit        int         `json:"limit,omitempty" minimum:"0"`
	Offset       int         `json:"offset,omitempty" minimum:"0"`
	Columns      []string    `json:"columns,omitempty"`
	IncludeCosts bool        `json:"include_costs,omitempty"`
	// Query is Weave's calls query, {"$expr": …} (package callquery states
	// its language); calls must meet it as well as Filter. A query that
	// cannot be read, or that uses what is not supported, is
	// ErrInvalidQuery naming it.
	Query json.RawMessage `json:"query,omitempty"`
	// ExpandColumns names the members whose refs the caller expands (the
	// HTTP adapter does, as Weave does); Query and SortBy may not read
	// fields through them.
	ExpandColumns []string `json:"expand_columns,omitempty"`
	// After, for Go callers (it is no member of the wire request), keeps the
	// calls that come after the cursor in the query's order, which must be
	// one field (either direction; id ascending breaks ties): started_at or
	// a numeric one (SortLatency, SortTotalTokens, SortCost, SortReactions).
	// It is the next page by keyset rather than by offset; take the cursor
	// of a page's last call from [Call.Cursor]. With any other sort it is
	// ErrInvalidQuery.
	After *CallsCursor `json:"-"`
}

// CallsCursor names the last call of a page: where the next page starts.
type CallsCursor struct {
	StartedAt time.Time
	ID        string
	// Key is the call's value of a numeric sort key, as the query read it;
	// nil when the call has none (it sorts last). Unused when sorting by
	// started_at.
	Key *float64
}

// CallsQueryStatsReq counts calls.
type CallsQueryStatsReq struct {
	ProjectID string      `json:"project_id"`
	Filter    CallsFilter `json:"filter,omitzero"`
	// Query and ExpandColumns are CallsQueryReq's.
	Query         json.RawMessage `json:"query,omitempty"`
	ExpandColumns []string        `json:"expand_columns,omitempty"`
	Limit         int             `json:"limit,omitempty" minimum:"0"`
}

// CallsQueryStatsRes is the count.
type CallsQueryStatsRes struct {
	Count int64 `json:"count"`
}

// CallsDeleteReq deletes calls with their descendants.
type CallsDeleteReq struct {
	ProjectID string   `json:"project_id"`
	CallIDs   []string `json:"call_ids"`
}

// CallsDeleteRes counts the ids marked deleted.
type CallsDeleteRes struct {
	NumDeleted int `json:"num_deleted"`
}

// CallsUsageReq asks for the usage of calls' subtrees.
type CallsUsageReq struct {
	ProjectID    string   `json:"project_id"`
	CallIDs      []string `json:"call_ids"`
	IncludeCosts bool     `json:"include_costs,omitempty"`
	// Limit bounds the calls loaded per group of traces; a single trace with
	// more calls is ErrTraceTooLarge. Nil means DefaultUsageLimit; a given
	// value below 1 is ErrInvalidQuery, as the reference server answers a
	// "limit": 0 rather than reading it as "no limit", and so is one above
	// MaxUsageLimit.
	Limit *int `json:"limit,omitempty"`
}

// CallsUsageRes maps every requested id to its usage per model (unknown ids
// to an empty map) and lists the unfinished calls of the traces looked at.
type CallsUsageRes struct {
	CallUsage         map[string]map[string]*Usage `json:"call_usage"`
	UnfinishedCallIDs []string                     `json:"unfinished_call_ids"`
}

// MaxUsageLimit bounds CallsUsageReq.Limit and TraceUsageReq.Limit: the
// calls one usage request loads into memory at once.
const MaxUsageLimit = 100_000

// TraceUsageReq asks for the rolled-up usage of every call a filter and a
// query match (Weave's /trace/usage), typically the calls of one trace.
type TraceUsageReq struct {
	ProjectID    string          `json:"project_id"`
	Filter       CallsFilter     `json:"filter,omitzero"`
	Query        json.RawMessage `json:"query,omitempty"`
	IncludeCosts bool            `json:"include_costs,omitempty"`
	// Limit bounds the calls loaded, the first by started_at; nil means
	// DefaultUsageLimit. Below 1 or above MaxUsageLimit is
	// ErrInvalidQuery.
	Limit *int `json:"limit,omitempty"`
}

// TraceUsageRes maps every call loaded to its usage per model, its own and
// its loaded descendants' (see [Store.CallsUsage] for the roll-up rule).
type TraceUsageRes struct {
	CallUsage map[string]map[string]*Usage `json:"call_usage"`
}

// Usage is the aggregated usage of one model. Cost fields are nil unless costs
// were asked for.
type Usage struct {
	Requests                          int64    `json:"requests"`
	PromptTokens                      int64    `json:"prompt_tokens"`
	CompletionTokens                  int64    `json:"completion_tokens"`
	TotalTokens                       int64    `json:"total_tokens"`
	CacheReadInputTokens              int64    `json:"cache_read_input_tokens"`
	CacheCreationInputTokens          int64    `json:"cache_creation_input_tokens"`
	PromptTokensTotalCost             *float64 `json:"prompt_tokens_total_cost"`
	CompletionTokensTotalCost         *float64 `json:"completion_tokens_total_cost"`
	CacheReadInputTokensTotalCost     *float64 `json:"cache_read_input_tokens_total_cost"`
	CacheCreationInputTokensTotalCost *float64 `json:"cache_creation_input_tokens_total_cost"`
}

// PriceInput is one model's price in a CostCreateReq, per token.
type PriceInput struct {
	PromptTokenCost             float64    `json:"prompt_token_cost"`
	CompletionTokenCost         float64    `json:"completion_token_cost"`
	CacheReadInputTokenCost     float64    `json:"cache_read_input_token_cost,omitempty"`
	CacheCreationInputTokenCost float64    `json:"cache_creation_input_token_cost,omitempty"`
	PromptTokenCostUnit         string     `json:"prompt_token_cost_unit,omitempty"`
	CompletionTokenCostUnit     string     `json:"completion_token_cost_unit,omitempty"`
	EffectiveDate               *time.Time `json:"effective_date,omitempty"`
	ProviderID                  string     `json:"provider_id,omitempty"`
}

// CostCreateReq adds project prices keyed by model (llm_id).
type CostCreateReq struct {
	ProjectID string                `json:"project_id"`
	Costs     map[string]PriceInput `json:"costs"`
}

// CostCreateRes lists [llm_id, price id] pairs, ordered by llm_id.
type CostCreateRes struct {
	IDs [][2]string `json:"ids"`
}

// Price is a stored project price.
type Price struct {
	ID                          string    `json:"id"`
	LLMID                       string    `json:"llm_id"`
	ProviderID                  string    `json:"provider_id"`
	PricingLevel                string    `json:"pricing_level"`
	PricingLevelID              string    `json:"pricing_level_id"`
	EffectiveDate               time.Time `json:"effective_date"`
	PromptTokenCost             float64   `json:"prompt_token_cost"`
	CompletionTokenCost         float64   `json:"completion_token_cost"`
	CacheReadInputTokenCost     float64   `json:"cache_read_input_token_cost"`
	CacheCreationInputTokenCost float64   `json:"cache_creation_input_token_cost"`
	PromptTokenCostUnit         string    `json:"prompt_token_cost_unit"`
	CompletionTokenCostUnit     string    `json:"completion_token_cost_unit"`
	CreatedBy                   string    `json:"created_by,omitempty"`
	CreatedAt                   time.Time `json:"created_at"`
}

// CostQueryReq lists project prices, optionally only some models.
type CostQueryReq struct {
	ProjectID string   `json:"project_id"`
	LLMIDs    []string `json:"llm_ids,omitempty"`
	Limit     int      `json:"limit,omitempty" minimum:"0"`
	Offset    int      `json:"offset,omitempty" minimum:"0"`
}

// CostQueryRes holds the prices.
type CostQueryRes struct {
	Results []Price `json:"results"`
}

// CostPurgeReq removes project prices by id and/or by model; at least one
// list must be non-empty.
type CostPurgeReq struct {
	ProjectID string   `json:"project_id"`
	IDs       []string `json:"ids,omitempty"`
	LLMIDs    []string `json:"llm_ids,omitempty"`
}

// CostPurgeRes counts the removed prices.
type CostPurgeRes struct {
	NumDeleted int `json:"num_deleted"`
}
