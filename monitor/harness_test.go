package monitor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
)

// server is one process's services on a database: the stores with the
// monitors as their hooks, and a job queue working the monitor jobs.
type server struct {
	db       *weft.DB
	identity *weft.Identity
	jobs     *jobs.Queue
	monitors *monitor.Monitors
	trace    *trace.Store
	objects  *objects.Store
	feedback *feedback.Store
}

// serverOptions change a test server's configuration.
type serverOptions struct {
	monitor  func(*monitor.Config)
	feedback func(monitor.FeedbackWriter) monitor.FeedbackWriter
	// rescueAfter, when set, is the queue's RescueAfter: how soon a job
	// left running by a server that stopped is worked again.
	rescueAfter time.Duration
}

// newServer builds a server on db, migrates the queue's tables and starts
// the queue; it stops when the test ends.
func newServer(t testing.TB, db *weft.DB, opts serverOptions) *server {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(db)(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(db, jobs.Config{PollInterval: 50 * time.Millisecond, RescueAfter: opts.rescueAfter, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	cfg := monitor.Config{DB: db, Jobs: q, Principals: identity, RetryDelay: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	if opts.monitor != nil {
		opts.monitor(&cfg)
	}
	mons, err := monitor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{db: db, identity: identity, jobs: q, monitors: mons}
	if s.trace, err = trace.New(trace.Config{DB: db, Hook: mons}); err != nil {
		t.Fatal(err)
	}
	if s.objects, err = objects.New(objects.Config{DB: db, Hook: mons}); err != nil {
		t.Fatal(err)
	}
	if s.feedback, err = feedback.New(feedback.Config{DB: db}); err != nil {
		t.Fatal(err)
	}
	var fb monitor.FeedbackWriter = s.feedback
	if opts.feedback != nil {
		fb = opts.feedback(fb)
	}
	mons.SetServices(s.trace, s.objects, fb)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *server) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.jobs.Stop(ctx); err != nil {
		t.Errorf("stopping the queue: %v", err)
	}
}

// user creates a user who is a member of entity and returns a context
// acting as that user.
func (s *server) user(t testing.TB, name, entity string) context.Context {
	t.Helper()
	ctx := context.Background()
	u, err := s.identity.CreateUser(ctx, name, false)
	if err != nil {
		t.Fatal(err)
	}
	if entity != name {
		if err := s.identity.CreateEntity(ctx, entity); err != nil && !strings.Contains(err.Error(), "exists") {
			t.Fatal(err)
		}
		if err := s.identity.AddMember(ctx, entity, name, "member"); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.identity.PrincipalOfUser(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	return weft.WithPrincipal(ctx, p)
}

// publish publishes an object and returns its weave:/// ref.
func (s *server) publish(t testing.TB, ctx context.Context, projectID, objectID, val string) string {
	t.Helper()
	ref, err := s.tryPublish(ctx, projectID, objectID, val)
	if err != nil {
		t.Fatalf("publishing %s: %v", objectID, err)
	}
	return ref
}

func (s *server) tryPublish(ctx context.Context, projectID, objectID, val string) (string, error) {
	res, err := s.objects.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{
		ProjectID: projectID, ObjectID: objectID, Val: json.RawMessage(val)}})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("weave:///%s/object/%s:%s", projectID, objectID, res.Digest), nil
}

// scorerVal is a scorer object of class class with extra members.
func scorerVal(class, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"_type":%q,"_class_name":%q,"_bases":["Scorer","Object","BaseModel"]%s}`, class, class, extra)
}

// monitorVal is a Monitor object as the Weave SDKs publish it.
func monitorVal(rate float64, opNames []string, active bool, scorers ...string) string {
	ops, _ := json.Marshal(opNames)
	refs, _ := json.Marshal(scorers)
	return fmt.Sprintf(`{"_type":"Monitor","_class_name":"Monitor","_bases":["Object","BaseModel"],"name":"m","description":null,`+
		`"sampling_rate":%v,"scorers":%s,"call_filter":{"op_names":%s,"query":null},"active":%v}`, rate, refs, ops, active)
}

// call is a finished call to ingest.
type call struct {
	id, op, output string
	exception      string
	noEnd          bool
	// at is when the call started and ended; zero is now.
	at time.Time
}

// ingest writes calls, each a start and an end, in one batch.
func (s *server) ingest(t testing.TB, ctx context.Context, projectID string, calls ...call) {
	t.Helper()
	now := time.Now().UTC()
	var batch []trace.BatchItem
	for _, c := range calls {
		now := now
		if !c.at.IsZero() {
			now = c.at.UTC()
		}
		batch = append(batch, trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: projectID, ID: c.id,
			TraceID: c.id, OpName: c.op, StartedAt: now, Inputs: json.RawMessage(`{"question":"what is 6*7?"}`),
			Attributes: json.RawMessage(`{}`)}})
		if !c.noEnd {
			end := &trace.EndedCall{ProjectID: projectID, ID: c.id, EndedAt: now, Output: json.RawMessage(c.output), Summary: json.RawMessage(`{}`)}
			if c.exception != "" {
				end.Exception = &c.exception
			}
			batch = append(batch, trace.BatchItem{Mode: trace.ModeEnd, End: end})
		}
	}
	res, err := s.trace.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Res {
		if r.Err != nil {
			t.Fatalf("batch[%d]: %v", i, r.Err)
		}
	}
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// verdictFeedback lists the project's runnable feedback, by call id and
// then scorer name.
func (s *server) verdictFeedback(t testing.TB, projectID string) map[string]map[string]map[string]any {
	t.Helper()
	res, err := s.feedback.Query(context.Background(), feedback.QueryReq{ProjectID: projectID})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]map[string]any{}
	for _, f := range res.Result {
		name, ok := strings.CutPrefix(fmt.Sprint(f["feedback_type"]), "wandb.runnable.")
		if !ok {
			continue
		}
		weaveRef := fmt.Sprint(f["weave_ref"])
		callID := weaveRef[strings.LastIndex(weaveRef, "/")+1:]
		if out[callID] == nil {
			out[callID] = map[string]map[string]any{}
		}
		if _, dup := out[callID][name]; dup {
			t.Errorf("call %s has two verdicts of %s", callID, name)
		}
		out[callID][name] = f
	}
	return out
}

// text is a string field of a feedback row as Query returns it.
func text(v any) string {
	switch v := v.(type) {
	case *string:
		if v != nil {
			return *v
		}
	case string:
		return v
	}
	return ""
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
