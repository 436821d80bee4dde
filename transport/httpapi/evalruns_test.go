package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestEvaluationRunsV2 drives the v2 evaluation-run, prediction and score
// routes as the Python SDK's client sends them (JSON bodies without the
// project, ids of deletes as repeated query parameters, run filters
// comma-joined) and checks that they are stored as Weave's server stores
// them: an Evaluation.evaluate call with predict_and_score children holding
// a <model>.predict and a <scorer>.score call each, an Evaluation.summarize
// child, the means in the run's output, and runnable feedback on the
// predictions.
func TestEvaluationRunsV2(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newWeaveFixture(t, db)
		c := objectsClient{t: t, base: f.server.URL, auth: basic("api", f.aliceKey)}
		decode := func(raw []byte, v any) {
			t.Helper()
			if err := json.Unmarshal(raw, v); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
		}
		publish := func(name string) string {
			var res struct{ Digest string }
			decode(c.post("/obj/create", fmt.Sprintf(`{"obj":{"project_id":"alice/p","object_id":%q,"val":{"name":%q}}}`, name, name), 200, "digest"), &res)
			return "weave:///alice/p/object/" + name + ":" + res.Digest
		}
		evaluation, model, scorer := publish("qa-eval"), publish("my-model"), publish("exact")
		lines := func(path string) []map[string]any {
			t.Helper()
			var out []map[string]any
			for _, line := range strings.Split(strings.TrimSpace(string(c.do(http.MethodGet, path, "", nil, 200, ""))), "\n") {
				if line != "" {
					var m map[string]any
					decode([]byte(line), &m)
					out = append(out, m)
				}
			}
			return out
		}

		var run struct {
			EvaluationRunID string `json:"evaluation_run_id"`
		}
		decode(c.post("/v2/alice/p/evaluation_runs", fmt.Sprintf(`{"evaluation":%q,"model":%q}`, evaluation, model), 200, ""), &run)
		runPath := "/v2/alice/p/evaluation_runs/" + run.EvaluationRunID
		c.do(http.MethodGet, runPath, "", nil, 200, `"status":"running"`)

		var predictions []string
		for i, output := range []string{`"4"`, `"5"`} {
			var p struct {
				PredictionID string `json:"prediction_id"`
			}
			decode(c.post("/v2/alice/p/predictions", fmt.Sprintf(`{"model":%q,"inputs":{"q":"2+2","i":%d},"output":%s,"evaluation_run_id":%q}`, model, i, output, run.EvaluationRunID), 200, ""), &p)
			predictions = append(predictions, p.PredictionID)
			c.post("/v2/alice/p/scores", fmt.Sprintf(`{"prediction_id":%q,"scorer":%q,"value":%d,"evaluation_run_id":%q}`, p.PredictionID, scorer, 1-i, run.EvaluationRunID), 200, "score_id")
			c.post("/v2/alice/p/predictions/"+p.PredictionID+"/finish", `{}`, 200, `"success":true`)
		}
		c.do(http.MethodGet, "/v2/alice/p/predictions/"+predictions[0], "", nil, 200, `"inputs":{"q":"2+2","i":0},"output":"4","evaluation_run_id":"`+run.EvaluationRunID+`"`)
		c.post(runPath+"/finish", `{"summary":{"note":"done"}}`, 200, `"success":true`)
		got := c.do(http.MethodGet, runPath, "", nil, 200, `"status":"success"`)
		if !strings.Contains(string(got), `"note":"done"`) || !strings.Contains(string(got), `"evaluation":"`+evaluation+`"`) || strings.Contains(string(got), `"finished_at":null`) {
			t.Errorf("finished run: %s", got)
		}

		// The calls, as /calls/stream_query reads them.
		byOp := map[string][]map[string]any{}
		for _, line := range streamLines(t, f, c.auth, fmt.Sprintf(`{"project_id":"alice/p","filter":{"trace_ids":[%q]}}`, run.EvaluationRunID)) {
			var call map[string]any
			decode(line, &call)
			name := call["op_name"].(string)
			if i := strings.LastIndex(name, "/"); i >= 0 {
				name, _, _ = strings.Cut(name[i+1:], ":")
			}
			byOp[name] = append(byOp[name], call)
		}
		if len(byOp["Evaluation.evaluate"]) != 1 || len(byOp["Evaluation.predict_and_score"]) != 2 || len(byOp["my-model.predict"]) != 2 ||
			len(byOp["exact.score"]) != 2 || len(byOp["Evaluation.summarize"]) != 1 {
			t.Fatalf("calls by op: %v", byOp)
		}
		root := byOp["Evaluation.evaluate"][0]
		if out, _ := json.Marshal(root["output"]); string(out) != `{"exact":{"mean":0.5}}` {
			t.Errorf("run output %s", out)
		}
		if in, _ := json.Marshal(root["inputs"]); string(in) != fmt.Sprintf(`{"model":%q,"self":%q}`, model, evaluation) {
			t.Errorf("run inputs %s", in)
		}
		for _, pas := range byOp["Evaluation.predict_and_score"] {
			out := pas["output"].(map[string]any)
			if pas["parent_id"] != run.EvaluationRunID || out["model_latency"] == nil || out["scores"] == nil || pas["ended_at"] == nil {
				t.Errorf("predict_and_score %v", pas)
			}
			if s, _ := json.Marshal(out["scores"]); out["output"] == "4" && string(s) != `{"exact":1}` || out["output"] == "5" && string(s) != `{"exact":0}` {
				t.Errorf("scores %s of %v", s, out["output"])
			}
		}
		for _, score := range byOp["exact.score"] {
			if !slices.ContainsFunc(byOp["Evaluation.predict_and_score"], func(p map[string]any) bool { return p["id"] == score["parent_id"] }) {
				t.Errorf("score outside its predict_and_score: %v", score)
			}
		}
		status, fb := post(t, f, c.auth, "/feedback/query", `{"project_id":"alice/p","query":{"$expr":{"$eq":[{"$getField":"feedback_type"},{"$literal":"wandb.runnable.exact"}]}}}`)
		if status != 200 || strings.Count(string(fb), `"runnable_ref":"`+scorer+`"`) != 2 || !strings.Contains(string(fb), `"payload":{"output":1.0}`) ||
			!strings.Contains(string(fb), `/call/`+predictions[0]+`"`) {
			t.Errorf("feedback: %d %s", status, fb)
		}

		// Lists and their filters.
		if got := lines("/v2/alice/p/predictions?evaluation_run_id=" + run.EvaluationRunID); len(got) != 2 || got[0]["prediction_id"] != predictions[0] {
			t.Errorf("predictions: %v", got)
		}
		if got := lines("/v2/alice/p/scores?limit=1&offset=1"); len(got) != 1 || got[0]["value"] != 0.0 || got[0]["scorer"] != scorer {
			t.Errorf("scores: %v", got)
		}
		if got := lines("/v2/alice/p/evaluation_runs?model_refs=" + url.QueryEscape(model+",weave:///alice/p/object/other:x")); len(got) != 1 || got[0]["evaluation_run_id"] != run.EvaluationRunID {
			t.Errorf("runs of the model: %v", got)
		}
		if got := lines("/v2/alice/p/evaluation_runs?evaluation_refs=" + url.QueryEscape(model)); len(got) != 0 {
			t.Errorf("runs of an evaluation that is a model: %v", got)
		}

		// Refusals.
		c.do(http.MethodGet, "/v2/alice/p/evaluation_runs/"+predictions[0], "", nil, 404, "NotFoundError")
		c.do(http.MethodGet, "/v2/alice/p/scores/"+run.EvaluationRunID, "", nil, 404, "NotFoundError")
		c.post("/v2/alice/p/evaluation_runs", fmt.Sprintf(`{"evaluation":"weave:///bob/p/object/e:abc","model":%q}`, model), 400, "project")
		c.post("/v2/alice/p/evaluation_runs", `{"evaluation":"not a ref","model":"x"}`, 400, "evaluation")
		c.post("/v2/alice/p/scores", fmt.Sprintf(`{"prediction_id":%q,"scorer":"weave:///alice/p/op/f:abc","value":1}`, predictions[0]), 400, "scorer")
		c.post("/v2/alice/p/predictions", fmt.Sprintf(`{"model":%q,"inputs":[1],"output":1}`, model), 422, "")
		c.post("/v2/alice/p/predictions", fmt.Sprintf(`{"model":%q,"inputs":{},"output":1,"evaluation_run_id":"nope"}`, model), 404, "")
		c.post("/v2/admin/p/evaluation_runs", fmt.Sprintf(`{"evaluation":%q,"model":%q}`, evaluation, model), 403, "")
		c.do(http.MethodDelete, "/v2/alice/p/scores", "", nil, 400, "")

		// A standalone prediction and score; then deleting the run takes
		// its predictions and scores with it.
		var lone struct {
			PredictionID string `json:"prediction_id"`
		}
		decode(c.post("/v2/alice/p/predictions", fmt.Sprintf(`{"model":%q,"inputs":{},"output":7}`, model), 200, ""), &lone)
		c.do(http.MethodGet, "/v2/alice/p/predictions/"+lone.PredictionID, "", nil, 200, `"evaluation_run_id":null`)
		c.do(http.MethodDelete, "/v2/alice/p/evaluation_runs?evaluation_run_ids="+run.EvaluationRunID, "", nil, 200, `"num_deleted":`)
		c.do(http.MethodGet, runPath, "", nil, 404, "")
		if got := lines("/v2/alice/p/predictions"); len(got) != 1 || got[0]["prediction_id"] != lone.PredictionID {
			t.Errorf("predictions after the run's delete: %v", got)
		}
		c.do(http.MethodDelete, "/v2/alice/p/predictions?prediction_ids="+lone.PredictionID, "", nil, 200, `"num_deleted":1`)
	})
}
