package webui

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/datasets"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/transport/httpapi"
)

// DefaultSessionTTL is how long a sign-in lasts when Config.SessionTTL is zero.
const DefaultSessionTTL = 12 * time.Hour

// DefaultMaxLiveStreams is how many live streams one session may have open
// when Config.MaxLiveStreams is zero: a few tabs of live lists and charts.
const DefaultMaxLiveStreams = 8

// DefaultLiveRefreshes is how many live trace list refreshes run at once
// when Config.LiveRefreshes is zero.
const DefaultLiveRefreshes = 2

// Prefix starts the path of every page and asset of the UI except the home
// page "/": requests outside "/" and Prefix go to Config.Fallback.
const Prefix = "/ui/"

// Config configures [New].
type Config struct {
	// Identity authenticates the API key given at sign-in, keeps the
	// sessions, resolves a session's user afresh on every page and lists the
	// caller's projects. Required.
	Identity *weft.Identity
	// Authorizer checks project access; it is the API's (httpapi.Config) so
	// that a page shows exactly what the API would. Defaults to Identity.
	Authorizer httpapi.Authorizer
	// AnnotationSpecs reads the annotation specs a queue lists, to draw each
	// as a form field of its schema (feedback.ObjectSpecs over the objects
	// service). Without it every field takes its value typed as JSON. The
	// queue pages need Feedback.
	AnnotationSpecs feedback.AnnotationSpecs
	// Trace serves the project and trace pages. Required.
	Trace trace.Service
	// Feedback, when set, shows the feedback of a call in the trace view.
	Feedback feedback.Service
	// Feed, when set, makes the trace list live: the trace store's feed of
	// written calls (trace.Config.Feed), streamed to open lists as
	// server-sent events. Without it lists show what was there when loaded.
	Feed *trace.Feed
	// Objects, when set, serves the object version pages that refs link to
	// and the files (images) a trace refers to.
	Objects objects.Service
	// Training, when set, serves the models and training pages.
	Training training.Service
	// Monitors, when set, serves the monitors' pages.
	Monitors monitor.Service
	// Chat, when set, serves the playground: completions sent through the
	// gateway, traced into the page's project.
	Chat chat.Service

	// RateLimiter, when set, holds a signed-in user's pages and actions to
	// the rate limit of the API key they signed in with: give it the API
	// handler (*httpapi.Handler), so that a key's pages and API calls share
	// one budget. Over it a request gets 429 with Retry-After. Off (nil) by
	// default.
	RateLimiter RateLimiter

	// Fallback serves every request whose path is neither "/" nor under
	// Prefix: the place for the API handler. Defaults to a 404.
	Fallback http.Handler
	// SessionTTL is how long a sign-in lasts. Defaults to DefaultSessionTTL.
	SessionTTL time.Duration
	// BodyReadTimeout bounds the time a form or other request body of the UI
	// may take to arrive (httpapi.BodyTimeout); a slower one gets 408 and
	// its connection is closed. Defaults to httpapi.DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
	// SecureCookies makes the session cookie a Secure "__Host-" cookie on
	// every response, for a server that browsers reach only over HTTPS
	// (behind a TLS-terminating proxy). Requests that arrive over TLS, or
	// from a TrustedProxies address that says it received them over HTTPS,
	// get such cookies anyway. Off by default.
	SecureCookies bool
	// TrustedProxies are the addresses of the reverse proxies in front of
	// the server whose X-Forwarded-Proto header is believed: a request from
	// one of them (its TCP peer, not a header) that says "https" gets a
	// Secure "__Host-" session cookie. Empty by default: the header is
	// ignored, as any client can send it.
	TrustedProxies []netip.Prefix
	// MaxLiveStreams bounds the live streams (trace lists, training charts)
	// one session has open at once in this process; one more gets 429 until
	// another closes. Defaults to DefaultMaxLiveStreams.
	MaxLiveStreams int
	// LiveRefreshes bounds the live trace list refreshes that run at once in
	// this process, whatever their project and view, so that however many
	// lists are open they hold at most this many database connections and
	// the rest serve other requests; the others wait their turn. Streams of
	// the same project and view share each refresh, and a view is refreshed
	// again no sooner than liveCostFactor times as long as its last refresh
	// took. Defaults to DefaultLiveRefreshes.
	LiveRefreshes int
	// DatasetLimits bound the datasets the trace list's selection makes,
	// as they bound POST /v2/{entity}/{project}/datasets/from_calls
	// (httpapi.Config.DatasetLimits). Zero values take the datasets
	// package's defaults.
	DatasetLimits datasets.Limits
	// MaxExportRows bounds the rows one export (CSV or JSONL) writes: the
	// first that many calls of a trace list view, rows of a table, or
	// examples of an evaluation comparison, in the page's order. Defaults
	// to DefaultMaxExportRows.
	MaxExportRows int
	// Logger receives internal errors. Defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock for sessions and relative times. Defaults to time.Now.
	Now func() time.Time
}

