package chat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/weftlabs/weft"
)

// Completion is an upstream's answer to a chat-completion request, ready to
// be relayed with [Completion.Relay]. It is returned once an upstream has
// answered with headers: a success, or an error the upstream itself reported
// (passed through with its status and body).
type Completion struct {
	// Status is the upstream's HTTP status.
	Status int
	// Streaming is true for a text/event-stream answer.
	Streaming bool

	contentType string
	body        []byte
	frames      Frames
	stream      io.ReadCloser

	queue   *recordQueue
	pending pendingCall
	now     func() time.Time
	// held keeps the call from the trace queue until EndTrace (a
	// completion started by CompleteAs); heldException is the relay's
	// failure it will record.
	held          bool
	heldException string
}

// Complete validates a raw chat-completion request, routes it and returns the
// upstream's answer. projectID is where the call is traced. Errors are
// returned before anything is relayed: ErrMalformed and ErrBadRequest (400),
// ErrModelNotFound (404), ErrUnsupportedField (400), ErrUpstreamUnavailable
// (502) when no upstream of the route or its fallbacks answered.
func (s *Gateway) Complete(ctx context.Context, projectID string, raw []byte) (*Completion, error) {
	return s.complete(ctx, projectID, raw, nil)
}

// complete is Complete, served and traced as as says when it is not nil
// (CompleteAs).
func (s *Gateway) complete(ctx context.Context, projectID string, raw []byte, as *TraceAs) (*Completion, error) {
	endpoint := EndpointChat
	if as != nil {
		endpoint = as.Endpoint
	}
	req, err := ParseRequest(raw)
	if err != nil {
		return nil, err
	}
	route, err := s.resolve(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	if err := checkEndpoint(route, endpoint); err != nil {
		return nil, err
	}
	if err := Validate(req, route.ModelInfo); err != nil {
		return nil, err
	}
	req.tenant, _, _ = strings.Cut(projectID, "/")
	c := s.newCompletion(ctx, projectID, OpChatCompletion, raw, modelKey(req.Model, route))
	if as != nil {
		c.traceAs(as)
	}
	err = s.forward(ctx, route, endpoint, c, func(b Backend, t Target) (*Answer, error) { return b.Complete(ctx, t, req) })
	return c.answered(err)
}

// answered ends the routing of c: an answer, the last upstream's error
// answer when every attempt failed with one, or err (traced as the call's
// failure).
func (c *Completion) answered(err error) (*Completion, error) {
	var ue *upstreamError
	if errors.As(err, &ue) {
		// Every attempt failed with an upstream error: relay the last one as
		// the upstream sent it.
		c.Status, c.contentType, c.body = ue.status, ue.contentType, ue.body
		return c, nil
	}
	if err != nil {
		c.held = false // no answer to relay: the call ends here
		c.fail(err.Error())
		return nil, err
	}
	return c, nil
}

// modelKey names the model in summary.usage: the name the client asked for.
func modelKey(requested string, route *Route) string {
	if requested == "" {
		return route.Name
	}
	return requested
}

// forward tries the route, then its fallbacks that serve endpoint in
// order, each with its retries: attempt asks one upstream's backend.
func (s *Gateway) forward(ctx context.Context, route *Route, endpoint string, c *Completion, attempt func(Backend, Target) (*Answer, error)) error {
	var lastErr error
	for _, r := range s.routeChain(route, endpoint) {
		failed := map[int]bool{}
		backoff := r.RetryBackoff
		for try := 0; try <= r.Retries; try++ {
			if try > 0 {
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return weft.Errorf(ErrUpstreamUnavailable, "request cancelled: %v", ctx.Err())
				}
				backoff *= 2
			}
			i := pickUpstream(r.Upstreams, failed)
			u := r.Upstreams[i]
			answer, err := attempt(s.backendOf(u), Target{Route: r, Upstream: u, Adapter: r.adapter})
			if err == nil {
				c.take(answer)
				s.attempts.WithLabelValues(r.label(), "ok").Inc()
				return nil
			}
			lastErr = err
			if !isRetryable(err) || ctx.Err() != nil {
				s.attempts.WithLabelValues(r.label(), "error").Inc()
				return err
			}
			s.attempts.WithLabelValues(r.label(), "retry").Inc()
			s.cfg.Logger.WarnContext(ctx, "chat: upstream attempt failed", "model", r.Name, "upstream", u.URL, "error", err)
			failed[i] = true
		}
	}
	return lastErr
}

