package main

import (
	"flag"
	"time"

	"github.com/weftlabs/weft/transport/httpapi"
)

// serverTimeouts bound how long a connection may hold the server while it
// sends nothing useful.
type serverTimeouts struct {
	header, body, idle time.Duration
}

func timeoutFlags(fs *flag.FlagSet, t *serverTimeouts) {
	fs.DurationVar(&t.header, "read-header-timeout", httpapi.DefaultReadHeaderTimeout, "longest a request's headers may take to arrive; then the connection is closed")
	fs.DurationVar(&t.body, "body-read-timeout", httpapi.DefaultBodyReadTimeout, "longest a request's body may take to arrive (API and web UI); then 408 and the connection is closed")
	fs.DurationVar(&t.idle, "idle-timeout", httpapi.DefaultIdleTimeout, "longest a keep-alive connection may wait for its next request; then it is closed")
}
