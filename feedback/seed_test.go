package feedback_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
)

// t0 is when a timeline starts.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// timeline is a feedback service whose clock a test moves, so that each row
// it adds is created when the test says: the tests of the reads that select
// rows by their creation time (stats, aggregate, payload schema) seed their
// rows through it and compare its answers as JSON.
type timeline struct {
	t     *testing.T
	svc   feedback.Service
	clock time.Time
}

func newTimeline(t *testing.T, db *weft.DB) *timeline {
	t.Helper()
	tl := &timeline{t: t, clock: t0}
	svc, err := feedback.New(feedback.Config{DB: db, Now: func() time.Time { return tl.clock }})
	if err != nil {
		t.Fatal(err)
	}
	tl.svc = svc
	return tl
}

// add creates req at t0 plus at, in project on call "c"
// unless req names others, with an empty payload when it has none.
func (tl *timeline) add(at time.Duration, req feedback.CreateReq) {
	tl.t.Helper()
	tl.clock = t0.Add(at)
	if req.ProjectID == "" {
		req.ProjectID = project
	}
	if req.TraceRef == "" {
		req.TraceRef = callRef("c")
	}
	if req.Payload == nil {
		req.Payload = payload(`{}`)
	}
	mustCreate(tl.t, tl.svc, req)
}

// check compares got, as JSON, with want.
func (tl *timeline) check(name string, got any, want string) {
	tl.t.Helper()
	out, err := json.Marshal(got)
	if err != nil {
		tl.t.Fatal(err)
	}
	if string(out) != want {
		tl.t.Errorf("%s:\n got %s\nwant %s", name, out, want)
	}
}
