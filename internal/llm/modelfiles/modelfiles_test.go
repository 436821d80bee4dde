package modelfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/gguf"
)

// vocabulary is a small byte-level vocabulary with a chat template and two
// end markers, as a converted file carries it.
var vocabulary = []gguf.KV{
	{Key: "general.architecture", Value: gguf.String("qwen3")},
	{Key: "tokenizer.ggml.model", Value: gguf.String("gpt2")},
	{Key: "tokenizer.ggml.pre", Value: gguf.String("qwen2")},
	{Key: "tokenizer.ggml.tokens", Value: gguf.Strings([]string{"a", "b", "ab", "<|endoftext|>", "<|im_end|>"})},
	{Key: "tokenizer.ggml.token_type", Value: gguf.Int32s([]int32{1, 1, 1, 3, 3})},
	{Key: "tokenizer.ggml.merges", Value: gguf.Strings([]string{"a b"})},
	{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Uint32(4)},
	{Key: "tokenizer.ggml.padding_token_id", Value: gguf.Uint32(3)},
	{Key: "tokenizer.chat_template", Value: gguf.String("{{ messages[0].content }}")},
}

// ollamaModel writes the file as an Ollama model library/tiny:1b with the
// parameters blob given and returns its manifest.
func ollamaModel(t *testing.T, file, params []byte) string {
	t.Helper()
	models := t.TempDir()
	layer := func(mediaType string, blob []byte) string {
		sum := sha256.Sum256(blob)
		digest := hex.EncodeToString(sum[:])
		if err := os.MkdirAll(filepath.Join(models, "blobs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(models, "blobs", "sha256-"+digest), blob, 0o644); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`{"mediaType":%q,"digest":"sha256:%s"}`, mediaType, digest)
	}
	dir := filepath.Join(models, "manifests", "registry.ollama.ai", "library", "tiny")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "1b")
	body := `{"layers":[` + layer(gguf.OllamaModelLayer, file) + `,` + layer(gguf.OllamaParamsLayer, params) + `]}`
	if err := os.WriteFile(manifest, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return manifest
}

func TestGGUFModelFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := gguf.WriteFile(path, vocabulary, nil); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	manifest := ollamaModel(t, raw, []byte(`{"temperature":0.6,"top_k":20,"repeat_penalty":1.1,"num_predict":-1,"stop":["<|im_end|>"]}`))
	for _, c := range []struct {
		path, name string
		gen        map[string]any
	}{
		{path, "tiny", map[string]any{"eos_token_id": []any{3.0, 4.0}}},
		{manifest, "tiny:1b", map[string]any{"eos_token_id": []any{3.0, 4.0}, "temperature": 0.6, "top_k": 20.0, "repetition_penalty": 1.1}},
	} {
		if name, err := Name(c.path); err != nil || name != c.name {
			t.Errorf("%s: name %q, %v", c.path, name, err)
		}
		var cfg map[string]any
		readJSON(t, c.path, TokenizerConfig, &cfg)
		if cfg["eos_token"] != "<|im_end|>" || cfg["pad_token"] != "<|endoftext|>" || cfg["chat_template"] != "{{ messages[0].content }}" || cfg["add_bos_token"] != false {
			t.Errorf("%s: tokenizer_config.json %v", c.path, cfg)
		}
		var gen map[string]any
		readJSON(t, c.path, GenerationConfig, &gen)
		if fmt.Sprint(gen) != fmt.Sprint(c.gen) {
			t.Errorf("%s: generation_config.json %v, want %v", c.path, gen, c.gen)
		}
		if _, err := ReadFile(c.path, "chat_template.jinja"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: chat_template.jinja: %v", c.path, err)
		}
	}
}

func TestHuggingFaceDirectoryFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, GenerationConfig), []byte(`{"temperature":0.7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if raw, err := ReadFile(dir, GenerationConfig); err != nil || string(raw) != `{"temperature":0.7}` {
		t.Errorf("%s, %v", raw, err)
	}
	if _, err := ReadFile(dir, TokenizerConfig); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if name, err := Name(dir); err != nil || name != filepath.Base(dir) || slices.Contains([]string{"", "."}, name) {
		t.Errorf("name %q, %v", name, err)
	}
}

func readJSON(t *testing.T, path, name string, v any) {
	t.Helper()
	raw, err := ReadFile(path, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v: %s", name, err, raw)
	}
}
