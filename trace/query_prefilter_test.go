package trace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestQueryPrefilterEscapes: a query that reads a string out of a JSON member
// is first narrowed by a search of the stored JSON text, which must not lose
// a call whose value spells the string with escapes (\u00XX for ASCII,
// \uXXXX otherwise, \/) — nor find one whose text only looks like it. Each
// query's matches are stated by hand (Weave compares the decoded value) and
// checked against the in-memory evaluator as well.
func TestQueryPrefilterEscapes(t *testing.T) {
	t.Parallel()
	members := []string{
		`"ne\u0065dle here"`,   // 0: "needle here"
		`"NE\u0045DLE"`,        // 1: "NEEDLE"
		`"path a\/b"`,          // 2: "path a/b"
		`"path c\u002Fd"`,      // 3: "path c/d"
		`"\u00c9T\u00c9"`,      // 4: "ÉTÉ"
		`"plain needle"`,       // 5
		`"line\nneedle"`,       // 6: a backslash, no \u
		`"nothing"`,            // 7
		`"x\\u0065"`,           // 8: a backslash, then "u0065"
		`"\ud83d\ude00 smile"`, // 9: "😀 smile"
	}
	var calls []*memCall
	for i, m := range members {
		c := &memCall{userID: "u-alice"}
		c.ProjectID, c.ID, c.TraceID = project, fmt.Sprintf("0196d000-0000-7000-8000-%012d", i), fmt.Sprintf("0196d000-0000-7000-9000-%012d", i)
		c.OpName, c.StartedAt, c.EndedAt = "weave:///alice/p/op/f:v1", t0.Add(time.Duration(i)*time.Second), t0.Add(time.Duration(i)*time.Second+time.Millisecond)
		c.Inputs, c.Attributes, c.Output, c.Summary = json.RawMessage(`{"m":`+m+`}`), json.RawMessage(`{}`), json.RawMessage(`null`), json.RawMessage(`{}`)
		calls = append(calls, c)
	}
	contains := func(field, substr string, ci bool) string {
		s, _ := json.Marshal(substr)
		return fmt.Sprintf(`{"$expr":{"$contains":{"input":{"$getField":%q},"substr":{"$literal":%s},"case_insensitive":%t}}}`, field, s, ci)
	}
	cases := []struct {
		query string
		want  []int
	}{
		{contains("inputs.m", "needle", false), []int{0, 5, 6}},
		{contains("inputs.m", "needle", true), []int{0, 1, 5, 6}},
		{contains("inputs.m", "NEEDLE", false), []int{1}},
		{contains("inputs.m", "a/b", false), []int{2}},
		{contains("inputs.m", "C/D", true), []int{3}},
		{contains("inputs.m", "ÉTÉ", false), []int{4}},
		{contains("inputs.m", "été", true), nil}, // ASCII letters fold, É does not
		{contains("inputs.m", "😀 s", false), []int{9}},
		{contains("inputs.m", "xe", false), nil},
		{contains("inputs.m", `x\u0065`, false), []int{8}},
		{contains("inputs", "needle", false), []int{5, 6}}, // an object reads as its JSON text, escapes and all
		{`{"$expr":{"$eq":[{"$getField":"inputs.m"},{"$literal":"NEEDLE"}]}}`, []int{1}},
		{`{"$expr":{"$in":[{"$getField":"inputs.m"},[{"$literal":"path c/d"},{"$literal":"ÉTÉ"}]]}}`, []int{3, 4}},
	}
	ctx := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u-alice", Username: "alice"})
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := storeMemCalls(t, db, calls)
		for _, tc := range cases {
			var want []string
			for _, i := range tc.want {
				want = append(want, calls[i].ID)
			}
			oracle, err := evalQuery(calls, []byte(tc.query), nil)
			if err != nil || !slices.Equal(oracle, want) {
				t.Fatalf("%s: the evaluator answers %v %v, want %v", tc.query, oracle, err, want)
			}
			got, count, err := runQuery(ctx, s, []byte(tc.query), nil)
			if err != nil || !slices.Equal(got, want) || int(count) != len(want) {
				t.Errorf("%s: got %v (count %d) %v, want %v", tc.query, got, count, err, want)
			}
		}
	})
}
