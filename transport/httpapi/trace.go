package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// Trace route bodies. Top-level fields are strict (unknown ones are a 422, as
// Weave's BaseModelStrict); nested call records accept unknown fields.
type (
	// The v2 bodies may leave project_id out: the path names the project.
	v2CallStartInput struct {
		Entity  string `path:"entity"`
		Project string `path:"project"`
		Body    struct {
			Start v2StartedCall `json:"start"`
		}
	}
	v2CallEndInput struct {
		Entity  string `path:"entity"`
		Project string `path:"project"`
		Body    struct {
			End v2EndedCall `json:"end"`
		}
	}

	// upsertBatchInput takes the body raw: the handler decodes batches of
	// thousands of calls in one pass (see decodeBatch); upsertBatchBody is its
	// documented schema.
	upsertBatchInput struct {
		ContentType string `header:"Content-Type" hidden:"true"`
		RawBody     []byte `contentType:"application/json"`
	}
	callsCompleteInput struct {
		Entity  string `path:"entity"`
		Project string `path:"project"`
		Body    struct {
			Batch []trace.CompletedCall `json:"batch"`
		}
	}
	upsertBatchOutputBody struct {
		Res []batchItemResult `json:"res"`
	}

	callUpdateInput struct {
		Body struct {
			trace.CallUpdateReq
			// Accepted and ignored: the acting user is the authenticated one.
			WbUserID string `json:"wb_user_id,omitempty"`
			PfUserID string `json:"pf_user_id,omitempty"`
		}
	}
	callReadInput struct {
		Body struct {
			trace.CallReadReq
			IncludeStorageSize      bool `json:"include_storage_size,omitempty"`
			IncludeTotalStorageSize bool `json:"include_total_storage_size,omitempty"`
		}
	}
	callsDeleteInput struct {
		Body struct {
			trace.CallsDeleteReq
			WbUserID string `json:"wb_user_id,omitempty"`
			PfUserID string `json:"pf_user_id,omitempty"`
		}
	}
	costCreateInput struct {
		Body struct {
			trace.CostCreateReq
			WbUserID string `json:"wb_user_id,omitempty"`
			PfUserID string `json:"pf_user_id,omitempty"`
		}
	}
)

// v2StartedCall and v2EndedCall are the records of the v2 paths: the schema of
// the trace record with project_id optional, so that they are validated like
// every other body. The record decodes whole into the embedded call (its
// UnmarshalJSON is promoted), project_id included when given; the shadowing
// field exists only for the schema.
type (
	v2StartedCall struct {
		_ struct{} `additionalProperties:"true"`
		trace.StartedCall
		ProjectID string `json:"project_id,omitempty" doc:"the path's project when left out"`
	}
	v2EndedCall struct {
		_ struct{} `additionalProperties:"true"`
		trace.EndedCall
		ProjectID string `json:"project_id,omitempty" doc:"the path's project when left out"`
	}
)

// upsertBatchBody is the body of /call/upsert_batch. Each item's req stays
// undecoded so that one malformed item fails alone instead of failing the
// request.
type upsertBatchBody struct {
	Batch []struct {
		Mode string          `json:"mode,omitempty"`
		Req  json.RawMessage `json:"req,omitempty" doc:"{\"start\": <call start record>} or {\"end\": <call end record>}" example:"{\"start\":{\"project_id\":\"entity/project\",\"id\":\"01936f4e-0000-7000-8000-000000000001\",\"trace_id\":\"01936f4e-0000-7000-8000-000000000002\",\"op_name\":\"my_op\",\"started_at\":\"2026-01-02T03:04:05Z\",\"attributes\":{},\"inputs\":{\"question\":\"2+2?\"}}}"`
	} `json:"batch"`
}

