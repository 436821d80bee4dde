package feedback_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
)

const project = "team/proj"

// fakeCalls is a CallLookup over a fixed set of calls.
type fakeCalls map[string]feedback.CallInfo

func (f fakeCalls) LookupCalls(_ context.Context, projectID string, ids []string) ([]feedback.CallInfo, error) {
	var out []feedback.CallInfo
	for _, id := range ids {
		if c, ok := f[projectID+"/"+id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

func userCtx(user string) context.Context {
	return weft.WithPrincipal(context.Background(), weft.Principal{UserID: user})
}

func str(s string) *string { return &s }

func newService(t testing.TB, db *weft.DB, calls feedback.CallLookup) feedback.Service {
	t.Helper()
	svc, err := feedback.New(feedback.Config{DB: db, Calls: calls})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func callRef(id string) string         { return "weave:///" + project + "/call/" + id }
func objectRef(n string) string        { return "trace:///" + project + "/object/" + n }
func payload(s string) json.RawMessage { return json.RawMessage(s) }

func mustCreate(t *testing.T, svc feedback.Service, req feedback.CreateReq) feedback.CreateRes {
	t.Helper()
	res, err := svc.Create(userCtx("u1"), req)
	if err != nil {
		t.Fatalf("create %+v: %v", req, err)
	}
	return res
}

func queryAll(t *testing.T, svc feedback.Service, req feedback.QueryReq) feedback.QueryRes {
	t.Helper()
	req.ProjectID = project
	res, err := svc.Query(userCtx("u1"), req)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	return res
}

func expr(s string) *feedback.Query { return &feedback.Query{Expr: json.RawMessage(s)} }

func TestFeedback(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, nil)
		ctx := userCtx("u1")

		t.Run("reaction note query purge", func(t *testing.T) {
			thumbs := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, WeaveRef: callRef("c-react"), FeedbackType: "wandb.reaction.1", Payload: payload(`{"emoji":"👍"}`)})
			note := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-react"), FeedbackType: "wandb.note.1", Payload: payload(`{"note":"fine"}`)})
			if thumbs.PFUserID != "u1" || thumbs.CreatedAt.IsZero() || len(thumbs.ID) != 36 {
				t.Fatalf("create result %+v", thumbs)
			}
			res := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + thumbs.ID + `"}]}`)})
			if res.TotalCount != 1 || res.Result[0]["id"] != thumbs.ID {
				t.Fatalf("query by id: %+v", res)
			}
			one := 1
			res = queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"weave_ref"},{"$literal":"` + callRef("c-react") + `"}]}`), Limit: &one})
			if len(res.Result) != 1 || res.TotalCount != 2 {
				t.Fatalf("limit 1: %d rows, total %d", len(res.Result), res.TotalCount)
			}
			purged, err := svc.Purge(ctx, feedback.PurgeReq{ProjectID: project, Query: *expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + note.ID + `"}]}`)})
			if err != nil || purged.NumDeleted != 1 {
				t.Fatalf("purge: %+v %v", purged, err)
			}
			res = queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"weave_ref"},{"$literal":"` + callRef("c-react") + `"}]}`)})
			if res.TotalCount != 1 || res.Result[0]["id"] != thumbs.ID {
				t.Fatalf("after purge: %+v", res)
			}
			for _, bad := range []string{`{"$eq":[{"$getField":"feedback_type"},{"$literal":"x"}]}`, `{"$gt":[{"$getField":"id"},{"$literal":"x"}]}`, `{"$and":[]}`} {
				if _, err := svc.Purge(ctx, feedback.PurgeReq{ProjectID: project, Query: *expr(bad)}); !errors.Is(err, weft.ErrInvalid) {
					t.Errorf("purge %s: %v, want ErrInvalid", bad, err)
				}
			}
		})

		t.Run("reaction alias and detoned forms", func(t *testing.T) {
			res := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c1"), FeedbackType: "wandb.reaction.1", Payload: payload(`{"emoji":"🎱"}`)})
			var p map[string]string
			if err := json.Unmarshal(res.Payload, &p); err != nil || p["alias"] != ":pool_8_ball:" || p["detoned"] != "🎱" || p["detoned_alias"] != ":pool_8_ball:" || len(res.ID) != 36 {
				t.Fatalf("reaction payload %s (%v) id %q", res.Payload, err, res.ID)
			}
			toned := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c1"), FeedbackType: "trace.reaction.1", Payload: payload(`{"emoji":"👍🏽"}`)})
			if err := json.Unmarshal(toned.Payload, &p); err != nil || p["alias"] != ":thumbs_up_medium_skin_tone:" || p["detoned"] != "👍" || p["detoned_alias"] != ":thumbs_up:" {
				t.Fatalf("toned reaction payload %s", toned.Payload)
			}
			stored := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + toned.ID + `"}]}`), Fields: []string{"payload"}})
			if string(stored.Result[0]["payload"].(json.RawMessage)) != string(toned.Payload) || len(stored.Result[0]) != 1 {
				t.Fatalf("stored payload %v, returned %s", stored.Result[0], toned.Payload)
			}
		})

		t.Run("client id and exact payload", func(t *testing.T) {
			const id = "0192f3a4-0000-7000-8000-000000000001"
			raw := `{"b": 1.50, "a": [1e16, -0.0], "s": "\u00e9"}`
			res := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: objectRef("ds:abc"), FeedbackType: "custom", Payload: payload(raw), ID: str(id), PFUserID: str("spoofed")})
			if res.ID != id || res.PFUserID != "u1" {
				t.Fatalf("client id / user: %+v", res)
			}
			got := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + id + `"}]}`)})
			row := got.Result[0]
			if string(row["payload"].(json.RawMessage)) != raw || row["pf_user_id"] != "u1" || row["wb_user_id"] != "u1" || row["trace_ref"] != objectRef("ds:abc") {
				t.Fatalf("row %v", row)
			}
		})

		t.Run("full row shape", func(t *testing.T) {
			res := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-shape"), FeedbackType: "wandb.annotation.quality",
				AnnotationRef: str(objectRef("quality:d1")), Payload: payload(`{"value":5}`)})
			got := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + res.ID + `"}]}`)})
			b, _ := json.Marshal(got.Result[0])
			var row map[string]any
			_ = json.Unmarshal(b, &row)
			want := map[string]any{
				"id": res.ID, "project_id": project, "trace_ref": callRef("c-shape"), "weave_ref": callRef("c-shape"),
				"pf_user_id": "u1", "wb_user_id": "u1", "creator": nil, "feedback_type": "wandb.annotation.quality",
				"payload": map[string]any{"value": 5.0}, "annotation_ref": objectRef("quality:d1"), "runnable_ref": nil,
				"call_ref": nil, "trigger_ref": nil, "queue_id": nil, "scorer_tags": []any{}, "scorer_tag_reasons": map[string]any{},
				"scorer_tag_confidences": map[string]any{}, "scorer_ratings": map[string]any{}, "scorer_rating_reasons": map[string]any{},
				"scorer_rating_confidences": map[string]any{}, "scorer_trace_id": nil, "span_agent_name": "", "span_agent_version": "",
				"span_status_code": "UNSET", "span_conversation_id": nil, "span_trace_id": nil,
			}
			created, _ := row["created_at"].(string)
			delete(row, "created_at")
			if ts, err := time.Parse(time.RFC3339Nano, created); err != nil || !ts.Equal(res.CreatedAt) {
				t.Errorf("created_at %q, want %v", created, res.CreatedAt)
			}
			gotJSON, _ := json.Marshal(row)
			wantJSON, _ := json.Marshal(want)
			if string(gotJSON) != string(wantJSON) {
				t.Fatalf("row\n got %s\nwant %s", gotJSON, wantJSON)
			}
		})

		t.Run("runnable success with scorer columns", func(t *testing.T) {
			res := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-run"), FeedbackType: "wandb.runnable.scorer",
				RunnableRef: str("weave:///" + project + "/op/scorer:d1"), CallRef: str(callRef("c-scorer")), TriggerRef: str(objectRef("trigger:d2")),
				Payload: payload(`{"output":{"score":1}}`), ScorerTags: []string{"good"}, ScorerRatings: payload(`{"quality":0.9}`)})
			got := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + res.ID + `"}]}`)})
			row := got.Result[0]
			if string(row["scorer_tags"].(json.RawMessage)) != `["good"]` || string(row["scorer_ratings"].(json.RawMessage)) != `{"quality":0.9}` ||
				*row["call_ref"].(*string) != callRef("c-scorer") || *row["trigger_ref"].(*string) != objectRef("trigger:d2") {
				t.Fatalf("runnable row %v", row)
			}
			mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-run"), FeedbackType: "trace.runnable.judge",
				RunnableRef: str(objectRef("judge:d1")), Payload: payload(`{"output":true}`)})
		})

		t.Run("rules", func(t *testing.T) {
			base := func(typ, body string) feedback.CreateReq {
				return feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-rules"), FeedbackType: typ, Payload: payload(body)}
			}
			with := func(r feedback.CreateReq, f func(*feedback.CreateReq)) feedback.CreateReq { f(&r); return r }
			annot := func(ref string) func(*feedback.CreateReq) {
				return func(r *feedback.CreateReq) { r.AnnotationRef = str(ref) }
			}
			runnable := func(ref string) func(*feedback.CreateReq) {
				return func(r *feedback.CreateReq) { r.RunnableRef = str(ref) }
			}
			tests := []struct {
				name  string
				req   feedback.CreateReq
				class error
			}{
				{"reaction two emoji", base("wandb.reaction.1", `{"emoji":"👍👍"}`), weft.ErrInvalid},
				{"reaction text", base("wandb.reaction.1", `{"emoji":"a"}`), weft.ErrInvalid},
				{"reaction emoji plus text", base("wandb.reaction.1", `{"emoji":"👍 ok"}`), weft.ErrInvalid},
				{"reaction no emoji key", base("wandb.reaction.1", `{"e":"👍"}`), weft.ErrInvalid},
				{"reaction emoji not a string", base("trace.reaction.1", `{"emoji":1}`), weft.ErrInvalid},
				{"note empty", base("wandb.note.1", `{"note":""}`), weft.ErrInvalid},
				{"note too long", base("wandb.note.1", `{"note":"`+strings.Repeat("é", 1025)+`"}`), weft.ErrInvalid},
				{"note missing", base("trace.note.1", `{}`), weft.ErrInvalid},
				{"annotation without name", with(base("wandb.annotation", `{"value":1}`), annot(objectRef("x:d"))), weft.ErrInvalid},
				{"annotation trailing dot", with(base("wandb.annotation.", `{"value":1}`), annot(objectRef("x:d"))), weft.ErrInvalid},
				{"annotation ref without digest", with(base("wandb.annotation.x", `{"value":1}`), annot(objectRef("x"))), weft.ErrInvalid},
				{"annotation name mismatch", with(base("wandb.annotation.x", `{"value":1}`), annot(objectRef("y:d"))), weft.ErrInvalid},
				{"annotation ref missing", base("trace.annotation.x", `{"value":1}`), weft.ErrInvalid},
				{"annotation ref is an op", with(base("wandb.annotation.x", `{"value":1}`), annot("trace:///"+project+"/op/x:d")), weft.ErrInvalid},
				{"annotation ref other project", with(base("wandb.annotation.x", `{"value":1}`), annot("trace:///other/proj/object/x:d")), weft.ErrInvalid},
				{"annotation_ref on plain type", with(base("custom", `{}`), annot(objectRef("x:d"))), weft.ErrInvalid},
				{"annotation bad payload", with(base("wandb.annotation.x", `{"val":1}`), annot(objectRef("x:d"))), weft.ErrInvalid},
				{"annotation extra payload key", with(base("wandb.annotation.x", `{"value":1,"more":2}`), annot(objectRef("x:d"))), weft.ErrInvalid},
				{"runnable without name", with(base("wandb.runnable", `{"output":1}`), runnable(objectRef("s:d"))), weft.ErrInvalid},
				{"runnable trailing dot", with(base("wandb.runnable.", `{"output":1}`), runnable(objectRef("s:d"))), weft.ErrInvalid},
				{"runnable ref without digest", with(base("wandb.runnable.s", `{"output":1}`), runnable(objectRef("s"))), weft.ErrInvalid},
				{"runnable name mismatch", with(base("wandb.runnable.s", `{"output":1}`), runnable(objectRef("t:d"))), weft.ErrInvalid},
				{"runnable op without call_ref", with(base("wandb.runnable.s", `{"output":1}`), runnable("trace:///"+project+"/op/s:d")), weft.ErrInvalid},
				{"runnable bad payload", with(base("wandb.runnable.s", `{"result":1}`), runnable(objectRef("s:d"))), weft.ErrInvalid},
				{"runnable_ref on plain type", with(base("custom", `{}`), runnable(objectRef("s:d"))), weft.ErrInvalid},
				{"call_ref on plain type", with(base("custom", `{}`), func(r *feedback.CreateReq) { r.CallRef = str(callRef("c")) }), weft.ErrInvalid},
				{"trigger_ref on plain type", with(base("custom", `{}`), func(r *feedback.CreateReq) { r.TriggerRef = str(objectRef("t:d")) }), weft.ErrInvalid},
				{"runnable call_ref not a call", with(base("wandb.runnable.s", `{"output":1}`), func(r *feedback.CreateReq) {
					r.RunnableRef, r.CallRef = str("trace:///"+project+"/op/s:d"), str(objectRef("c:d"))
				}), weft.ErrInvalid},
				{"scorer_tags on plain type", with(base("custom", `{}`), func(r *feedback.CreateReq) { r.ScorerTags = []string{"x"} }), weft.ErrInvalid},
				{"payload not an object", base("custom", `[1]`), weft.ErrValidation},
				{"payload too large", base("custom", `{"x":"`+strings.Repeat("x", 1<<20)+`"}`), weft.ErrInvalid},
				{"trace_ref missing", base("custom", `{}`), nil},
				{"trace_ref not a ref", with(base("custom", `{}`), func(r *feedback.CreateReq) { r.TraceRef = "call/123" }), weft.ErrInvalid},
				{"trace_ref other project", with(base("custom", `{}`), func(r *feedback.CreateReq) { r.TraceRef = "trace:///a/b/call/1" }), weft.ErrInvalid},
				{"id not a uuid", with(base("custom", `{}`), func(r *feedback.CreateReq) { r.ID = str("nope") }), weft.ErrInvalid},
				{"unknown queue", with(base("custom", `{}`), func(r *feedback.CreateReq) { r.QueueID = str("0192f3a4-0000-7000-8000-00000000dead") }), weft.ErrInvalid},
				{"bad project", with(base("custom", `{}`), func(r *feedback.CreateReq) { r.ProjectID = "noslash" }), weft.ErrInvalid},
			}
			tests[31].req.TraceRef = "" // trace_ref missing
			tests[31].class = weft.ErrInvalid
			before := queryAll(t, svc, feedback.QueryReq{}).TotalCount
			for _, tc := range tests {
				if _, err := svc.Create(ctx, tc.req); !errors.Is(err, tc.class) {
					t.Errorf("%s: err = %v, want class %v", tc.name, err, tc.class)
				}
			}
			if _, err := svc.Create(context.Background(), base("custom", `{}`)); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("no user: %v", err)
			}
			if after := queryAll(t, svc, feedback.QueryReq{}).TotalCount; after != before {
				t.Fatalf("rejected rows were stored: %d → %d", before, after)
			}
			// A note of exactly 1024 characters is fine.
			mustCreate(t, svc, base("wandb.note.1", `{"note":"`+strings.Repeat("é", 1024)+`"}`))
		})

		t.Run("batch validates all first", func(t *testing.T) {
			item := func(i int) feedback.CreateReq {
				return feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-batch"), FeedbackType: "custom", Payload: payload(`{"i":` + string(rune('0'+i)) + `}`)}
			}
			batch := []feedback.CreateReq{item(0), item(1), item(2)}
			batch[2].FeedbackType = "wandb.note.1"
			_, err := svc.BatchCreate(ctx, feedback.BatchCreateReq{Batch: batch})
			if !errors.Is(err, weft.ErrInvalid) || !strings.Contains(err.Error(), "batch[2]") {
				t.Fatalf("bad batch: %v", err)
			}
			dup := []feedback.CreateReq{item(0), item(1)}
			dup[0].ID, dup[1].ID = str("0192f3a4-0000-7000-8000-0000000000aa"), str("0192f3a4-0000-7000-8000-0000000000aa")
			if _, err := svc.BatchCreate(ctx, feedback.BatchCreateReq{Batch: dup}); err == nil || !strings.Contains(err.Error(), "batch[1]") {
				t.Fatalf("duplicate ids: %v", err)
			}
			bad := []feedback.CreateReq{item(0), item(1)}
			bad[1].QueueID = str("0192f3a4-0000-7000-8000-00000000dead")
			if _, err := svc.BatchCreate(ctx, feedback.BatchCreateReq{Batch: bad}); !errors.Is(err, feedback.ErrUnknownQueue) || !strings.Contains(err.Error(), "batch[1]") {
				t.Fatalf("unknown queue in batch: %v", err)
			}
			stored := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"trace_ref"},{"$literal":"` + callRef("c-batch") + `"}]}`)})
			if stored.TotalCount != 0 {
				t.Fatalf("a failed batch wrote %d rows", stored.TotalCount)
			}
			res, err := svc.BatchCreate(ctx, feedback.BatchCreateReq{Batch: []feedback.CreateReq{item(0), item(1), item(2)}})
			if err != nil || len(res.Res) != 3 {
				t.Fatalf("good batch: %+v %v", res, err)
			}
			stored = queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"trace_ref"},{"$literal":"` + callRef("c-batch") + `"}]}`),
				SortBy: []feedback.SortBy{{Field: "payload.i"}}})
			for i, row := range stored.Result {
				if row["id"] != res.Res[i].ID {
					t.Fatalf("batch order: row %d is %v, want %s", i, row["id"], res.Res[i].ID)
				}
			}
		})

		t.Run("replace", func(t *testing.T) {
			ref := callRef("c-replace")
			a := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: ref, FeedbackType: "wandb.reaction.1", Payload: payload(`{"emoji":"👍"}`)})
			b := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: ref, FeedbackType: "wandb.note.1", Payload: payload(`{"note":"b"}`)})
			onRef := func() map[string]map[string]any {
				res := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"trace_ref"},{"$literal":"` + ref + `"}]}`)})
				out := map[string]map[string]any{}
				for _, r := range res.Result {
					out[r["id"].(string)] = r
				}
				return out
			}
			a2, err := svc.Replace(ctx, feedback.ReplaceReq{FeedbackID: a.ID, CreateReq: feedback.CreateReq{ProjectID: project, TraceRef: ref, FeedbackType: "wandb.note.1", Payload: payload(`{"note":"a2"}`)}})
			if err != nil || a2.ID == a.ID {
				t.Fatalf("replace: %+v %v", a2, err)
			}
			rows := onRef()
			if len(rows) != 2 || rows[a2.ID] == nil || string(rows[b.ID]["payload"].(json.RawMessage)) != `{"note":"b"}` {
				t.Fatalf("after replace: %v", rows)
			}
			a3, err := svc.Replace(ctx, feedback.ReplaceReq{FeedbackID: a2.ID, CreateReq: feedback.CreateReq{ProjectID: project, TraceRef: ref, FeedbackType: "wandb.reaction.1", Payload: payload(`{"emoji":"🎉"}`)}})
			if err != nil || a3.ID == a2.ID || len(onRef()) != 2 {
				t.Fatalf("replace back: %+v %v %v", a3, err, onRef())
			}
			_, err = svc.Replace(ctx, feedback.ReplaceReq{FeedbackID: a3.ID, CreateReq: feedback.CreateReq{ProjectID: project, TraceRef: ref, FeedbackType: "custom", Payload: payload(`{}`), ScorerTags: []string{"x"}}})
			if !errors.Is(err, weft.ErrInvalid) || onRef()[a3.ID] == nil {
				t.Fatalf("invalid replace: %v; original kept: %v", err, onRef()[a3.ID] != nil)
			}
			const clientID = "0192f3a4-0000-7000-8000-0000000000bb"
			a4, err := svc.Replace(ctx, feedback.ReplaceReq{FeedbackID: a3.ID, CreateReq: feedback.CreateReq{ProjectID: project, TraceRef: ref, FeedbackType: "custom", Payload: payload(`{}`), ID: str(clientID)}})
			if err != nil || a4.ID != clientID || len(onRef()) != 2 {
				t.Fatalf("replace with client id: %+v %v", a4, err)
			}
		})

		t.Run("queue_id", func(t *testing.T) {
			q, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: project, Name: "fb queue"})
			if err != nil {
				t.Fatal(err)
			}
			res := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-q"), FeedbackType: "custom", Payload: payload(`{}`), QueueID: str(q.ID)})
			got := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"queue_id"},{"$literal":"` + q.ID + `"}]}`)})
			if got.TotalCount != 1 || got.Result[0]["id"] != res.ID {
				t.Fatalf("by queue: %+v", got)
			}
			other, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: "team/other", Name: "elsewhere"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = svc.Create(ctx, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-q"), FeedbackType: "custom", Payload: payload(`{}`), QueueID: str(other.ID)})
			if !errors.Is(err, feedback.ErrUnknownQueue) || !strings.Contains(err.Error(), "not found or has been deleted") {
				t.Fatalf("foreign queue: %v", err)
			}
			if _, err := svc.DeleteQueue(ctx, project, q.ID); err != nil {
				t.Fatal(err)
			}
			_, err = svc.Create(ctx, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-q"), FeedbackType: "custom", Payload: payload(`{}`), QueueID: str(q.ID)})
			if !errors.Is(err, feedback.ErrUnknownQueue) {
				t.Fatalf("deleted queue: %v", err)
			}
		})

		t.Run("query dsl", func(t *testing.T) {
			ref := callRef("c-dsl")
			for _, p := range []string{`{"is_positive":true,"rank":1,"score":0.9,"tag":"a","nested":{"k":"x"}}`,
				`{"is_positive":false,"rank":2,"score":0.4,"tag":"b","nested":{"k":"y"}}`,
				`{"is_positive":true,"rank":"2","score":0.7,"tag":"c"}`} {
				mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: ref, FeedbackType: "dsl", Payload: payload(p)})
			}
			onRef := `{"$eq":[{"$getField":"trace_ref"},{"$literal":"` + ref + `"}]}`
			tags := func(filter string) string {
				res := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$and":[` + onRef + `,` + filter + `]}`), SortBy: []feedback.SortBy{{Field: "payload.tag", Direction: "asc"}}})
				var out []string
				for _, r := range res.Result {
					var p struct{ Tag string }
					_ = json.Unmarshal(r["payload"].(json.RawMessage), &p)
					out = append(out, p.Tag)
				}
				if res.TotalCount != len(out) {
					t.Errorf("total_count %d for %d rows", res.TotalCount, len(out))
				}
				return strings.Join(out, ",")
			}
			tests := []struct{ filter, want string }{
				{`{"$eq":[{"$getField":"payload.is_positive"},{"$literal":false}]}`, "b"},
				{`{"$eq":[{"$getField":"payload.is_positive"},{"$literal":true}]}`, "a,c"},
				{`{"$eq":[{"$getField":"payload.rank"},{"$literal":2}]}`, "b"},
				{`{"$eq":[{"$getField":"payload.rank"},{"$literal":"2"}]}`, "c"},
				{`{"$gt":[{"$getField":"payload.score"},{"$literal":0.5}]}`, "a,c"},
				{`{"$gte":[{"$getField":"payload.score"},{"$literal":0.7}]}`, "a,c"},
				{`{"$lt":[{"$getField":"payload.score"},{"$literal":0.7}]}`, "b"},
				{`{"$lte":[{"$getField":"payload.score"},{"$literal":0.7}]}`, "b,c"},
				{`{"$lt":[{"$literal":0.5},{"$getField":"payload.score"}]}`, "a,c"},
				{`{"$and":[{"$gt":[{"$getField":"payload.score"},{"$literal":0.5}]},{"$eq":[{"$getField":"payload.is_positive"},{"$literal":true}]},{"$eq":[{"$getField":"payload.rank"},{"$literal":1}]}]}`, "a"},
				{`{"$or":[{"$eq":[{"$getField":"payload.tag"},{"$literal":"a"}]},{"$eq":[{"$getField":"payload.tag"},{"$literal":"c"}]}]}`, "a,c"},
				{`{"$not":[{"$eq":[{"$getField":"payload.tag"},{"$literal":"a"}]}]}`, "b,c"},
				{`{"$not":[{"$eq":[{"$getField":"payload.nested.k"},{"$literal":"x"}]}]}`, "b,c"},
				{`{"$in":[{"$getField":"payload.tag"},[{"$literal":"b"},{"$literal":"c"}]]}`, "b,c"},
				{`{"$in":[{"$getField":"payload.tag"},[]]}`, ""},
				{`{"$eq":[{"$getField":"payload.nested.k"},{"$literal":"y"}]}`, "b"},
				{`{"$eq":[{"$getField":"payload.nested"},{"$literal":null}]}`, "c"},
				{`{"$eq":[{"$getField":"feedback_type"},{"$literal":"dsl"}]}`, "a,b,c"},
				{`{"$eq":[{"$getField":"creator"},{"$literal":null}]}`, "a,b,c"},
				{`{"$gt":[{"$getField":"created_at"},{"$literal":"2000-01-01T00:00:00Z"}]}`, "a,b,c"},
				{`{"$lt":[{"$getField":"created_at"},{"$literal":946684800}]}`, ""},
				{`{"$eq":[{"$getField":"payload.tag"},{"$literal":"x' OR '1'='1"}]}`, ""},
			}
			for _, tc := range tests {
				if got := tags(tc.filter); got != tc.want {
					t.Errorf("%s: got %q, want %q", tc.filter, got, tc.want)
				}
			}
			desc := queryAll(t, svc, feedback.QueryReq{Query: expr(onRef), SortBy: []feedback.SortBy{{Field: "payload.score", Direction: "desc"}}, Fields: []string{"id", "payload"}})
			var scores []string
			for _, r := range desc.Result {
				var p struct{ Score json.Number }
				_ = json.Unmarshal(r["payload"].(json.RawMessage), &p)
				scores = append(scores, p.Score.String())
			}
			if strings.Join(scores, ",") != "0.9,0.7,0.4" {
				t.Errorf("sort by payload.score desc: %v", scores)
			}
			two, one := 2, 1
			page := queryAll(t, svc, feedback.QueryReq{Query: expr(onRef), Limit: &two, Offset: &one})
			if len(page.Result) != 2 || page.TotalCount != 3 {
				t.Errorf("limit/offset: %d rows, total %d", len(page.Result), page.TotalCount)
			}
			for _, bad := range []string{
				`{"$eq":[{"$getField":"inputs.message_id"},{"$literal":"x"}]}`,
				`{"$regex":[{"$getField":"id"},{"$literal":"x"}]}`,
				`{"$eq":[{"$getField":"id"}]}`,
				`{"$eq":[{"$getField":"id"},{"$getField":"id"}]}`,
				`{"$eq":[{"$getField":"id"},{"$literal":1}]}`,
				`{"$gt":[{"$getField":"payload.x"},{"$literal":null}]}`,
				`{"$eq":[{"$getField":"payload..x"},{"$literal":1}]}`,
				`{"$eq":[{"$getField":"created_at"},{"$literal":"yesterday"}]}`,
				`[1]`,
			} {
				_, err := svc.Query(ctx, feedback.QueryReq{ProjectID: project, Query: expr(bad)})
				if !errors.Is(err, weft.ErrInvalid) {
					t.Errorf("%s: %v, want ErrInvalid", bad, err)
				}
			}
			_, err := svc.Query(ctx, feedback.QueryReq{ProjectID: project, Query: expr(`{"$eq":[{"$getField":"inputs.message_id"},{"$literal":"x"}]}`)})
			if err == nil || !strings.Contains(err.Error(), "Unknown field") {
				t.Errorf("unknown field message: %v", err)
			}
			if _, err := svc.Query(ctx, feedback.QueryReq{ProjectID: project, Fields: []string{"nope"}}); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("unknown output field: %v", err)
			}
			if _, err := svc.Query(ctx, feedback.QueryReq{ProjectID: project, SortBy: []feedback.SortBy{{Field: "nope"}}}); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("unknown sort field: %v", err)
			}
		})

		t.Run("projects are separate", func(t *testing.T) {
			_, err := svc.Create(ctx, feedback.CreateReq{ProjectID: "team/iso", TraceRef: "trace:///team/iso/call/x", FeedbackType: "custom", Payload: payload(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.Query(ctx, feedback.QueryReq{ProjectID: "team/iso2"})
			if err != nil || res.TotalCount != 0 {
				t.Fatalf("other project sees %d rows (%v)", res.TotalCount, err)
			}
		})
	})
}
