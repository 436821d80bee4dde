package localtrainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlabs/weft/training"
)

// sftLines are n one-turn conversations as JSON lines.
func sftLines(n int) string {
	var b strings.Builder
	for i := range n {
		line, _ := json.Marshal(map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": fmt.Sprintf("Question %d?", i)},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("Answer %d.", i)}}})
		b.Write(append(line, '\n'))
	}
	return b.String()
}

// TestPlanSFTTokenBudget: planning stops at the line that passes the job's
// token budget, without reading on; under the budget it plans every line.
func TestPlanSFTTokenBudget(t *testing.T) {
	tp := qwen3(t)
	file := filepath.Join(t.TempDir(), "train.jsonl")
	if err := os.WriteFile(file, []byte(sftLines(100)), 0o600); err != nil {
		t.Fatal(err)
	}
	steps, err := planSFT(context.Background(), tp, file, json.RawMessage(`{"batch_size": 1}`), 256, 1<<20)
	if err != nil || len(steps) != 100 {
		t.Fatalf("under the budget: %d steps, %v", len(steps), err)
	}
	perLine := steps[0].tokens()
	_, err = planSFT(context.Background(), tp, file, json.RawMessage(`{"batch_size": 1}`), 256, 10*perLine)
	if !errors.Is(err, training.ErrUntrainable) || !strings.Contains(err.Error(), fmt.Sprintf("passes %d tokens at line 11,", 10*perLine)) {
		t.Fatalf("over a budget of 10 lines' tokens: %v", err)
	}
}