// callsQueryBody is CallsQueryReq plus the Weave fields this server accepts
// and ignores (storage sizes) or serves in the adapter (expanded refs and
// feedback, see callHydrator).
type callsQueryBody struct {
	trace.CallsQueryReq
	IncludeFeedback         bool `json:"include_feedback,omitempty"`
	IncludeStorageSize      bool `json:"include_storage_size,omitempty"`
	IncludeTotalStorageSize bool `json:"include_total_storage_size,omitempty"`
	IncludeUsernames        bool `json:"include_usernames,omitempty"`
	// ReturnExpandedColumnValues false keeps refs as they are (Weave then
	// uses expand_columns for filtering and sorting only).
	ReturnExpandedColumnValues *bool `json:"return_expanded_column_values,omitempty"`
}

type callsStatsBody struct {
	trace.CallsQueryStatsReq
	IncludeTotalStorageSize bool `json:"include_total_storage_size,omitempty"`
}

// batchItemResult is one entry of an upsert_batch answer: the ids of a start,
// {} for an end, or the error of an item that was not stored.
type batchItemResult struct {
	ID      string          `json:"id,omitempty"`
	TraceID string          `json:"trace_id,omitempty"`
	Error   *batchItemError `json:"error,omitempty"`
}

type batchItemError struct {
	Status    int    `json:"status"`
	ErrorType string `json:"error_type"`
	Reason    string `json:"reason"`
}

