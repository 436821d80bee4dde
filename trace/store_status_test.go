package trace_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestStatusColumn: the status column a call is written with is the
// summary.weave.status its reads derive (success, error, descendant_error
// from the summary's status_counts, running), whether its start and end come
// together, start first or end first (in one batch or apart); a root another
// call of whose trace raised is descendant_error as the trace list's status
// filter reads it, until that call is deleted; the dashboard's traces by
// status count those columns.
func TestStatusColumn(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		raised := "ValueError: no"
		calls := []struct {
			exception *string
			summary   string
			ended     bool
			want      string
		}{
			{nil, `{}`, true, trace.StatusSuccess},
			{&raised, `{}`, true, trace.StatusError},
			{&raised, `{"status_counts":{"error":2,"success":1}}`, true, trace.StatusError},
			{nil, `{"status_counts":{"error":2,"success":1}}`, true, trace.StatusDescendantError},
			{nil, `{"status_counts":{"error":0.5}}`, true, trace.StatusDescendantError},
			{nil, `{"status_counts":{"error":0,"success":3}}`, true, trace.StatusSuccess},
			{nil, `{"status_counts":{"error":"2"}}`, true, trace.StatusSuccess},
			{nil, `{"status_counts":[1]}`, true, trace.StatusSuccess},
			{ptr(""), `{}`, true, trace.StatusSuccess},
			{nil, ``, false, trace.StatusRunning},
		}
		want := map[string]int64{}
		n := 0
		for _, c := range calls {
			// Each call in each order of its start and end.
			for order := range 4 {
				n++
				id := fmt.Sprintf("0196e000-0000-7000-a000-%012d", n)
				at := t0.Add(time.Duration(n) * time.Minute)
				start := trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: project, ID: id, TraceID: id, OpName: "op", StartedAt: at}}
				end := trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: id, EndedAt: at.Add(time.Second),
					Exception: c.exception, Summary: json.RawMessage(c.summary)}}
				var batches [][]trace.BatchItem
				switch {
				case !c.ended:
					batches = [][]trace.BatchItem{{start}}
				case order == 1:
					batches = [][]trace.BatchItem{{start}, {end}}
				case order == 2:
					batches = [][]trace.BatchItem{{end}, {start}}
				case order == 3:
					batches = [][]trace.BatchItem{{end, start}}
				default:
					batches = [][]trace.BatchItem{{start, end}}
				}
				for _, batch := range batches {
					res, err := s.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: batch})
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range res.Res {
						if r.Err != nil {
							t.Fatal(r.Err)
						}
					}
				}
				var stored string
				if err := db.NewSelect().Table("calls").Column("status").Where("project_id = ? AND id = ?", project, id).Scan(ctx, &stored); err != nil {
					t.Fatal(err)
				}
				read, err := s.CallRead(ctx, &trace.CallReadReq{ProjectID: project, ID: id})
				if err != nil || read.Call == nil {
					t.Fatal(id, err)
				}
				var summary struct {
					Weave struct {
						Status string `json:"status"`
					} `json:"weave"`
				}
				if err := json.Unmarshal(read.Call.Summary, &summary); err != nil {
					t.Fatal(err)
				}
				if stored != c.want || summary.Weave.Status != c.want {
					t.Errorf("exception %v, summary %s, order %d: the column says %q, the summary %q, want %q",
						c.exception, c.summary, order, stored, summary.Weave.Status, c.want)
				}
				want[c.want]++
			}
		}
		// Traces whose child raised, their roots' summaries without the
		// roll-up (as OpenTelemetry spans and the JS SDK send them): each
		// root's column reads descendant_error, as the trace list's status
		// filter reads it, however its calls' starts and ends come; deleting
		// the child makes the root a success again unless its summary
		// rolled errors up.
		column := func(id string) string {
			var stored string
			if err := db.NewSelect().Table("calls").Column("status").Where("project_id = ? AND id = ?", project, id).Scan(ctx, &stored); err != nil {
				t.Fatal(err)
			}
			return stored
		}
		upsert := func(batch ...trace.BatchItem) {
			res, err := s.UpsertBatch(ctx, &trace.UpsertBatchReq{Batch: batch})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Res {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
			}
		}
		listed := func(id string) string {
			var got []string
			for _, status := range []string{trace.StatusSuccess, trace.StatusDescendantError, trace.StatusError, trace.StatusRunning} {
				req := &trace.CallsQueryReq{ProjectID: project, Filter: trace.CallsFilter{CallIDs: []string{id}, Statuses: []string{status}, TraceStatuses: true}}
				if err := s.CallsQuery(ctx, req, func(*trace.Call) error { got = append(got, status); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			return fmt.Sprint(got)
		}
		var roots, children []string
		for order := range 6 {
			n++
			root := fmt.Sprintf("0196e000-0000-7000-a100-%012d", n)
			child := fmt.Sprintf("0196e000-0000-7000-a200-%012d", n)
			at := t0.Add(time.Duration(n) * time.Minute)
			summary := `{}`
			if order == 5 {
				summary = `{"status_counts":{"error":1}}`
			}
			rootStart := trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: project, ID: root, TraceID: root, OpName: "root", StartedAt: at}}
			rootEnd := trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: root, EndedAt: at.Add(time.Second), Summary: json.RawMessage(summary)}}
			childStart := trace.BatchItem{Mode: trace.ModeStart, Start: &trace.StartedCall{ProjectID: project, ID: child, TraceID: root, ParentID: &root, OpName: "child", StartedAt: at}}
			childEnd := trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: child, EndedAt: at.Add(time.Second), Exception: &raised, Summary: json.RawMessage(`{}`)}}
			switch order {
			case 0, 5:
				upsert(rootStart, rootEnd, childStart, childEnd)
			case 1:
				upsert(rootStart, rootEnd)
				upsert(childStart, childEnd)
			case 2:
				upsert(childStart, childEnd)
				upsert(rootStart, rootEnd)
			case 3:
				upsert(rootStart)
				upsert(childStart)
				upsert(childEnd)
				upsert(rootEnd)
			case 4:
				upsert(childEnd)
				upsert(rootStart, rootEnd)
				upsert(childStart)
			}
			if got, list := column(root), listed(root); got != trace.StatusDescendantError || list != "["+trace.StatusDescendantError+"]" {
				t.Errorf("order %d: the root's column says %q, the trace list's filters %s", order, got, list)
			}
			roots, children = append(roots, root), append(children, child)
		}
		if _, err := s.CallsDelete(ctx, &trace.CallsDeleteReq{ProjectID: project, CallIDs: []string{children[0], children[5]}}); err != nil {
			t.Fatal(err)
		}
		for i, wantStatus := range map[int]string{0: trace.StatusSuccess, 5: trace.StatusDescendantError, 1: trace.StatusDescendantError} {
			if got, list := column(roots[i]), listed(roots[i]); got != wantStatus || list != "["+wantStatus+"]" {
				t.Errorf("after the delete, root %d's column says %q, the trace list's filters %s, want %s", i, got, list, wantStatus)
			}
		}
		want[trace.StatusSuccess]++
		want[trace.StatusDescendantError] += 5

		buckets, err := s.CallsOverTime(ctx, &trace.CallsOverTimeReq{ProjectID: project, From: t0, To: t0.Add(24 * time.Hour),
			Width: 24 * time.Hour, GroupBy: trace.GroupStatus})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, b := range buckets {
			got[b.Group] += b.Calls
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("traces by status: %v, want %v", got, want)
		}
	})
}
