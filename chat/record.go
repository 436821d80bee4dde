package chat

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft"
)

// Op names of the calls the gateway records.
const (
	OpChatCompletion = "chat.completions.create"
	OpImageCreate    = "weave.image_generation_create"
	OpEmbeddings     = "embeddings.create"
)

// Call is one finished exchange with a model, recorded as a traced call: a
// root call of its own trace.
type Call struct {
	ProjectID string
	ID        string
	TraceID   string
	OpName    string
	// ThreadID and TurnID place the call in a conversation (Weave's
	// threads); "" for a call of no thread.
	ThreadID, TurnID string
	// Attributes are the call's attributes; nil for none.
	Attributes json.RawMessage
	// UserID is the acting user (weft.UserID of the request).
	UserID    string
	StartedAt time.Time
	EndedAt   time.Time
	// Inputs is the request as the client sent it.
	Inputs json.RawMessage
	// Output is the response (assembled from the chunks for a stream); null
	// when there is none.
	Output json.RawMessage
	// Summary is {"usage": {<model>: usage}} when the upstream reported usage,
	// else {}.
	Summary json.RawMessage
	// Exception describes the failure, "" on success.
	Exception string
}

// CallRecorder stores finished calls. The gateway calls it from one
// background goroutine with batches. A failed batch is written again, up to
// writeAttempts times with a growing pause (a busy or restarting database
// must not lose traces); a batch failing every attempt is counted in
// weft_chat_trace_write_errors_total. Errors never reach a client.
type CallRecorder interface {
	RecordCalls(ctx context.Context, calls []Call) error
}

// pendingCall is a call whose output and summary are still to be built: the
// request path hands over raw bytes and the writer goroutine does the JSON work.
type pendingCall struct {
	call  Call
	model string
	// body is the whole response of a non-streamed call.
	body []byte
	// frames are the data payloads of a streamed call, in order.
	frames [][]byte
	stream bool
	// output, when set, shapes the output recorded from the answer's (an
	// embeddings answer is recorded without its vectors).
	output func(json.RawMessage) json.RawMessage
	// assemble, when set, makes a stream's frames one answer (default:
	// chat chunks' assembleStream).
	assemble func([][]byte) json.RawMessage
}

// recordQueue is the bounded asynchronous writer between requests and the
// CallRecorder: enqueueing never blocks, a full queue drops the call.
type recordQueue struct {
	recorder CallRecorder
	logger   *slog.Logger
	calls    chan pendingCall
	done     chan struct{}
	// mu orders enqueue against close: a stream still relaying when the
	// gateway closes (its shutdown grace ran out) ends after the channel is
	// closed, and its call is then dropped rather than sent on a closed
	// channel.
	mu     sync.RWMutex
	closed bool
	// retryPause is the pause before a failed batch's second attempt,
	// doubled for each further one (firstRetryPause).
	retryPause time.Duration

	dropped     prometheus.Counter
	writeErrors prometheus.Counter
	written     prometheus.Counter
}

// Batch bounds of the writer.
const (
	maxBatch     = 256
	writeTimeout = 30 * time.Second
	// writeAttempts and firstRetryPause bound the retries of a failed batch:
	// pauses of 0.5, 1, 2 and 4 s, about a minute with the write timeouts.
	writeAttempts   = 5
	firstRetryPause = 500 * time.Millisecond
)

func newRecordQueue(recorder CallRecorder, size int, logger *slog.Logger, reg prometheus.Registerer) *recordQueue {
	q := &recordQueue{
		recorder: recorder, logger: logger,
		calls: make(chan pendingCall, size), done: make(chan struct{}), retryPause: firstRetryPause,
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weft_chat_trace_dropped_total", Help: "Chat calls not traced because the trace queue was full.",
		}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weft_chat_trace_write_errors_total", Help: "Chat calls not traced because writing them failed.",
		}),
		written: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weft_chat_traced_calls_total", Help: "Chat calls written to the trace store.",
		}),
	}
	reg.MustRegister(q.dropped, q.writeErrors, q.written)
	go q.run()
	return q
}

// enqueue hands a call to the writer without ever waiting.
func (q *recordQueue) enqueue(p pendingCall) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		q.dropped.Inc()
		return
	}
	select {
	case q.calls <- p:
	default:
		q.dropped.Inc()
	}
}

func (q *recordQueue) run() {
	defer close(q.done)
	batch := make([]Call, 0, maxBatch)
	for p := range q.calls {
		batch = append(batch[:0], p.finish())
	more:
		for len(batch) < maxBatch {
			select {
			case next, ok := <-q.calls:
				if !ok {
					break more
				}
				batch = append(batch, next.finish())
			default:
				break more
			}
		}
		if err := q.write(batch); err != nil {
			q.writeErrors.Add(float64(len(batch)))
			q.logger.Error("chat: tracing calls failed", "calls", len(batch), "attempts", writeAttempts, "error", err)
			continue
		}
		q.written.Add(float64(len(batch)))
	}
}

// refusedCalls reports whether err is the trace store refusing the calls
// themselves (an invalid or too large call, a project the user may not
// write), which another attempt would not change.
func refusedCalls(err error) bool {
	for _, class := range []error{weft.ErrInvalid, weft.ErrValidation, weft.ErrForbidden, weft.ErrNotFound, weft.ErrTooLarge, weft.ErrUnauthenticated} {
		if errors.Is(err, class) {
			return true
		}
	}
	return false
}

// write records batch, trying again after a pause when it fails. Writing
// the same calls again is safe: a call is stored once by its id.
func (q *recordQueue) write(batch []Call) error {
	pause := q.retryPause
	var err error
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		err = q.recorder.RecordCalls(ctx, batch)
		cancel()
		if err == nil || attempt == writeAttempts || refusedCalls(err) {
			return err
		}
		q.logger.Warn("chat: tracing calls failed; trying again", "calls", len(batch), "attempt", attempt, "error", err)
		time.Sleep(pause)
		pause *= 2
	}
}

// close stops accepting calls and waits until the queued ones are written or
// ctx ends.
func (q *recordQueue) close(ctx context.Context) error {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.calls)
	}
	q.mu.Unlock()
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish builds the output and summary of a call.
func (p *pendingCall) finish() Call {
	c := p.call
	switch {
	case p.stream && p.assemble != nil:
		c.Output = p.assemble(p.frames)
	case p.stream:
		c.Output = assembleStream(p.frames)
	case len(p.body) > 0 && json.Valid(p.body):
		c.Output = p.body
	}
	if len(c.Output) == 0 {
		c.Output = json.RawMessage("null")
	}
	c.Summary = usageSummary(p.model, c.Output)
	if p.output != nil && c.Exception == "" {
		c.Output = p.output(c.Output)
	}
	return c
}

// usageSummary is {"usage": {model: usage}} with the upstream's usage and,
// as Weave's clients record it, "requests": 1; {} when the output reports no
// usage: token counts are never invented.
func usageSummary(model string, output json.RawMessage) json.RawMessage {
	var withUsage struct {
		Usage map[string]json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(output, &withUsage) != nil || len(withUsage.Usage) == 0 {
		return json.RawMessage("{}")
	}
	if _, ok := withUsage.Usage["requests"]; !ok {
		withUsage.Usage["requests"] = json.RawMessage("1")
	}
	summary, _ := json.Marshal(map[string]map[string]map[string]json.RawMessage{"usage": {model: withUsage.Usage}})
	return summary
}
