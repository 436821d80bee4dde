package chat

import (
	"context"
	"encoding/json"
	"errors"
	"io"
)

// Backend serves the models of routes: the gateway's own relay to remote
// OpenAI-compatible servers (kinds vllm and openai), or a backend
// registered for an upstream kind in [Config.Backends] (package
// chat/inprocess serves kind local). The gateway resolves a request's
// route, validates the request, picks the upstream, retries, falls back
// and traces; a backend only answers, so every backend is traced by the
// one path ([Completion.Relay]).
//
// Each method takes the [Target] it answers for. Further APIs join in the
// same shape: a method taking the target and the parsed request, returning
// an [Answer] whose frames are that API's chunks.
type Backend interface {
	// Complete answers a validated chat-completion request: a whole
	// chat.completion, or (req.Streaming()) a stream of
	// chat.completion.chunk frames. An answer the upstream itself refused
	// (a 4xx other than 429) is an Answer with its status and body. An error
	// the route's next upstream or fallback may answer instead is marked
	// with [Retryable].
	Complete(ctx context.Context, t Target, req *CompletionRequest) (*Answer, error)
	// Tokenize and Detokenize answer vLLM's POST /tokenize and POST
	// /detokenize (raw JSON bodies) for the target's model.
	Tokenize(ctx context.Context, t Target, raw []byte) (*TokenizeResult, error)
	Detokenize(ctx context.Context, t Target, raw []byte) (*DetokenizeResult, error)
	// Close stops serving and frees what the backend holds.
	Close() error
}

// TextCompleter is a [Backend] that answers text completions (POST
// /v1/completions): the remote relay forwards them, chat/inprocess serves
// them. A route whose backend is not one does not serve the endpoint.
type TextCompleter interface {
	// TextComplete answers a validated text-completion request: a whole
	// text_completion, or (req.Shared.Streaming()) a stream of its chunks,
	// as Complete answers a chat completion.
	TextComplete(ctx context.Context, t Target, req *TextCompletionRequest) (*Answer, error)
}

// Target is what a backend answers for: the route a request resolved to
// and the upstream of it the gateway picked.
type Target struct {
	Route    *Route
	Upstream Upstream
	// Adapter is the trained checkpoint the request names, applied over
	// the model of Route's upstream, or nil for the route's own model. A
	// registered backend is handed the trained models of the routes it
	// serves (see [Config.Backends]); Route is then the base model's route
	// renamed to the trained model's name, without fallbacks.
	Adapter *LoRAAdapter
}

// Answer is a backend's answer, relayed by [Completion.Relay].
type Answer struct {
	// Status is the HTTP status it is relayed with.
	Status int
	// ContentType is Body's media type ("application/json" when empty).
	ContentType string
	// Body is a whole answer.
	Body []byte
	// Frames is a streamed answer (nil for a whole one), which the backend
	// pushes into the relay frame by frame: each frame is one chunk's
	// JSON, relayed as a server-sent data event, data: [DONE] after the
	// last.
	Frames Frames
	// Events is a streamed answer already written as server-sent events
	// (a remote upstream's), relayed as it is sent; closing it ends the
	// stream. A streamed answer sets Frames or Events, not both.
	Events io.ReadCloser
}

// FrameSink takes a streamed answer's frames in order, as they are made: it
// writes each to the client and keeps it for the trace. An error from it
// means the client went away.
type FrameSink func(frame json.RawMessage) error

// Frames is a streamed answer that its backend writes into the relay's
// [FrameSink], so that the answer flows one way: from the backend (and
// its engine) through the relay to the client and the trace, the relay
// never reaching back into the backend for the next chunk.
type Frames interface {
	// Stream hands each frame to sink as the backend makes it and
	// returns when the answer ended (nil), when sink failed (sink's
	// error: the stream stops there), or when the stream broke off (its
	// error). A failure of the backend itself mid-stream is a frame of
	// its own ({"error": …}, as vLLM streams it), the last. The relay
	// calls it once.
	Stream(sink FrameSink) error
	// Close ends the stream early (the client went away) and frees what it
	// holds; it is called once the relay is done, whether or not the
	// stream ran to its end.
	Close() error
}

// retryable marks an error the route's next upstream or fallback may
// answer instead.
type retryable struct{ err error }

func (e *retryable) Error() string { return e.err.Error() }
func (e *retryable) Unwrap() error { return e.err }

// Retryable marks err as one that another upstream may answer instead (a
// connection refused, an overloaded engine): the gateway retries the
// route's upstreams and then its fallbacks.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &retryable{err: err}
}

// isRetryable tells a Retryable error.
func isRetryable(err error) bool {
	var r *retryable
	return errors.As(err, &r)
}
