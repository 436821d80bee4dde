package trace_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestModelsFilter: CallsFilter.Models keeps the calls whose own usage names
// one of the models, a call of several models under each of them, and
// finds for each model what the dashboard's traces by model count;
// hostile names are bound values that match nothing.
func TestModelsFilter(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		usages := []string{
			`{"usage":{"gpt-4o":{"prompt_tokens":10,"completion_tokens":1}}}`,
			`{"usage":{"gpt-4o":{"prompt_tokens":20,"completion_tokens":2}}}`,
			`{"usage":{"gpt-4o-mini":{"prompt_tokens":5,"completion_tokens":1}}}`,
			`{"usage":{"gpt-4o":{"prompt_tokens":1},"o'brien":{"prompt_tokens":2}}}`,
			`{}`,
		}
		ids := make([]string, len(usages))
		for i, usage := range usages {
			ids[i] = fmt.Sprintf("0196e000-0000-7000-b000-%012d", i)
			at := t0.Add(time.Duration(i) * time.Minute)
			c := trace.CompletedCall{ID: ids[i], TraceID: ids[i], OpName: "op", StartedAt: at, EndedAt: at.Add(time.Second),
				Inputs: json.RawMessage(`{}`), Summary: json.RawMessage(usage)}
			res, err := s.CallsComplete(ctx, &trace.CallsCompleteReq{ProjectID: project, Batch: []trace.CompletedCall{c}})
			if err != nil || res.Res[0].Err != nil {
				t.Fatalf("%v %+v", err, res)
			}
		}
		query := func(models ...string) []string {
			var got []string
			req := &trace.CallsQueryReq{ProjectID: project, Filter: trace.CallsFilter{Models: models, TraceRootsOnly: true},
				SortBy: []trace.SortBy{{Field: "started_at", Direction: "asc"}}}
			if err := s.CallsQuery(ctx, req, func(c *trace.Call) error { got = append(got, c.ID); return nil }); err != nil {
				t.Fatal(models, err)
			}
			return got
		}
		for _, tc := range []struct {
			models []string
			want   []string
		}{
			{[]string{"gpt-4o"}, []string{ids[0], ids[1], ids[3]}},
			{[]string{"gpt-4o-mini"}, []string{ids[2]}},
			{[]string{"o'brien"}, []string{ids[3]}},
			{[]string{"gpt-4o-mini", "o'brien"}, []string{ids[2], ids[3]}},
			{[]string{"gpt"}, nil},
			{[]string{"gpt-4o' OR '1'='1"}, nil},
			{[]string{"gpt-4o\x00"}, nil},
		} {
			if got := query(tc.models...); !slices.Equal(got, tc.want) {
				t.Errorf("models %q: %v, want %v", tc.models, got, tc.want)
			}
		}
		buckets, err := s.CallsOverTime(ctx, &trace.CallsOverTimeReq{ProjectID: project, From: t0, To: t0.Add(time.Hour),
			Width: time.Hour, GroupBy: trace.GroupModel})
		if err != nil {
			t.Fatal(err)
		}
		var groups []string
		for _, b := range buckets {
			groups = append(groups, b.Group)
			if b.Group == "" {
				continue
			}
			if n := len(query(b.Group)); int64(n) != b.Calls {
				t.Errorf("model %q: the dashboard counts %d traces, the filter finds %d", b.Group, b.Calls, n)
			}
		}
		if want := []string{"", "gpt-4o", "gpt-4o-mini", "o'brien"}; !slices.Equal(groups, want) {
			t.Errorf("the dashboard's models: %q, want %q", groups, want)
		}
	})
}
