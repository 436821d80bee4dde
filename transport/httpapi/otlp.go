package httpapi

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/trace/otlp"
)

// Defaults of [OTLPConfig].
const (
	// DefaultOTLPMaxDecompressedBytes bounds an OTLP body after
	// decompression.
	DefaultOTLPMaxDecompressedBytes = 64 << 20
	// DefaultOTLPMaxInFlight bounds the OTLP exports decoded and stored at
	// once.
	DefaultOTLPMaxInFlight = 16
	// DefaultOTLPMaxInFlightPerKey bounds the OTLP exports one API key has
	// in progress at once, bodies still arriving included.
	DefaultOTLPMaxInFlightPerKey = 4
	// otlpRetryAfterSeconds is the Retry-After of a 503: exporters back off
	// and retry, and one second is enough for a request in flight to end.
	otlpRetryAfterSeconds = 1
	// otlpMaxMessages bounds the span errors joined into a partial_success
	// message.
	otlpMaxMessages = 20
)

// OTLPConfig configures POST /otel/v1/traces, OpenTelemetry trace ingest.
type OTLPConfig struct {
	// MaxDecompressedBytes bounds a body after gzip or deflate (the body as
	// sent is bounded by Config.MaxBodyBytes); larger gets 413. Defaults to
	// [DefaultOTLPMaxDecompressedBytes].
	MaxDecompressedBytes int64
	// MaxInFlight bounds the exports decoded and stored at once; more get
	// 503 with Retry-After, which OTLP exporters retry. An export takes its
	// place only once its body has arrived (within Config.BodyReadTimeout),
	// so clients that send slowly hold none. Defaults to
	// [DefaultOTLPMaxInFlight].
	MaxInFlight int
	// MaxInFlightPerKey bounds the exports one API key has in progress at
	// once, from the first byte of the body to the answer; more get 429
	// with Retry-After, which OTLP exporters retry. Defaults to
	// [DefaultOTLPMaxInFlightPerKey].
	MaxInFlightPerKey int
	// MaxValueBytes bounds one attribute value; longer values are truncated
	// with a marker. Defaults to otlp.DefaultMaxValueBytes.
	MaxValueBytes int
}

func (cfg *OTLPConfig) setDefaults() error {
	if cfg.MaxDecompressedBytes == 0 {
		cfg.MaxDecompressedBytes = DefaultOTLPMaxDecompressedBytes
	}
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = DefaultOTLPMaxInFlight
	}
	if cfg.MaxInFlightPerKey == 0 {
		cfg.MaxInFlightPerKey = DefaultOTLPMaxInFlightPerKey
	}
	if cfg.MaxDecompressedBytes < 0 || cfg.MaxInFlight < 0 || cfg.MaxInFlightPerKey < 0 {
		return errors.New("httpapi: OTLP limits must not be negative")
	}
	return nil
}

// otlpIngest serves POST /otel/v1/traces: OTLP/HTTP in protobuf or JSON,
// answered in the request's encoding as the OTLP specification asks.
type otlpIngest struct {
	h        *Handler
	conv     *otlp.Converter
	inFlight chan struct{}
	perKey   *keyCounter
}

// registerOTLP mounts the route at Weave's path; SDKs given <base>/otel as
// their OTLP endpoint append /v1/traces themselves.
func (h *Handler) registerOTLP() {
	in := &otlpIngest{h: h, conv: otlp.New(otlp.Config{MaxValueBytes: h.cfg.OTLP.MaxValueBytes}),
		inFlight: make(chan struct{}, h.cfg.OTLP.MaxInFlight), perKey: newKeyCounter(h.cfg.OTLP.MaxInFlightPerKey)}
	h.router.Post("/otel/v1/traces", in.serve)
	h.documentOTLP()
}

