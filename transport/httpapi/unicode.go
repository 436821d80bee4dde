package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft/internal/jsontext"
)

// checkJSONText is the huma middleware, after authentication and before any
// handler, that refuses a JSON body holding invalid UTF-8 or a \u escape of a
// lone surrogate anywhere: 422 with FastAPI's body (400 in the OpenAI envelope
// on the chat routes).
//
// Typed fields never see such text (encoding/json turns it into U+FFFD), but
// free-form members are kept as the raw bytes sent, and neither PostgreSQL
// (which refuses the bytes outright) nor any reader of the stored JSON can take
// them. Checking every JSON body here, once, covers the routes that decode their
// body themselves as well as huma's.
func (h *Handler) checkJSONText(ctx huma.Context, next func(huma.Context)) {
	op := ctx.Operation()
	if op == nil || !takesJSON(op) {
		next(ctx)
		return
	}
	body, status, msg := readWholeBody(ctx, op)
	if status != 0 {
		_ = huma.WriteErr(h.api, ctx, status, msg)
		return
	}
	if err := jsontext.Check(body); err != nil {
		_ = huma.WriteErr(h.api, ctx, http.StatusUnprocessableEntity, "invalid text in the body",
			&huma.ErrorDetail{Location: "body", Message: "JSON text must be valid UTF-8 without lone surrogate escapes: " + err.Error()})
		return
	}
	next(&bodyContext{humaContext: ctx, body: body})
}

// takesJSON reports whether op takes a JSON body: every body but a multipart
// form (whose file parts are bytes, not text), including the raw bodies that
// handlers decode as JSON themselves.
func takesJSON(op *huma.Operation) bool {
	if op.RequestBody == nil {
		return false
	}
	for contentType := range op.RequestBody.Content {
		if strings.HasPrefix(contentType, "multipart/") {
			return false
		}
	}
	return true
}

// readWholeBody reads the request body under the operation's size limit and
// read timeout, as huma itself does, answering a status and message when it
// cannot. The deadline is lifted only once the body is read: a body that
// failed keeps it, so that the server's read of what is left after the
// answer (to reuse the connection) fails too instead of waiting for a slow
// client.
func readWholeBody(ctx huma.Context, op *huma.Operation) (body []byte, status int, msg string) {
	reader := ctx.BodyReader()
	if reader == nil {
		return nil, 0, ""
	}
	if op.BodyReadTimeout > 0 {
		_ = ctx.SetReadDeadline(time.Now().Add(op.BodyReadTimeout))
	}
	if op.MaxBodyBytes > 0 {
		reader = io.LimitReader(reader, op.MaxBodyBytes)
	}
	body, err := io.ReadAll(reader)
	var netErr net.Error
	switch {
	case op.MaxBodyBytes > 0 && int64(len(body)) == op.MaxBodyBytes:
		// huma's own rule: a body that fills the limit is refused.
		return nil, http.StatusRequestEntityTooLarge, "request body is too large"
	case errors.As(err, &netErr) && netErr.Timeout():
		return nil, http.StatusRequestTimeout, "request body read timeout"
	case err != nil:
		return nil, http.StatusBadRequest, "cannot read request body"
	}
	if op.BodyReadTimeout > 0 {
		_ = ctx.SetReadDeadline(time.Time{})
	}
	return body, 0, ""
}

// bodyContext serves an already read body to the rest of the chain.
type bodyContext struct {
	humaContext
	body []byte
}

// humaContext names the embedded huma.Context so that its Context method is
// promoted rather than shadowed by a field of that name.
type humaContext = huma.Context

func (c *bodyContext) BodyReader() io.Reader { return bytes.NewReader(c.body) }

// Unwrap lets humachi.Unwrap reach the request beneath.
func (c *bodyContext) Unwrap() huma.Context { return c.humaContext }
