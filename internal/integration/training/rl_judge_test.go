package training_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestRLOnScorerRewards: `weft serve -model DIR` trains its served model by
// RL on a scorer's rewards (js/rl-judge.mjs): each rollout's reward is the
// verdict of a scorer published in the project, asked through POST
// /v2/{entity}/{project}/scorers/score as the monitors score calls, and the
// mean reward of the trained checkpoint's replies rises to at least 0.9
// within a bounded number of jobs from the untrained model's. The scorer is
// a RegexScorer, then an LLM judge: an LLMAsAJudgeScorer whose judge, the
// served base model named by a model object's ref, answers under the
// verdict's JSON Schema through weft's own chat path. Every run is the
// same run: the rollouts are seeded, and a job's initial adapter and order
// of rows follow its model and step, not its random id.
func TestRLOnScorerRewards(t *testing.T) {
	t.Parallel()
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t), Args: []string{"-model", e2e.TinyModel(t)}})
	for _, reward := range []string{"regex", "judge"} {
		t.Run(reward, func(t *testing.T) {
			out := e2e.NodeScript(t, "rl-judge.mjs", "WEFT_URL="+srv.URL, "WEFT_KEY="+srv.Key, "WEFT_MODEL="+e2e.TinyModelName,
				"WEFT_PROJECT=admin/"+reward, "WEFT_REWARD="+reward)
			var seen struct {
				Scorer, Reward string
				Means          []float64
				Jobs           int
			}
			if err := json.Unmarshal([]byte(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]), &seen); err != nil {
				t.Fatalf("rl-judge.mjs printed %s: %v", out, err)
			}
			t.Logf("%s, reward %q: mean reward per checkpoint %v over %d jobs", seen.Scorer, seen.Reward, seen.Means, seen.Jobs)
			if n := len(seen.Means); n < 2 || seen.Jobs != n-1 || seen.Means[n-1] < 0.9 || !(seen.Means[n-1] > seen.Means[0]) {
				t.Fatalf("mean rewards %v over %d jobs", seen.Means, seen.Jobs)
			}
		})
	}
}
