package trace_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestCallsOverTime: traces counted per hour and per group (op, the
// caller, status) with their
// errors, tokens, priced cost and latency histogram; children, other
// projects and traces outside the range are left out; bad ranges, widths and
// groupings are refused.
func TestCallsOverTime(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		n := 0
		add := func(projectID, op string, at time.Time, d time.Duration, failed bool, parent *string) string {
			n++
			id := fmt.Sprintf("0196e000-0000-7000-8000-%012d", n)
			c := trace.CompletedCall{ID: id, TraceID: id, OpName: op, ParentID: parent, StartedAt: at, EndedAt: at.Add(d),
				Inputs: json.RawMessage(`{}`), Output: json.RawMessage(`"x"`),
				Summary: json.RawMessage(`{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100}}}`)}
			if failed {
				c.Exception = ptr("ValueError: no")
			}
			if parent != nil {
				c.TraceID = *parent
			}
			res, err := s.CallsComplete(ctx, &trace.CallsCompleteReq{ProjectID: projectID, Batch: []trace.CompletedCall{c}})
			if err != nil || res.Res[0].Err != nil {
				t.Fatalf("%v %+v", err, res)
			}
			return id
		}
		root := add(project, "answer", t0.Add(5*time.Minute), 40*time.Millisecond, false, nil)
		add(project, "child", t0.Add(6*time.Minute), time.Millisecond, false, &root)
		add(project, "answer", t0.Add(20*time.Minute), 400*time.Millisecond, true, nil)
		add(project, "search", t0.Add(70*time.Minute), 3*time.Second, false, nil)
		add(project, "answer", t0.Add(-time.Minute), time.Millisecond, false, nil)
		add(project, "answer", t0.Add(3*time.Hour), time.Millisecond, false, nil)
		add("bob/q", "answer", t0.Add(time.Minute), time.Millisecond, false, nil)

		req := trace.CallsOverTimeReq{ProjectID: project, From: t0, To: t0.Add(3 * time.Hour), Width: time.Hour}
		all, err := s.CallsOverTime(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 || !all[0].Start.Equal(t0) || !all[1].Start.Equal(t0.Add(time.Hour)) {
			t.Fatalf("hours: %+v", all)
		}
		first := all[0]
		wantCost := 2 * (1000*2.5 + 100*10) / 1e6
		if first.Calls != 2 || first.Errors != 1 || first.Tokens != 2200 || math.Abs(first.Cost-wantCost) > 1e-9 {
			t.Fatalf("the first hour: %+v (cost %v)", first, wantCost)
		}
		// 40 ms in the 25–50 bin, 400 ms in the 250–500 bin.
		if first.Latency[2] != 1 || first.Latency[5] != 1 {
			t.Fatalf("the first hour's latencies: %v", first.Latency)
		}
		if p := first.Percentile(0.5); p < 25 || p > 50 {
			t.Fatalf("its median: %v", p)
		}
		if p := all[1].Percentile(0.99); p < 2500 || p > 5000 {
			t.Fatalf("the second hour's 99th percentile: %v", p)
		}

		req.GroupBy = trace.GroupOp
		byOp, err := s.CallsOverTime(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		if len(byOp) != 2 || byOp[0].Group != "answer" || byOp[0].Calls != 2 || byOp[1].Group != "search" {
			t.Fatalf("by op: %+v", byOp)
		}
		for _, g := range []struct {
			by     string
			groups []string
		}{{trace.GroupUser, []string{"u-alice", "u-alice"}}, {trace.GroupStatus, []string{trace.StatusError, trace.StatusSuccess, trace.StatusSuccess}}} {
			req.GroupBy = g.by
			got, err := s.CallsOverTime(ctx, &req)
			if err != nil {
				t.Fatal(err)
			}
			var groups []string
			for _, b := range got {
				groups = append(groups, b.Group)
			}
			if fmt.Sprint(groups) != fmt.Sprint(g.groups) {
				t.Fatalf("by %s: %v", g.by, groups)
			}
		}

		for name, bad := range map[string]trace.CallsOverTimeReq{
			"seconds":     {ProjectID: project, From: t0, To: t0.Add(time.Hour), Width: time.Second},
			"backwards":   {ProjectID: project, From: t0, To: t0, Width: time.Hour},
			"too many":    {ProjectID: project, From: t0, To: t0.Add(1001 * time.Minute), Width: time.Minute},
			"a bad group": {ProjectID: project, From: t0, To: t0.Add(time.Hour), Width: time.Hour, GroupBy: "inputs"},
		} {
			if _, err := s.CallsOverTime(ctx, &bad); !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}