func (h *Handler) registerTrace() {
	svc := h.cfg.Trace
	post := func(id, path, summary string) huma.Operation {
		return huma.Operation{OperationID: id, Method: http.MethodPost, Path: path, Summary: summary, Tags: []string{"calls"}}
	}
	route(h, post("call-start", "/call/start", "Start a call"), true,
		fromBody(func(r *trace.CallStartReq) string { return r.Start.ProjectID }), svc.CallStart)
	route(h, post("call-end", "/call/end", "End a call (may arrive before its start)"), true,
		fromBody(func(r *trace.CallEndReq) string { return r.End.ProjectID }), svc.CallEnd)
	route(h, post("v2-call-start", "/v2/{entity}/{project}/call/start", "Start a call (v2 path)"), true,
		func(_ context.Context, in *v2CallStartInput) (*trace.CallStartReq, []string, error) {
			req := &trace.CallStartReq{Start: in.Body.Start.StartedCall}
			projects, err := pathProject(in.Entity, in.Project, &req.Start.ProjectID)
			return req, projects, err
		}, svc.CallStart)
	route(h, post("v2-call-end", "/v2/{entity}/{project}/call/end", "End a call (v2 path)"), true,
		func(_ context.Context, in *v2CallEndInput) (*trace.CallEndReq, []string, error) {
			req := &trace.CallEndReq{End: in.Body.End.EndedCall}
			projects, err := pathProject(in.Entity, in.Project, &req.End.ProjectID)
			return req, projects, err
		}, svc.CallEnd)
	upsertOp := post("call-upsert-batch", "/call/upsert_batch", "Apply a batch of call starts and ends, each item on its own")
	upsertOp.SkipValidateBody = true // decodeBatch validates what its one pass does not take
	route(h, upsertOp, true, h.upsertBatchRequest, func(ctx context.Context, req *trace.UpsertBatchReq) (upsertBatchOutputBody, error) {
		res, err := svc.UpsertBatch(ctx, req)
		if err != nil {
			return upsertBatchOutputBody{}, err
		}
		return batchAnswer(ctx, res), nil
	})
	h.upsertBatchSchema = h.api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[upsertBatchBody](), true, "UpsertBatchInputBody")
	h.api.OpenAPI().Paths[upsertOp.Path].Post.RequestBody.Content["application/json"].Schema = h.upsertBatchSchema
	route(h, post("v2-calls-complete", "/v2/{entity}/{project}/calls/complete", "Store completed calls (start and end in one record)"), true,
		func(_ context.Context, in *callsCompleteInput) (*trace.CallsCompleteReq, []string, error) {
			projectID := projectOf(in.Entity, in.Project)
			return &trace.CallsCompleteReq{ProjectID: projectID, Batch: in.Body.Batch}, one(projectID), nil
		}, func(ctx context.Context, req *trace.CallsCompleteReq) (upsertBatchOutputBody, error) {
			res, err := svc.CallsComplete(ctx, req)
			if err != nil {
				return upsertBatchOutputBody{}, err
			}
			return batchAnswer(ctx, res), nil
		})
	route(h, post("call-update", "/call/update", "Rename a call (it need not exist yet)"), true,
		func(_ context.Context, in *callUpdateInput) (*trace.CallUpdateReq, []string, error) {
			return &in.Body.CallUpdateReq, one(in.Body.ProjectID), nil
		}, svc.CallUpdate)
	route(h, post("call-read", "/call/read", "Read one call ({\"call\": null} when absent)"), false,
		func(_ context.Context, in *callReadInput) (*trace.CallReadReq, []string, error) {
			return &in.Body.CallReadReq, one(in.Body.ProjectID), nil
		}, svc.CallRead)
	streamOp := post("calls-stream-query", "/calls/stream_query", "Query calls; the answer is NDJSON, one call per line")
	streamOp.Responses = h.errorResponses(styleWeave)
	streamOp.Responses["200"] = &huma.Response{Description: "One call JSON object per line", Content: map[string]*huma.MediaType{"application/jsonl": {}}}
	routeOutput(h, streamOp, false, fromBody(func(r *callsQueryBody) string { return r.ProjectID }), h.streamQuery)
	queryOp := post("calls-query", "/calls/query", "Query calls; the answer is one JSON object, {\"calls\": [...]} (deprecated by Weave for /calls/stream_query)")
	queryOp.Deprecated = true
	routeOutput(h, queryOp, false, fromBody(func(r *callsQueryBody) string { return r.ProjectID }), h.arrayQuery)
	threadsOp := post("threads-stream-query", "/threads/stream_query", "Threads and their turn statistics; the answer is NDJSON, one thread per line")
	threadsOp.Tags = []string{"threads"}
	threadsOp.Responses = h.errorResponses(styleWeave)
	threadsOp.Responses["200"] = &huma.Response{Description: "One thread JSON object per line", Content: map[string]*huma.MediaType{"application/jsonl": {}}}
	routeOutput(h, threadsOp, false, fromBody(func(r *trace.ThreadsQueryReq) string { return r.ProjectID }), h.streamThreads)
	route(h, post("calls-query-stats", "/calls/query_stats", "Count calls"), false,
		fromBody(func(r *callsStatsBody) string { return r.ProjectID }),
		func(ctx context.Context, req *callsStatsBody) (*trace.CallsQueryStatsRes, error) {
			return svc.CallsQueryStats(ctx, &req.CallsQueryStatsReq)
		})
	route(h, post("call-stats", "/calls/stats", "Call metrics and token usage (with costs) per time bucket"), false,
		fromBody(func(r *trace.CallStatsReq) string { return r.ProjectID }), svc.CallStats)
	route(h, post("calls-delete", "/calls/delete", "Delete calls and their descendants (at most 1000 ids)"), true,
		func(_ context.Context, in *callsDeleteInput) (*trace.CallsDeleteReq, []string, error) {
			return &in.Body.CallsDeleteReq, one(in.Body.ProjectID), nil
		}, svc.CallsDelete)
	route(h, post("calls-usage", "/calls/usage", "Token usage (and costs) of calls' subtrees"), false,
		fromBody(func(r *trace.CallsUsageReq) string { return r.ProjectID }), svc.CallsUsage)
	route(h, post("trace-usage", "/trace/usage", "Token usage (and costs) of every call a filter and query match, each rolled up over its matched descendants"), false,
		fromBody(func(r *trace.TraceUsageReq) string { return r.ProjectID }), svc.TraceUsage)
	route(h, post("cost-create", "/cost/create", "Add project LLM prices"), true,
		func(_ context.Context, in *costCreateInput) (*trace.CostCreateReq, []string, error) {
			return &in.Body.CostCreateReq, one(in.Body.ProjectID), nil
		}, svc.CostCreate)
	route(h, post("cost-query", "/cost/query", "List project LLM prices"), false,
		fromBody(func(r *trace.CostQueryReq) string { return r.ProjectID }), svc.CostQuery)
	route(h, post("cost-purge", "/cost/purge", "Remove project LLM prices"), true,
		fromBody(func(r *trace.CostPurgeReq) string { return r.ProjectID }), svc.CostPurge)
}

