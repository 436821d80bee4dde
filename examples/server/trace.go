package main

import (
	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// newTraceService builds the calls store the trace routes serve.
func newTraceService(db *weft.DB) (*trace.Store, error) {
	return trace.New(trace.Config{DB: db})
}
