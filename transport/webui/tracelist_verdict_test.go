package webui_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/testdb"
)

// TestTraceListByVerdict: the trace list filters and sorts by a scorer's
// verdict, the feedback wandb.runnable.<scorer> a monitor stores with its
// payload {"output": verdict}: calls with a verdict, a value compared at a
// path, sorted lowest first; the filter stays in the view's links and a
// malformed one is a 400.
func TestTraceListByVerdict(t *testing.T) {
	t.Parallel()
	s := newServer(t, testdb.SQLite(t))
	seedList(t, s)
	for i, score := range []float64{0.9, 0.2, 0.5} {
		s.api(t, s.aliceKey, "/feedback/create", map[string]any{"project_id": "alice/p", "weave_ref": "weave:///alice/p/call/" + uuidN('a', i),
			"feedback_type": "wandb.runnable.graded", "runnable_ref": "weave:///alice/p/object/graded:abc",
			"payload": map[string]any{"output": map[string]any{"score": score, "correct": score > 0.4}}})
	}
	b := s.browser(t)
	b.signIn("", s.aliceKey)
	for _, tc := range []struct {
		query string
		want  []int
	}{
		{"verdict=graded", []int{2, 1, 0}},
		{"verdict=graded&verdict_path=correct&verdict_value=false", []int{1}},
		{"verdict=graded&verdict_path=correct&verdict_op=ne&verdict_value=false", []int{2, 0}},
		{"verdict=graded&verdict_path=score&verdict_op=lt&verdict_value=0.6", []int{2, 1}},
		{"verdict=graded&verdict_path=score&sort=verdict&dir=asc", []int{1, 2, 0}},
		{"verdict=graded&verdict_path=score&sort=verdict&dir=desc", []int{0, 2, 1}},
		{"verdict=nothing", nil},
	} {
		p := b.get("/ui/p/alice/p/?" + tc.query)
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.query, p.status, p.body)
		}
		var want []string
		for _, i := range tc.want {
			want = append(want, uuidN('a', i))
		}
		if got := rowsOf(p); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.query, got, want)
		}
	}
	p := b.get("/ui/p/alice/p/?verdict=graded&verdict_path=score")
	p.mustContain(t, `name="verdict" value="graded"`, `name="verdict_path" value="score"`,
		`href="/ui/p/alice/p/?dir=asc&amp;sort=verdict&amp;verdict=graded&amp;verdict_path=score" data-sort-verdict="asc"`)
	for _, bad := range []string{"verdict_value=1", "verdict=graded&verdict_op=like", "sort=verdict", "verdict=" + url.QueryEscape("a]b"),
		"verdict=graded&verdict_path=" + url.QueryEscape("a..b")} {
		if p := b.get("/ui/p/alice/p/?" + bad); p.status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, p.status)
		}
	}
}
