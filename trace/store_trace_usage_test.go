package trace_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TraceUsage answers Weave's /trace/usage: every call the filter and query
// match maps to its own usage plus its matched descendants', input/output
// tokens folded into prompt/completion, costs only when asked for; a call
// whose parent was not matched is a root of the roll-up, and the limit bounds
// the calls loaded, the first by started_at.
func TestStoreTraceUsage(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		traceID, other := id(), id()
		root, child, leaf, unfinished, stranger := id(), id(), id(), id(), id()
		outside := id()
		upsert(t, ctx, s,
			start(root, traceID, &outside, t0, `{}`),
			start(child, traceID, &root, t0.Add(time.Second), `{}`),
			start(leaf, traceID, &child, t0.Add(2*time.Second), `{}`),
			start(unfinished, traceID, &root, t0.Add(3*time.Second), `{}`),
			start(stranger, other, nil, t0, `{}`),
			end(leaf, t0.Add(time.Minute), `{"usage":{"gpt-4":{"prompt_tokens":3,"completion_tokens":1}}}`),
			end(child, t0.Add(time.Minute), `{"usage":{"gpt-4":{"input_tokens":2,"output_tokens":1}}}`),
			end(root, t0.Add(time.Minute), `{}`),
			end(stranger, t0.Add(time.Minute), `{"usage":{"gpt-4":{"prompt_tokens":7,"completion_tokens":7}}}`))

		usage := func(req trace.TraceUsageReq) map[string]string {
			t.Helper()
			req.ProjectID = project
			res, err := s.TraceUsage(ctx, &req)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for callID, models := range res.CallUsage {
				out[callID] = ""
				if u := models["gpt-4"]; u != nil {
					out[callID] = fmt.Sprintf("%d/%d/%d cost:%v", u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.PromptTokensTotalCost != nil)
				}
				if len(models) > 1 || (len(models) == 1 && models["gpt-4"] == nil) {
					t.Fatalf("%s: models %v", callID, models)
				}
			}
			return out
		}
		check := func(name string, got, want map[string]string) {
			t.Helper()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s:\n got %v\nwant %v", name, got, want)
			}
		}
		check("trace", usage(trace.TraceUsageReq{Filter: trace.CallsFilter{TraceIDs: []string{traceID}}}), map[string]string{
			root: "5/2/7 cost:false", child: "5/2/7 cost:false", leaf: "3/1/4 cost:false", unfinished: ""})
		check("costs", usage(trace.TraceUsageReq{Filter: trace.CallsFilter{TraceIDs: []string{traceID}}, IncludeCosts: true}), map[string]string{
			root: "5/2/7 cost:true", child: "5/2/7 cost:true", leaf: "3/1/4 cost:true", unfinished: ""})
		check("query", usage(trace.TraceUsageReq{Query: []byte(fmt.Sprintf(`{"$expr":{"$in":[{"$getField":"id"},[{"$literal":%q},{"$literal":%q}]]}}`, root, leaf))}), map[string]string{
			root: "", leaf: "3/1/4 cost:false"})
		check("limit", usage(trace.TraceUsageReq{Filter: trace.CallsFilter{TraceIDs: []string{traceID}}, Limit: ptr(2)}), map[string]string{
			root: "2/1/3 cost:false", child: "2/1/3 cost:false"})
		check("project", usage(trace.TraceUsageReq{}), map[string]string{
			root: "5/2/7 cost:false", child: "5/2/7 cost:false", leaf: "3/1/4 cost:false", unfinished: "", stranger: "7/7/14 cost:false"})

		for _, bad := range []trace.TraceUsageReq{
			{ProjectID: project, Limit: ptr(0)},
			{ProjectID: project, Limit: ptr(trace.MaxUsageLimit + 1)},
			{ProjectID: project, Query: []byte(`{"$expr":{"$regex":[{"$getField":"id"},{"$literal":"x"}]}}`)},
			{ProjectID: "nope"},
		} {
			if _, err := s.TraceUsage(ctx, &bad); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("%+v: %v", bad, err)
			}
		}
	})
}
