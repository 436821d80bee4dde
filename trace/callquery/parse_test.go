package callquery

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseField(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Field
	}{
		{"op_name", Field{Kind: Column, Column: "op_name", Type: Text}},
		{"wb_run_step", Field{Kind: Column, Column: "pf_run_step", Type: Integer}},
		{"output", Field{Kind: Dynamic, Root: "output"}},
		{"inputs.a.0.b", Field{Kind: Dynamic, Root: "inputs", Path: []Step{{Key: "a", Index: -1}, {Index: 0}, {Key: "b", Index: -1}}}},
		{`output.metrics\.run.x`, Field{Kind: Dynamic, Root: "output", Path: []Step{{Key: "metrics.run", Index: -1}, {Key: "x", Index: -1}}}},
		{"summary_dump.usage.-1", Field{Kind: Dynamic, Root: "summary", Path: []Step{{Key: "usage", Index: -1}, {Key: "-1", Index: -1}}}},
		{"summary.weave.latency_ms", Field{Kind: Derived, Derived: LatencyMS}},
		{"feedback.[wandb.reaction.1].payload.emoji", Field{Kind: Feedback, FeedbackType: "wandb.reaction.1", FeedbackColumn: "payload", Path: []Step{{Key: "emoji", Index: -1}}}},
		{"feedback.[*].runnable_ref", Field{Kind: Feedback, FeedbackType: AnyFeedbackType, FeedbackColumn: "runnable_ref"}},
	} {
		got, err := ParseField(tc.name)
		tc.want.Name = tc.name
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v %v, want %+v", tc.name, got, err, tc.want)
		}
	}
	for name, why := range map[string]string{
		"nope": "not allowed", "total_storage_size_bytes": "storage sizes", "summary.weave.costs": "summary field",
		"inputs..a": "empty", `inputs.a"b`: "quote", "feedback.[x].other": "invalid feedback field",
		"feedback.x": "invalid feedback field", "inputs." + strings.Repeat("a.", 16) + "a": "at most", "inputs.99999999999": "too large",
	} {
		if _, err := ParseField(name); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want an error saying %q", name, err, why)
		}
	}
}

func TestParse(t *testing.T) {
	q, err := Parse([]byte(`{"$expr":{"$and":[{"$in":[{"$getField":"id"},[{"$literal":"a"},{"$literal":1},{"$literal":1.5},{"$literal":null},{"$literal":true}]]},` +
		`{"$contains":{"input":{"$convert":{"input":{"$getField":"output"},"to":"string"}},"substr":{"$literal":"x"},"case_insensitive":true}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	and := q.Expr.(*And)
	in := and.Terms[0].(*In)
	var values []any
	for _, e := range in.List {
		values = append(values, e.(*Literal).Value)
	}
	if !reflect.DeepEqual(values, []any{"a", int64(1), 1.5, nil, true}) || !and.Terms[1].(*Contains).CaseInsensitive {
		t.Fatalf("parsed %#v", q.Expr)
	}
	for _, tc := range []struct{ query, why string }{
		{`{"$expr":{"$regex":[]}}`, "$regex is not supported"},
		{`{"$expr":{"$eq":[{"$literal":1}]}}`, "two operands"},
		{`{"$expr":{"$and":[]}}`, "no operations"},
		{`{"$expr":{"$literal":true}}`, "must be an operation"},
		{`{"$expr":{"$eq":[{"$literal":{"a":1}},{"$literal":1}]}}`, "object or list"},
		{`{"$expr":{"$eq":[{"$literal":99999999999999999999},{"$literal":1}]}}`, "int64"},
		{`{"$expr":{"$eq":[{"$literal":"a\u0000"},{"$literal":1}]}}`, "NUL"},
		{`{"$expr":{"$convert":{"input":{"$literal":1},"to":"date"}}}`, "to \"date\""},
		{`{"$expr":{"$eq":[{"$literal":1},{"$literal":1}]},"extra":1}`, "unknown member"},
		{`{"$expr":` + strings.Repeat(`{"$not":[`, MaxDepth+1) + `{"$eq":[{"$literal":1},{"$literal":1}]}` + strings.Repeat(`]}`, MaxDepth+1) + `}`, "deeper"},
	} {
		if _, err := Parse([]byte(tc.query)); err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: %v, want an error saying %q", tc.query, err, tc.why)
		}
	}
	for _, none := range []string{``, `null`, `{}`} {
		if q, err := Parse([]byte(none)); q != nil || err != nil {
			t.Errorf("%q: %v %v", none, q, err)
		}
	}
}
