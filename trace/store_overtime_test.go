package trace_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestCallsOverTime: traces counted per hour and per group (op, the
// caller, status, model) with their errors, tokens, priced cost and latency
// histogram; children, other projects and traces outside the range are left
// out; a root of two models counts once per model by model and once
// otherwise; rows written before the derived usage columns (NULL there) add
// up the same; bad ranges, widths and groupings are refused.
func TestCallsOverTime(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		n := 0
		usage := `{"usage":{"gpt-4o":{"requests":1,"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100}}}`
		add := func(projectID, op string, at time.Time, d time.Duration, failed bool, parent *string) string {
			n++
			id := fmt.Sprintf("0196e000-0000-7000-8000-%012d", n)
			c := trace.CompletedCall{ID: id, TraceID: id, OpName: op, ParentID: parent, StartedAt: at, EndedAt: at.Add(d),
				Inputs: json.RawMessage(`{}`), Output: json.RawMessage(`"x"`), Summary: json.RawMessage(usage)}
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
		// A root of two models in the second hour, and one of none.
		usage = `{"usage":{"gpt-4o":{"prompt_tokens":10,"completion_tokens":1},"gpt-4o-mini":{"input_tokens":2000,"output_tokens":500}}}`
		add(project, "plan", t0.Add(80*time.Minute), 20*time.Millisecond, false, nil)
		usage = `{}`
		add(project, "plan", t0.Add(90*time.Minute), 20*time.Millisecond, false, nil)
		mini, ok, err := s.ModelPrice(ctx, project, "gpt-4o-mini", t0)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		four, _, _ := s.ModelPrice(ctx, project, "gpt-4o", t0)

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
		second := all[1]
		wantCost2 := four.Cost(1000, 100) + four.Cost(10, 1) + mini.Cost(2000, 500)
		if second.Calls != 3 || second.Tokens != 1100+11+2500 || math.Abs(second.Cost-wantCost2) > 1e-9 {
			t.Fatalf("the second hour: %+v (cost %v)", second, wantCost2)
		}

		// By model: the two-model root in both models' series, the root
		// without usage under "".
		req.GroupBy = trace.GroupModel
		byModel, err := s.CallsOverTime(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range byModel {
			got = append(got, fmt.Sprintf("%s %q %d %d %.9f", b.Start.Format("15:04"), b.Group, b.Calls, b.Tokens, b.Cost))
		}
		want := []string{
			fmt.Sprintf("12:00 %q 2 2200 %.9f", "gpt-4o", wantCost),
			fmt.Sprintf("13:00 %q 1 0 %.9f", "", 0.0),
			fmt.Sprintf("13:00 %q 2 1111 %.9f", "gpt-4o", four.Cost(1000, 100)+four.Cost(10, 1)),
			fmt.Sprintf("13:00 %q 1 2500 %.9f", "gpt-4o-mini", mini.Cost(2000, 500)),
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("by model:\n got %q\nwant %q", got, want)
		}

		// Rows written before the derived columns read calls.usage instead.
		if _, err := db.NewUpdate().Table("calls").Set("usage_model = NULL, prompt_tokens = NULL, completion_tokens = NULL, total_tokens = NULL, cache_read_tokens = NULL, cache_creation_tokens = NULL").
			Where("project_id = ?", project).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for _, by := range []string{trace.GroupNone, trace.GroupModel} {
			req.GroupBy = by
			again, err := s.CallsOverTime(ctx, &req)
			if err != nil {
				t.Fatal(err)
			}
			if by == trace.GroupModel {
				// Underived, the root without usage still counts under "".
				if fmt.Sprint(again) != fmt.Sprint(byModel) {
					t.Fatalf("by model, underived:\n got %+v\nwant %+v", again, byModel)
				}
				continue
			}
			if fmt.Sprint(again) != fmt.Sprint(all) {
				t.Fatalf("underived:\n got %+v\nwant %+v", again, all)
			}
		}
		req.GroupBy = trace.GroupNone

		req.GroupBy = trace.GroupOp
		byOp, err := s.CallsOverTime(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		if len(byOp) != 3 || byOp[0].Group != "answer" || byOp[0].Calls != 2 || byOp[1].Group != "plan" || byOp[2].Group != "search" {
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

// TestLatencyColumn: the latency_ms a call is written with equals what
// database.Dialect.ElapsedMillis computes from its stored times, whether its
// start and end come together, start first or end first (in one batch or
// apart), down to the microsecond and for an end before its start.
func TestLatencyColumn(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		at := t0.Add(123456789 * time.Nanosecond)
		durations := []time.Duration{0, 999 * time.Microsecond, 1001 * time.Microsecond, 2*time.Hour + 1500*time.Microsecond, -1500 * time.Microsecond, 49 * time.Hour}
		for i, d := range durations {
			callID := fmt.Sprintf("0196e000-0000-7000-9000-%012d", i)
			startItem := trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: project, ID: callID, TraceID: callID, OpName: "op", StartedAt: at}}
			endItem := trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: callID, EndedAt: at.Add(d), Summary: json.RawMessage(`{}`)}}
			var batches [][]trace.BatchItem
			switch i % 3 {
			case 0:
				batches = [][]trace.BatchItem{{startItem, endItem}}
			case 1:
				batches = [][]trace.BatchItem{{startItem}, {endItem}}
			default:
				batches = [][]trace.BatchItem{{endItem}, {startItem}}
			}
			for _, batch := range batches {
				if _, err := s.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: batch}); err != nil {
					t.Fatal(err)
				}
			}
		}
		elapsed := database.DialectOf(db).ElapsedMillis("started_at", "ended_at")
		var rows []struct {
			ID      string `bun:"id"`
			Stored  *int64 `bun:"latency_ms"`
			Elapsed *int64 `bun:"elapsed"`
		}
		if err := db.NewSelect().Table("calls").Column("id", "latency_ms").ColumnExpr(elapsed+" AS elapsed").
			Where("project_id = ?", project).Order("id").Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(durations) {
			t.Fatalf("%d rows", len(rows))
		}
		for i, r := range rows {
			want := durations[i].Microseconds() / 1000
			if r.Stored == nil || r.Elapsed == nil || *r.Stored != *r.Elapsed || *r.Stored != want {
				t.Errorf("%s: stored %v, computed %v, want %d", r.ID, r.Stored, r.Elapsed, want)
			}
		}
	})
}
