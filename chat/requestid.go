package chat

import "context"

// RequestIDHeader is the header a client names its request with. A vLLM
// server answers with "chatcmpl-" + its value as the completion's id; the
// gateway does the same for local models and passes it on to upstreams.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLength bounds what a client may put into a response id.
const maxRequestIDLength = 128

type requestIDKey struct{}

// WithRequestID returns ctx carrying the client's request id (the
// RequestIDHeader's value). Transports call it; an empty or over-long id
// (more than 128 bytes) or one with bytes outside printable ASCII is
// ignored, so the id stays a safe header and JSON value.
func WithRequestID(ctx context.Context, id string) context.Context {
	if id == "" || len(id) > maxRequestIDLength {
		return ctx
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return ctx
		}
	}
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id WithRequestID put into ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
