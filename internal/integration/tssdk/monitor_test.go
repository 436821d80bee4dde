package tssdk_test

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
)

const (
	monitorProject = "admin/monitored"
	monitorCalls   = 1000
	samplingRate   = 0.3
)

// TestWeaveSDKMonitor: a Monitor published with the official Weave
// TypeScript SDK scores the calls the SDK then makes: exactly the calls of
// its op that its sampling rate picks for their ids (as many as a binomial
// draw allows), each once, stored as Weave stores scorer feedback; calls of
// other ops are not scored.
func TestWeaveSDKMonitor(t *testing.T) {
	t.Parallel()
	js, err := filepath.Abs("../js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "weave")); err != nil {
		t.Fatalf("run `npm ci` in internal/integration/js first (scripts/test does): %v", err)
	}
	for _, backend := range testdb.Backends[:2] {
		t.Run(backend.Name, func(t *testing.T) {
			t.Parallel()
			srv := serverproc.Start(t, serverproc.Options{DatabaseURL: backend.URL(t)})
			refs := runMonitorScript(t, js, srv)
			server := e2e.Admin(srv)

			answers := map[string]call{}
			others := 0
			for _, c := range queryProjectCalls(t, server, monitorProject, map[string]any{}) {
				name, _, _ := strings.Cut(strings.TrimPrefix(c.OpName, "weave:///"+monitorProject+"/op/"), ":")
				switch name {
				case "answer":
					answers[c.ID] = c
				case "other":
					others++
				}
			}
			if len(answers) != monitorCalls || others != monitorCalls/10 {
				t.Fatalf("%d answer and %d other calls traced, want %d and %d", len(answers), others, monitorCalls, monitorCalls/10)
			}
			want := map[string]bool{}
			for id := range answers {
				if monitor.Sampled("digits", id, samplingRate) {
					want[id] = true
				}
			}
			// Binomial(1000, 0.3): mean 300, sd 14.5; five sd either side.
			if sd := math.Sqrt(monitorCalls * samplingRate * (1 - samplingRate)); math.Abs(float64(len(want))-monitorCalls*samplingRate) > 5*sd {
				t.Errorf("the rate samples %d of %d calls, want %v ± %.0f", len(want), monitorCalls, monitorCalls*samplingRate, 5*sd)
			}

			var verdicts []map[string]any
			deadline := time.Now().Add(2 * time.Minute)
			for {
				var res struct {
					Result []map[string]any `json:"result"`
				}
				server.Call(t, http.MethodPost, "/feedback/query", map[string]any{"project_id": monitorProject}, &res)
				verdicts = res.Result
				if len(verdicts) >= len(want) || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			time.Sleep(time.Second) // nothing more may come
			var res struct {
				Result []map[string]any `json:"result"`
			}
			server.Call(t, http.MethodPost, "/feedback/query", map[string]any{"project_id": monitorProject}, &res)
			verdicts = res.Result
			if len(verdicts) != len(want) {
				t.Errorf("%d verdicts, want one for each of the %d sampled calls", len(verdicts), len(want))
			}
			seen := map[string]bool{}
			for _, f := range verdicts {
				weaveRef, _ := f["weave_ref"].(string)
				id := weaveRef[strings.LastIndex(weaveRef, "/")+1:]
				c, ok := answers[id]
				switch {
				case !ok:
					t.Errorf("verdict on %s, which is not an answer call", weaveRef)
					continue
				case !want[id]:
					t.Errorf("verdict on %s, which the rate does not sample", id)
				case seen[id]:
					t.Errorf("two verdicts on %s", id)
				}
				seen[id] = true
				var output string
				_ = json.Unmarshal(c.Output, &output)
				payload, _ := json.Marshal(f["payload"])
				wantPayload := `{"output":{"match":` + strconv.FormatBool(strings.ContainsAny(output, "0123456789")) + `}}`
				if f["feedback_type"] != "wandb.runnable.has_digit" || string(payload) != wantPayload ||
					f["runnable_ref"] != refs.Scorer || f["trigger_ref"] != refs.Monitor {
					t.Errorf("verdict on %s (output %q): type %v payload %s runnable_ref %v trigger_ref %v; want wandb.runnable.has_digit, %s, %s, %s",
						id, output, f["feedback_type"], payload, f["runnable_ref"], f["trigger_ref"], wantPayload, refs.Scorer, refs.Monitor)
				}
			}
		})
	}
}

type monitorRefs struct {
	Scorer  string `json:"scorer"`
	Monitor string `json:"monitor"`
}

// runMonitorScript runs monitor.mjs.
func runMonitorScript(t *testing.T, js string, srv *serverproc.Server) monitorRefs {
	t.Helper()
	var refs monitorRefs
	runNode(t, js, "monitor.mjs", srv, &refs, "WF_TRACE_SERVER_URL="+srv.URL, "WEFT_PROJECT="+monitorProject,
		"WEFT_CALLS="+strconv.Itoa(monitorCalls), "WEFT_SAMPLING_RATE="+strconv.FormatFloat(samplingRate, 'f', -1, 64))
	return refs
}
