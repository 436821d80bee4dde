package chat_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The official openai npm client, under Node, gets completions (plain, n>1,
// streamed with usage, tools) and vLLM-style errors from the gateway.
func TestOpenAINodeClient(t *testing.T) {
	t.Parallel()
	js, err := filepath.Abs("../js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(js, "node_modules", "openai")); err != nil {
		t.Fatalf("run `npm ci` in internal/integration/js first (scripts/test does): %v", err)
	}
	g := startGateway(t)
	cmd := exec.Command("node", "chat.mjs")
	cmd.Dir = js
	cmd.Env = append(os.Environ(), "WEFT_URL="+g.srv.URL, "WEFT_KEY="+g.srv.Key, "WEFT_MODEL=test-model")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"ok":true`) {
		t.Fatalf("node chat.mjs: %v\n%s", err, out)
	}
}
