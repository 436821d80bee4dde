package training_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// readmeTrainScript is the README's train.mjs: the js block that follows
// the sentence that runs it.
func readmeTrainScript(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	readme, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "node train.mjs`")
	if ok {
		_, after, ok = strings.Cut(after, "```js\n")
	}
	script, _, closed := strings.Cut(after, "```")
	if !ok || !closed {
		t.Fatal("README.md has no train.mjs block after `node train.mjs`")
	}
	return script
}

// TestREADMETrainScript runs the README's train.mjs unchanged against
// `weft serve -model DIR` (a tiny random Qwen3 under the name the script is
// given): three rounds of rollouts with plain logprobs, an RL job each,
// completions from the last checkpoint, then SFT data published as ART
// publishes it and an SFT job; then the same script with
// return_tokens_as_token_ids added to its rollouts. A failed job, an
// untrainable rollout or any refused request fails the script.
func TestREADMETrainScript(t *testing.T) {
	t.Parallel()
	script := readmeTrainScript(t)
	const plain = "temperature: 1, logprobs: true });"
	if strings.Count(script, plain) != 1 {
		t.Fatalf("the README's rollouts no longer ask for %q", plain)
	}
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t), Args: []string{"-model", e2e.TinyModel(t)}})
	env := []string{"WEFT_URL=" + srv.URL, "WEFT_API_KEY=" + srv.Key, "WEFT_MODEL=" + e2e.TinyModelName}
	for run, src := range []string{script, strings.Replace(script, plain, "temperature: 1, logprobs: true, return_tokens_as_token_ids: true });", 1)} {
		out := e2e.NodeModule(t, src, env...)
		// Each run adds three RL checkpoints to the model and one SFT
		// checkpoint to the other.
		want := []string{"round 1: mean reward ", "round 2: mean reward ", "round 3: mean reward ",
			fmt.Sprintf("step %d: ", 3*(run+1)), "tutor: "}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Fatalf("run %d printed no %q:\n%s", run, w, out)
			}
		}
		if steps := len(regexp.MustCompile(`(?m)^  loss -?\d`).FindAllString(out, -1)); steps < 2 {
			t.Fatalf("run %d printed %d gradient steps:\n%s", run, steps, out)
		}
		t.Logf("run %d:\n%s", run, out)
	}
}
