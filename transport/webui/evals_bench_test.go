package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/webui"
)

// benchUI is the UI over db with a signed-in user "bench" of project
// bench/p: the handler, the session cookie, a context acting as the user,
// and the services to seed through.
type benchUI struct {
	ui      http.Handler
	cookie  *http.Cookie
	ctx     context.Context
	traces  *trace.Store
	objects *objects.Store
	// fresh is another UI over the same services and sessions, with
	// nothing kept from the pages served before.
	fresh func() http.Handler
}

func newBenchUI(b *testing.B, db *weft.DB, configure ...func(*webui.Config)) *benchUI {
	b.Helper()
	ctx := context.Background()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := identity.CreateUser(ctx, "bench", false); err != nil {
		b.Fatal(err)
	}
	key, err := identity.CreateAPIKey(ctx, "bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	principal, err := identity.Authenticate(ctx, "", key)
	if err != nil {
		b.Fatal(err)
	}
	traces, err := trace.New(trace.Config{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	objs, err := objects.New(objects.Config{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	fb, err := feedback.New(feedback.Config{DB: db, Calls: feedback.TraceCalls(traces)})
	if err != nil {
		b.Fatal(err)
	}
	fresh := func() http.Handler {
		cfg := webui.Config{Identity: identity, Trace: traces, Objects: objs, Feedback: fb}
		for _, c := range configure {
			c(&cfg)
		}
		ui, err := webui.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return ui
	}
	ui := fresh()
	return &benchUI{ui: ui, cookie: benchSignIn(b, ui, key), ctx: weft.WithPrincipal(ctx, principal), traces: traces, objects: objs, fresh: fresh}
}

// get serves path and fails unless the answer is 200.
func (u *benchUI) get(b *testing.B, path string) string {
	return u.getFrom(b, u.ui, path)
}

// getFrom serves path by ui.
func (u *benchUI) getFrom(b *testing.B, ui http.Handler, path string) string {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.AddCookie(u.cookie)
	ui.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// benchDatabases are the databases a UI benchmark runs on: SQLite always,
// PostgreSQL when the tests have one.
func benchDatabases(b *testing.B, body func(b *testing.B, db *weft.DB)) {
	b.Run("sqlite", func(b *testing.B) { body(b, testdb.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) { body(b, testdb.Postgres(b)) })
}

// BenchmarkEvalCompare measures the server time of the first page of a
// comparison of two evaluation runs over a 10,000-row dataset (every
// example scored by two scorers in both runs, one run worse on a tenth of
// them), and of its regressions-only pages: the first and a later one once
// the comparison's alignment is kept, the first with a metric's direction
// turned, and the first view of the comparison (a UI that keeps nothing
// yet, which aligns every example). Seeding goes through the
// objects service (the dataset) and the trace store's batch upsert. Run it
// with
//
//	TEST_DATABASE_URL=postgres://… go test ./transport/webui -run '^$' -bench EvalCompare -benchtime 20x
func BenchmarkEvalCompare(b *testing.B) {
	const examples = 10_000
	benchDatabases(b, func(b *testing.B, db *weft.DB) {
		u := newBenchUI(b, db)
		runs := seedEvalRuns(b, u, examples)
		compare := "/ui/p/bench/p/evaluations/compare?run=" + runs[0] + "&run=" + runs[1]
		for _, page := range []struct{ name, path string }{
			{"first page", compare},
			{"regressions only", compare + "&regressions=1"},
			{"regressions only, third page", compare + "&regressions=1&offset=100"},
			{"regressions only, lower exact better", compare + "&regressions=1&lower=exact"},
		} {
			b.Run(page.name, func(b *testing.B) {
				u.get(b, page.path) // aligned once, kept for the pages after
				for b.Loop() {
					u.get(b, page.path)
				}
			})
		}
		b.Run("regressions only, first view", func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				ui := u.fresh()
				b.StartTimer()
				u.getFrom(b, ui, compare+"&regressions=1")
			}
		})
	})
}

// seedEvalRuns stores a dataset of n rows and two evaluation runs over it,
// and returns the runs' root call ids.
func seedEvalRuns(b *testing.B, u *benchUI, n int) [2]string {
	b.Helper()
	const project = "bench/p"
	rows := make([]json.RawMessage, n)
	for i := range rows {
		rows[i] = json.RawMessage(fmt.Sprintf(`{"id":"q%d","question":"what is %d + %d?","expected":"%d"}`, i, i, i, 2*i))
	}
	table, err := u.objects.TableCreate(u.ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rows}})
	if err != nil {
		b.Fatal(err)
	}
	dataset, err := u.objects.ObjCreate(u.ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: project, ObjectID: "qa",
		Val: json.RawMessage(`{"_type":"Dataset","_class_name":"Dataset","_bases":["Object","BaseModel"],"name":"qa","rows":"weave:///bench/p/table/` + table.Digest + `"}`)}})
	if err != nil {
		b.Fatal(err)
	}
	limit := n
	res, err := u.objects.TableQuery(u.ctx, &objects.TableQueryReq{ProjectID: project, Digest: table.Digest, Limit: &limit})
	if err != nil {
		b.Fatal(err)
	}
	op := func(name string) string {
		o, err := u.objects.ObjCreate(u.ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: project, ObjectID: name,
			Val: json.RawMessage(`{"_type":"CustomWeaveType","weave_type":{"type":"Op"}}`)}})
		if err != nil {
			b.Fatal(err)
		}
		return "weave:///bench/p/op/" + name + ":" + o.Digest
	}
	evaluate, predict := op("Evaluation.evaluate"), op("Evaluation.predict_and_score")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var runs [2]string
	var batch []trace.BatchItem
	flush := func() {
		out, err := u.traces.UpsertBatch(u.ctx, &trace.UpsertBatchReq{Batch: batch})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range out.Res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		batch = batch[:0]
	}
	call := func(id, traceID, parent, op string, at time.Time, inputs, output string) {
		start := &trace.StartedCall{ProjectID: project, ID: id, TraceID: traceID, OpName: op, StartedAt: at, Inputs: json.RawMessage(inputs)}
		if parent != "" {
			start.ParentID = &parent
		}
		end := &trace.EndedCall{ProjectID: project, ID: id, EndedAt: at.Add(time.Second), Output: json.RawMessage(output), Summary: json.RawMessage(`{}`)}
		batch = append(batch, trace.BatchItem{Mode: trace.ModeStart, Start: start}, trace.BatchItem{Mode: trace.ModeEnd, End: end})
		if len(batch) >= 10_000 {
			flush()
		}
	}
	for r := range runs {
		runs[r] = fmt.Sprintf("01900000-0000-7000-8%03d-000000000000", r)
		traceID := fmt.Sprintf("01900000-0000-7000-9%03d-000000000000", r)
		at := t0.Add(time.Duration(r) * time.Hour)
		call(runs[r], traceID, "", evaluate, at, `{"self":"weave:///bench/p/object/qa-eval:v0","model":"model-`+strconv.Itoa(r)+`"}`, `{"exact":{"true_fraction":0.9}}`)
		for i, row := range res.Rows {
			exact := !(r == 1 && i%10 == 3)
			inputs := `{"example":"weave:///bench/p/object/qa:` + dataset.Digest + `/attr/rows/id/` + row.Digest + `","model":"model-` + strconv.Itoa(r) + `"}`
			output := fmt.Sprintf(`{"output":"answer %d","scores":{"exact":%t,"similarity":{"score":%g}}}`, i, exact, float64(i%100)/100)
			call(fmt.Sprintf("01900000-0000-7000-8%03d-%012d", r, i+1), traceID, runs[r], predict, at.Add(time.Duration(i)*time.Millisecond), inputs, output)
		}
	}
	flush()
	return runs
}
