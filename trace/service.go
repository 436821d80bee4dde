package trace

import "context"

// Service is the tracing core. Every method is scoped to the project named in
// its request; the caller must already be authorized for it (the HTTP adapter
// does that). The acting user comes from the context ([weft.UserID]); user ids
// in requests are ignored.
type Service interface {
	// CallStart records the start of a call. A missing id or trace id is
	// generated (UUIDv7). Starting a call that was already started overwrites
	// its start fields (last write wins); an end or rename that arrived first is
	// kept and merged. Free-form members (attributes, inputs, otel_dump, and
	// the end's output and summary) holding invalid UTF-8 or a lone surrogate
	// escape are ErrInvalidText; they are otherwise stored exactly as sent.
	CallStart(ctx context.Context, req *CallStartReq) (*CallStartRes, error)
	// CallEnd records the end of a call. It may arrive before the start: the
	// call then stays invisible to reads until its start comes. Ending twice
	// overwrites the end fields (last write wins).
	CallEnd(ctx context.Context, req *CallEndReq) (*CallEndRes, error)
	// UpsertBatch applies starts and ends in order, all in one transaction.
	// Each item succeeds or fails on its own: Res[i] is the result or the error
	// of Batch[i], and a bad item never fails the others. The returned error is
	// only for failures of the whole batch (the database).
	UpsertBatch(ctx context.Context, req *UpsertBatchReq) (*UpsertBatchRes, error)
	// CallsComplete stores calls whose start and end are known at once (the
	// Weave v2 path, OpenTelemetry spans, the chat gateway's calls), each in
	// its own project (see [CallsCompleteReq]); it has UpsertBatch's
	// per-item semantics, one result per call.
	CallsComplete(ctx context.Context, req *CallsCompleteReq) (*UpsertBatchRes, error)
	// CallUpdate renames a call. The call need not exist yet: the name is
	// kept and applies when the start arrives. Last write wins.
	CallUpdate(ctx context.Context, req *CallUpdateReq) (*CallUpdateRes, error)
	// CallRead returns one call, or Call == nil when it does not exist, has no
	// start yet, or was deleted.
	CallRead(ctx context.Context, req *CallReadReq) (*CallReadRes, error)
	// CallsQuery streams the calls matching the request to yield, one at a
	// time, without buffering the result; it stops at the first error yield
	// returns. Default order: started_at asc, id asc; id asc always breaks
	// ties. Calls without a start and deleted calls are never returned.
	// A bad filter or sort is reported before the first yield. A filter value
	// holding NUL matches nothing (no stored text holds one).
	CallsQuery(ctx context.Context, req *CallsQueryReq, yield func(*Call) error) error
	// CallsQueryStats counts the calls CallsQuery would return (bounded by
	// Limit when it is set).
	CallsQueryStats(ctx context.Context, req *CallsQueryStatsReq) (*CallsQueryStatsRes, error)
	// CallsDelete soft-deletes calls and all their descendants; deleted calls
	// vanish from every read. More than MaxDeleteIDs ids is ErrTooManyIDs.
	// NumDeleted counts the descendants found plus every requested id, known
	// or not. Deleting again is harmless.
	CallsDelete(ctx context.Context, req *CallsDeleteReq) (*CallsDeleteRes, error)
	// CallsUsage aggregates token usage (and optionally costs) per requested
	// call over its whole subtree; see the method on [Store] for the rules.
	CallsUsage(ctx context.Context, req *CallsUsageReq) (*CallsUsageRes, error)
	// TraceUsage rolls usage up over the calls a filter and query match (at
	// most Limit, the first by started_at): each one's own usage plus its
	// loaded descendants', with CallsUsage's roll-up rule.
	TraceUsage(ctx context.Context, req *TraceUsageReq) (*TraceUsageRes, error)
	// CallStats aggregates call metrics and token usage (with costs) of the
	// calls started in a window, per time bucket, as Weave's /calls/stats;
	// see [CallStatsReq]. A bad window, metric or aggregation is
	// ErrInvalidQuery.
	CallStats(ctx context.Context, req *CallStatsReq) (*CallStatsRes, error)
	// ThreadsQuery streams the threads of a project to yield, as Weave's
	// /threads/stream_query answers: one per thread_id of the turns (calls
	// whose turn_id is their id) of started, undeleted calls; see
	// [ThreadsQueryReq] for the order and filters. A bad sort is reported
	// before the first yield.
	ThreadsQuery(ctx context.Context, req *ThreadsQueryReq, yield func(*Thread) error) error
	// CallsOverTime counts a project's traces started in a range per
	// interval and group, with their errors, tokens, cost and a latency
	// histogram, in one query (the dashboards' series). Intervals and
	// groups without a trace are absent; the buckets come in interval, then
	// group order.
	CallsOverTime(ctx context.Context, req *CallsOverTimeReq) ([]TimeBucket, error)
	// StorageSize is the number of bytes of JSON text the project's live
	// calls store (attributes, inputs, output, summary and exception), the
	// trace part of Weave's /project/stats.
	StorageSize(ctx context.Context, projectID string) (int64, error)
	// CostCreate adds project-level prices; they take precedence over the
	// built-in defaults from their effective date on.
	CostCreate(ctx context.Context, req *CostCreateReq) (*CostCreateRes, error)
	// CostQuery lists project prices ordered by llm_id, then newest effective
	// date first, then id.
	CostQuery(ctx context.Context, req *CostQueryReq) (*CostQueryRes, error)
	// CostPurge removes project prices selected by id or llm_id.
	CostPurge(ctx context.Context, req *CostPurgeReq) (*CostPurgeRes, error)
}
