package httpapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestEvalResultsQuery records two evaluations as the Python SDK's
// Evaluation.evaluate records them (a root, a predict_and_score call per
// example with the model's predict call and a scorer call under it) and reads
// them back through POST /v2/{entity}/{project}/eval_results/query with the
// bodies of Weave's generated client. The row digests are Weave's:
// str_digest(json.dumps(example, sort_keys=True)) for an inline example,
// computed by Python's hashlib and json and written here, and the row digest a
// dataset-row ref names.
func TestEvalResultsQuery(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newWeaveFixture(t, db)
		alice := basic("api", f.aliceKey)
		mustPost := func(path, body string) []byte {
			t.Helper()
			status, res := post(t, f, alice, path, body)
			if status != 200 {
				t.Fatalf("%s: %d %s", path, status, res)
			}
			return res
		}

		// A dataset whose second row the trials name by ref.
		var table struct {
			Digest     string   `json:"digest"`
			RowDigests []string `json:"row_digests"`
		}
		json.Unmarshal(mustPost("/table/create", `{"table":{"project_id":"alice/p","rows":[{"q":"1+1","a":"2"},{"q":"3+3","a":"6"}]}}`), &table)
		var dataset struct{ Digest string }
		json.Unmarshal(mustPost("/obj/create", fmt.Sprintf(`{"obj":{"project_id":"alice/p","object_id":"ds","val":{"_type":"Dataset","rows":"weave:///alice/p/table/%s"}}}`, table.Digest)), &dataset)
		rowRef := fmt.Sprintf("weave:///alice/p/object/ds:%s/attr/rows/id/%s", dataset.Digest, table.RowDigests[1])
		const inlineDigest = "0S9DGT9WaTh3NmpAYXd7YBefvlTW2psFGfzNGj9yHu8" // {"a": "4", "q": "2+2"}

		evalRef, modelRef := "weave:///alice/p/object/qa:v0digest", "weave:///alice/p/object/M:v0digest"
		evalA, evalB := newUUID(), newUUID()
		var items []string
		call := func(id, traceID, parent, op, at, end string, attributes, inputs, output, summary string) {
			parentJSON := "null"
			if parent != "" {
				parentJSON = fmt.Sprintf("%q", parent)
			}
			items = append(items,
				fmt.Sprintf(`{"mode":"start","req":{"start":{"project_id":"alice/p","id":%q,"trace_id":%q,"parent_id":%s,"op_name":%q,"started_at":"2026-05-01T12:00:%sZ","attributes":%s,"inputs":%s}}}`,
					id, traceID, parentJSON, op, at, attributes, inputs),
				fmt.Sprintf(`{"mode":"end","req":{"end":{"project_id":"alice/p","id":%q,"ended_at":"2026-05-01T12:00:%sZ","output":%s,"summary":%s}}}`, id, end, output, summary))
		}
		rootInputs := fmt.Sprintf(`{"self":%q,"model":%q}`, evalRef, modelRef)
		call(evalA, evalA, "", "weave:///alice/p/op/Evaluation.evaluate:d1", "00.250", "30", `{}`, rootInputs, `{}`, `{}`)
		call(evalB, evalB, "", "weave:///alice/p/op/Evaluation.evaluate:d1", "40", "59", `{}`, rootInputs, `{}`, `{}`)
		trial := func(root, at, example, scores string, withChildren bool) string {
			id := newUUID()
			call(id, root, root, "weave:///alice/p/op/Evaluation.predict_and_score:d2", at, at,
				`{}`, fmt.Sprintf(`{"self":%q,"model":%q,"example":%s}`, evalRef, modelRef, example),
				fmt.Sprintf(`{"output":"out-%s","scores":%s,"model_latency":{"mean":0.5}}`, at, scores), `{}`)
			if withChildren {
				call(newUUID(), root, id, "weave:///alice/p/op/M.predict:d3", at, fmt.Sprintf("%02d", atoi(at)+2), `{}`, fmt.Sprintf(`{"self":%q,"input":"x"}`, modelRef), `"out"`,
					`{"usage":{"gpt-4":{"requests":1,"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}}`)
				call(newUUID(), root, id, "weave:///alice/p/op/exact:d4", at, at, `{"_weave_eval_meta":{"score":true}}`, `{}`, `true`, `{}`)
			}
			return id
		}
		a1 := trial(evalA, "01", `{"q":"2+2","a":"4"}`, `{"exact":true,"dist":{"passed":false,"value":0.25}}`, true)
		trial(evalA, "10", fmt.Sprintf("%q", rowRef), `{"exact":false,"dist":{"passed":true,"value":0.5}}`, false)
		b1 := trial(evalB, "41", `{"a":"4","q":"2+2"}`, `{"exact":true}`, false)
		mustPost("/call/upsert_batch", `{"batch":[`+strings.Join(items, ",")+`]}`)

		type trialJSON struct {
			PredictAndScoreCallID string            `json:"predict_and_score_call_id"`
			PredictCallID         *string           `json:"predict_call_id"`
			ModelOutput           any               `json:"model_output"`
			Scores                map[string]any    `json:"scores"`
			ModelLatencySeconds   *float64          `json:"model_latency_seconds"`
			TotalTokens           *int64            `json:"total_tokens"`
			TotalCost             *float64          `json:"total_cost"`
			ScorerCallIDs         map[string]string `json:"scorer_call_ids"`
		}
		var res struct {
			Rows []struct {
				RowDigest   string `json:"row_digest"`
				RawDataRow  any    `json:"raw_data_row"`
				Evaluations []struct {
					EvaluationCallID string      `json:"evaluation_call_id"`
					Trials           []trialJSON `json:"trials"`
				} `json:"evaluations"`
			} `json:"rows"`
			TotalRows int `json:"total_rows"`
			Summary   *struct {
				RowCount    int `json:"row_count"`
				Evaluations []struct {
					EvaluationCallID   string           `json:"evaluation_call_id"`
					TrialCount         int              `json:"trial_count"`
					EvaluationRef      string           `json:"evaluation_ref"`
					ModelRef           string           `json:"model_ref"`
					StartedAt          string           `json:"started_at"`
					PredictTotalTokens *int64           `json:"predict_total_tokens"`
					ScorerStats        []map[string]any `json:"scorer_stats"`
				} `json:"evaluations"`
			} `json:"summary"`
			Warnings []string `json:"warnings"`
		}
		query := func(body string) {
			t.Helper()
			res.Rows, res.Summary = nil, nil
			if err := json.Unmarshal(mustPost("/v2/alice/p/eval_results/query", body), &res); err != nil {
				t.Fatal(err)
			}
		}

		// Both rows, in row_digest order; the inline example under both
		// evaluations (its keys' order does not matter), the ref under A.
		query(fmt.Sprintf(`{"evaluation_call_ids":[%q],"evaluation_run_ids":[%q,%q],"include_raw_data_rows":true}`, evalA, evalB, evalA))
		want := []string{inlineDigest, table.RowDigests[1]}
		if want[0] > want[1] {
			want[0], want[1] = want[1], want[0]
		}
		if len(res.Rows) != 2 || res.TotalRows != 2 || res.Rows[0].RowDigest != want[0] || res.Rows[1].RowDigest != want[1] || res.Summary != nil {
			t.Fatalf("rows: %+v, want digests %v", res, want)
		}
		for _, row := range res.Rows {
			switch row.RowDigest {
			case inlineDigest:
				if len(row.Evaluations) != 2 || row.Evaluations[0].EvaluationCallID != evalA || row.Evaluations[1].EvaluationCallID != evalB ||
					fmt.Sprint(row.RawDataRow) != "map[a:4 q:2+2]" {
					t.Errorf("inline row: %+v", row)
				}
				tr := row.Evaluations[0].Trials[0]
				if tr.PredictAndScoreCallID != a1 || tr.PredictCallID == nil || tr.ModelOutput != "out-01" || tr.Scores["exact"] != true ||
					tr.ModelLatencySeconds == nil || *tr.ModelLatencySeconds != 2 || tr.TotalTokens == nil || *tr.TotalTokens != 7 || tr.TotalCost != nil ||
					len(tr.ScorerCallIDs) != 1 || tr.ScorerCallIDs["exact"] == "" {
					t.Errorf("trial with children: %+v", tr)
				}
				if tr := row.Evaluations[1].Trials[0]; tr.PredictAndScoreCallID != b1 || tr.PredictCallID != nil || *tr.ModelLatencySeconds != 0.5 || tr.TotalTokens != nil {
					t.Errorf("trial without children: %+v", tr)
				}
			default:
				if len(row.Evaluations) != 1 || row.RawDataRow != rowRef {
					t.Errorf("ref row: %+v", row)
				}
			}
		}

		// require_intersection keeps the row both ran on; the summary (with
		// summary_require_intersection false) counts every trial.
		query(fmt.Sprintf(`{"evaluation_call_ids":[%q,%q],"require_intersection":true,"include_summary":true,"summary_require_intersection":false,`+
			`"include_raw_data_rows":true,"resolve_row_refs":true,"limit":null,"offset":0,"sort_by":null,"filters":null,"filter_logic_operator":"or"}`, evalA, evalB))
		if len(res.Rows) != 1 || res.TotalRows != 1 || res.Rows[0].RowDigest != inlineDigest {
			t.Fatalf("intersection: %+v", res.Rows)
		}
		s := res.Summary
		if s == nil || s.RowCount != 2 || len(s.Evaluations) != 2 {
			t.Fatalf("summary: %+v", s)
		}
		ea := s.Evaluations[0]
		if ea.EvaluationCallID != evalA || ea.TrialCount != 2 || ea.EvaluationRef != evalRef || ea.ModelRef != modelRef ||
			ea.StartedAt != "2026-05-01T12:00:00.250000+00:00" || ea.PredictTotalTokens == nil || *ea.PredictTotalTokens != 7 {
			t.Errorf("summary of A: %+v", ea)
		}
		stats, _ := json.Marshal(ea.ScorerStats)
		wantStats := `[{"numeric_count":0,"numeric_mean":null,"pass_known_count":2,"pass_rate":0.5,"pass_signal_coverage":1,"pass_true_count":1,"path":null,"scorer_key":"exact","trial_count":2,"value_type":"binary"},` +
			`{"numeric_count":0,"numeric_mean":null,"pass_known_count":2,"pass_rate":0.5,"pass_signal_coverage":1,"pass_true_count":1,"path":"passed","scorer_key":"dist","trial_count":2,"value_type":"binary"},` +
			`{"numeric_count":2,"numeric_mean":0.375,"pass_known_count":0,"pass_rate":null,"pass_signal_coverage":0,"pass_true_count":0,"path":"value","scorer_key":"dist","trial_count":2,"value_type":"continuous"}]`
		if string(stats) != wantStats {
			t.Errorf("scorer stats of A:\n%s\nwant\n%s", stats, wantStats)
		}

		// The dataset-row ref resolves to its row; costs price the predict
		// call; a page of one.
		query(fmt.Sprintf(`{"evaluation_call_ids":[%q],"include_raw_data_rows":true,"resolve_row_refs":true,"include_costs":true,"limit":1,"offset":0}`, evalA))
		if len(res.Rows) != 1 || res.TotalRows != 2 {
			t.Fatalf("page: %+v", res)
		}
		query(fmt.Sprintf(`{"evaluation_call_ids":[%q],"include_raw_data_rows":true,"resolve_row_refs":true,"include_costs":true}`, evalA))
		for _, row := range res.Rows {
			if row.RowDigest == table.RowDigests[1] && fmt.Sprint(row.RawDataRow) != "map[a:6 q:3+3]" {
				t.Errorf("resolved row: %v", row.RawDataRow)
			}
			if row.RowDigest == inlineDigest {
				if c := row.Evaluations[0].Trials[0].TotalCost; c == nil || *c <= 0 {
					t.Errorf("cost of the predict call: %v", c)
				}
			}
		}

		// sort_by and filters as Weave's trace server applies them to the
		// grouped rows: A ran on both rows (the inline one scoring exact
		// true and dist.value 0.25, the ref one exact false and 0.5), B on
		// the inline row only (exact true).
		ref := table.RowDigests[1]
		order := func(body string) []string {
			t.Helper()
			query(fmt.Sprintf(`{"evaluation_call_ids":[%q,%q],%s}`, evalA, evalB, body))
			var got []string
			for _, row := range res.Rows {
				got = append(got, row.RowDigest)
			}
			return got
		}
		byDigest := []string{want[0], want[1]}
		for _, tc := range []struct {
			body string
			want []string
		}{
			// A score sorts by its mean over the trials (true reads as 1).
			{`"sort_by":[{"field":"scores.exact","direction":"desc"}]`, []string{inlineDigest, ref}},
			{`"sort_by":[{"field":"scores.exact","direction":"asc"}]`, []string{ref, inlineDigest}},
			{fmt.Sprintf(`"sort_by":[{"field":"scores.dist.value","direction":"desc","evaluation_call_id":%q}]`, evalA), []string{ref, inlineDigest}},
			// B has no dist score: no value, so row_digest decides.
			{fmt.Sprintf(`"sort_by":[{"field":"scores.dist.value","direction":"desc","evaluation_call_id":%q}]`, evalB), byDigest},
			// A row without a value comes last in both directions.
			{fmt.Sprintf(`"sort_by":[{"field":"scores.exact","direction":"asc","evaluation_call_id":%q}]`, evalB), []string{inlineDigest, ref}},
			{fmt.Sprintf(`"sort_by":[{"field":"scores.exact","direction":"desc","evaluation_call_id":%q}]`, evalB), []string{inlineDigest, ref}},
			{`"sort_by":[{"field":"scores.exact","direction":"desc","mode":"difference"}]`, []string{inlineDigest, ref}},
			{`"sort_by":[{"field":"output.output","direction":"desc"}]`, []string{ref, inlineDigest}},
			{`"sort_by":[{"field":"row_digest","direction":"desc"}]`, []string{byDigest[1], byDigest[0]}},
			// The ref's dataset row is resolved for inputs.*.
			{`"sort_by":[{"field":"inputs.q","direction":"desc"}]`, []string{ref, inlineDigest}},
			{`"sort_by":[{"field":"scores.exact","direction":"asc"}],"limit":1`, []string{ref}},

			{`"filters":[{"query":{"$expr":{"$eq":[{"$getField":"scores.exact"},{"$literal":true}]}}}]`, []string{inlineDigest}},
			{`"filters":[{"query":{"$expr":{"$gte":[{"$getField":"scores.dist.value"},{"$literal":0.5}]}}}]`, []string{ref}},
			{`"filters":[{"query":{"$expr":{"$eq":[{"$getField":"inputs.q"},{"$literal":"3+3"}]}}}]`, []string{ref}},
			{`"filters":[{"query":{"$expr":{"$contains":{"input":{"$getField":"output.output"},"substr":{"$literal":"OUT-1"},"case_insensitive":true}}}}]`, []string{ref}},
			{fmt.Sprintf(`"filters":[{"query":{"$expr":{"$eq":[{"$getField":"row_digest"},{"$literal":%q}]}}}]`, inlineDigest), []string{inlineDigest}},
			{`"filters":[{"query":{"$expr":{"$not":[{"$eq":[{"$getField":"scores.exact"},{"$literal":true}]}]}}}]`, []string{ref}},
			// Scoped to B, the ref row (which B did not run on) reads null.
			{fmt.Sprintf(`"filters":[{"evaluation_call_id":%q,"query":{"$expr":{"$not":[{"$eq":[{"$getField":"scores.exact"},{"$literal":false}]}]}}}]`, evalB), []string{inlineDigest}},
			// The filters of A and of B: either evaluation's ("or", the
			// default) or both ("and").
			{fmt.Sprintf(`"filters":[{"evaluation_call_id":%q,"query":{"$expr":{"$gte":[{"$getField":"scores.dist.value"},{"$literal":0.5}]}}},`+
				`{"evaluation_call_id":%q,"query":{"$expr":{"$eq":[{"$getField":"scores.exact"},{"$literal":true}]}}}]`, evalA, evalB), byDigest},
			{fmt.Sprintf(`"filter_logic_operator":"and","filters":[{"evaluation_call_id":%q,"query":{"$expr":{"$gte":[{"$getField":"scores.dist.value"},{"$literal":0.5}]}}},`+
				`{"evaluation_call_id":%q,"query":{"$expr":{"$eq":[{"$getField":"scores.exact"},{"$literal":true}]}}}]`, evalA, evalB), nil},
			// Filters of one evaluation all hold, even under "or".
			{fmt.Sprintf(`"filters":[{"evaluation_call_id":%q,"query":{"$expr":{"$gte":[{"$getField":"scores.dist.value"},{"$literal":0.5}]}}},`+
				`{"evaluation_call_id":%q,"query":{"$expr":{"$eq":[{"$getField":"scores.exact"},{"$literal":true}]}}}]`, evalA, evalA), nil},
		} {
			if got := order(tc.body); !slices.Equal(got, tc.want) || res.TotalRows < len(got) {
				t.Errorf("%s: rows %v (total %d), want %v", tc.body, got, res.TotalRows, tc.want)
			}
		}
		if order(`"sort_by":[{"field":"scores.exact","direction":"asc"}],"limit":1`); res.TotalRows != 2 {
			t.Errorf("a sorted page of one: total_rows %d, want 2", res.TotalRows)
		}
		// The summary is of every row of the evaluations named, as Weave's
		// eval_results_query computes it (compute_summary_from_rows over
		// the rows before selection, summary_require_intersection the only
		// selection): filters narrow the rows, not the summary.
		filtered := order(`"include_summary":true,"filters":[{"query":{"$expr":{"$eq":[{"$getField":"scores.exact"},{"$literal":false}]}}}]`)
		if !slices.Equal(filtered, []string{ref}) || res.Summary == nil || res.Summary.RowCount != 2 || len(res.Summary.Evaluations) != 2 {
			t.Errorf("filtered rows %v with summary %+v, want the ref row and the summary of both rows", filtered, res.Summary)
		}

		// No evaluation: nothing, with an empty summary when asked.
		if _, body := post(t, f, alice, "/v2/alice/p/eval_results/query", `{"include_summary":true}`); string(body) != `{"rows":[],"total_rows":0,"summary":{"row_count":0,"evaluations":[]},"warnings":[]}`+"\n" {
			t.Errorf("no evaluation: %s", body)
		}

		for _, tc := range []struct {
			path, body string
			status     int
			want       string
		}{
			{"/v2/admin/p/eval_results/query", fmt.Sprintf(`{"evaluation_call_ids":[%q]}`, evalA), 403, "Forbidden"},
			{"/v2/alice/p/eval_results/query", `{"sort_by":[{"field":"summary.x","direction":"asc"}]}`, 400, "unsupported eval results field"},
			{"/v2/alice/p/eval_results/query", `{"sort_by":[{"field":"scores.","direction":"asc"}]}`, 400, "empty"},
			{"/v2/alice/p/eval_results/query", `{"sort_by":[{"field":"scores.x","direction":"up"}]}`, 422, "direction"},
			{"/v2/alice/p/eval_results/query", fmt.Sprintf(`{"evaluation_call_ids":[%q,%q],"sort_by":[{"field":"inputs.q","direction":"asc","mode":"difference"}]}`, evalA, evalB), 400, "spread of a score"},
			{"/v2/alice/p/eval_results/query", `{"filters":[{"query":{"$expr":{"$eq":[{"$getField":"attributes.x"},{"$literal":true}]}}}]}`, 400, "unsupported eval results field"},
			{"/v2/alice/p/eval_results/query", `{"filters":[{"query":{"$expr":{"$regex":[{"$getField":"scores.x"},{"$literal":"a"}]}}}]}`, 400, "$regex is not supported"},
			{"/v2/alice/p/eval_results/query", `{"filters":[{"query":{}}]}`, 400, "needs a query"},
			{"/v2/alice/p/eval_results/query", `{"filters":[{"evaluation_call_id":"x"}]}`, 422, "query"},
			{"/v2/alice/p/eval_results/query", `{"resolve_row_refs":true}`, 400, "requires include_raw_data_rows"},
			{"/v2/alice/p/eval_results/query", `{"limit":-1}`, 422, "limit"},
			{"/v2/alice/p/eval_results/query", `{"filter_logic_operator":"xor"}`, 422, "filter_logic_operator"},
			{"/v2/alice/p/eval_results/query", `{"bogus":1}`, 422, "extra_forbidden"},
			{"/v2/alice/p/eval_results/query", `{"evaluation_call_ids":"x"}`, 422, "evaluation_call_ids"},
		} {
			if status, body := post(t, f, alice, tc.path, tc.body); status != tc.status || !strings.Contains(string(body), tc.want) {
				t.Errorf("%s %s: %d %s, want %d with %s", tc.path, tc.body, status, body, tc.status, tc.want)
			}
		}
	})
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}
