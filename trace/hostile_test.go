package trace_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// Hostile text inside free-form call JSON is stored as sent and read back, and
// never fails the write or a later query: a ref-like string holding NUL is
// kept out of the ref index (jsonb cannot hold it, and no ref can contain
// it), SQL and LIKE metacharacters are plain text, and invalid UTF-8 or lone
// surrogate escapes in members built in Go are refused as bad input.
func TestHostileCallText(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		const good = "weave:///alice/p/object/good:0123"
		hostile := []string{
			"weave:///alice/p/object/n\x00ul:0", "weave:///\x00", "nul\x00byte", `'; DROP TABLE calls; --`,
			`$$ || chr(0) || $$`, `%_\`, strings.Repeat("weave:///", 20000),
		}
		var members []string
		for _, h := range hostile {
			b, _ := json.Marshal(h)
			members = append(members, string(b))
		}
		value := `{"refs":[` + strings.Join(members, ",") + `,"` + good + `"],` + strings.Join(members, ":1,") + `:1}`

		// Start and end separately, and completed in one record.
		traceID, started := id(), id()
		upsert(t, ctx, s, start(started, traceID, nil, t0, value))
		upsert(t, ctx, s, trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{
			ProjectID: project, ID: started, EndedAt: t0.Add(1), Output: json.RawMessage(value), Summary: json.RawMessage(`{"x":` + value + `}`),
		}})
		completed := id()
		res, err := s.CallsComplete(ctx, &trace.CallsCompleteReq{ProjectID: project, Batch: []trace.CompletedCall{{
			ID: completed, TraceID: traceID, OpName: "f", StartedAt: t0, EndedAt: t0.Add(1),
			Inputs: json.RawMessage(value), Output: json.RawMessage(value), Attributes: json.RawMessage(value),
		}}})
		if err != nil || res.Res[0].Err != nil {
			t.Fatalf("calls complete: %v %+v", err, res)
		}
		for _, callID := range []string{started, completed} {
			c := read(t, ctx, s, callID)
			if string(c.Inputs) != value || string(c.Output) != value {
				t.Errorf("call %s: inputs or output not as sent", callID)
			}
		}

		// The good ref is indexed; the hostile ones, even ref-like, find nothing
		// and fail nothing.
		got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{InputRefs: []string{good}}, SortBy: []trace.SortBy{{Field: "id"}}})
		if len(got) != 2 {
			t.Errorf("input_refs %s: %v", good, ids(got))
		}
		if got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{OutputRefs: []string{good}}}); len(got) != 2 {
			t.Errorf("output_refs %s: %v", good, ids(got))
		}
		if got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{InputRefs: []string{hostile[0]}}}); len(got) != 0 {
			t.Errorf("input_refs with NUL: %v", ids(got))
		}

		// Free-form members built in Go are checked like those decoded from a
		// request body.
		for _, bad := range []string{"{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"\udc00":1}`} {
			res, err := s.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: []trace.BatchItem{start(id(), traceID, nil, t0, bad)}})
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(res.Res[0].Err, weft.ErrValidation) {
				t.Errorf("inputs %q: %v, want ErrValidation", bad, res.Res[0].Err)
			}
		}
	})
}
