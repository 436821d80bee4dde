package httpapi

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/training"
)

// errorStatus is the one table from error classes to HTTP statuses. Every domain
// sentinel wraps one of these classes (see weft.DefineError).
var errorStatus = []struct {
	class  error
	status int
	// errorType is the wire name used when the error carries none of its own.
	errorType string
}{
	{weft.ErrValidation, http.StatusUnprocessableEntity, "InvalidFieldError"},
	{weft.ErrInvalid, http.StatusBadRequest, "InvalidRequest"},
	{weft.ErrUnauthenticated, http.StatusUnauthorized, "AuthenticationError"},
	{weft.ErrForbidden, http.StatusForbidden, "Forbidden"},
	{weft.ErrNotFound, http.StatusNotFound, "NotFoundError"},
	{weft.ErrConflict, http.StatusConflict, "Conflict"},
	{weft.ErrTooLarge, http.StatusRequestEntityTooLarge, "RequestTooLarge"},
	{weft.ErrUnsupportedMedia, http.StatusUnsupportedMediaType, "UnsupportedMediaType"},
	{weft.ErrRateLimited, http.StatusTooManyRequests, "RateLimitError"},
	{weft.ErrUpstream, http.StatusBadGateway, "UpstreamError"},
	{weft.ErrUnavailable, http.StatusServiceUnavailable, "ServiceUnavailable"},
	{errBodyTimeout, http.StatusRequestTimeout, "RequestTimeout"},
}

// errorStyle is the shape of error bodies of one route family.
type errorStyle string

const (
	// styleWeave: FastAPI's {"detail":[{loc,msg,type}]} with 422 for malformed
	// requests, {"reason","error_type"} for domain errors (trace, feedback,
	// objects, training).
	styleWeave errorStyle = "weave"
	// styleOpenAI: vLLM's {"error":{message,type,param,code}}, 400 for malformed
	// requests (chat completions).
	styleOpenAI errorStyle = "openai"
)

// metadataStyle is the operation metadata key naming an operation's error style;
// operations without it are not weft's and keep huma's own error bodies.
const metadataStyle = "weft.errorStyle"

// httpError is an error response: a status and the body to send.
type httpError struct {
	status  int
	body    any
	headers http.Header
}

func (e *httpError) Error() string {
	b, _ := json.Marshal(e.body)
	return strconv.Itoa(e.status) + " " + string(b)
}
func (e *httpError) GetStatus() int               { return e.status }
func (e *httpError) GetHeaders() http.Header      { return e.headers }
func (e *httpError) MarshalJSON() ([]byte, error) { return json.Marshal(e.body) }

// validationItem is one entry of FastAPI's 422 body.
type validationItem struct {
	Loc   []any  `json:"loc"`
	Msg   string `json:"msg"`
	Type  string `json:"type"`
	Input any    `json:"input,omitempty"`
}

type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

var installErrors sync.Once

// installErrorRenderer replaces huma's process-wide error constructors once. The
// replacement renders weft's styles for weft's operations (recognised by their
// metadata) and defers to huma's original constructors for anyone else's.
func installErrorRenderer() {
	installErrors.Do(func() {
		original := huma.NewErrorWithContext
		huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
			style, ok := styleOf(ctx)
			if !ok {
				return original(ctx, status, msg, errs...)
			}
			var rctx context.Context = context.Background()
			if ctx != nil {
				rctx = ctx.Context()
			}
			if registry, ok := ctx.Operation().Metadata[metadataSchemas].(huma.Registry); ok {
				nameObjectMismatches(registry, requestBodySchema(ctx.Operation()), errs)
			}
			rendered := renderError(rctx, style, status, msg, errs)
			// huma copies headers only from a handler's own error, before it
			// reaches this constructor, so set ours here.
			for name, values := range rendered.headers {
				for _, v := range values {
					ctx.SetHeader(name, v)
				}
			}
			return rendered
		}
	})
}

func styleOf(ctx huma.Context) (errorStyle, bool) {
	if ctx == nil || ctx.Operation() == nil {
		return "", false
	}
	style, ok := ctx.Operation().Metadata[metadataStyle].(errorStyle)
	return style, ok
}