// documentOTLP puts the OTLP route in the OpenAPI document. It is served
// outside huma (its bodies are OTLP's protobuf or JSON, its answers and
// errors OTLP's), so it is described by hand.
func (h *Handler) documentOTLP() {
	doc := h.api.OpenAPI()
	doc.Components.SecuritySchemes["wandbApiKey"] = &huma.SecurityScheme{Type: "apiKey", In: "header", Name: "wandb-api-key",
		Description: "the API key, as Weave's OpenTelemetry exporters send it"}
	status := &huma.Schema{Type: "object", Description: "google.rpc.Status: code, message and details", AdditionalProperties: true}
	answer := func(desc string) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{
			"application/x-protobuf": {Schema: &huma.Schema{Type: "string", Format: "binary"}},
			"application/json":       {Schema: status},
		}}
	}
	doc.AddOperation(&huma.Operation{
		OperationID: "otel-traces-export", Method: http.MethodPost, Path: "/otel/v1/traces", Tags: []string{"otel"},
		Summary: "Export OpenTelemetry spans (OTLP/HTTP)",
		Description: "Each span becomes a call of the project its resource names (wandb.entity and wandb.project attributes, " +
			"else a project_id header). The body is an ExportTraceServiceRequest as protobuf or OTLP/JSON, plain, gzip or deflate. " +
			"200 carries an ExportTraceServiceResponse in the request's encoding (partial_success counts the spans not stored); " +
			"errors carry a google.rpc.Status.",
		Security: append(slices.Clone(authRequired), map[string][]string{"wandbApiKey": {}}),
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
			"application/x-protobuf": {Schema: &huma.Schema{Type: "string", Format: "binary", Description: "ExportTraceServiceRequest (opentelemetry.proto.collector.trace.v1)"}},
			"application/json": {Schema: &huma.Schema{Type: "object", Description: "ExportTraceServiceRequest in OTLP/JSON",
				Properties: map[string]*huma.Schema{"resourceSpans": {Type: "array", Items: &huma.Schema{Type: "object", AdditionalProperties: true}}}}},
		}},
		Responses: map[string]*huma.Response{
			"200": answer("ExportTraceServiceResponse: every span stored, or partial_success with the rejected spans and why"),
			"400": answer("the body is no ExportTraceServiceRequest"),
			"401": answer("no valid API key"),
			"403": answer("the key may not write a project the spans name"),
			"413": answer("the body is over the server's limit, as sent or decompressed"),
			"415": answer("another media type or content encoding"),
			"429": answer("the key's rate or in-flight limit; retry after Retry-After"),
			"503": answer("the server is busy or cannot reach its database; retry after Retry-After"),
		},
	})
}

// otlpEncoding is the encoding of a request and of its answer.
type otlpEncoding int

const (
	otlpProtobuf otlpEncoding = iota
	otlpJSON
)

func (e otlpEncoding) contentType() string {
	if e == otlpJSON {
		return "application/json"
	}
	return "application/x-protobuf"
}

// Refusals of the OTLP route; their classes decide the status (errors.go),
// the body is a google.rpc.Status.
var (
	errOTLPMediaType = weft.DefineError(weft.ErrUnsupportedMedia, "UnsupportedMediaType", "unsupported media type")
	errOTLPBody      = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "cannot decode the OTLP body")
	errOTLPTooLarge  = weft.DefineError(weft.ErrTooLarge, "RequestTooLarge", "request too large")
	errOTLPBusy      = weft.DefineError(weft.ErrUnavailable, "ServiceUnavailable", "too many OpenTelemetry exports at once; retry later")
	errOTLPKeyBusy   = weft.DefineError(weft.ErrRateLimited, "RateLimitError", "too many OpenTelemetry exports at once with this API key; retry later")
)

