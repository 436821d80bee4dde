package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
)

// Completer is the part of chat.Service a response is generated through:
// the route of the model (an upstream or a local model, with its retries
// and fallbacks) and its tracing, as one call of op OpResponse.
type Completer interface {
	CompleteAs(ctx context.Context, projectID string, raw []byte, as chat.TraceAs) (*chat.Completion, error)
}

// OpResponse is the op of the call a response is traced as: its inputs
// the request as sent, its output the Response, its usage the Response's;
// a response continuing another is a turn of the thread of the chain's
// first response (thread_id its id), with the previous response's id and
// call id as attributes.
const OpResponse = "responses.create"

// Config configures a Service. Zero limits take their Default… values.
type Config struct {
	Chat Completer
	// DB stores responses (the stored_responses table).
	DB *weft.DB
	// MaxInputItems bounds a request's input items plus those its
	// previous_response_id chain brings (DefaultMaxInputItems).
	MaxInputItems int
	// MaxChainDepth bounds how many previous responses a chain reaches
	// back through (DefaultMaxChainDepth).
	MaxChainDepth int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Service answers the Responses API routes for a project: the transport
// authenticates the caller and authorizes the project; every stored
// response read, listed, deleted or continued is the project's.
type Service struct {
	cfg   Config
	store *Store
}

// New returns the Service of cfg.
func New(cfg Config) *Service {
	if cfg.MaxInputItems <= 0 {
		cfg.MaxInputItems = DefaultMaxInputItems
	}
	if cfg.MaxChainDepth <= 0 {
		cfg.MaxChainDepth = DefaultMaxChainDepth
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{cfg: cfg, store: NewStore(cfg.DB)}
}

// Answer is a response under way, written to the client by Relay.
type Answer struct {
	s          *Service
	req        *Request
	resp       *Response
	input      []InputItem
	project    string
	previous   *Record
	completion *chat.Completion
}

// Create checks a raw Responses request, gathers its previous response's
// history, and starts the chat completion that answers it. Errors come
// before anything is written: ErrInvalid (400), ErrNotFound (404) for a
// previous_response_id the project does not have, and chat's errors for
// the translated request (an unknown model is 404, a request its route
// refuses 400, no upstream 502).
func (s *Service) Create(ctx context.Context, projectID string, raw []byte) (*Answer, error) {
	req, err := ParseRequest(raw)
	if err != nil {
		return nil, err
	}
	input, err := req.InputItems(s.cfg.MaxInputItems)
	if err != nil {
		return nil, err
	}
	a := &Answer{s: s, req: req, input: input, project: projectID, resp: NewResponse(req, s.cfg.Now())}
	as := chat.TraceAs{Endpoint: chat.EndpointResponses, OpName: OpResponse, Inputs: raw, ThreadID: a.resp.ID}
	var history []InputItem
	if req.PreviousResponseID != nil && *req.PreviousResponseID != "" {
		conv, err := s.store.History(ctx, projectID, *req.PreviousResponseID, s.cfg.MaxChainDepth, s.cfg.MaxInputItems-len(input))
		if err != nil {
			return nil, err
		}
		history, a.previous, as.ThreadID = conv.Items, conv.Previous, conv.First
		as.Attributes = map[string]any{"previous_response_id": conv.Previous.ID, "previous_call_id": conv.Previous.CallID}
	}
	body, err := req.ChatRequest(history, input, req.Streaming())
	if err != nil {
		return nil, err
	}
	if s.cfg.Chat == nil {
		return nil, weft.WithFields(chat.ErrModelNotFound, map[string]any{"param": "model"}, "The model `%s` does not exist.", req.Model)
	}
	if a.completion, err = s.cfg.Chat.CompleteAs(ctx, projectID, body, as); err != nil {
		return nil, err
	}
	return a, nil
}

// Relay writes the response to w: the Response as JSON, or its event
// stream. A failure the model's route answered with (an upstream's error
// status) is passed on as it came. The response is stored, unless the
// request said store false, before the client sees it end.
func (a *Answer) Relay(ctx context.Context, w http.ResponseWriter) error {
	c := a.completion
	if id := c.CallID(); id != "" {
		w.Header().Set(chat.CallIDHeader, id)
	}
	if c.Status/100 != 2 {
		err := c.Relay(w)
		c.EndTrace(nil, "")
		return err
	}
	if !c.Streaming {
		sink := &bodySink{header: http.Header{}}
		if err := c.Relay(sink); err != nil {
			c.EndTrace(nil, err.Error())
			return err
		}
		resp, err := FromChat(a.resp, sink.body.Bytes(), a.s.cfg.Now())
		if err != nil {
			c.EndTrace(nil, err.Error())
			return err
		}
		data, err := json.Marshal(resp)
		if err != nil {
			c.EndTrace(nil, err.Error())
			return err
		}
		err = a.store(ctx, resp, data, c.CallID())
		a.endTrace(data, err)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		_, err = w.Write(data)
		return err
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	stream := NewStream(a.resp, w, func() { _ = rc.Flush() })
	if err := stream.Start(); err != nil {
		c.EndTrace(nil, err.Error())
		return err
	}
	sink := &streamSink{header: http.Header{}, stream: stream}
	if err := c.Relay(sink); err != nil {
		stream.Fail(err.Error())
	}
	// The finished response is encoded once: stored, traced and sent.
	resp := stream.Finish(a.s.cfg.Now())
	data, err := json.Marshal(resp)
	if err == nil {
		err = a.store(ctx, resp, data, c.CallID())
	}
	if err != nil {
		resp.Status, resp.Error, resp.CompletedAt = "failed", &ResponseError{Code: "server_error", Message: "the response could not be stored"}, nil
		data, _ = json.Marshal(resp)
	}
	a.endTrace(data, err)
	if err != nil {
		_ = stream.Done(data)
		return err
	}
	return stream.Done(data)
}

// endTrace ends the response's call with the Response, failed when it
// could not be stored (storeErr).
func (a *Answer) endTrace(resp []byte, storeErr error) {
	exception := ""
	if storeErr != nil {
		exception = storeErr.Error()
	}
	a.completion.EndTrace(resp, exception)
}

// store keeps the finished response, whose JSON is data, unless the
// request said store false.
func (a *Answer) store(ctx context.Context, resp *Response, data []byte, callID string) error {
	if !a.req.Stored() {
		return nil
	}
	rec := &Record{
		ProjectID: a.project, ID: resp.ID, Response: data, Input: a.input, CallID: callID,
		CreatedBy: weft.UserID(ctx), CreatedAt: time.Unix(resp.CreatedAt, 0),
	}
	if a.previous != nil {
		rec.PreviousID = a.previous.ID
	}
	if err := a.s.store.Put(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("responses: storing %s: %w", resp.ID, err)
	}
	return nil
}

// Get returns the stored response id of the project, as it was answered.
func (s *Service) Get(ctx context.Context, projectID, id string) (json.RawMessage, error) {
	rec, err := s.store.Get(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	return rec.Response, nil
}

// Delete removes the stored response id of the project.
func (s *Service) Delete(ctx context.Context, projectID, id string) (*Deleted, error) {
	if err := s.store.Delete(ctx, projectID, id); err != nil {
		return nil, err
	}
	return &Deleted{ID: id, Object: "response", Deleted: true}, nil
}

// InputItems lists the input items of the project's response id (see
// Store.InputItems).
func (s *Service) InputItems(ctx context.Context, projectID, id, after string, limit int, order string) (*ItemList, error) {
	return s.store.InputItems(ctx, projectID, id, after, limit, order)
}

// bodySink takes a whole chat answer.
type bodySink struct {
	header http.Header
	body   bytes.Buffer
}

func (b *bodySink) Header() http.Header         { return b.header }
func (b *bodySink) WriteHeader(int)             {}
func (b *bodySink) Write(p []byte) (int, error) { return b.body.Write(p) }

// streamSink passes a chat stream to the Responses stream.
type streamSink struct {
	header http.Header
	stream *Stream
}

func (s *streamSink) Header() http.Header         { return s.header }
func (s *streamSink) WriteHeader(int)             {}
func (s *streamSink) Write(p []byte) (int, error) { return s.stream.Write(p) }
func (s *streamSink) FlushError() error           { return s.stream.FlushError() }
