package trace_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// The cases of this file are Weave's own query tests
// (tests/trace/test_client_trace.py): the calls its tests make, stored as the
// SDK stores them, the queries they send, and the matches and order they
// expect. Each case has a project of its own.

// weaveCall is a call of a case: a CompletedCall, or a started one when
// running is set.
type weaveCall struct {
	trace.CompletedCall
	running bool
	// feedback are (type, payload) rows on the call.
	feedback [][2]string
}

// weaveQuery is one query of a case and what it must give: the calls (by
// index in the case) in order, or only their number when count is set, or
// an error.
type weaveQuery struct {
	name    string
	query   string
	sort    []trace.SortBy
	filter  trace.CallsFilter
	want    []int
	count   int
	invalid bool
}

type weaveCase struct {
	name    string
	calls   []weaveCall
	queries []weaveQuery
}

func completed(i int, op, inputs, output string) weaveCall {
	at := t0.Add(time.Duration(i) * time.Second)
	return weaveCall{CompletedCall: trace.CompletedCall{
		ID: fmt.Sprintf("0196a000-0000-7000-8000-%012d", i), TraceID: fmt.Sprintf("0196a000-0000-7000-9000-%012d", i),
		OpName: op, StartedAt: at, EndedAt: at.Add(time.Duration(10+i) * time.Millisecond),
		Inputs: json.RawMessage(inputs), Output: json.RawMessage(output), Attributes: json.RawMessage(`{}`),
		Summary: json.RawMessage(`{"status_counts":{"success":1,"error":0}}`),
	}}
}

func expr(q string) string { return `{"$expr":` + q + `}` }

// basicOpCalls are test_trace_call_filter's thirteen calls of basic_op(in_val,
// delay): ten with in_val {"prim": i, "list": [i], "dict": {"inner": i},
// "str": "str_<i>"}, one whose members have other types, then the string
// "simple_primitive" and the number 42. The op returns in_val.
func basicOpCalls() []weaveCall {
	var calls []weaveCall
	op := "weave:///alice/p/op/basic_op:d"
	for i := range 10 {
		v := fmt.Sprintf(`{"prim":%d,"list":[%d],"dict":{"inner":%d},"str":"str_%d"}`, i, i, i, i)
		calls = append(calls, completed(i, op, `{"in_val":`+v+`,"delay":`+fmt.Sprint(float64(i)/10)+`}`, v))
	}
	other := `{"prim":"Different Type","list":"Different Type","dict":"Different Type","str":false}`
	calls = append(calls, completed(10, op, `{"in_val":`+other+`,"delay":0.1}`, other))
	calls = append(calls, completed(11, op, `{"in_val":"simple_primitive","delay":0.1}`, `"simple_primitive"`))
	calls = append(calls, completed(12, op, `{"in_val":42,"delay":0.1}`, `42`))
	return calls
}

func convertInt(field string) string {
	return `{"$convert":{"input":{"$getField":"` + field + `"},"to":"int"}}`
}