// pathProject names the v2 path's project and puts it in the body's
// project_id, which, when given, must name the same project.
func pathProject(entity, project string, bodyProject *string) ([]string, error) {
	projectID := projectOf(entity, project)
	if *bodyProject != "" && *bodyProject != projectID {
		return nil, weft.Errorf(trace.ErrInvalidCall, "project_id %q differs from the project in the path", *bodyProject)
	}
	*bodyProject = projectID
	return one(projectID), nil
}

// upsertBatchRequest decodes each item on its own and names every project the
// batch writes to (a forbidden one refuses the whole batch); an item with a
// malformed project fails alone.
func (h *Handler) upsertBatchRequest(ctx context.Context, in *upsertBatchInput) (*trace.UpsertBatchReq, []string, error) {
	batch, err := h.decodeBatch(ctx, in.ContentType, in.RawBody)
	if err != nil {
		return nil, nil, err
	}
	var projects []string
	for _, item := range batch {
		var projectID string
		switch {
		case item.Start != nil:
			projectID = item.Start.ProjectID
		case item.End != nil:
			projectID = item.End.ProjectID
		}
		if _, _, err := weft.ParseProjectID(projectID); err == nil {
			projects = append(projects, projectID)
		}
	}
	return &trace.UpsertBatchReq{Batch: batch}, projects, nil
}

// decodeBatch reads an upsert_batch body. Batches are large (the SDKs send up
// to 31 MiB), so the usual shape — {"batch": [{"mode": "start"|"end", "req":
// {…}}, …]} with nothing else — is decoded in one pass (trace.ScanBatch, or
// decodeBatchOnePass for the spellings it leaves); any other body, and
// any item that does not decode, takes the general path, which validates the
// body against its schema as every route does and decodes each item on its
// own, so answers (422s and per-item errors alike) are the same either way.
func (h *Handler) decodeBatch(ctx context.Context, contentType string, body []byte) ([]trace.BatchItem, error) {
	if mediaType, _, _ := strings.Cut(contentType, ";"); contentType == "" || strings.EqualFold(strings.TrimSpace(mediaType), "application/json") {
		// The body stays untouched until the handler returns (huma pools it
		// only then), and the store is done with the batch by then.
		if batch, ok := trace.ScanBatch(body); ok {
			return batch, nil
		}
		if batch, ok := decodeBatchOnePass(body); ok {
			return batch, nil
		}
	}
	if contentType == "" {
		contentType = "application/json"
	}
	// What huma does for every other route: a body that does not parse is a
	// 400 (415 for an unknown content type), one that breaks the schema or
	// holds a NUL in a typed field a 422; each rendered in the route's style.
	invalid := func(status int, err error) error {
		var detail *huma.ErrorDetail
		if !errors.As(err, &detail) {
			detail = &huma.ErrorDetail{Location: "body", Message: err.Error(), Value: string(body)}
		}
		return renderError(ctx, styleWeave, status, "validation failed", []error{detail})
	}
	var parsed any
	if err := h.api.Unmarshal(contentType, body, &parsed); err != nil {
		if errors.Is(err, huma.ErrUnknownContentType) {
			return nil, invalid(http.StatusUnsupportedMediaType, err)
		}
		return nil, invalid(http.StatusBadRequest, err)
	}
	var res huma.ValidateResult
	pb := huma.NewPathBuffer(make([]byte, 0, 64), 0)
	pb.Push("body")
	huma.Validate(h.api.OpenAPI().Components.Schemas, h.upsertBatchSchema, pb, huma.ModeWriteToServer, parsed, &res)
	if len(res.Errors) > 0 {
		nameObjectMismatches(h.api.OpenAPI().Components.Schemas, h.upsertBatchSchema, res.Errors)
		return nil, renderError(ctx, styleWeave, http.StatusUnprocessableEntity, "validation failed", res.Errors)
	}
	var in upsertBatchBody
	if err := h.api.Unmarshal(contentType, body, &in); err != nil {
		return nil, invalid(http.StatusUnprocessableEntity, err)
	}
	batch := make([]trace.BatchItem, len(in.Batch))
	for i, raw := range in.Batch {
		item := trace.BatchItem{Mode: raw.Mode}
		switch raw.Mode {
		case trace.ModeStart:
			var req trace.CallStartReq
			if item.Err = decodeItem(raw.Req, &req, i); item.Err == nil {
				item.Start = &req.Start
			}
		case trace.ModeEnd:
			var req trace.CallEndReq
			if item.Err = decodeItem(raw.Req, &req, i); item.Err == nil {
				item.End = &req.End
			}
		}
		batch[i] = item
	}
	return batch, nil
}

