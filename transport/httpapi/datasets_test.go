package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/datasets"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestDatasetFromCalls: the calls a monitor's verdict scored right, chosen
// by the verdict's feedback field in a calls query, become a Dataset
// version whose table rows are each call's inputs and output, in the
// selection's order; bad selections get 4xx naming the fault, and another
// user may not make a dataset of the project's calls.
func TestDatasetFromCalls(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newMonitorFixture(t, db)
		alice := objectsClient{t: t, base: f.server.URL, auth: basic("api", f.aliceKey)}
		var scorer struct{ Digest string }
		if err := json.Unmarshal(alice.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"says_42","val":`+
			`{"_type":"ContainsScorer","_class_name":"ContainsScorer","_bases":["Scorer","Object","BaseModel"],"substring":"42"}}}`, 200, "digest"), &scorer); err != nil {
			t.Fatal(err)
		}
		alice.post("/obj/create", fmt.Sprintf(`{"obj":{"project_id":"alice/p","object_id":"m","val":{"_type":"Monitor","_class_name":"Monitor",`+
			`"_bases":["Object","BaseModel"],"sampling_rate":1,"scorers":["weave:///alice/p/object/says_42:%s"],`+
			`"call_filter":{"op_names":["weave:///alice/p/op/answer:*"],"query":null},"active":true}}}`, scorer.Digest), 200, "digest")

		start := time.Now().UTC()
		var calls []sdkCall
		var want []map[string]any
		for i := range 6 {
			id := uuid.Must(uuid.NewV7()).String()
			messages := fmt.Sprintf(`[{"role":"user","content":"question %d"}]`, i)
			output := `"no idea"`
			if i%2 == 0 {
				output = fmt.Sprintf(`"%d: 42"`, i)
				var row map[string]any
				_ = json.Unmarshal(fmt.Appendf(nil, `{"messages":%s,"output":%s}`, messages, output), &row)
				want = append(want, row)
			}
			calls = append(calls, sdkCall{id: id, traceID: id, opName: "weave:///alice/p/op/answer:abc", inputs: `{"messages":` + messages + `}`,
				output: output, startedAt: start.Add(time.Duration(i) * time.Millisecond)})
		}
		sendCalls(t, f, basic("api", f.aliceKey), "alice/p", calls)
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(string(alice.do(http.MethodGet, "/v2/alice/p/monitors/m/stats", "", nil, 200, "")), `"done":6`) {
			if time.Now().After(deadline) {
				t.Fatal("the monitor did not score the 6 calls")
			}
			time.Sleep(50 * time.Millisecond)
		}

		const right = `{"$expr":{"$eq":[{"$getField":"feedback.[wandb.runnable.says_42].payload.output.contains"},{"$literal":true}]}}`
		var made datasets.FromCallsRes
		if err := json.Unmarshal(alice.post("/v2/alice/p/datasets/from_calls", `{"name":"right","description":"scored right","query":`+right+`}`, 200, ""), &made); err != nil {
			t.Fatal(err)
		}
		if made.Rows != 3 || made.ObjectID != "right" || made.Ref != "weave:///alice/p/object/right:"+made.Digest {
			t.Fatalf("made %+v", made)
		}
		var obj struct {
			Obj struct {
				Val struct {
					ClassName string   `json:"_class_name"`
					Bases     []string `json:"_bases"`
					Name      string
					Rows      string
				}
				BaseObjectClass string `json:"base_object_class"`
			}
		}
		if err := json.Unmarshal(alice.post("/obj/read", `{"project_id":"alice/p","object_id":"right","digest":"`+made.Digest+`"}`, 200, ""), &obj); err != nil {
			t.Fatal(err)
		}
		v := obj.Obj.Val
		if v.ClassName != "Dataset" || obj.Obj.BaseObjectClass != "Dataset" || v.Name != "right" || !strings.HasPrefix(v.Rows, "weave:///alice/p/table/") {
			t.Fatalf("dataset object %+v", obj.Obj)
		}
		var table struct {
			Rows []struct{ Val map[string]any }
		}
		if err := json.Unmarshal(alice.post("/table/query", `{"project_id":"alice/p","digest":"`+strings.TrimPrefix(v.Rows, "weave:///alice/p/table/")+`"}`, 200, ""), &table); err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		for _, r := range table.Rows {
			got = append(got, r.Val)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		// The same selection is the same version; a limit takes the first.
		alice.post("/v2/alice/p/datasets/from_calls", `{"name":"right","query":`+right+`,"description":"scored right"}`, 200, `"digest":"`+made.Digest+`"`)
		alice.post("/v2/alice/p/datasets/from_calls", `{"name":"first","query":`+right+`,"limit":1,"sort_by":[{"field":"started_at","direction":"desc"}]}`, 200, `"rows":1`)

		for _, c := range []struct {
			name, body string
			status     int
			fragment   string
		}{
			{"no name", `{"query":` + right + `}`, 422, "name"},
			{"too many", `{"name":"x","limit":10001}`, 400, "InvalidSelection"},
			{"nothing selected", `{"name":"x","filter":{"call_ids":["00000000-0000-0000-0000-000000000000"]}}`, 400, "holds no call"},
			{"bad query", `{"name":"x","query":{"$expr":{"$nope":[]}}}`, 400, "nope"},
			{"not JSON", `{"name":`, 422, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				alice := alice
				alice.t = t
				alice.post("/v2/alice/p/datasets/from_calls", c.body, c.status, c.fragment)
			})
		}

		identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := identity.CreateUser(context.Background(), "bob", false); err != nil {
			t.Fatal(err)
		}
		bobKey, err := identity.CreateAPIKey(context.Background(), "bob", "test")
		if err != nil {
			t.Fatal(err)
		}
		(objectsClient{t: t, base: f.server.URL, auth: basic("api", bobKey)}).post("/v2/alice/p/datasets/from_calls", `{"name":"stolen"}`, 403, "")
		(objectsClient{t: t, base: f.server.URL}).post("/v2/alice/p/datasets/from_calls", `{"name":"stolen"}`, 401, "")
	})
}