func weaveCases() []weaveCase {
	gtInt := func(field string, n int) string {
		return `{"$gt":[` + convertInt(field) + `,{"$literal":` + fmt.Sprint(n) + `}]}`
	}
	gteInt := func(field string, n int) string {
		return `{"$gte":[` + convertInt(field) + `,{"$literal":` + fmt.Sprint(n) + `}]}`
	}
	contains := func(field, substr string, ci bool) string {
		return fmt.Sprintf(`{"$contains":{"input":{"$getField":%q},"substr":{"$literal":%q},"case_insensitive":%v}}`, field, substr, ci)
	}
	cases := []weaveCase{{
		name:  "test_trace_call_filter",
		calls: basicOpCalls(),
		queries: []weaveQuery{
			{name: "simple true", query: `{"$eq":[{"$literal":1},{"$literal":1}]}`, count: 13},
			{name: "simple false", query: `{"$eq":[{"$literal":1},{"$literal":2}]}`, count: 0},
			{name: "eq", query: `{"$eq":[{"$literal":5},` + convertInt("inputs.in_val.prim") + `]}`, count: 1},
			{name: "eq string", query: `{"$eq":[{"$literal":"simple_primitive"},{"$getField":"inputs.in_val"}]}`, count: 1},
			{name: "eq string out", query: `{"$eq":[{"$literal":"simple_primitive"},{"$getField":"output"}]}`, count: 1},
			{name: "gt", query: gtInt("inputs.in_val.prim", 5), count: 4},
			{name: "gte", query: gteInt("inputs.in_val.prim", 5), count: 5},
			{name: "not gt", query: `{"$not":[` + gtInt("inputs.in_val.prim", 5) + `]}`, count: 6},
			{name: "not gte", query: `{"$not":[` + gteInt("inputs.in_val.prim", 5) + `]}`, count: 5},
			{name: "like all", query: contains("inputs.in_val.str", "", false), count: 13},
			{name: "like select", query: contains("inputs.in_val.str", "str", false), count: 10},
			{name: "like case", query: contains("inputs.in_val.str", "STR", false), count: 0},
			{name: "like case insensitive", query: contains("inputs.in_val.str", "STR", true), count: 10},
			{name: "and", query: `{"$and":[{"$not":[` + gtInt("inputs.in_val.prim", 7) + `]},` + gteInt("inputs.in_val.prim", 5) + `]}`, count: 3},
			{name: "or", query: `{"$or":[{"$not":[` + gtInt("inputs.in_val.prim", 3) + `]},` + gteInt("inputs.in_val.prim", 9) + `]}`, count: 5},
			{name: "invalid type", query: `{"$eq":[{"$literal":5},` + convertInt("inputs.in_val.str") + `]}`, count: 0},
			{name: "cast across type", query: `{"$eq":[{"$literal":"5"},{"$convert":{"input":{"$getField":"inputs.in_val.prim"},"to":"string"}}]}`, count: 1},
			{name: "list index", query: gtInt("inputs.in_val.list.0", 5), count: 4},
			{name: "dict key", query: gtInt("inputs.in_val.dict.inner", 5), count: 4},
			{name: "output prim", query: gtInt("output.prim", 5), count: 4},
			{name: "output list", query: gtInt("output.list.0", 5), count: 4},
			{name: "output dict", query: gtInt("output.dict.inner", 5), count: 4},
			{name: "negative literal", query: gteInt("inputs.in_val.prim", -1), count: 10},
			// Weave's inferred casts: a number literal converts the field.
			{name: "inferred int", query: `{"$gt":[{"$getField":"inputs.in_val.prim"},{"$literal":5}]}`, count: 4},
			{name: "inferred double", query: `{"$lte":[{"$getField":"inputs.delay"},{"$literal":0.2}]}`, want: []int{0, 1, 2, 10, 11, 12}},
			{name: "inferred bool", query: `{"$eq":[{"$getField":"inputs.in_val.str"},{"$literal":false}]}`, want: []int{10}},
			{name: "in ints", query: `{"$in":[{"$getField":"inputs.in_val.prim"},[{"$literal":1},{"$literal":3},{"$literal":3.0}]]}`, want: []int{1, 3}},
			{name: "in mixed", query: `{"$in":[{"$getField":"output"},[{"$literal":"simple_primitive"},{"$literal":42}]]}`, want: []int{11}},
			{name: "text order", query: `{"$gt":[{"$getField":"inputs.in_val.str"},{"$literal":"str_7"}]}`, want: []int{8, 9}},
			{name: "number text", query: `{"$eq":[{"$getField":"inputs.delay"},{"$literal":"0.5"}]}`, want: []int{5}},
			{name: "object text", query: `{"$eq":[{"$getField":"inputs.in_val.dict"},{"$literal":"{\"inner\":2}"}]}`, want: []int{2}},
			{name: "missing is empty", query: `{"$eq":[{"$getField":"inputs.in_val.nope"},{"$literal":""}]}`, count: 13},
			{name: "missing is not null", query: `{"$eq":[{"$getField":"inputs.in_val.nope"},{"$literal":null}]}`, count: 0},
			{name: "exists", query: `{"$eq":[{"$convert":{"input":{"$getField":"inputs.in_val.list.0"},"to":"exists"}},{"$literal":true}]}`, count: 10},
			{name: "convert is no operation", query: `{"$convert":{"input":{"$getField":"inputs.in_val.list.0"},"to":"exists"}}`, invalid: true},
			{name: "null compares as null", query: `{"$not":[{"$gt":[{"$getField":"inputs.in_val.prim"},{"$literal":null}]}]}`, count: 0},
		},
	}, {
		name: "test_trace_call_sort",
		calls: func() []weaveCall {
			var calls []weaveCall
			for i := range 3 {
				v := fmt.Sprintf(`{"prim":%d,"list":[%d],"dict":{"inner":%d}}`, i, i, i)
				calls = append(calls, completed(i, "weave:///alice/p/op/basic_op:d", `{"in_val":`+v+`,"delay":`+fmt.Sprint(float64(i)/10)+`}`, v))
			}
			return calls
		}(),
		queries: func() []weaveQuery {
			var qs []weaveQuery
			for _, f := range []string{"started_at", "inputs.in_val.prim", "inputs.in_val.list.0", "inputs.in_val.dict.inner", "output.prim", "output.list.0", "output.dict.inner"} {
				qs = append(qs, weaveQuery{name: "sort " + f, sort: []trace.SortBy{{Field: f, Direction: "desc"}}, want: []int{2, 1, 0}})
			}
			return qs
		}(),
	}, {
		name: "test_trace_call_sort_with_mixed_types",
		calls: func() []weaveCall {
			var calls []weaveCall
			for i, v := range []string{`{"prim":null}`, `{"not_prim":1}`, `{"prim":100}`, `{"prim":2}`, `{"prim":"b"}`, `{"prim":"a"}`} {
				calls = append(calls, completed(i, "weave:///alice/p/op/basic_op:d", `{"in_val":`+v+`}`, v))
			}
			return calls
		}(),
		queries: []weaveQuery{
			// [100, 2, "b", "a", None, None] and [2, 100, "a", "b", None, None];
			// the two calls without a value keep id order.
			{name: "desc", sort: []trace.SortBy{{Field: "inputs.in_val.prim", Direction: "desc"}}, want: []int{2, 3, 4, 5, 0, 1}},
			{name: "asc", sort: []trace.SortBy{{Field: "inputs.in_val.prim", Direction: "asc"}}, want: []int{3, 2, 5, 4, 0, 1}},
		},
	}, {
		name: "test_in_operation",
		calls: func() []weaveCall {
			var calls []weaveCall
			for i, v := range []string{`[1,2,3]`, `[1,2,3]`, `[5,6,7]`, `[8,2,3]`} {
				calls = append(calls, completed(i, "weave:///alice/p/op/test_op:d", fmt.Sprintf(`{"label":%d,"val":%s}`, i+1, v), v))
			}
			return calls
		}(),
		queries: []weaveQuery{
			{name: "first two", query: `{"$in":[{"$getField":"id"},[{"$literal":"0196a000-0000-7000-8000-000000000000"},{"$literal":"0196a000-0000-7000-8000-000000000001"}]]}`, want: []int{0, 1}},
			{name: "all four", query: `{"$in":[{"$getField":"id"},[{"$literal":"0196a000-0000-7000-8000-000000000000"},{"$literal":"0196a000-0000-7000-8000-000000000001"},{"$literal":"0196a000-0000-7000-8000-000000000002"},{"$literal":"0196a000-0000-7000-8000-000000000003"}]]}`, want: []int{0, 1, 2, 3}},
		},
	}, {
		name: "test_call_stream_query_heavy_query_batch",
		calls: func() []weaveCall {
			var calls []weaveCall
			for i := range 10 {
				c := completed(i, "test_name", `{"param":{"value1":"hello"}}`, `{"d":5,"e":"f","result":{"message":"completed"}}`)
				c.Attributes = json.RawMessage(`{"a":5,"empty":"","null":null}`)
				calls = append(calls, c)
			}
			return calls
		}(),
		queries: []weaveQuery{
			{name: "output", query: `{"$eq":[{"$getField":"output.e"},{"$literal":"f"}]}`, count: 10},
			{name: "input and output", query: `{"$and":[{"$eq":[{"$getField":"inputs.param.value1"},{"$literal":"hello"}]},{"$contains":{"input":{"$getField":"output.result.message"},"substr":{"$literal":"COMPleted"},"case_insensitive":true}}]}`, count: 10},
			{name: "with op filter", query: `{"$eq":[{"$getField":"inputs.param.value1"},{"$literal":"hello"}]}`, filter: trace.CallsFilter{OpNames: []string{"test_name"}}, count: 10},
			{name: "empty attribute", query: `{"$eq":[{"$getField":"attributes.empty"},{"$literal":""}]}`, count: 10},
			{name: "null attribute reads empty", query: `{"$eq":[{"$getField":"attributes.null"},{"$literal":""}]}`, count: 10},
		},
	}, {
		name: "test_calls_query_filter_contains_in_message_array",
		calls: []weaveCall{
			completed(0, "weave:///alice/p/op/op1:d", `{}`, `{"messages":["hello","world"]}`),
			completed(1, "weave:///alice/p/op/op1:d", `{"extra_message":"extra"}`, `{"messages":["hello","world","extra"]}`),
			completed(2, "weave:///alice/p/op/op1:d", `{"extra_message":"extra2"}`, `{"messages":["hello", "world", "extra2"]}`),
		},
		queries: []weaveQuery{
			{name: "hello", query: contains("output.messages", "hello", false), count: 3},
			{name: "extra2", query: contains("output.messages", "extra2", false), want: []int{2}},
			{name: "array text", query: `{"$eq":[{"$getField":"output.messages"},{"$literal":"[\"hello\",\"world\"]"}]}`, want: []int{0}},
		},
	}, {
		name: "test_calls_query_with_descendant_error",
		calls: func() []weaveCall {
			parentOp, childOp := "weave:///alice/p/op/parent_op:d", "weave:///alice/p/op/child_op:d"
			calls := []weaveCall{
				completed(0, parentOp, `{"val":0}`, `0`), completed(1, childOp, `{"val":0}`, `null`),
				completed(2, parentOp, `{"val":1}`, `null`), completed(3, parentOp, `{"val":2}`, `2`), completed(4, childOp, `{"val":2}`, `2`),
			}
			calls[1].ParentID, calls[1].TraceID = &calls[0].ID, calls[0].TraceID
			calls[4].ParentID, calls[4].TraceID = &calls[3].ID, calls[3].TraceID
			calls[0].Summary = json.RawMessage(`{"status_counts":{"success":1,"error":1}}`)
			for _, i := range []int{1, 2} {
				calls[i].Exception = ptr("TestException: Error")
				calls[i].Summary = json.RawMessage(`{"status_counts":{"success":0,"error":1}}`)
			}
			return calls
		}(),
		queries: []weaveQuery{
			{name: "status asc", sort: []trace.SortBy{{Field: "summary.weave.status", Direction: "asc"}}, want: []int{0, 1, 2, 3, 4}},
			{name: "status desc", sort: []trace.SortBy{{Field: "summary.weave.status", Direction: "desc"}}, want: []int{3, 4, 1, 2, 0}},
			{name: "descendant_error", query: `{"$eq":[{"$getField":"summary.weave.status"},{"$literal":"descendant_error"}]}`, want: []int{0}},
			{name: "error", query: `{"$eq":[{"$getField":"summary.weave.status"},{"$literal":"error"}]}`, want: []int{1, 2}},
			{name: "success", query: `{"$eq":[{"$getField":"summary.weave.status"},{"$literal":"success"}]}`, want: []int{3, 4}},
			{name: "status in", query: `{"$in":[{"$getField":"summary.weave.status"},[{"$literal":"error"},{"$literal":"running"}]]}`, want: []int{1, 2}},
			{name: "not error", query: `{"$not":[{"$eq":[{"$getField":"summary.weave.status"},{"$literal":"error"}]}]}`, want: []int{0, 3, 4}},
			{name: "latency", query: `{"$gte":[{"$getField":"summary.weave.latency_ms"},{"$literal":13}]}`, want: []int{3, 4}},
			{name: "trace name", query: `{"$eq":[{"$getField":"summary.weave.trace_name"},{"$literal":"child_op"}]}`, want: []int{1, 4}},
			{name: "trace name sort", sort: []trace.SortBy{{Field: "summary.weave.trace_name", Direction: "asc"}}, want: []int{1, 4, 0, 2, 3}},
			{name: "started_at seconds", query: `{"$gt":[{"$getField":"started_at"},{"$literal":1}]}`, count: 5},
			{name: "started_at future", query: `{"$gt":[{"$getField":"started_at"},{"$literal":99999999999}]}`, count: 0},
			{name: "started_at iso", query: `{"$gte":[{"$getField":"started_at"},{"$literal":"` + t0.Add(3*time.Second).Format(time.RFC3339) + `"}]}`, want: []int{3, 4}},
			{name: "ended_at vs started_at", query: `{"$gt":[{"$getField":"ended_at"},{"$getField":"started_at"}]}`, count: 5},
			{name: "unknown summary field", query: `{"$eq":[{"$getField":"summary.weave.bogus"},{"$literal":1}]}`, invalid: true},
			{name: "storage size", query: `{"$contains":{"input":{"$getField":"total_storage_size_bytes"},"substr":{"$literal":"2025"}}}`, invalid: true},
			{name: "unknown operator", query: `{"$regex":[{"$getField":"op_name"},{"$literal":"x"}]}`, invalid: true},
			{name: "literal list", query: `{"$eq":[{"$getField":"op_name"},{"$literal":[1]}]}`, invalid: true},
		},
	}, {
		name: "test_trace_call_wb_run_step_query",
		calls: func() []weaveCall {
			var calls []weaveCall
			for i := range 6 {
				c := completed(i, "weave:///alice/p/op/adder:d", `{}`, `{}`)
				c.PfRunID, c.PfRunStep, c.PfRunStepEnd = ptr("alice/p/test-run"), ptr(int64(2*i)), ptr(int64(2*i+1))
				c.ThreadID = ptr(fmt.Sprintf("thread_%d", i%2))
				calls = append(calls, c)
			}
			calls[5].PfRunID = nil
			return calls
		}(),
		queries: []weaveQuery{
			{name: "eq step", query: `{"$eq":[{"$getField":"wb_run_step"},{"$literal":0}]}`, want: []int{0}},
			{name: "gte step", query: `{"$gte":[{"$getField":"wb_run_step"},{"$literal":8}]}`, want: []int{4, 5}},
			{name: "lt step", query: `{"$lt":[{"$getField":"wb_run_step"},{"$literal":8}]}`, want: []int{0, 1, 2, 3}},
			{name: "gte step end", query: `{"$gte":[{"$getField":"wb_run_step_end"},{"$literal":5}]}`, want: []int{2, 3, 4, 5}},
			{name: "sort step desc", sort: []trace.SortBy{{Field: "wb_run_step", Direction: "desc"}}, want: []int{5, 4, 3, 2, 1, 0}},
			{name: "thread", query: `{"$eq":[{"$getField":"thread_id"},{"$literal":"thread_1"}]}`, want: []int{1, 3, 5}},
			{name: "run id not null", query: `{"$not":[{"$eq":[{"$getField":"wb_run_id"},{"$literal":null}]}]}`, filter: trace.CallsFilter{ThreadIDs: []string{"thread_1"}}, want: []int{1, 3}},
		},
	}, {
		name: "test_feedback_filter_finds_minority_reaction",
		calls: func() []weaveCall {
			c0, c1 := completed(0, "weave:///alice/p/op/my_op:d", `{"x":1}`, `1`), completed(1, "weave:///alice/p/op/my_op:d", `{"x":2}`, `2`)
			for range 10 {
				c0.feedback = append(c0.feedback, [2]string{"wandb.reaction.1", `{"emoji":"👎"}`})
			}
			c0.feedback = append(c0.feedback, [2]string{"wandb.reaction.1", `{"emoji":"👍"}`})
			c1.feedback = [][2]string{{"wandb.reaction.1", `{"emoji":"👎"}`}, {"wandb.note.1", `{"note":"thumbs"}`}}
			return []weaveCall{c0, c1, completed(2, "weave:///alice/p/op/my_op:d", `{"x":3}`, `3`)}
		}(),
		queries: []weaveQuery{
			{name: "minority reaction", query: `{"$eq":[{"$getField":"feedback.[wandb.reaction.1].payload.emoji"},{"$literal":"👍"}]}`, want: []int{0}},
			{name: "no reaction", query: `{"$eq":[{"$getField":"feedback.[wandb.reaction.1].payload.emoji"},{"$literal":null}]}`, want: []int{2}},
			{name: "not thumbs down", query: `{"$not":[{"$eq":[{"$getField":"feedback.[wandb.reaction.1].payload.emoji"},{"$literal":"👎"}]}]}`, want: []int{2}},
			{name: "any type", query: `{"$contains":{"input":{"$getField":"feedback.[*].payload.note"},"substr":{"$literal":"THUMB"},"case_insensitive":true}}`, want: []int{1}},
		},
	}, {
		name: "test_calls_query_sort_by_feedback_field_with_costs",
		calls: func() []weaveCall {
			c0, c1 := completed(0, "weave:///alice/p/op/op1:d", `{"x":1}`, `2`), completed(1, "weave:///alice/p/op/op2:d", `{"x":2}`, `6`)
			c0.feedback = [][2]string{{"wandb.runnable.my_scorer", `{"output":{"score":3}}`}}
			c1.feedback = [][2]string{{"wandb.runnable.my_scorer", `{"output":{"score":8}}`}}
			c0.Attributes, c1.Attributes = json.RawMessage(`{"metadata":{"priority":2}}`), json.RawMessage(`{"metadata":{"priority":1}}`)
			c0.DisplayName, c1.DisplayName = ptr("beta"), ptr("alpha")
			return []weaveCall{c0, c1}
		}(),
		queries: []weaveQuery{
			{name: "feedback asc", sort: []trace.SortBy{{Field: "feedback.[wandb.runnable.my_scorer].payload.output.score", Direction: "asc"}}, want: []int{0, 1}},
			{name: "feedback desc", sort: []trace.SortBy{{Field: "feedback.[wandb.runnable.my_scorer].payload.output.score", Direction: "desc"}}, want: []int{1, 0}},
			{name: "score filter", query: `{"$gt":[{"$getField":"feedback.[wandb.runnable.my_scorer].payload.output.score"},{"$literal":5}]}`, want: []int{1}},
			{name: "attributes asc", sort: []trace.SortBy{{Field: "attributes.metadata.priority", Direction: "asc"}}, want: []int{1, 0}},
			{name: "display name asc", sort: []trace.SortBy{{Field: "display_name", Direction: "asc"}}, want: []int{1, 0}},
			{name: "display name desc", sort: []trace.SortBy{{Field: "display_name", Direction: "desc"}}, want: []int{0, 1}},
			{name: "trace name is display name", query: `{"$eq":[{"$getField":"summary.weave.trace_name"},{"$literal":"alpha"}]}`, want: []int{1}},
		},
	}}
	return cases
}

