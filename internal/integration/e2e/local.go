package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
)

// TinyModelName is the name a server given TinyModel's directory with -model
// serves it under: the directory's name.
const TinyModelName = "qwen3-tiny"

// TinyModel writes a tiny random-weight Qwen3 (the real Qwen3 tokenizer and
// chat template) into a directory named TinyModelName and returns its path:
// a model a server serves and trains in-process in moments.
func TinyModel(t testing.TB) string {
	t.Helper()
	written := llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	dir := filepath.Join(t.TempDir(), TinyModelName)
	if err := os.Rename(written, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// NodeScript runs script, one of the module's js directory (whose npm
// packages must be installed), under Node with env added, and returns its
// output; a script that fails or does not print `"ok":true` fails t.
func NodeScript(t testing.TB, script string, env ...string) string {
	t.Helper()
	out, err := node(t, jsDir(t), script, env)
	if err != nil || !strings.Contains(out, `"ok":true`) {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	return out
}

// NodeModule runs source, the text of an ES module (a script as a user
// writes it, importing the js directory's npm packages), under Node with env
// added, and returns its output; a script that fails fails t.
func NodeModule(t testing.TB, source string, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(jsDir(t), "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "script.mjs"), []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := node(t, dir, "script.mjs", env)
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	return out
}

// jsDir is the module's js directory, whose npm packages must be installed.
func jsDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	js := filepath.Join(filepath.Dir(file), "..", "js")
	if _, err := os.Stat(filepath.Join(js, "node_modules", "openai")); err != nil {
		t.Fatalf("run `npm ci` in internal/integration/js first (scripts/test does): %v", err)
	}
	return js
}

func node(t testing.TB, dir, script string, env []string) (string, error) {
	t.Helper()
	cmd := exec.Command("node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