// routeChain is a route followed by its fallbacks that serve endpoint.
func (s *Gateway) routeChain(route *Route, endpoint string) []*Route {
	chain := []*Route{route}
	for _, name := range route.Fallbacks {
		if fb, ok := s.routes[name]; ok && fb.serves(endpoint) {
			chain = append(chain, fb)
		}
	}
	return chain
}

// pickUpstream chooses by weight among the upstreams not failed yet (all of
// them once every one has failed).
func pickUpstream(upstreams []Upstream, failed map[int]bool) int {
	if len(upstreams) == 1 {
		return 0
	}
	total := 0
	for i, u := range upstreams {
		if !failed[i] {
			total += u.Weight
		}
	}
	if total == 0 {
		clear(failed)
		return pickUpstream(upstreams, failed)
	}
	n := rand.IntN(total)
	for i, u := range upstreams {
		if failed[i] {
			continue
		}
		if n < u.Weight {
			return i
		}
		n -= u.Weight
	}
	return len(upstreams) - 1
}

// upstreamError is an attempt that failed on the upstream's side.
type upstreamError struct {
	status      int
	contentType string
	body        []byte
}

func (e *upstreamError) Error() string {
	return fmt.Sprintf("upstream answered %d: %s", e.status, truncateBytes(e.body, 500))
}

// relay is the backend of remote upstreams: it forwards each request over
// HTTP and passes the answer through as the upstream sent it.
type relay struct{ s *Gateway }

// Complete sends one request. A success or an upstream error that must
// reach the client (4xx other than 429) is the answer; a failure another
// upstream may answer instead is Retryable.
func (rl relay) Complete(ctx context.Context, t Target, req *CompletionRequest) (*Answer, error) {
	body, err := upstreamBody(req, t.Upstream)
	if err != nil {
		return nil, err
	}
	return rl.post(ctx, t, "/chat/completions", body, req.Streaming())
}

// post sends one request to the upstream's path and reads its answer: a
// stream (when stream was asked and the upstream answers with one) or a
// whole body. A success or an upstream error that must reach the client
// (4xx other than 429) is the answer; a failure another upstream may
// answer instead is Retryable.
func (rl relay) post(ctx context.Context, t Target, path string, body []byte, stream bool) (*Answer, error) {
	s, u := rl.s, t.Upstream
	ctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(t.Route.Timeout, cancel)
	res, err := s.send(ctx, u, path, body)
	if err != nil {
		timer.Stop()
		cancel()
		return nil, Retryable(weft.Errorf(ErrUpstreamUnavailable, "upstream %s: %v", u.URL, err))
	}
	if res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests {
		text, _ := readAll(res.Body, 1<<20)
		res.Body.Close()
		timer.Stop()
		cancel()
		return nil, Retryable(&upstreamError{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: text})
	}
	a := &Answer{Status: res.StatusCode, ContentType: res.Header.Get("Content-Type")}
	if stream && res.StatusCode == http.StatusOK && bytes.HasPrefix([]byte(a.ContentType), []byte("text/event-stream")) {
		timer.Stop() // the timeout bounds the wait for headers, not the stream
		a.Events = cancelOnClose{ReadCloser: res.Body, cancel: cancel}
		return a, nil
	}
	defer cancel()
	defer timer.Stop()
	text, err := readAll(res.Body, s.cfg.MaxResponseBytes)
	res.Body.Close()
	if err != nil {
		return nil, Retryable(weft.Errorf(ErrUpstreamUnavailable, "upstream %s: reading the response: %v", u.URL, err))
	}
	a.Body = text
	return a, nil
}