// decodeBatchOnePass decodes the usual upsert_batch body in one pass over its
// bytes. ok is false for anything else: other keys or key spellings, a
// repeated key, a mode other than start or end, an item without its req or
// one that does not decode, trailing data. The caller then takes the general
// path.
func decodeBatchOnePass(body []byte) (batch []trace.BatchItem, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	next := func(want json.Token) bool {
		tok, err := dec.Token()
		return err == nil && tok == want
	}
	if !next(json.Delim('{')) || !next("batch") || !next(json.Delim('[')) {
		return nil, false
	}
	for dec.More() {
		if !next(json.Delim('{')) || !next("mode") {
			return nil, false
		}
		tok, err := dec.Token()
		mode, isString := tok.(string)
		if err != nil || !isString || (mode != trace.ModeStart && mode != trace.ModeEnd) || !next("req") {
			return nil, false
		}
		item, err := trace.DecodeBatchReq(dec, mode)
		if err != nil || !next(json.Delim('}')) {
			return nil, false
		}
		batch = append(batch, item)
	}
	if !next(json.Delim(']')) || !next(json.Delim('}')) {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	if batch == nil {
		batch = []trace.BatchItem{}
	}
	return batch, true
}

func decodeItem(raw json.RawMessage, dst any, i int) error {
	if err := json.Unmarshal(raw, dst); err != nil {
		return weft.Errorf(trace.ErrInvalidCall, "batch item %d: req is malformed: %v", i, err)
	}
	return nil
}

// batchAnswer is the answer of a batch write: per item its ids, or the
// error rendered as the route would render it alone.
func batchAnswer(ctx context.Context, res *trace.UpsertBatchRes) upsertBatchOutputBody {
	out := upsertBatchOutputBody{Res: make([]batchItemResult, len(res.Res))}
	for i, r := range res.Res {
		out.Res[i] = batchItemResult{ID: r.ID, TraceID: r.TraceID}
		if r.Err != nil {
			rendered := renderDomainError(ctx, styleWeave, r.Err)
			body, _ := rendered.body.(map[string]any)
			reason, _ := body["reason"].(string)
			errType, _ := body["error_type"].(string)
			out.Res[i].Error = &batchItemError{Status: rendered.status, ErrorType: errType, Reason: reason}
		}
	}
	return out
}

// ndjsonStream writes an answer of JSON lines as values arrive: the first
// line is flushed at once, and an error before it is an ordinary error
// response. Made by newArrayStream, it writes one JSON object instead, whose
// member holds the values as an array.
type ndjsonStream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	buf     *bufio.Writer
	enc     *json.Encoder
	started bool
	// member, when set, names the array member of a JSON answer.
	member string
	count  int
}

func newNDJSONStream(hctx huma.Context) *ndjsonStream {
	_, w := humachi.Unwrap(hctx)
	buf := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return &ndjsonStream{w: w, rc: http.NewResponseController(w), buf: buf, enc: enc}
}

// newArrayStream is a stream whose answer is {member: [values…]}.
func newArrayStream(hctx huma.Context, member string) *ndjsonStream {
	s := newNDJSONStream(hctx)
	s.member = member
	return s
}

