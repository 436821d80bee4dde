package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
)

// completionsInput is the body of Weave's POST /completions/create and
// /completions/create_stream: the chat completion request is inputs.
type completionsInput struct {
	Body struct {
		ProjectID string `json:"project_id" doc:"<entity>/<project>"`
		// Inputs is an OpenAI chat completion request (model, messages, …).
		Inputs       json.RawMessage `json:"inputs" type:"object"`
		TrackLLMCall *bool           `json:"track_llm_call,omitempty" doc:"accepted; completions are always traced into the project"`
		PfUserID     string          `json:"pf_user_id,omitempty" doc:"ignored: the user is the caller"`
		WbUserID     string          `json:"wb_user_id,omitempty" doc:"ignored: the user is the caller"`
	}
}

// actionsExecuteBatchBody is Weave's body of POST /actions/execute_batch.
type actionsExecuteBatchBody struct {
	ProjectID string   `json:"project_id"`
	ActionRef string   `json:"action_ref"`
	CallIDs   []string `json:"call_ids"`
	WbUserID  string   `json:"wb_user_id,omitempty" doc:"ignored"`
}

// completionsRes is Weave's answer: the provider's response, or
// {"error": …} with status 200 when the completion failed, as Weave reports
// provider failures.
type completionsRes struct {
	Response    json.RawMessage `json:"response" type:"object"`
	WeaveCallID *string         `json:"weave_call_id"`
}

// errActionsUnsupported refuses /actions/execute_batch: the actions it runs
// (Weave's hosted LLM judges) are not part of this server.
var (
	errCompletionInputs   = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "inputs must be a chat completion request object")
	errCompletionUpstream = weft.DefineError(weft.ErrUpstream, "UpstreamError", "the model's upstream failed")
)

// completionReq is a completion to run: the chat request, with its stream
// member set, and the project it is traced into.
type completionReq struct {
	projectID string
	raw       []byte
}

var errActionsUnsupported = weft.DefineError(weft.ErrInvalid, "InvalidRequest",
	"actions are not supported by this server: run scorers in the client and store their results as feedback")

// registerCompletions registers Weave's playground completion routes over the
// chat service (the models it routes, traced like /v1/chat/completions) and
// refuses /actions/execute_batch.
func (h *Handler) registerCompletions() {
	request := func(stream bool) func(context.Context, *completionsInput) (completionReq, []string, error) {
		return func(_ context.Context, in *completionsInput) (completionReq, []string, error) {
			var inputs map[string]json.RawMessage
			if err := json.Unmarshal(in.Body.Inputs, &inputs); err != nil || inputs == nil {
				return completionReq{}, nil, errCompletionInputs
			}
			inputs["stream"] = json.RawMessage(map[bool]string{true: "true", false: "false"}[stream])
			raw, err := json.Marshal(inputs)
			return completionReq{projectID: in.Body.ProjectID, raw: raw}, one(in.Body.ProjectID), err
		}
	}
	route(h, huma.Operation{OperationID: "completions-create", Method: http.MethodPost, Path: "/completions/create", Tags: []string{"completions"},
		Summary: "Run a chat completion for the playground (Weave's shape), traced into the project"}, true, request(false),
		func(ctx context.Context, req completionReq) (*completionsRes, error) {
			var out bytes.Buffer
			callID, err := h.relayCompletion(ctx, req, &out)
			if err != nil {
				return completionFailure(err), nil
			}
			return &completionsRes{Response: out.Bytes(), WeaveCallID: callID}, nil
		})
	routeOutput(h, huma.Operation{OperationID: "completions-create-stream", Method: http.MethodPost, Path: "/completions/create_stream", Tags: []string{"completions"},
		Summary: "Run a streamed chat completion for the playground: JSON lines, one chunk each, after a first {\"_meta\": {\"weave_call_id\"}} line"}, true, request(true),
		func(ctx context.Context, req completionReq) (*huma.StreamResponse, error) {
			return &huma.StreamResponse{Body: func(hctx huma.Context) {
				out := newNDJSONStream(hctx)
				chunks := &chunkWriter{header: http.Header{}, out: out}
				err := h.streamCompletion(hctx.Context(), req, chunks)
				if err != nil && chunks.err == nil {
					// The failure is the answer's last line, as Weave ends a
					// stream whose completion failed.
					err = out.write(completionFailure(err).Response)
				}
				out.finish(ctx, err)
			}}, nil
		})
	route(h, huma.Operation{OperationID: "actions-execute-batch", Method: http.MethodPost, Path: "/actions/execute_batch", Tags: []string{"actions"},
		Summary: "Not supported: always 400"}, true,
		func(_ context.Context, in *body[actionsExecuteBatchBody]) (struct{}, []string, error) {
			return struct{}{}, one(in.Body.ProjectID), nil
		}, func(context.Context, struct{}) (*struct{}, error) { return nil, errActionsUnsupported })
}