// Tokenize is refused: a remote upstream's tokenizer is its own.
func (rl relay) Tokenize(_ context.Context, t Target, _ []byte) (*TokenizeResult, error) {
	return nil, remoteTokenizer("/tokenize", t.Route)
}

// Detokenize is refused as Tokenize is.
func (rl relay) Detokenize(_ context.Context, t Target, _ []byte) (*DetokenizeResult, error) {
	return nil, remoteTokenizer("/detokenize", t.Route)
}

// Close has nothing to free: the upstreams' connections are the shared
// client's.
func (relay) Close() error { return nil }

func remoteTokenizer(path string, r *Route) error {
	return weft.WithFields(ErrUnsupportedField, map[string]any{"param": "model"},
		"%s is served for local models only; `%s` is served by a remote upstream.", path, r.Name)
}

// cancelOnClose is a response body whose Close also ends its request.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// send POSTs a JSON body to an upstream path under its base URL.
func (s *Gateway) send(ctx context.Context, u Upstream, path string, body []byte) (*http.Response, error) {
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.URL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	httpReq.Header.Set("Content-Type", "application/json")
	if u.apiKey != "" {
		httpReq.Header.Set("Authorization", "Bearer "+u.apiKey)
	}
	if id := RequestIDFrom(ctx); id != "" {
		httpReq.Header.Set(RequestIDHeader, id)
	}
	return s.cfg.Client.Do(httpReq)
}

// readAll reads at most limit bytes.
func readAll(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("response larger than %d bytes", limit)
	}
	return b, err
}

func truncateBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// CallIDHeader names the response header carrying the id of the call a
// completion is traced as.
const CallIDHeader = "Weft-Call-Id"

// Relay writes the answer to w: status, headers and body, flushing after each
// streamed event. It then hands the call to the trace queue. It returns the
// reason a stream ended early, nil when it completed.
func (c *Completion) Relay(w http.ResponseWriter) error {
	rc := http.NewResponseController(w)
	if c.queue != nil {
		w.Header().Set(CallIDHeader, c.pending.call.ID)
	}
	if !c.Streaming {
		ct := c.contentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(c.Status)
		_, err := w.Write(c.body)
		if c.Status/100 != 2 {
			c.fail(fmt.Sprintf("upstream answered %d: %s", c.Status, truncateBytes(c.body, 2000)))
		} else {
			c.finish("")
		}
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var frames [][]byte
	var failure string
	if c.frames != nil {
		defer c.frames.Close()
		frames, failure = relayFrames(w, rc.Flush, c.frames)
	} else {
		defer c.stream.Close()
		// A held call's output is EndTrace's: its chunks are not kept.
		frames, failure = relayStream(w, rc.Flush, c.stream, !c.held)
	}
	c.pending.stream, c.pending.frames = true, frames
	c.finish(failure)
	if failure != "" {
		return errors.New(failure)
	}
	return nil
}

// take makes a backend's answer the one relayed.
func (c *Completion) take(a *Answer) {
	c.Status, c.contentType, c.body = a.Status, a.ContentType, a.Body
	switch {
	case a.Frames != nil:
		c.Streaming, c.frames = true, a.Frames
	case a.Events != nil:
		c.Streaming, c.stream = true, a.Events
	}
}

// finish queues the call with its exception ("" on success).
func (c *Completion) finish(exception string) {
	if c.held {
		c.heldException = exception
		return
	}
	if c.queue == nil {
		return
	}
	c.pending.call.EndedAt = c.now()
	c.pending.call.Exception = exception
	if !c.pending.stream {
		c.pending.body = c.body
	}
	c.queue.enqueue(c.pending)
}

// fail queues a call that produced no answer.
func (c *Completion) fail(exception string) {
	c.body = nil
	c.finish(exception)
}
