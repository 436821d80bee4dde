package main

import (
	"flag"
	"time"

	"github.com/weftlabs/weft/transport/httpapi"
)

// serverLimits bound what one connection or one API key may hold of the
// server.
type serverLimits struct {
	// header, body and idle bound how long a connection may hold the server
	// while it sends nothing useful.
	header, body, idle time.Duration
	otlp               httpapi.OTLPConfig
}

func limitFlags(fs *flag.FlagSet, l *serverLimits) {
	fs.DurationVar(&l.header, "read-header-timeout", httpapi.DefaultReadHeaderTimeout, "longest a request's headers may take to arrive; then the connection is closed")
	fs.DurationVar(&l.body, "body-read-timeout", httpapi.DefaultBodyReadTimeout, "longest a request's body may take to arrive (API and web UI); then 408 and the connection is closed")
	fs.DurationVar(&l.idle, "idle-timeout", httpapi.DefaultIdleTimeout, "longest a keep-alive connection may wait for its next request; then it is closed")
	fs.IntVar(&l.otlp.MaxInFlight, "otlp-max-in-flight", httpapi.DefaultOTLPMaxInFlight, "OpenTelemetry exports decoded and stored at once; more get 503 with Retry-After")
	fs.IntVar(&l.otlp.MaxInFlightPerKey, "otlp-max-in-flight-per-key", httpapi.DefaultOTLPMaxInFlightPerKey, "OpenTelemetry exports one API key may have in progress at once, bodies still arriving included; more get 429 with Retry-After")
}