// renderError turns what huma or a handler reported into a response. status is
// huma's guess: 400/422 for malformed input, 413 for a large body, 500 for any
// error a handler returned (classified here from its weft error class).
func renderError(ctx context.Context, style errorStyle, status int, msg string, errs []error) *httpError {
	var domainErr error
	var details []*huma.ErrorDetail
	for _, err := range errs {
		var detail *huma.ErrorDetail
		switch {
		case errors.As(err, &detail):
			details = append(details, detail)
		case err != nil && domainErr == nil:
			domainErr = err
		}
	}
	switch {
	case domainErr != nil && (status == http.StatusInternalServerError || status == 0 || status == http.StatusUnauthorized || status == http.StatusTooManyRequests):
		return renderDomainError(ctx, style, domainErr)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		return renderValidation(style, msg, details)
	case status == http.StatusRequestEntityTooLarge:
		return renderMessage(style, status, "RequestTooLarge", "Request too large", nil)
	default:
		return renderMessage(style, status, http.StatusText(status), msg, nil)
	}
}

// renderDomainError classifies err with the errorStatus table. A field error
// of a request body the schema accepted is rendered like a schema violation.
func renderDomainError(ctx context.Context, style errorStyle, err error) *httpError {
	var fieldErr *training.FieldError
	if errors.As(err, &fieldErr) {
		return renderValidation(style, "", []*huma.ErrorDetail{fieldErrorDetail(fieldErr)})
	}
	for _, row := range errorStatus {
		if errors.Is(err, row.class) {
			errType := weft.ErrorType(err)
			if errType == "" {
				errType = row.errorType
			}
			msg := err.Error()
			if row.status == http.StatusRequestEntityTooLarge && style == styleWeave && weft.ErrorType(err) == "" {
				msg = "Request too large"
			}
			return renderMessage(style, row.status, errType, msg, weft.ErrorFields(err))
		}
	}
	if unavailable(err) {
		return renderMessage(style, http.StatusServiceUnavailable, "ServiceUnavailable", "Temporarily unavailable: the database or an upstream cannot be reached", nil)
	}
	loggerFrom(ctx).ErrorContext(ctx, "internal error", "error", err)
	return renderMessage(style, http.StatusInternalServerError, "InternalServerError", "Internal server error", nil)
}

// StatusOf is the HTTP status of err by the errorStatus table: 503 for an
// error that means "try again later" (see unavailable), 500 for any other
// error of no class. Transports that answer in their own shape (the web UI's
// pages) use it so that one table decides every status.
func StatusOf(err error) int {
	for _, row := range errorStatus {
		if errors.Is(err, row.class) {
			return row.status
		}
	}
	if unavailable(err) {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// unavailable reports errors that mean "try again later" rather than "bug": the
// database or network is down, or the request's own deadline passed.
func unavailable(err error) bool {
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P: operator intervention (shutdown).
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P")
	}
	return errors.As(err, &netErr) || errors.As(err, &connectErr) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "conn closed") || // pgconn reports a connection lost mid-query this way
		strings.Contains(err.Error(), "database is locked") || // SQLite writers queued past busy_timeout
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}

// fieldErrorDetail locates a training.FieldError: in the query for the
// paging parameters, in the body otherwise.
func fieldErrorDetail(fe *training.FieldError) *huma.ErrorDetail {
	location := "body"
	if fe.Path == "limit" || fe.Path == "order" || fe.Path == "after" {
		location = "query"
	}
	if fe.Path != "" {
		location += "." + strings.TrimPrefix(fe.Path, ".")
	}
	return &huma.ErrorDetail{Location: location, Message: fe.Msg}
}

