package main

import (
	"errors"
	"flag"
	"strconv"
	"time"

	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// serverLimits bound what one connection or one API key may hold of the
// server.
type serverLimits struct {
	// header, body and idle bound how long a connection may hold the server
	// while it sends nothing useful.
	header, body, idle time.Duration
	otlp               httpapi.OTLPConfig
	// liveStreams and liveRefreshes bound the web UI's live pages
	// (webui.Config.MaxLiveStreams, LiveRefreshes).
	liveStreams, liveRefreshes count
}

func limitFlags(fs *flag.FlagSet, l *serverLimits) {
	fs.DurationVar(&l.header, "read-header-timeout", httpapi.DefaultReadHeaderTimeout, "longest a request's headers may take to arrive; then the connection is closed")
	fs.DurationVar(&l.body, "body-read-timeout", httpapi.DefaultBodyReadTimeout, "longest a request's body may take to arrive (API and web UI); then 408 and the connection is closed")
	fs.DurationVar(&l.idle, "idle-timeout", httpapi.DefaultIdleTimeout, "longest a keep-alive connection may wait for its next request; then it is closed")
	fs.IntVar(&l.otlp.MaxInFlight, "otlp-max-in-flight", httpapi.DefaultOTLPMaxInFlight, "OpenTelemetry exports decoded and stored at once; more get 503 with Retry-After")
	fs.IntVar(&l.otlp.MaxInFlightPerKey, "otlp-max-in-flight-per-key", httpapi.DefaultOTLPMaxInFlightPerKey, "OpenTelemetry exports one API key may have in progress at once, bodies still arriving included; more get 429 with Retry-After")
	l.liveStreams, l.liveRefreshes = webui.DefaultMaxLiveStreams, webui.DefaultLiveRefreshes
	fs.Var(&l.liveStreams, "live-streams-per-session", "the `number` of live pages (trace lists, training charts) one web UI sign-in may follow at once; one more gets 429")
	fs.Var(&l.liveRefreshes, "live-refreshes", "the `number` of live trace list refreshes run at once, whatever their project and view (streams of one view share each); the others wait their turn")
}

// count is a flag of a whole number ≥ 1.
type count int

func (c *count) String() string { return strconv.Itoa(int(*c)) }

func (c *count) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return errors.New("want a whole number ≥ 1")
	}
	*c = count(n)
	return nil
}