func (in *otlpIngest) serve(w http.ResponseWriter, r *http.Request) {
	enc, encErr := requestEncoding(r.Header.Get("Content-Type"))
	res, err := in.export(r, enc, encErr)
	if err != nil {
		in.writeError(w, r, enc, err)
		return
	}
	var body []byte
	if enc == otlpJSON {
		body, err = res.MarshalJSON()
	} else {
		body, err = res.MarshalProto()
	}
	if err != nil {
		in.writeError(w, r, enc, err)
		return
	}
	w.Header().Set("Content-Type", enc.contentType())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// export runs the request's steps in order: credentials, rate limit, media
// type, the key's exports in progress, body, the server's exports in
// progress, decoding, projects, one transaction. The body is read before a
// place among the server's exports is taken, so that clients sending slowly
// hold places only of their own key's.
func (in *otlpIngest) export(r *http.Request, enc otlpEncoding, encErr error) (ptraceotlp.ExportResponse, error) {
	ctx := r.Context()
	p, key, err := in.authenticate(r)
	if err != nil {
		return ptraceotlp.ExportResponse{}, err
	}
	if encErr != nil {
		return ptraceotlp.ExportResponse{}, encErr
	}
	if !in.perKey.acquire(key) {
		return ptraceotlp.ExportResponse{}, weft.WithFields(errOTLPKeyBusy, map[string]any{"retry_after": otlpRetryAfterSeconds},
			"too many OpenTelemetry exports at once with this API key (at most %d); retry later", in.h.cfg.OTLP.MaxInFlightPerKey)
	}
	defer in.perKey.release(key)
	raw, err := in.readBody(r)
	if err != nil {
		return ptraceotlp.ExportResponse{}, err
	}
	select {
	case in.inFlight <- struct{}{}:
		defer func() { <-in.inFlight }()
	default:
		return ptraceotlp.ExportResponse{}, errOTLPBusy
	}
	req := ptraceotlp.NewExportRequest()
	if enc == otlpJSON {
		err = req.UnmarshalJSON(raw)
	} else {
		err = req.UnmarshalProto(raw)
	}
	if err != nil {
		return ptraceotlp.ExportResponse{}, weft.Errorf(errOTLPBody, "cannot decode the OTLP %s body: %v", enc.contentType(), err)
	}
	spans, _ := in.conv.Convert(req.Traces(), strings.TrimSpace(r.Header.Get("project_id")))

	ctx = weft.WithPrincipal(ctx, p)
	if err := in.authorizeProjects(ctx, spans); err != nil {
		return ptraceotlp.ExportResponse{}, err
	}
	batch := make([]trace.CompletedCall, 0, len(spans))
	for _, s := range spans {
		if s.Err == nil {
			batch = append(batch, *s.Call)
		}
	}
	var stored *trace.UpsertBatchRes
	if len(batch) > 0 {
		if stored, err = in.h.cfg.Trace.CallsComplete(ctx, &trace.CallsCompleteReq{Batch: batch}); err != nil {
			return ptraceotlp.ExportResponse{}, err
		}
	}
	res, written := partialSuccess(spans, stored)
	return res, in.h.written(ctx, written...)
}

// authenticate reads the API key from Authorization (Basic api:<key> or
// Bearer <key>) or Weave's wandb-api-key header, and takes a token of the
// key's rate limit. limitedAs names the key in the server's limits.
func (in *otlpIngest) authenticate(r *http.Request) (p weft.Principal, limitedAs string, err error) {
	username, key, ok := credentials(r.Header.Get("Authorization"))
	if !ok {
		key = strings.TrimSpace(r.Header.Get("wandb-api-key"))
		ok = key != ""
	}
	if !ok {
		return weft.Principal{}, "", weft.ErrBadCredentials
	}
	if p, err = in.h.cfg.Authenticator.Authenticate(r.Context(), username, key); err != nil {
		return weft.Principal{}, "", err
	}
	limitedAs = limitKey(p, key)
	if err := in.h.takeToken(limitedAs); err != nil {
		return weft.Principal{}, "", err
	}
	return p, limitedAs, nil
}

// keyCounter bounds what each key has in progress at once. A key's entry
// lives while it has something in progress, so memory follows the keys in
// use.
type keyCounter struct {
	limit int
	mu    sync.Mutex
	count map[string]int
}

func newKeyCounter(limit int) *keyCounter { return &keyCounter{limit: limit, count: map[string]int{}} }

// acquire takes one of key's places, or reports that it has none left.
func (c *keyCounter) acquire(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count[key] >= c.limit {
		return false
	}
	c.count[key]++
	return true
}

func (c *keyCounter) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count[key]--; c.count[key] <= 0 {
		delete(c.count, key)
	}
}

// requestEncoding reads the Content-Type: protobuf or JSON, anything else
// 415.
func requestEncoding(contentType string) (otlpEncoding, error) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil:
	case mediaType == "application/x-protobuf" || mediaType == "application/protobuf":
		return otlpProtobuf, nil
	case mediaType == "application/json":
		return otlpJSON, nil
	}
	return otlpProtobuf, weft.Errorf(errOTLPMediaType, "unsupported Content-Type %q: send application/x-protobuf or application/json", contentType)
}

// readBody reads the body, inflating gzip or deflate, within the limits
// before (Config.MaxBodyBytes) and after decompression.
func (in *otlpIngest) readBody(r *http.Request) ([]byte, error) {
	var body io.Reader = r.Body
	switch encoding := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); encoding {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, tooLargeOr(err, "the gzip body is not gzip: "+err.Error())
		}
		defer zr.Close()
		body = zr
	case "deflate":
		// HTTP's deflate is zlib; some clients send the bare stream.
		raw, err := readLimited(r.Body, in.h.cfg.MaxBodyBytes)
		if err != nil {
			return nil, err
		}
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			body = flate.NewReader(bytes.NewReader(raw))
		} else {
			body = zr
		}
	default:
		return nil, weft.Errorf(errOTLPMediaType, "unsupported Content-Encoding %q: send gzip, deflate or none", encoding)
	}
	raw, err := readLimited(body, in.h.cfg.OTLP.MaxDecompressedBytes)
	if err != nil {
		return nil, err
	}
	return raw, nil
}

// readLimited reads r whole, or fails with 413 past limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, tooLargeOr(err, "cannot read the body: "+err.Error())
	}
	if int64(len(raw)) > limit {
		return nil, tooLarge(limit)
	}
	return raw, nil
}

func tooLarge(limit int64) error {
	return weft.Errorf(errOTLPTooLarge, "request too large: the OTLP body exceeds %d bytes", limit)
}

