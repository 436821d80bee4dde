package main

import (
	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// newFeedbackService builds the feedback and annotation queue service; queue
// items read their calls from the trace store, and annotation values are
// checked against the AnnotationSpec objects of the object store.
func newFeedbackService(db *weft.DB, calls trace.Service, objs objects.Service) (*feedback.Store, error) {
	return feedback.New(feedback.Config{DB: db, Calls: feedback.TraceCalls(calls), AnnotationSpecs: feedback.ObjectSpecs(objs)})
}