// relayCompletion runs a completion into out (the JSON answer, or the
// stream's events) and returns the id of the call it is traced as. An
// upstream's non-2xx answer is an error carrying its body.
func (h *Handler) relayCompletion(ctx context.Context, req completionReq, out *bytes.Buffer) (*string, error) {
	completion, err := h.cfg.Chat.Complete(ctx, req.projectID, req.raw)
	if err != nil {
		return nil, err
	}
	rec := &bufferWriter{header: http.Header{}, body: out}
	if err := completion.Relay(rec); err != nil {
		return nil, err
	}
	if completion.Status/100 != 2 {
		return nil, weft.Errorf(errCompletionUpstream, "%s", out.String())
	}
	if id := rec.header.Get(chat.CallIDHeader); id != "" {
		return &id, nil
	}
	return nil, nil
}

// streamCompletion runs a streamed completion into chunks, which writes each
// chunk as a line of the answer as the upstream produces it.
func (h *Handler) streamCompletion(ctx context.Context, req completionReq, chunks *chunkWriter) error {
	completion, err := h.cfg.Chat.Complete(ctx, req.projectID, req.raw)
	if err != nil {
		return err
	}
	if err := completion.Relay(chunks); err != nil {
		return cmp.Or(chunks.err, err)
	}
	if chunks.err != nil {
		return chunks.err
	}
	if completion.Status/100 != 2 {
		return weft.Errorf(errCompletionUpstream, "%s", chunks.failed.String())
	}
	return chunks.end()
}

// maxChunkBytes bounds one event of a streamed completion.
const maxChunkBytes = 1 << 20

// chunkWriter is the http.ResponseWriter a streamed completion is relayed
// into: each "data: " event of the stream but [DONE] becomes one line of the
// answer as it arrives, after a first {"_meta": {"weave_call_id"}} line, and
// each flush of the relay flushes the answer. A non-2xx answer is kept to be
// reported as the failure.
type chunkWriter struct {
	header  http.Header
	out     *ndjsonStream
	status  int
	started bool
	line    []byte // the event line read so far
	failed  bytes.Buffer
	err     error // the first error writing the answer
}

func (w *chunkWriter) Header() http.Header { return w.header }

func (w *chunkWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *chunkWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.status/100 != 2 {
		if w.failed.Len() < maxChunkBytes {
			w.failed.Write(b)
		}
		return len(b), nil
	}
	if w.err != nil {
		return 0, w.err
	}
	if !w.started {
		w.started = true
		var callID *string
		if id := w.header.Get(chat.CallIDHeader); id != "" {
			callID = &id
		}
		if w.err = w.out.write(map[string]any{"_meta": map[string]any{"weave_call_id": callID}}); w.err != nil {
			return 0, w.err
		}
	}
	for rest := b; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			w.line = append(w.line, rest...)
			break
		}
		w.line = append(w.line, rest[:i]...)
		rest = rest[i+1:]
		if w.err = w.event(); w.err != nil {
			return 0, w.err
		}
	}
	if len(w.line) > maxChunkBytes {
		w.err = weft.Errorf(errCompletionUpstream, "a streamed chunk exceeds %d bytes", maxChunkBytes)
		return 0, w.err
	}
	return len(b), nil
}

// event writes the line read, when it is a chunk.
func (w *chunkWriter) event() error {
	data, ok := bytes.CutPrefix(bytes.TrimSuffix(w.line, []byte("\r")), []byte("data: "))
	w.line = w.line[:0]
	if !ok || string(data) == "[DONE]" {
		return nil
	}
	return w.out.write(json.RawMessage(slices.Clone(data)))
}

// Flush passes what was written on to the client.
func (w *chunkWriter) Flush() {
	if w.err == nil && w.started {
		w.err = w.out.flush()
	}
}

// end writes a last event without a line end, and the _meta line of an
// answer that had no event.
func (w *chunkWriter) end() error {
	if len(w.line) > 0 {
		if err := w.event(); err != nil {
			return err
		}
	}
	if w.started {
		return nil
	}
	_, err := w.Write(nil)
	return err
}

// completionFailure is Weave's answer to a failed completion.
func completionFailure(err error) *completionsRes {
	msg, _ := json.Marshal(map[string]string{"error": err.Error()})
	return &completionsRes{Response: msg}
}

// bufferWriter is an http.ResponseWriter that keeps what is written.
type bufferWriter struct {
	header http.Header
	body   *bytes.Buffer
}

func (w *bufferWriter) Header() http.Header         { return w.header }
func (w *bufferWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *bufferWriter) WriteHeader(int)             {}
func (w *bufferWriter) Flush()                      {}
