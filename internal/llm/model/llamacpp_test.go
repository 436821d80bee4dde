package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/quant"
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

	for _, ftype := range []string{"Q4_K_M"} {
		t.Run(ftype, func(t *testing.T) {
			quantized := filepath.Join(dir, "stories15M."+ftype+".gguf")
			llama.Run(t, "llama-quantize", path, quantized, ftype, "2")
			m := checkServedFromFile(t, quantized, prompt)
			checkGreedyMatchesLlamaCpp(t, llama, quantized, m)
		})
	}

	checkGreedyMatchesLlamaCpp(t, llama, path, fromGGUF)
}

// TestGemma3GGUFMatchesLlamaCpp checks the Gemma 3 file of a golden model
// (testdata/gguf/models.py: the converter's Gemma 3 layout, its norms
// stored as 1 + w, a SentencePiece vocabulary of letters) against
// llama.cpp itself: the prompt's tokens and the ids llama-completion
// decodes greedily (the logits are PyTorch's over the same file in
// TestGGUFLogitsMatchReference).
func TestGemma3GGUFMatchesLlamaCpp(t *testing.T) {
	llama := llmtest.RequireLlamaCpp(t)
	path := filepath.Join(ggufDir(), "gemma3-bf16.f32.gguf")
	m, err := Load(path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	checkGreedyMatchesLlamaCpp(t, llama, path, m)
}

// checkGreedyMatchesLlamaCpp checks that m, loaded from path, tokenizes a
// prompt as llama.cpp does and decodes greedily the ids llama-completion
// decodes from the same file at temperature 0.
func checkGreedyMatchesLlamaCpp(t *testing.T, llama *llmtest.LlamaCpp, path string, m *Model) {
	t.Helper()
	const text, steps = "Once upon a time", 24
	ids := llamaCppGreedy(t, llama, path, text, steps)
	tok, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ours := tok.Encode(text, true)
	if len(ids) != len(ours)+steps || !slices.Equal(toInt(ids[:len(ours)]), ours) {
		t.Fatalf("llama.cpp's session %v does not start with our prompt %v", ids, ours)
	}
	cache := NewContiguousCache(m.Config, 64)
	seq := Sequence{ID: 1, Tokens: ids[:len(ours)]}
	for i := range steps {
		out, err := m.Forward(&Batch{Seqs: []Sequence{seq}}, cache)
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

// llamaCppGreedy is the session llama-completion leaves after decoding
// steps ids greedily from text with the file at path: the prompt's tokens,
// then the ids. Each answer is recorded in testdata/gguf/llamacpp-greedy.json
// by the file's SHA-256 when WEFT_WRITE_LLAMACPP_GREEDY is set, and checked
// against the record otherwise. A build of llama.cpp for CPUs with
// instructions this one lacks dies of SIGILL in its quantised products;
// then the answer is the one the same tool gave for the same bytes where
// it runs, and a file with none recorded fails the test.
func llamaCppGreedy(t *testing.T, llama *llmtest.LlamaCpp, path, text string, steps int) []int32 {
	t.Helper()
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	key := hex.EncodeToString(sum[:])
	records := filepath.Join(ggufDir(), "llamacpp-greedy.json")
	recorded := map[string][]int32{}
	if raw, err := os.ReadFile(records); err == nil {
		if err := json.Unmarshal(raw, &recorded); err != nil {
			t.Fatalf("%s: %v", records, err)
		}
	}
	session := filepath.Join(t.TempDir(), "session.bin")
	_, illegal := llama.Try(t, "llama-completion", "-m", path, "-p", text, "-n", strconv.Itoa(steps), "--temp", "0", "--ignore-eos", "-no-cnv",
		"-t", "1", "--seed", "1", "--prompt-cache", session, "--prompt-cache-all", "--log-disable")
	if illegal {
		ids, ok := recorded[key]
		if !ok {
			t.Fatalf("llama-completion died of SIGILL on this CPU, and %s records nothing for %s (SHA-256 %s): record it where llama.cpp runs (WEFT_WRITE_LLAMACPP_GREEDY=1, LLAMACPP=a build for that CPU)", records, filepath.Base(path), key)
		}
		t.Logf("llama-completion died of SIGILL on this CPU: comparing with its answer for the same bytes, recorded where it runs (SHA-256 %s)", key)
		return ids
	}
	ids := sessionTokens(t, session)
	if os.Getenv("WEFT_WRITE_LLAMACPP_GREEDY") != "" {
		recorded[key] = ids
		raw, err := json.MarshalIndent(recorded, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(records, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want, ok := recorded[key]; ok && !slices.Equal(ids, want) {
		t.Errorf("llama-completion decoded %v from %s, and %s records %v for the same bytes: record it again", ids, filepath.Base(path), records, want)
	}
	return ids
}

// checkServedFromFile loads a llama-quantize'd file and checks that its
// quantized matrices are multiplied where they lie in the mapped file: every
// linear layer and the embedding hold the file's own bytes in the file's
// type, loading allocates a small share of the file's size (widening the
// blocks to float32 would take four bytes a weight, several times the
// file), the process's resident memory after a forward pass grows by about
// the file's size, and the logits over prompt are those of the same file
// widened to float32 at load (the blocks dequantised as gguf-py does), to
// the quantisation of the activations: through six layers of random
// weights it reaches 8.6% of the logits' RMS with Q8_0 and 14% with
// Q4_K_M (its Q5_0 and Q4_K blocks), measured; a wrong scale, level or
// block is off by the whole RMS.
func checkServedFromFile(t *testing.T, path string, prompt []int32) *Model {
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size := info.Size()
	runtime.GC()
	rss0 := residentBytes(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := Load(path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	runtime.ReadMemStats(&after)
	allocated := int64(after.TotalAlloc - before.TotalAlloc)

	f := m.files.(*gguf.File)
	types := map[quant.Type]int{}
	check := func(l *Linear, name string) {
		tn, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		types[tn.Type]++
		if tn.Type == quant.F32 {
			if l.W == nil {
				t.Errorf("%s: F32 in the file, not float32 in the model", name)
			}
			return
		}
		// The same bytes of the model's own mapping of the file.
		if l.M == nil || l.M.Type != tn.Type || len(l.M.Data) != len(tn.Data) || unsafe.SliceData(l.M.Data) != unsafe.SliceData(tn.Data) {
			t.Fatalf("%s: %v in the file, the model holds %+v", name, tn.Type, l.M)
		}
	}
	for i, ly := range m.Layers {
		for name, l := range map[string]*Linear{"attn_q": ly.Q, "attn_k": ly.K, "attn_v": ly.V, "attn_output": ly.O,
			"ffn_gate": ly.Gate, "ffn_up": ly.Up, "ffn_down": ly.Down} {
			check(l, fmt.Sprintf("blk.%d.%s.weight", i, name))
		}
	}
	check(m.Embed, "token_embd.weight")
	if _, err := f.Tensor("output.weight"); err == nil {
		check(m.LMHead, "output.weight")
	} else if m.LMHead != m.Embed {
		t.Errorf("the tied output projection is not the embedding table")
	}

	out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt, AllLogits: true}}}, NewContiguousCache(m.Config, 32))
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	grown := residentBytes(t) - rss0
	t.Logf("file %.1f MB (%v): Load allocated %.2f MB; resident memory grew %.1f MB after a forward pass", float64(size)/1e6, types, float64(allocated)/1e6, float64(grown)/1e6)
	// What Load allocates is mostly the metadata's vocabulary (32,000
	// tokens and scores, 4.5 MB); the weights widened would be about
	// four times the file.
	if allocated > size/2 {
		t.Errorf("Load allocated %d bytes for a file of %d", allocated, size)
	}
	if grown > size+32<<20 {
		t.Errorf("resident memory grew %d bytes for a file of %d", grown, size)
	}

	widened, err := Load(path, Options{Threads: 1, WeightType: F32})
	if err != nil {
		t.Fatal(err)
	}
	defer widened.Close()
	want, err := widened.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt, AllLogits: true}}}, NewContiguousCache(m.Config, 32))
	if err != nil {
		t.Fatal(err)
	}
	var worst, ss float64
	for i, v := range want[0] {
		worst = max(worst, math.Abs(float64(out[0][i]-v)))
		ss += float64(v) * float64(v)
	}
	rms := math.Sqrt(ss / float64(len(want[0])))
	t.Logf("max |Δlogit| against the widened weights: %.3g of the logits' RMS", worst/rms)
	if worst/rms > 0.25 {
		t.Errorf("max |Δlogit| = %g of the logits' RMS against the file's weights widened", worst/rms)
	}
	return m
}

// residentBytes is the process's resident memory (Linux's VmRSS).
func residentBytes(t *testing.T) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
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
