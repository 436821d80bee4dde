package model

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// The Llama configuration of llama2.c's "stories15M" model with the random
// weights BenchmarkLlama15M runs, written to disk twice so that a whole
// process of this engine and of the reference implementation (see the
// README's Performance section) can be timed on the same weights and
// vocabulary:
//
//	go test ./internal/llm/model -run '^TestStories15MFiles$' -args -stories15m /tmp/stories15m
//
// writes /tmp/stories15m/hf, a Hugging Face directory (config.json,
// model.safetensors in f32, and the Llama 2 tokenizer.json and
// tokenizer_config.json of the pinned npm fixture package), and
// /tmp/stories15m/model.bin and tokenizer.bin in the reference
// implementation's checkpoint and tokenizer formats. Without the flag the
// test writes them to a temporary directory and checks them.
var stories15MOut = flag.String("stories15m", "", "write the stories15M-shaped random model to this directory")

// stories15M is the shape: llama2.c's 15M configuration with its seq_len,
// 256, as max_position_embeddings (the benchmarks' shape allows 512 for
// their prefill; the weights do not depend on it).
func stories15M() llmtest.Dims {
	d := llmtest.Llama15M
	d.MaxPositions = 256
	return d
}

// writeStories15M writes the Hugging Face directory dir/hf and the
// reference checkpoint and tokenizer dir/model.bin, dir/tokenizer.bin.
func writeStories15M(dir string, weights map[string][]float32) error {
	d := stories15M()
	hf := filepath.Join(dir, "hf")
	if err := os.MkdirAll(hf, 0o755); err != nil {
		return err
	}
	if err := (llmtest.ModelDir{Dims: d, Weights: weights, Tokenizer: llmtest.TokenizerLlama2}).WriteTo(hf); err != nil {
		return err
	}
	cfg, err := ParseConfig(d.ConfigJSON())
	if err != nil {
		return err
	}
	if err := writeReferenceCheckpoint(filepath.Join(dir, "model.bin"), cfg, weights); err != nil {
		return err
	}
	tokenizerJSON, err := os.ReadFile(filepath.Join(hf, "tokenizer.json"))
	if err != nil {
		return err
	}
	return writeReferenceTokenizer(filepath.Join(dir, "tokenizer.bin"), tokenizerJSON)
}