// RateLimiter takes one request of the rate limit of a principal's API key;
// over it, it returns an error of class weft.ErrRateLimited whose
// retry_after field (weft.ErrorFields) is the seconds to wait.
// *httpapi.Handler is one.
type RateLimiter interface {
	TakeToken(p weft.Principal) error
}

// Handler serves the web UI. It is an http.Handler.
type Handler struct {
	cfg      Config
	assets   *assets
	pages    *pages
	sessions *sessionStore
	mux      *http.ServeMux
	// bounded is mux under the bound on request bodies.
	bounded http.Handler
	// crossOrigin refuses state-changing requests sent from other origins
	// (Sec-Fetch-Site and Origin), before the CSRF token is even looked at.
	crossOrigin *http.CrossOriginProtection
	// datasets makes the selection's datasets; nil without Objects.
	datasets *datasets.Builder
	// alignments keeps the alignments of recent evaluation comparisons.
	alignments alignmentCache
	// live shares live list refreshes among streams and counts each
	// session's streams.
	live *liveHub
	// closing ends the live streams (CloseStreams).
	closing   chan struct{}
	closeOnce sync.Once
}

// New builds the UI handler for cfg.
func New(cfg Config) (*Handler, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	a, err := loadAssets()
	if err != nil {
		return nil, err
	}
	p, err := loadPages(a)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		cfg: cfg, assets: a, pages: p,
		sessions:    &sessionStore{identity: cfg.Identity, now: cfg.Now, ttl: cfg.SessionTTL},
		mux:         http.NewServeMux(),
		crossOrigin: http.NewCrossOriginProtection(),
		live:        newLiveHub(cfg.MaxLiveStreams, cfg.LiveRefreshes),
		closing:     make(chan struct{}),
	}
	if cfg.Objects != nil {
		if h.datasets, err = datasets.New(datasets.Config{Calls: cfg.Trace, Datasets: cfg.Objects, Limits: cfg.DatasetLimits}); err != nil {
			return nil, err
		}
	}
	h.crossOrigin.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, http.StatusForbidden, "This request came from another site and was refused.")
	}))
	h.routes()
	h.bounded = httpapi.BodyTimeout(cfg.BodyReadTimeout)(h.mux)
	return h, nil
}

func (cfg *Config) setDefaults() error {
	if cfg.Identity == nil {
		return errors.New("webui: Config.Identity is required")
	}
	if cfg.Trace == nil {
		return errors.New("webui: Config.Trace is required")
	}
	if cfg.Authorizer == nil {
		cfg.Authorizer = cfg.Identity
	}
	if cfg.Fallback == nil {
		cfg.Fallback = http.NotFoundHandler()
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.SessionTTL < 0 {
		return errors.New("webui: SessionTTL must not be negative")
	}
	if cfg.BodyReadTimeout == 0 {
		cfg.BodyReadTimeout = httpapi.DefaultBodyReadTimeout
	}
	if cfg.BodyReadTimeout < 0 {
		return errors.New("webui: BodyReadTimeout must not be negative")
	}
	if cfg.MaxLiveStreams == 0 {
		cfg.MaxLiveStreams = DefaultMaxLiveStreams
	}
	if cfg.LiveRefreshes == 0 {
		cfg.LiveRefreshes = DefaultLiveRefreshes
	}
	if cfg.MaxLiveStreams < 0 || cfg.LiveRefreshes < 0 {
		return errors.New("webui: MaxLiveStreams and LiveRefreshes must not be negative")
	}
	if cfg.MaxExportRows == 0 {
		cfg.MaxExportRows = DefaultMaxExportRows
	}
	if cfg.MaxExportRows < 0 {
		return errors.New("webui: MaxExportRows must not be negative")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return nil
}

// ServeHTTP implements http.Handler: "/" and paths under Prefix are the UI's,
// everything else goes to Config.Fallback untouched.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" && !strings.HasPrefix(r.URL.Path, Prefix) {
		h.cfg.Fallback.ServeHTTP(w, r)
		return
	}
	setSecurityHeaders(w.Header())
	h.bounded.ServeHTTP(w, r)
}

// internalError logs err and answers a page that says the server failed
// (503 when the database cannot be reached), without the error's text.
func (h *Handler) internalError(w http.ResponseWriter, r *http.Request, err error) {
	status := httpapi.StatusOf(err)
	if status < 500 {
		h.renderError(w, r, status, err.Error())
		return
	}
	if !errors.Is(err, context.Canceled) {
		h.cfg.Logger.ErrorContext(r.Context(), "webui: internal error", "path", r.URL.Path, "error", err)
	}
	msg := "Something went wrong on the server; it has been logged."
	if status == http.StatusServiceUnavailable {
		msg = "The server cannot reach its database right now. Try again in a moment."
	}
	h.renderError(w, r, status, msg)
}
