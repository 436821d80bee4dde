package feedback

import (
	"context"
	"slices"

	"github.com/weftlabs/weft/trace"
)

// lookupChunk bounds the ids of one trace query.
const lookupChunk = 1000

// TraceCalls is the CallLookup over a trace service: the usual one, for a
// server that stores its calls in weft's trace store.
func TraceCalls(calls trace.Service) CallLookup { return traceCalls{calls: calls} }

type traceCalls struct {
	calls trace.Service
}

// LookupCalls implements CallLookup.
func (t traceCalls) LookupCalls(ctx context.Context, projectID string, ids []string) ([]CallInfo, error) {
	out := make([]CallInfo, 0, len(ids))
	for chunk := range slices.Chunk(ids, lookupChunk) {
		req := &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{CallIDs: chunk},
			Columns: []string{"id", "op_name", "trace_id", "started_at", "ended_at"}}
		err := t.calls.CallsQuery(ctx, req, func(c *trace.Call) error {
			out = append(out, CallInfo{ID: c.ID, OpName: c.OpName, TraceID: c.TraceID, StartedAt: c.StartedAt, EndedAt: c.EndedAt})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
