package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft"
)

// limitBody caps every request body at MaxBodyBytes. huma enforces the same
// limit per operation with a clean 413; this also covers raw routes, and it
// refuses at once a body whose declared length is already too large.
func (h *Handler) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > h.cfg.MaxBodyBytes {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{
				"detail": "Request too large", "reason": "Request too large", "error_type": "RequestTooLarge",
			})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// collapseSlashes serves a path with runs of slashes as the path with single
// ones: a client whose base URL ends in a slash (WF_TRACE_SERVER_URL=
// http://host/, as people write it) asks for //call/start, which is meant as
// /call/start. A slash escaped as %2F is not a separator and stays.
func collapseSlashes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "//") {
			next.ServeHTTP(w, r)
			return
		}
		u := *r.URL
		u.Path = collapseRuns(u.Path)
		u.RawPath = collapseRuns(u.RawPath)
		r2 := *r
		r2.URL = &u
		next.ServeHTTP(w, &r2)
	})
}

// collapseRuns replaces each run of slashes in p with one slash.
func collapseRuns(p string) string {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// BodyTimeout bounds the time a request's body may take to arrive, on every
// route: the connection gets a read deadline timeout after the handler
// starts, lifted once the body has been read to its end. A body that has
// not arrived by then fails its reads with an error [BodyError] turns into
// 408, and the server closes the connection. Lifting the deadline matters:
// the server reads a finished request's connection in the background, and a
// deadline passing there would cancel a long answer (a stream). A body still
// unread when the handler returns keeps the deadline, so the server's own
// read of the rest cannot hang either. Requests without a body are left as
// they are. The web UI serves its forms through the same bound.
func BodyTimeout(timeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if timeout <= 0 || r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(timeout)) != nil {
				next.ServeHTTP(w, r) // a writer that cannot: nothing to lift either
				return
			}
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			next.ServeHTTP(w, r)
		})
	}
}

// deadlineBody lifts the connection's read deadline when the body ends.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// errBodyTimeout is the class of a body that did not arrive within
// Config.BodyReadTimeout: 408 (errors.go).
var errBodyTimeout = errors.New("request body read timeout")

// BodyError names the failure of reading a request body for the one status
// table ([StatusOf]): a body over its size limit is 413, one that did not
// arrive in time ([BodyTimeout]) 408, a broken one 400.
func BodyError(err error) error {
	var maxErr *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &maxErr):
		return weft.Errorf(errBodyTooLarge, "request too large: the body exceeds %d bytes", maxErr.Limit)
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("%w: the body did not arrive in time", errBodyTimeout)
	}
	return weft.Errorf(errBodyBroken, "cannot read the request body: %v", err)
}

var (
	errBodyTooLarge = weft.DefineError(weft.ErrTooLarge, "RequestTooLarge", "request too large")
	errBodyBroken   = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "cannot read the request body")
)

// observe logs every request and records its count and duration by route.
func (h *Handler) observe(next http.Handler) http.Handler {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weft_http_requests_total", Help: "HTTP requests by route, method and status.",
	}, []string{"route", "method", "status"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "weft_http_request_duration_seconds", Help: "HTTP request duration by route.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10, 60},
	}, []string{"route", "method"})
	h.cfg.Registry.MustRegister(requests, duration)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		r = r.WithContext(context.WithValue(r.Context(), loggerKey{}, h.cfg.Logger))
		next.ServeHTTP(rec, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		elapsed := time.Since(start)
		requests.WithLabelValues(route, r.Method, strconv.Itoa(rec.status)).Inc()
		duration.WithLabelValues(route, r.Method).Observe(elapsed.Seconds())
		h.cfg.Logger.LogAttrs(r.Context(), levelFor(rec.status), "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.Duration("duration", elapsed), slog.Int64("bytes", rec.bytes))
	})
}

// statusRecorder remembers the status and size of a response. Unwrap lets
// http.ResponseController reach the real writer to flush streams.
type statusRecorder struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
}

func (s *statusRecorder) WriteHeader(status int) {
	if !s.wroteHeader {
		s.status, s.wroteHeader = status, true
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wroteHeader = true
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

func (s *statusRecorder) ReadFrom(r io.Reader) (int64, error) {
	s.wroteHeader = true
	n, err := io.Copy(s.ResponseWriter, r)
	s.bytes += n
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
