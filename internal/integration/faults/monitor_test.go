package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// monitorArgs bound each monitor job to 5s, so that the queue's rescuer
// takes one left running by the killed server as lost after its own
// minute, not after the default 5m.
var monitorArgs = []string{"-monitor-job-timeout", "5s"}

// Kill -9 the server while a monitor scores the calls it ingests, restart
// it on the same database: every call that ended has exactly one verdict of
// each scorer, as one feedback row, none lost and none twice.
func TestKillDuringScoring(t *testing.T) {
	t.Parallel()
	for _, tc := range testdb.Backends {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			url := tc.URL(t)
			const project = "admin/monitored"
			srv := serverproc.Start(t, serverproc.Options{DatabaseURL: url, Args: monitorArgs})
			admin := e2e.Admin(srv)
			publish := func(objectID, val string) string {
				var res struct {
					Digest string `json:"digest"`
				}
				admin.Call(t, http.MethodPost, "/obj/create", map[string]any{"obj": map[string]any{"project_id": project,
					"object_id": objectID, "val": json.RawMessage(val)}}, &res)
				return fmt.Sprintf("weave:///%s/object/%s:%s", project, objectID, res.Digest)
			}
			scorer := func(class, extra string) string {
				return fmt.Sprintf(`{"_type":%q,"_class_name":%q,"_bases":["Scorer","Object","BaseModel"]%s}`, class, class, extra)
			}
			jsonRef := publish("json_valid", scorer("ValidJSONScorer", ""))
			digitRef := publish("has_digit", scorer("RegexScorer", `,"pattern":"[0-9]"`))
			publish("every_call", fmt.Sprintf(`{"_type":"Monitor","_class_name":"Monitor","_bases":["Object","BaseModel"],"sampling_rate":1,`+
				`"scorers":[%q,%q],"call_filter":{"op_names":[],"query":null},"active":true}`, jsonRef, digitRef))

			in := newIngester(srv.URL, srv.Key, project)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { in.run(ctx, 4, 25); close(done) }()
			// Kill once verdicts are being written and more calls are in
			// flight.
			waitFor(t, 60*time.Second, func() bool {
				in.mu.Lock()
				acked := len(in.acked)
				in.mu.Unlock()
				return acked >= 300 && len(verdicts(t, admin, project)) > 0
			})
			srv.Kill()
			cancel()
			<-done

			restarted := serverproc.Start(t, serverproc.Options{DatabaseURL: url, Args: monitorArgs})
			admin = e2e.Client{URL: restarted.URL, Auth: e2e.Basic(srv.Key)}
			ended := endedCalls(t, admin, project)
			for id := range in.acked {
				if !ended[id] {
					t.Fatalf("acknowledged call %s is missing or not ended after the restart", id)
				}
			}
			// The feedback of a job the kill cut short may be written before
			// its verdict rows are: done means both are whole.
			var got map[string]map[string]int
			var stats struct {
				Verdicts struct{ Pending, Done, Error int64 } `json:"verdicts"`
			}
			waitFor(t, 3*time.Minute, func() bool {
				admin.Call(t, http.MethodGet, "/v2/"+project+"/monitors/every_call/stats", nil, &stats)
				if stats.Verdicts.Done+stats.Verdicts.Error < int64(2*len(ended)) {
					return false
				}
				got = verdicts(t, admin, project)
				for id := range ended {
					if len(got[id]) != 2 {
						return false
					}
				}
				return true
			})
			for id, byScorer := range got {
				if !ended[id] {
					t.Errorf("call %s has verdicts but is not an ended call of the project", id)
				}
				for name, n := range byScorer {
					if n != 1 {
						t.Errorf("call %s has %d verdicts of %s, want 1", id, n, name)
					}
				}
			}
			if stats.Verdicts.Done != int64(2*len(ended)) || stats.Verdicts.Pending != 0 || stats.Verdicts.Error != 0 {
				t.Errorf("stats %+v, want %d done and nothing else", stats.Verdicts, 2*len(ended))
			}
			t.Logf("%d calls acknowledged before the kill, %d ended in the database, each with one verdict of each scorer", len(in.acked), len(ended))
		})
	}
}

// endedCalls returns the ids of the project's ended calls.
func endedCalls(t *testing.T, c e2e.Client, project string) map[string]bool {
	t.Helper()
	answer := c.Call(t, http.MethodPost, "/calls/stream_query", map[string]any{"project_id": project, "columns": []string{"id", "ended_at"}}, nil)
	out := map[string]bool{}
	scanner := bufio.NewScanner(bytes.NewReader(answer))
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var call struct {
			ID      string  `json:"id"`
			EndedAt *string `json:"ended_at"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &call); err != nil {
			t.Fatalf("bad line %q: %v", scanner.Text(), err)
		}
		if call.EndedAt != nil {
			out[call.ID] = true
		}
	}
	return out
}

// verdicts counts the project's scorer feedback by call id and scorer.
func verdicts(t *testing.T, c e2e.Client, project string) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	const page = 1000
	for offset := 0; ; offset += page {
		var res struct {
			Result []struct {
				WeaveRef     string `json:"weave_ref"`
				FeedbackType string `json:"feedback_type"`
			} `json:"result"`
		}
		c.Call(t, http.MethodPost, "/feedback/query", map[string]any{"project_id": project, "fields": []string{"weave_ref", "feedback_type"},
			"sort_by": []map[string]string{{"field": "created_at"}, {"field": "id"}}, "limit": page, "offset": offset}, &res)
		for _, f := range res.Result {
			id := f.WeaveRef[bytes.LastIndexByte([]byte(f.WeaveRef), '/')+1:]
			if out[id] == nil {
				out[id] = map[string]int{}
			}
			out[id][f.FeedbackType]++
		}
		if len(res.Result) < page {
			return out
		}
	}
}