// writeReferenceCheckpoint writes the reference implementation's checkpoint:
// a header of seven int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len; a positive vocab_size says the classifier is the
// embedding), then float32 arrays, each over all layers: the embedding,
// attention norms, wq, wk, wv, wo, MLP norms, w1 (gate), w2 (down), w3 (up),
// the final norm, and two unused RoPE tables of seq_len·head_dim/2 values.
func writeReferenceCheckpoint(path string, c *Config, w map[string][]float32) error {
	if !c.TiedEmbedding || c.HeadDim*c.Heads != c.HiddenSize || c.AttentionBias || c.QKNorm {
		return fmt.Errorf("the reference format holds a tied Llama without biases whose heads span the hidden size")
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	for _, v := range []int{c.HiddenSize, c.IntermediateSize, c.Layers, c.Heads, c.KVHeads, c.VocabSize, c.MaxPositions} {
		binary.Write(bw, binary.LittleEndian, int32(v))
	}
	perLayer := func(suffix string, reorder func([]float32) []float32) {
		for l := range c.Layers {
			v := w[fmt.Sprintf("model.layers.%d.%s", l, suffix)]
			if reorder != nil {
				v = reorder(v)
			}
			binary.Write(bw, binary.LittleEndian, v)
		}
	}
	rope := func(heads int) func([]float32) []float32 {
		return func(v []float32) []float32 { return gguf.InterleaveRoPERows(v, heads, c.HeadDim) }
	}
	binary.Write(bw, binary.LittleEndian, w["model.embed_tokens.weight"])
	perLayer("input_layernorm.weight", nil)
	perLayer("self_attn.q_proj.weight", rope(c.Heads))
	perLayer("self_attn.k_proj.weight", rope(c.KVHeads))
	perLayer("self_attn.v_proj.weight", nil)
	perLayer("self_attn.o_proj.weight", nil)
	perLayer("post_attention_layernorm.weight", nil)
	perLayer("mlp.gate_proj.weight", nil)
	perLayer("mlp.down_proj.weight", nil)
	perLayer("mlp.up_proj.weight", nil)
	binary.Write(bw, binary.LittleEndian, w["model.norm.weight"])
	binary.Write(bw, binary.LittleEndian, make([]float32, c.MaxPositions*c.HeadDim))
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// A referenceToken is one entry of the reference tokenizer file.
type referenceToken struct {
	score float32
	piece string
}

// referenceVocabulary turns a SentencePiece-style BPE tokenizer.json into
// the reference tokenizer's entries: each piece with "▁" written as a space
// (the reference encoder prepends a space token and looks pieces up as
// text; BOS and EOS read as on its console), and a score in place of the
// merge list: the reference encoder repeatedly merges the adjacent pair
// whose concatenation is the piece of highest score, so a piece made by
// merge rank r scores -r, and a piece no merge makes scores -1e10, below
// every candidate the encoder accepts.
func referenceVocabulary(tokenizerJSON []byte) ([]referenceToken, error) {
	var f struct {
		Model struct {
			Type   string          `json:"type"`
			Vocab  map[string]int  `json:"vocab"`
			Merges json.RawMessage `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(tokenizerJSON, &f); err != nil {
		return nil, err
	}
	if f.Model.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer model %q, want BPE", f.Model.Type)
	}
	var merges []string // "left right"; newer files write [left, right]
	if err := json.Unmarshal(f.Model.Merges, &merges); err != nil {
		var pairs [][2]string
		if err := json.Unmarshal(f.Model.Merges, &pairs); err != nil {
			return nil, fmt.Errorf("tokenizer merges: %v", err)
		}
		for _, p := range pairs {
			merges = append(merges, p[0]+" "+p[1])
		}
	}
	tokens := make([]referenceToken, len(f.Model.Vocab))
	for piece, id := range f.Model.Vocab {
		if id < 0 || id >= len(tokens) {
			return nil, fmt.Errorf("token %q has id %d outside the vocabulary of %d", piece, id, len(tokens))
		}
		switch id {
		case 1:
			piece = "\n<s>\n"
		case 2:
			piece = "\n</s>\n"
		}
		tokens[id] = referenceToken{score: -1e10, piece: strings.ReplaceAll(piece, "▁", " ")}
	}
	for rank, m := range merges {
		left, right, ok := strings.Cut(m, " ")
		if !ok {
			return nil, fmt.Errorf("merge %d %q is not two pieces", rank, m)
		}
		id, ok := f.Model.Vocab[left+right]
		if !ok {
			return nil, fmt.Errorf("merge %d %q makes no piece of the vocabulary", rank, m)
		}
		tokens[id].score = max(tokens[id].score, -float32(rank))
	}
	return tokens, nil
}

// writeReferenceTokenizer writes the reference tokenizer file: the longest
// piece's length as int32, then per token its float32 score, its length as
// int32 and its UTF-8 bytes.
func writeReferenceTokenizer(path string, tokenizerJSON []byte) error {
	tokens, err := referenceVocabulary(tokenizerJSON)
	if err != nil {
		return err
	}
	longest := 0
	for _, t := range tokens {
		longest = max(longest, len(t.piece))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	binary.Write(bw, binary.LittleEndian, int32(longest))
	for _, t := range tokens {
		binary.Write(bw, binary.LittleEndian, t.score)
		binary.Write(bw, binary.LittleEndian, int32(len(t.piece)))
		io.WriteString(bw, t.piece)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readFloats reads n little-endian float32 values.
func readFloats(r io.Reader, n int) ([]float32, error) {
	v := make([]float32, n)
	return v, binary.Read(r, binary.LittleEndian, v)
}

// ropeInterleaved rotates the adjacent pairs of each head of x, as the
// reference implementation does.
func ropeInterleaved(x []float32, headDim, pos int, theta float64) {
	for i := 0; i < len(x); i += 2 {
		freq := math.Pow(theta, -float64(i%headDim)/float64(headDim))
		sin, cos := math.Sincos(float64(pos) * freq)
		a, b := float64(x[i]), float64(x[i+1])
		x[i], x[i+1] = float32(a*cos-b*sin), float32(a*sin+b*cos)
	}
}

// ropeHalves rotates dimension i of each head of x with dimension
// i+headDim/2, as the Hugging Face Llama does.
func ropeHalves(x []float32, headDim, pos int, theta float64) {
	half := headDim / 2
	for h := 0; h < len(x); h += headDim {
		for i := range half {
			freq := math.Pow(theta, -float64(2*i)/float64(headDim))
			sin, cos := math.Sincos(float64(pos) * freq)
			a, b := float64(x[h+i]), float64(x[h+i+half])
			x[h+i], x[h+i+half] = float32(a*cos-b*sin), float32(a*sin+b*cos)
		}
	}
}

func matVec(w, x []float32) []float32 {
	out := make([]float32, len(w)/len(x))
	for r := range out {
		var s float64
		for j, xj := range x {
			s += float64(w[r*len(x)+j]) * float64(xj)
		}
		out[r] = float32(s)
	}
	return out
}

// referenceEncode encodes text as the reference encoder does with the
// entries of the reference tokenizer file: BOS, the space piece, each
// character's piece (or its bytes' tokens, 3 + byte), then merges of the
// adjacent pair whose concatenation is the piece of highest score while
// one scores above -1e10.
func referenceEncode(tokens []referenceToken, text string) []int {
	ids := map[string]int{}
	for id, t := range tokens {
		if _, dup := ids[t.piece]; !dup {
			ids[t.piece] = id
		}
	}
	out := []int{1}
	if text != "" {
		out = append(out, ids[" "])
	}
	for _, r := range text {
		if id, ok := ids[string(r)]; ok {
			out = append(out, id)
			continue
		}
		for _, b := range []byte(string(r)) {
			out = append(out, int(b)+3)
		}
	}
	for {
		best, bestID, bestScore := -1, -1, float32(-1e10)
		for i := 0; i+1 < len(out); i++ {
			id, ok := ids[tokens[out[i]].piece+tokens[out[i+1]].piece]
			if ok && tokens[id].score > bestScore {
				best, bestID, bestScore = i, id, tokens[id].score
			}
		}
		if best < 0 {
			return out
		}
		out[best] = bestID
		out = slices.Delete(out, best+1, best+2)
	}
}

func TestStories15MFiles(t *testing.T) {
	llmtest.RequireTokenizer(t, llmtest.TokenizerLlama2)
	dir := *stories15MOut
	if dir == "" {
		dir = t.TempDir()
	}
	cfg := configOf(t, stories15M())
	weights := llmtest.RandomWeights(stories15M(), 1)
	if err := writeStories15M(dir, weights); err != nil {
		t.Fatal(err)
	}

	t.Run("hf directory is the benchmark's model", func(t *testing.T) {
		loaded, err := Load(filepath.Join(dir, "hf"), Options{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer loaded.Close()
		if loaded.Config.MaxPositions != 256 {
			t.Fatalf("max_position_embeddings %d, want 256", loaded.Config.MaxPositions)
		}
		// The benchmarks' model (BenchmarkLlama15M) has these weights.
		inMemory := randomModel(t, configOf(t, llmtest.Llama15M), Options{Threads: 1})
		prompt := randomTokens(3, 12, cfg.VocabSize)
		logits := func(m *Model) [][]float32 {
			out, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt, AllLogits: true}}}, NewContiguousCache(m.Config, 16))
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		got, want := logits(loaded), logits(inMemory)
		for i := range want {
			for j := range want[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
					t.Fatalf("position %d logit %d: %v from the directory, %v from memory", i, j, got[i][j], want[i][j])
				}
			}
		}
	})

	t.Run("reference checkpoint", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(dir, "model.bin"))
		if err != nil {
			t.Fatal(err)
		}
		r := strings.NewReader(string(data))
		var header [7]int32
		if err := binary.Read(r, binary.LittleEndian, &header); err != nil {
			t.Fatal(err)
		}
		if want := [7]int32{288, 768, 6, 6, 6, 32000, 256}; header != want {
			t.Fatalf("header %v, want %v", header, want)
		}
		d, layers := cfg.HiddenSize, cfg.Layers
		read := func(n int) []float32 {
			v, err := readFloats(r, n)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		same := func(what string, got []float32, name string) {
			if !slices.Equal(got, weights[name]) {
				t.Fatalf("%s differs from %s", what, name)
			}
		}
		perLayer := func(n int) [][]float32 {
			all := read(layers * n)
			out := make([][]float32, layers)
			for l := range out {
				out[l] = all[l*n : (l+1)*n]
			}
			return out
		}
		layerName := func(l int, suffix string) string { return fmt.Sprintf("model.layers.%d.%s", l, suffix) }
		same("token_embedding_table", read(cfg.VocabSize*d), "model.embed_tokens.weight")
		arrays := map[string][][]float32{}
		for _, a := range []struct {
			name string
			n    int
		}{{"rms_att", d}, {"wq", d * d}, {"wk", d * d}, {"wv", d * d}, {"wo", d * d}, {"rms_ffn", d},
			{"w1", d * cfg.IntermediateSize}, {"w2", d * cfg.IntermediateSize}, {"w3", d * cfg.IntermediateSize}} {
			arrays[a.name] = perLayer(a.n)
		}
		same("rms_final_weight", read(d), "model.norm.weight")
		read(cfg.MaxPositions * cfg.HeadDim) // the unused RoPE tables
		if r.Len() != 0 {
			t.Fatalf("%d bytes after the last array", r.Len())
		}
		for l := range layers {
			for name, suffix := range map[string]string{"rms_att": "input_layernorm.weight", "wv": "self_attn.v_proj.weight",
				"wo": "self_attn.o_proj.weight", "rms_ffn": "post_attention_layernorm.weight",
				"w1": "mlp.gate_proj.weight", "w2": "mlp.down_proj.weight", "w3": "mlp.up_proj.weight"} {
				same(fmt.Sprintf("%s of layer %d", name, l), arrays[name][l], layerName(l, suffix))
			}
			// Each head's attention score of a query at one position and a
			// key at another is that of the Hugging Face weights.
			x, y := randomInput(uint64(l), d), randomInput(uint64(l)+100, d)
			qRef, kRef := matVec(arrays["wq"][l], x), matVec(arrays["wk"][l], y)
			qHF, kHF := matVec(weights[layerName(l, "self_attn.q_proj.weight")], x), matVec(weights[layerName(l, "self_attn.k_proj.weight")], y)
			ropeInterleaved(qRef, cfg.HeadDim, 37, cfg.RopeTheta)
			ropeInterleaved(kRef, cfg.HeadDim, 5, cfg.RopeTheta)
			ropeHalves(qHF, cfg.HeadDim, 37, cfg.RopeTheta)
			ropeHalves(kHF, cfg.HeadDim, 5, cfg.RopeTheta)
			for h := 0; h < d; h += cfg.HeadDim {
				ref, hf := dot(qRef[h:h+cfg.HeadDim], kRef[h:h+cfg.HeadDim]), dot(qHF[h:h+cfg.HeadDim], kHF[h:h+cfg.HeadDim])
				if math.Abs(ref-hf) > 1e-4*max(1, math.Abs(hf)) {
					t.Fatalf("layer %d head %d: score %v with the reference layout, %v with the Hugging Face one", l, h/cfg.HeadDim, ref, hf)
				}
			}
		}
	})

	t.Run("reference tokenizer encodes as tokenizer.json", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(dir, "tokenizer.bin"))
		if err != nil {
			t.Fatal(err)
		}
		r := strings.NewReader(string(data))
		var longest, n int32
		binary.Read(r, binary.LittleEndian, &longest)
		tokens := make([]referenceToken, cfg.VocabSize)
		for i := range tokens {
			if err := binary.Read(r, binary.LittleEndian, &tokens[i].score); err != nil {
				t.Fatal(err)
			}
			binary.Read(r, binary.LittleEndian, &n)
			if n < 0 || n > longest {
				t.Fatalf("token %d: length %d outside [0, %d]", i, n, longest)
			}
			piece := make([]byte, n)
			if _, err := io.ReadFull(r, piece); err != nil {
				t.Fatal(err)
			}
			tokens[i].piece = string(piece)
		}
		if r.Len() != 0 {
			t.Fatalf("%d bytes after the last token", r.Len())
		}
		tok, err := tokenizer.Load(filepath.Join(dir, "hf"))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{
			"Once upon a time, there was a little girl named Lily.",
			"She liked to play outside; her dog's name was Max!",
			"numbers 1234567 and 3.14159, code: for (i = 0; i < n; i++) {}",
			"naïve café, Straße, 日本語のテキスト, Ελληνικά, 🙂🚀",
			"spaces  between   words    and\ttabs\nnew lines",
			"",
		} {
			want := tok.Encode(text, true)
			if got := referenceEncode(tokens, text); !slices.Equal(got, want) {
				t.Errorf("%q: reference encoding %v, tokenizer.json %v", text, got, want)
			}
		}
	})
}

func randomInput(seed uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, 3))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
