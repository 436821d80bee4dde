package training_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestARTFlowTrainsServedModel: `weft serve -model DIR` and nothing else.
// ART's client flow (js/art.mjs: the official openai npm client for
// rollouts and completions, the training routes as ART calls them) trains
// the served tiny model with the built-in trainer: an RL reward the
// untrained model rarely earns (the share of one chosen token in the reply)
// rises above 0.8 within a bounded number of jobs, and the step-N
// checkpoint then answers that way; an SFT job drives its loss down and the
// served checkpoint answers the trained answer.
func TestARTFlowTrainsServedModel(t *testing.T) {
	t.Parallel()
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t), Args: []string{"-model", e2e.TinyModel(t)}})
	out := e2e.NodeScript(t, "art.mjs", "WEFT_URL="+srv.URL, "WEFT_KEY="+srv.Key, "WEFT_MODEL="+e2e.TinyModelName)
	var seen struct {
		Grades     []float64
		Jobs       int
		SFTLosses  []float64          `json:"sft_losses"`
		SFTAnswer  string             `json:"sft_answer"`
		RLLastStep map[string]float64 `json:"rl_last_step"`
	}
	if err := json.Unmarshal([]byte(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]), &seen); err != nil {
		t.Fatalf("art.mjs printed %s: %v", out, err)
	}
	t.Logf("mean grade per job %v; SFT losses %v; last RL step %v", seen.Grades, seen.SFTLosses, seen.RLLastStep)
	if n := len(seen.Grades); n < 2 || seen.Grades[0] > 0.3 || seen.Grades[n-1] <= 0.8 || seen.Jobs != n-1 {
		t.Fatalf("grades %v over %d jobs", seen.Grades, seen.Jobs)
	}
	if l := seen.SFTLosses; len(l) == 0 || !(l[len(l)-1] < l[0]/2) || !strings.HasSuffix(seen.SFTAnswer, "The password is swordfish.") {
		t.Fatalf("SFT losses %v, answer %q", l, seen.SFTAnswer)
	}
}
