package training_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestLoopFromVerdictsToTrainedModel: `weft serve -model DIR` and the
// official clients (js/loop.mjs) close the loop on one machine: a Monitor
// published with the Weave SDK scores the calls the SDK traces; the calls
// its verdict scored right become a dataset that the SDK loads back as a
// Weave Dataset; an SFT job trains the served model on that dataset by its
// ref; and the same monitor scores the trained checkpoint's answer right
// where the base model's is wrong.
func TestLoopFromVerdictsToTrainedModel(t *testing.T) {
	t.Parallel()
	// weave.login writes ~/.netrc, and logs a stack trace when there is
	// none yet: the SDK gets a home of its own.
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".netrc"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t), Args: []string{"-model", e2e.TinyModel(t)}})
	out := e2e.NodeScript(t, "loop.mjs", "WEFT_URL="+srv.URL, "WEFT_KEY="+srv.Key, "WEFT_MODEL="+e2e.TinyModelName,
		"WEFT_PROJECT=admin/loop", "WF_TRACE_SERVER_URL="+srv.URL, "WEAVE_PRINT_CALL_LINK=false", "HOME="+home)
	var seen struct {
		Stats    struct{ Done, Error int }
		Dataset  struct{ Rows int }
		Replies  map[string]string
		Verdicts map[string]bool
	}
	if err := json.Unmarshal([]byte(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]), &seen); err != nil {
		t.Fatalf("loop.mjs printed %s: %v", out, err)
	}
	t.Logf("verdicts %+v, dataset of %d calls, replies %q, verdicts on them %v", seen.Stats, seen.Dataset.Rows, seen.Replies, seen.Verdicts)
	if seen.Stats.Done != 24 || seen.Dataset.Rows != 16 || !seen.Verdicts["trained"] || seen.Verdicts["base"] ||
		!strings.HasSuffix(seen.Replies["trained"], "The password is swordfish.") {
		t.Fatalf("the loop saw %+v", seen)
	}
}
