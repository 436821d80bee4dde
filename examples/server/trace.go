package main

import (
	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// newTraceService builds the calls store the trace routes serve; it tells
// feed of every call it writes (the web UI's live lists), and hook (the
// monitors) of every call it starts or ends.
func newTraceService(db *weft.DB, feed *trace.Feed, hook trace.WriteHook) (*trace.Store, error) {
	return trace.New(trace.Config{DB: db, Feed: feed, Hook: hook})
}
