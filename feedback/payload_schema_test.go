package feedback_test

import (
	"errors"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
)

// PayloadSchema discovers payload paths as Weave's discover_payload_schema
// does (feedback_payload_schema.py): leaves by dot path, lists of scalars at
// their own path, indexed paths, dotted and blank names and paths outside
// [a-zA-Z0-9_. ] left out; boolean for booleans or nulls only, numeric for
// numbers, else categorical; one payload, the newest, per trigger_ref.
func TestPayloadSchema(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		tl := newTimeline(t, db)
		svc, ctx := tl.svc, userCtx("u1")
		runnable := func(at time.Duration, trigger, body string) {
			tl.add(at, feedback.CreateReq{FeedbackType: "wandb.runnable.scorer", RunnableRef: str("weave:///" + project + "/op/scorer:d1"),
				CallRef: str(callRef("s")), TriggerRef: str(objectRef(trigger)), Payload: payload(body)})
		}
		runnable(0, "monitor:v1", `{"output":{"old":1}}`)
		runnable(time.Second, "monitor:v1", `{"output":{"score":0.5,"passed":true,"label":"ok","tags":["a","b"],"rows":[{"x":1}],"a.b":1,"Low quality":false,"bad-name":1,"none":null}}`)
		runnable(time.Second, "monitor:v2", `{"output":{"score":"high","passed":null}}`)
		tl.add(time.Second, feedback.CreateReq{FeedbackType: "wandb.note.1", Payload: payload(`{"note":"fine"}`)})

		schema := func(req feedback.PayloadSchemaReq) []feedback.PayloadPath {
			t.Helper()
			req.ProjectID = project
			if req.Start.IsZero() {
				req.Start = t0.Add(-time.Hour)
			}
			res, err := svc.PayloadSchema(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			return res.Paths
		}
		check := tl.check
		check("all", schema(feedback.PayloadSchemaReq{}), `[{"json_path":"note","value_type":"categorical"},`+
			`{"json_path":"output.Low quality","value_type":"boolean"},{"json_path":"output.label","value_type":"categorical"},`+
			`{"json_path":"output.none","value_type":"boolean"},{"json_path":"output.passed","value_type":"boolean"},`+
			`{"json_path":"output.score","value_type":"categorical"},{"json_path":"output.tags","value_type":"categorical"}]`)
		check("one version", schema(feedback.PayloadSchemaReq{TriggerRef: str(objectRef("monitor:v2"))}),
			`[{"json_path":"output.passed","value_type":"boolean"},{"json_path":"output.score","value_type":"categorical"}]`)
		check("every version", schema(feedback.PayloadSchemaReq{TriggerRef: str(objectRef("monitor:*")), FeedbackType: str("wandb.runnable.scorer"), SampleLimit: ptrInt(1)}),
			`[{"json_path":"output.Low quality","value_type":"boolean"},{"json_path":"output.label","value_type":"categorical"},`+
				`{"json_path":"output.none","value_type":"boolean"},{"json_path":"output.passed","value_type":"boolean"},`+
				`{"json_path":"output.score","value_type":"numeric"},{"json_path":"output.tags","value_type":"categorical"}]`)
		check("type", schema(feedback.PayloadSchemaReq{FeedbackType: str("wandb.note.1")}), `[{"json_path":"note","value_type":"categorical"}]`)
		check("window", schema(feedback.PayloadSchemaReq{Start: t0.Add(time.Hour)}), `[]`)
		for _, bad := range []feedback.PayloadSchemaReq{{ProjectID: project}, {ProjectID: project, Start: time.Now(), SampleLimit: ptrInt(0)}, {ProjectID: "nope", Start: time.Now()}} {
			if _, err := svc.PayloadSchema(ctx, bad); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("%+v: %v", bad, err)
			}
		}
	})
}

func ptrInt(i int) *int { return &i }
