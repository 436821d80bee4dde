package model

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// TestStories15MGGUFMatchesLlamaCpp converts the stories15M-shaped model's
// llama2.c checkpoint with llama.cpp's own converter
// (llama-convert-llama2c-to-ggml, with the Llama 2 vocabulary it ships) and
// checks that the engine reads llama.cpp's file as the same model: the
// logits are the Hugging Face directory's to the bit (the converter's query
// and key rows put back), the prompt's tokens are llama.cpp's, and greedy
// decoding picks the ids llama-completion picks at temperature 0.
func TestStories15MGGUFMatchesLlamaCpp(t *testing.T) {
	llmtest.RequireTokenizer(t, llmtest.TokenizerLlama2)
	llama := llmtest.RequireLlamaCpp(t)
	dir := t.TempDir()
	if err := writeStories15M(dir, llmtest.RandomWeights(stories15M(), 1)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "stories15M.gguf")
	llama.Run(t, "llama-convert-llama2c-to-ggml", "--copy-vocab-from-model", filepath.Join(llama.Dir, "ggml-vocab-llama-spm.gguf"),
		"--llama2c-model", filepath.Join(dir, "model.bin"), "--llama2c-output-model", path)

	fromGGUF, err := Load(path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer fromGGUF.Close()
	fromHF, err := Load(filepath.Join(dir, "hf"), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer fromHF.Close()
	prompt := randomTokens(5, 20, 32000)
	logits := func(m *Model) [][]float32 {
		out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt, AllLogits: true}}}, NewContiguousCache(m.Config, 32))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got, want := logits(fromGGUF)[0], logits(fromHF)[0]
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("logit %d: %v from llama.cpp's file, %v from the Hugging Face directory", i, got[i], want[i])
		}
	}

	const text, steps = "Once upon a time", 24
	session := filepath.Join(dir, "session.bin")
	llama.Run(t, "llama-completion", "-m", path, "-p", text, "-n", "24", "--temp", "0", "--ignore-eos", "-no-cnv",
		"-t", "1", "--seed", "1", "--prompt-cache", session, "--prompt-cache-all", "--log-disable")
	ids := sessionTokens(t, session)
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ours := tok.Encode(text, true)
	if len(ids) != len(ours)+steps || !slices.Equal(toInt(ids[:len(ours)]), ours) {
		t.Fatalf("llama.cpp's session %v does not start with our prompt %v", ids, ours)
	}
	cache := NewContiguousCache(fromGGUF.Config, 64)
	seq := Sequence{ID: 1, Tokens: ids[:len(ours)]}
	for i := range steps {
		out, err := fromGGUF.Forward(&Batch{Seqs: []Sequence{seq}}, cache)
		if err != nil {
			t.Fatal(err)
		}
		next := argmax(out[0])
		if want := ids[len(ours)+i]; next != want {
			t.Fatalf("step %d: greedy id %d, llama-completion's %d (all: %v)", i, next, want, ids[len(ours):])
		}
		seq = Sequence{ID: 1, Tokens: []int32{next}, Start: seq.Start + len(seq.Tokens)}
	}
}

// sessionTokens reads the tokens of a llama.cpp session file (magic
// "ggsn", version, count, then the int32 ids).
func sessionTokens(t *testing.T, path string) []int32 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 12 || binary.LittleEndian.Uint32(raw) != 0x6767736e {
		t.Fatalf("%s is not a llama.cpp session file", path)
	}
	n := int(binary.LittleEndian.Uint32(raw[8:]))
	if len(raw) < 12+4*n {
		t.Fatalf("session of %d tokens in %d bytes", n, len(raw))
	}
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(binary.LittleEndian.Uint32(raw[12+4*i:]))
	}
	return ids
}

func toInt(ids []int32) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}