// storeWeaveCase writes a case's calls (and feedback) into project.
func storeWeaveCase(t *testing.T, ctx context.Context, s *trace.Store, fb feedback.Service, project string, calls []weaveCall) {
	t.Helper()
	var complete []trace.CompletedCall
	for _, c := range calls {
		c.ProjectID = project
		if !c.running {
			complete = append(complete, c.CompletedCall)
			continue
		}
		upsert(t, ctx, s, trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: project, ID: c.ID, TraceID: c.TraceID,
			ParentID: c.ParentID, OpName: c.OpName, StartedAt: c.StartedAt, Inputs: c.Inputs, Attributes: c.Attributes}})
	}
	res, err := s.CallsComplete(ctx, &trace.CallsCompleteReq{ProjectID: project, Batch: complete})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Res {
		if r.Err != nil {
			t.Fatalf("call %d: %v", i, r.Err)
		}
	}
	for _, c := range calls {
		for _, f := range c.feedback {
			req := feedback.CreateReq{ProjectID: project, TraceRef: "weave:///" + project + "/call/" + c.ID,
				FeedbackType: f[0], Payload: json.RawMessage(f[1])}
			if name, ok := strings.CutPrefix(f[0], "wandb.runnable."); ok {
				req.RunnableRef = ptr("weave:///" + project + "/object/" + name + ":d")
			}
			if _, err := fb.Create(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestWeaveCallsQuery(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		fb, err := feedback.New(feedback.Config{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		for n, wc := range weaveCases() {
			project := fmt.Sprintf("alice/case%d", n)
			storeWeaveCase(t, ctx, s, fb, project, wc.calls)
			index := map[string]int{}
			var mem []*memCall
			for i, c := range wc.calls {
				index[c.ID] = i
				m := &memCall{CompletedCall: c.CompletedCall, running: c.running, userID: "u-alice"}
				m.ProjectID = project
				for _, f := range c.feedback {
					m.feedback = append(m.feedback, memFeedback{kind: f[0], payload: f[1]})
				}
				mem = append(mem, m)
			}
			for _, q := range wc.queries {
				req := trace.CallsQueryReq{ProjectID: project, SortBy: q.sort, Filter: q.filter}
				if q.query != "" {
					req.Query = json.RawMessage(expr(q.query))
				}
				var got []int
				err := s.CallsQuery(ctx, &req, func(c *trace.Call) error { got = append(got, index[c.ID]); return nil })
				name := wc.name + "/" + q.name
				if q.invalid {
					if !errors.Is(err, trace.ErrInvalidQuery) {
						t.Errorf("%s: %v, want an invalid-query error", name, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if q.want != nil && !slices.Equal(got, q.want) || q.want == nil && len(got) != q.count {
					t.Errorf("%s: calls %v, want %v (count %d)", name, got, q.want, q.count)
				}
				// The evaluator of the language answers as Weave does too.
				if q.filter.OpNames == nil && q.filter.ThreadIDs == nil {
					evaluated, err := evalQuery(mem, req.Query, q.sort)
					var at []int
					for _, id := range evaluated {
						at = append(at, index[id])
					}
					if err != nil || !slices.Equal(at, got) {
						t.Errorf("%s: the evaluator answers %v %v", name, at, err)
					}
				}
				stats, err := s.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: project, Filter: q.filter, Query: req.Query})
				if err != nil || int(stats.Count) != len(got) {
					t.Errorf("%s: query_stats %v %v, want %d", name, stats, err, len(got))
				}
			}
		}
	})
}
