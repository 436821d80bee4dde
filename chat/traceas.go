package chat

import (
	"bytes"
	"context"
	"encoding/json"
)

// TraceAs is how a request of another API that chat completions answer
// (the Responses API) is served and traced: the API its route must serve,
// and the call the client's request is recorded as, in place of the chat
// completion it was translated to.
type TraceAs struct {
	// Endpoint is the API the client called, e.g. EndpointResponses.
	Endpoint string
	// OpName and Inputs are the call's op and inputs: the client's request
	// as sent.
	OpName string
	Inputs json.RawMessage
	// ThreadID is the conversation the call is a turn of (Weave's
	// threads): the call's turn_id is its own id. "" leaves both unset.
	ThreadID string
	// Attributes are the call's attributes (nil: none).
	Attributes map[string]any
}

// CompleteAs is Complete for a request of another API translated to the
// chat completion raw: the model's route must serve as.Endpoint (and its
// fallbacks that do not are passed over), and the call is traced as as
// says. Its output is the one [Completion.EndTrace] gives, which the caller
// must call once the answer is relayed (a streamed answer's chunks are not
// kept for it).
func (s *Gateway) CompleteAs(ctx context.Context, projectID string, raw []byte, as TraceAs) (*Completion, error) {
	return s.complete(ctx, projectID, raw, &as)
}

// traceAs starts the record of c as as says.
func (c *Completion) traceAs(as *TraceAs) {
	c.held = true
	if c.queue == nil {
		return
	}
	call := &c.pending.call
	// The call is written after the request is answered, when the caller's
	// buffer (an HTTP body's, reused once its handler returns) may hold
	// another request: the inputs are copied, as newCompletion copies raw.
	call.OpName, call.Inputs = as.OpName, bytes.Clone(as.Inputs)
	if as.ThreadID != "" {
		call.ThreadID, call.TurnID = as.ThreadID, call.ID
	}
	if len(as.Attributes) > 0 {
		call.Attributes, _ = json.Marshal(as.Attributes)
	}
}

// EndTrace ends the call of a completion started by CompleteAs, once it is
// relayed: output is recorded as its output (its usage as the call's), and
// a non-empty exception as its failure, else the relay's failure if it had
// one.
func (c *Completion) EndTrace(output json.RawMessage, exception string) {
	if !c.held {
		return
	}
	c.held = false
	if exception == "" {
		exception = c.heldException
	}
	if len(output) > 0 {
		c.pending.stream, c.pending.frames, c.body = false, nil, output
	}
	c.finish(exception)
}

// CallID is the id of the call the completion is traced as ("" when
// tracing is off).
func (c *Completion) CallID() string {
	if c.queue == nil {
		return ""
	}
	return c.pending.call.ID
}