// tooLargeOr is 413 when err is the server's body limit, 408 when the body
// did not arrive in time, else 400 with msg.
func tooLargeOr(err error, msg string) error {
	var maxErr *http.MaxBytesError
	var netErr net.Error
	if errors.As(err, &maxErr) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return BodyError(err)
	}
	return weft.Errorf(errOTLPBody, "%s", msg)
}

// authorizeProjects checks write access to every project the spans name. A
// malformed project fails its spans alone; a project the caller may not
// write refuses the whole request, as on every route.
func (in *otlpIngest) authorizeProjects(ctx context.Context, spans []otlp.Span) error {
	checked := map[string]error{}
	for i := range spans {
		s := &spans[i]
		if s.Err != nil {
			continue
		}
		err, seen := checked[s.ProjectID]
		if !seen {
			if _, _, err = weft.ParseProjectID(s.ProjectID); err == nil {
				if err = in.h.authorize(ctx, s.ProjectID, true); err != nil {
					return err
				}
			}
			checked[s.ProjectID] = err
		}
		if err != nil {
			s.Err, s.Call = err, nil
		}
	}
	return nil
}

// partialSuccess counts the spans not stored, with the first messages, and
// names the projects a span was stored in. stored has a result per span
// without Err, in span order (the batch export built).
func partialSuccess(spans []otlp.Span, stored *trace.UpsertBatchRes) (res ptraceotlp.ExportResponse, written []string) {
	res = ptraceotlp.NewExportResponse()
	var rejected int64
	var msgs []string
	reject := func(spanID string, err error) {
		rejected++
		if len(msgs) < otlpMaxMessages {
			msgs = append(msgs, "span "+spanID+": "+err.Error())
		}
	}
	item := 0
	for _, s := range spans {
		if s.Err != nil {
			reject(s.SpanID, s.Err)
			continue
		}
		stored := stored.Res[item]
		item++
		if err := stored.Err; err != nil {
			reject(s.SpanID, err)
		} else if !slices.Contains(written, s.ProjectID) {
			written = append(written, s.ProjectID)
		}
	}
	if rejected > 0 {
		res.PartialSuccess().SetRejectedSpans(rejected)
		res.PartialSuccess().SetErrorMessage(strings.Join(msgs, "; "))
	}
	return res, written
}

// writeError answers a refused request with a google.rpc.Status in the
// request's encoding; the HTTP status comes from the one table (StatusOf).
// 429 and 503 carry Retry-After, which exporters honour when they retry.
func (in *otlpIngest) writeError(w http.ResponseWriter, r *http.Request, enc otlpEncoding, err error) {
	status, msg := StatusOf(err), err.Error()
	if status == http.StatusUnauthorized || status == http.StatusUnsupportedMediaType || status == http.StatusTooManyRequests {
		// Refused before its body was read: closing the connection spares
		// reading a body no one will use, which a slow client would make
		// the answer wait for.
		w.Header().Set("Connection", "close")
	}
	switch {
	case status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Basic realm="weft", Bearer`)
	case status == http.StatusTooManyRequests:
		if retry, ok := weft.ErrorFields(err)["retry_after"]; ok {
			w.Header().Set("Retry-After", toString(retry))
		}
	case status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(otlpRetryAfterSeconds))
		if weft.ClassOf(err) == nil {
			msg = "temporarily unavailable: the database cannot be reached; retry later"
		}
	case status == http.StatusInternalServerError:
		loggerFrom(r.Context()).ErrorContext(r.Context(), "internal error", "error", err)
		msg = "internal server error"
	}
	// A decoder's message may quote the body's invalid UTF-8, which a
	// google.rpc.Status cannot carry (protojson and proto refuse it).
	st := &rpcstatus.Status{Code: rpcCode(status), Message: strings.ToValidUTF8(msg, "\uFFFD")}
	var body []byte
	if enc == otlpJSON {
		body, _ = protojson.Marshal(st)
	} else {
		body, _ = proto.Marshal(st)
	}
	w.Header().Set("Content-Type", enc.contentType())
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// rpcCode is the google.rpc.Code of an HTTP status.
func rpcCode(status int) int32 {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusUnsupportedMediaType:
		return 3 // INVALID_ARGUMENT
	case http.StatusUnauthorized:
		return 16 // UNAUTHENTICATED
	case http.StatusForbidden:
		return 7 // PERMISSION_DENIED
	case http.StatusNotFound:
		return 5 // NOT_FOUND
	case http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return 8 // RESOURCE_EXHAUSTED
	case http.StatusServiceUnavailable:
		return 14 // UNAVAILABLE
	}
	return 13 // INTERNAL
}