func renderMessage(style errorStyle, status int, errType, msg string, fields map[string]any) *httpError {
	e := &httpError{status: status}
	if style == styleOpenAI {
		oe := openAIError{Message: msg, Type: errType, Code: status}
		if p, ok := fields["param"].(string); ok {
			oe.Param = &p
		}
		e.body = map[string]any{"error": oe}
	} else {
		body := map[string]any{"detail": msg, "reason": msg, "error_type": errType}
		for k, v := range fields {
			if k != "param" {
				body[k] = v
			}
		}
		e.body = body
	}
	if retry, ok := fields["retry_after"]; ok {
		e.headers = http.Header{"Retry-After": {toString(retry)}}
	}
	return e
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// renderValidation renders malformed input: FastAPI's 422 list, or vLLM's 400.
func renderValidation(style errorStyle, msg string, details []*huma.ErrorDetail) *httpError {
	items := make([]validationItem, 0, len(details))
	for _, d := range details {
		items = append(items, validationItemOf(d))
	}
	if len(items) == 0 {
		items = append(items, validationItem{Loc: []any{"body"}, Msg: jsonMessage(msg), Type: "json_invalid"})
	}
	if style == styleOpenAI {
		parts := make([]string, len(items))
		var param *string
		for i, it := range items {
			parts[i] = locString(it.Loc) + ": " + it.Msg
			if param == nil && len(it.Loc) > 1 {
				p := toString(it.Loc[1])
				param = &p
			}
		}
		return &httpError{status: http.StatusBadRequest, body: map[string]any{"error": openAIError{
			Message: strings.Join(parts, "; "), Type: "BadRequestError", Param: param, Code: http.StatusBadRequest,
		}}}
	}
	return &httpError{status: http.StatusUnprocessableEntity, body: map[string]any{"detail": items}}
}

func jsonMessage(msg string) string {
	if msg == "" || msg == "validation failed" {
		return "JSON decode error"
	}
	return msg
}

// validationItemOf converts huma's "body.items[3].tags" location into FastAPI's
// ["body","items",3,"tags"] and its message into pydantic's type and words.
func validationItemOf(d *huma.ErrorDetail) validationItem {
	loc := splitLocation(d.Location)
	msg, typ := d.Message, "value_error"
	switch {
	case msg == validation.MsgExpectedRequiredProperty || strings.HasPrefix(msg, "expected required property"):
		if name, ok := strings.CutPrefix(msg, "expected required property "); ok {
			loc = append(loc, strings.TrimSuffix(name, " to be present"))
		}
		msg, typ = "Field required", "missing"
	case strings.HasPrefix(msg, "unexpected property"):
		typ, msg = "extra_forbidden", "Extra inputs are not permitted"
	case msg == validation.MsgExpectedString:
		typ, msg = "string_type", "Input should be a valid string"
	case msg == validation.MsgExpectedInteger:
		typ, msg = "int_type", "Input should be a valid integer"
	case msg == validation.MsgExpectedNumber:
		typ, msg = "float_type", "Input should be a valid number"
	case strings.HasPrefix(msg, "expected number >= "), strings.HasPrefix(msg, "expected number > "):
		bound := strings.TrimLeft(strings.TrimPrefix(msg, "expected number "), "=> ")
		if strings.Contains(msg, ">=") {
			typ, msg = "greater_than_equal", "Input should be greater than or equal to "+bound
		} else {
			typ, msg = "greater_than", "Input should be greater than "+bound
		}
	case strings.HasPrefix(msg, "expected number <= "), strings.HasPrefix(msg, "expected number < "):
		bound := strings.TrimLeft(strings.TrimPrefix(msg, "expected number "), "=< ")
		if strings.Contains(msg, "<=") {
			typ, msg = "less_than_equal", "Input should be less than or equal to "+bound
		} else {
			typ, msg = "less_than", "Input should be less than "+bound
		}
	case msg == validation.MsgExpectedBoolean:
		typ, msg = "bool_type", "Input should be a valid boolean"
	case msg == validation.MsgExpectedArray:
		typ, msg = "list_type", "Input should be a valid list"
	case msg == validation.MsgExpectedObject || msg == msgDictType:
		typ, msg = "dict_type", msgDictType
	case strings.HasPrefix(msg, msgModelType):
		typ = "model_type"
	case strings.HasPrefix(msg, "expected array length"):
		typ = "too_long"
		if strings.Contains(msg, ">=") {
			typ = "too_short"
		}
	case strings.HasPrefix(msg, "expected string"):
		typ = "string_type"
	case strings.Contains(msg, "unmarshal"), strings.Contains(msg, "invalid character"), strings.Contains(msg, "unexpected end of JSON"):
		typ = "json_invalid"
	}
	item := validationItem{Loc: loc, Msg: msg, Type: typ}
	if d.Value != nil {
		if b, err := json.Marshal(d.Value); err == nil && len(b) <= 1024 {
			item.Input = d.Value
		}
	}
	return item
}

func splitLocation(location string) []any {
	if location == "" {
		return []any{"body"}
	}
	var loc []any
	for _, part := range strings.Split(location, ".") {
		for part != "" {
			open := strings.IndexByte(part, '[')
			if open < 0 {
				loc = append(loc, part)
				break
			}
			if open > 0 {
				loc = append(loc, part[:open])
			}
			end := strings.IndexByte(part[open:], ']')
			if end < 0 {
				loc = append(loc, part[open:])
				break
			}
			index := part[open+1 : open+end]
			if n, err := strconv.Atoi(index); err == nil {
				loc = append(loc, n)
			} else {
				loc = append(loc, index)
			}
			part = part[open+end+1:]
		}
	}
	return loc
}

func locString(loc []any) string {
	parts := make([]string, len(loc))
	for i, p := range loc {
		parts[i] = toString(p)
	}
	return strings.Join(parts, ".")
}

type loggerKey struct{}

func loggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