func (s *ndjsonStream) start() {
	s.started = true
	if s.member == "" {
		s.w.Header().Set("Content-Type", "application/jsonl")
		s.w.WriteHeader(http.StatusOK)
		return
	}
	s.w.Header().Set("Content-Type", "application/json")
	s.w.WriteHeader(http.StatusOK)
	// The member name is the handler's own constant: no escaping needed.
	_, _ = s.buf.WriteString(`{"` + s.member + `":[`)
}

// write writes one line (one array element).
func (s *ndjsonStream) write(v any) error {
	first := !s.started
	if first {
		s.start()
	}
	if s.member != "" && s.count > 0 {
		if err := s.buf.WriteByte(','); err != nil {
			return err
		}
	}
	s.count++
	if err := s.enc.Encode(v); err != nil {
		return err
	}
	if !first {
		return nil
	}
	return s.flush()
}

// flush passes the lines written so far on to the client.
func (s *ndjsonStream) flush() error {
	if err := s.buf.Flush(); err != nil {
		return err
	}
	return s.rc.Flush()
}

// finish ends the answer after the last line, or after err: an error
// response when nothing was written yet, else a cut answer (and a log line;
// a cut array answer is not valid JSON, so the client sees the failure).
func (s *ndjsonStream) finish(ctx context.Context, err error) {
	switch {
	case err != nil && !s.started:
		rendered := renderDomainError(ctx, styleWeave, err)
		writeJSON(s.w, rendered.status, rendered.body)
		return
	case err != nil:
		loggerFrom(ctx).WarnContext(ctx, "stream ended early", "error", err)
		_ = s.buf.Flush()
		return
	case !s.started:
		s.start()
	}
	if s.member != "" {
		_, _ = s.buf.WriteString("]}\n")
	}
	_ = s.buf.Flush()
}

// streamQuery answers NDJSON, one call per line, written as rows arrive from
// the database. Calls whose refs are expanded or whose feedback is attached
// are written in batches of hydrateBatch.
func (h *Handler) streamQuery(ctx context.Context, req *callsQueryBody) (*huma.StreamResponse, error) {
	return h.queryCalls(ctx, req, newNDJSONStream)
}

// arrayQuery answers the deprecated /calls/query: {"calls": [...]}, written
// as streamQuery writes its lines.
func (h *Handler) arrayQuery(ctx context.Context, req *callsQueryBody) (*huma.StreamResponse, error) {
	return h.queryCalls(ctx, req, func(hctx huma.Context) *ndjsonStream { return newArrayStream(hctx, "calls") })
}

func (h *Handler) queryCalls(ctx context.Context, req *callsQueryBody, newStream func(huma.Context) *ndjsonStream) (*huma.StreamResponse, error) {
	expand := req.ExpandColumns
	if req.ReturnExpandedColumnValues != nil && !*req.ReturnExpandedColumnValues {
		expand = nil
	}
	hy := h.newCallHydrator(req.ProjectID, expand, req.IncludeFeedback)
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		out := newStream(hctx)
		var pending []*trace.Call
		flushPending := func() error {
			if err := hy.hydrate(hctx.Context(), pending); err != nil {
				return err
			}
			for _, c := range pending {
				if err := out.write(c); err != nil {
					return err
				}
			}
			pending = pending[:0]
			return nil
		}
		err := h.cfg.Trace.CallsQuery(hctx.Context(), &req.CallsQueryReq, func(c *trace.Call) error {
			if !hy.active() {
				return out.write(c)
			}
			if pending = append(pending, c); len(pending) == hydrateBatch {
				return flushPending()
			}
			return nil
		})
		if err == nil && len(pending) > 0 {
			err = flushPending()
		}
		out.finish(ctx, err)
	}}, nil
}

// streamThreads answers /threads/stream_query: NDJSON, one thread per line.
func (h *Handler) streamThreads(ctx context.Context, req *trace.ThreadsQueryReq) (*huma.StreamResponse, error) {
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		out := newNDJSONStream(hctx)
		out.finish(ctx, h.cfg.Trace.ThreadsQuery(hctx.Context(), req, func(t *trace.Thread) error { return out.write(t) }))
	}}, nil
}
