package model

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/quant"
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// The GGUF files of the golden models and their reference logits, written
// by testdata/gguf/models.py: llama.cpp's converter layout (Llama's
// permuted query and key rows, rope_freqs, rope.scaling.*), matrices in
// F32, F16, BF16, Q8_0 or Q4_0 (gguf-py's quantizers) or quantized by
// llama-quantize as Q4_K_M (Q4_K and Q6_K, the tied embedding Q6_K), and
// PyTorch's forward pass over the file's own weights, dequantized by
// gguf-py.
var ggufGoldens = []struct {
	name string
	// quantized: the weights multiply quantized activations, so the
	// logits are held to the weight type's tolerance (quantGolden), as a
	// share of the logits' RMS, rather than to goldenTolerance. Rows of
	// 32 and 64 in the small models: one or two blocks of activations a
	// row, as llama3-rope's quantGoldens.
	tolerance float64
}{
	{"llama3-rope.f32", 0}, {"llama-linear-tied.f16", 0}, {"qwen2-bf16.bf16", 0}, {"qwen3-f16.f16", 0}, {"mistral-swa.f16", 0},
	{"llama3-rope.q8_0", 0.08}, {"qwen3-f16.q4_0", 0.08}, {"llama-k256.q4_k_m", 0.06},
	{"gemma3-bf16.f32", 0},
}

func ggufDir() string { return filepath.Join("..", "testdata", "gguf") }

func readGGUFGolden(t *testing.T, name string) *golden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ggufDir(), name+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// TestGGUFLogitsMatchReference loads each GGUF golden model and compares
// its logits over the prompt and decode steps with PyTorch's, within the
// tolerance of the safetensors goldens.
func TestGGUFLogitsMatchReference(t *testing.T) {
	for _, c := range ggufGoldens {
		t.Run(c.name, func(t *testing.T) {
			m, err := Load(filepath.Join(ggufDir(), c.name+".gguf"), Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			g := readGGUFGolden(t, c.name)
			worst := runGolden(t, m, g)
			t.Logf("%s: max |Δlogit| = %.3g (%.3g of the logits' RMS) over the prompt and %d decode steps", c.name, worst, worst/g.rms(), len(g.Decode))
			if c.tolerance == 0 && worst > goldenTolerance {
				t.Fatalf("max |Δlogit| = %g, tolerance %g", worst, goldenTolerance)
			}
			if c.tolerance > 0 {
				if worst/g.rms() > c.tolerance {
					t.Fatalf("max |Δlogit| = %g of the logits' RMS, tolerance %g", worst/g.rms(), c.tolerance)
				}
				checkGreedy(t, m, g)
			}
		})
	}
}

// TestGGUFConfigMatchesConfigJSON checks the configuration read from each
// file's metadata against the golden model's config.json, field by field,
// where the converter keeps them.
func TestGGUFConfigMatchesConfigJSON(t *testing.T) {
	for _, c := range ggufGoldens {
		name := c.name
		t.Run(name, func(t *testing.T) {
			got, err := ReadConfig(filepath.Join(ggufDir(), name+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := ReadConfig(goldenDir(strings.Split(name, ".")[0]))
			if err != nil {
				t.Fatal(err)
			}
			if want.Architecture == Gemma3 {
				// What llama.cpp reads of a Gemma 3 file: every sixth
				// layer global, the others at base 10000, scores by
				// 1/√head_dim, the embedding scaled in float32.
				want.QueryPreAttnScalar, want.LocalRopeTheta = float64(want.HeadDim), 10000
				for i := range want.SlidingLayers {
					want.SlidingLayers[i] = (i+1)%6 != 0
				}
				want.EmbedScale = float32(math.Sqrt(float64(want.HiddenSize)))
			}
			if want.Architecture == Mistral {
				// llama.cpp's converter writes Mistral as Llama, without
				// the window (which llama.cpp's llama does not run).
				want.Architecture, want.SlidingWindow = Llama, 0
			}
			if want.RopeScaling != nil && (want.RopeScaling.Type == "dynamic" || want.RopeScaling.Type == "llama3") {
				// Dynamic scaling has no GGUF form; Llama 3's is rope_freqs.
				if (want.RopeScaling.Type == "llama3") != (got.RopeFreqFactors != nil) {
					t.Errorf("rope_freqs %v for %s scaling", got.RopeFreqFactors, want.RopeScaling.Type)
				}
				want.RopeScaling, got.RopeFreqFactors = nil, nil
			}
			if got.RopeScaling != nil && want.RopeScaling != nil {
				if got.RopeScaling.Type != want.RopeScaling.Type || *got.RopeScaling.Factor != *want.RopeScaling.Factor ||
					got.RopeScaling.OriginalMaxPositions != want.RopeScaling.OriginalMaxPositions {
					t.Errorf("rope scaling %+v, want %+v", *got.RopeScaling, *want.RopeScaling)
				}
				got.RopeScaling, want.RopeScaling = nil, nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("config\n got %+v\nwant %+v", *got, *want)
			}
		})
	}
}

func TestGGUFErrors(t *testing.T) {
	src, err := gguf.Open(filepath.Join(ggufDir(), "qwen3-f16.f16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rewrite := func(t *testing.T, edit func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData)) string {
		var kvs []gguf.KV
		kvs = append(kvs, src.KV...)
		var ts []gguf.TensorData
		for _, tn := range src.Tensors {
			ts = append(ts, gguf.TensorData{Name: tn.Name, Type: tn.Type, Dims: tn.Dims, Data: tn.Data})
		}
		kvs, ts = edit(kvs, ts)
		path := filepath.Join(t.TempDir(), "bad.gguf")
		if err := gguf.WriteFile(path, kvs, ts); err != nil {
			t.Fatal(err)
		}
		return path
	}
	set := func(key string, v gguf.Value) func([]gguf.KV, []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
		return func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			for i := range kvs {
				if kvs[i].Key == key {
					kvs[i].Value = v
					return kvs, ts
				}
			}
			return append(kvs, gguf.KV{Key: key, Value: v}), ts
		}
	}
	for _, c := range []struct {
		name string
		edit func([]gguf.KV, []gguf.TensorData) ([]gguf.KV, []gguf.TensorData)
		kind error
		says string
	}{
		{"architecture", set("general.architecture", gguf.String("mamba")), ErrUnsupported, "general.architecture"},
		{"experts", set("qwen3.expert_count", gguf.Uint32(8)), ErrUnsupported, "qwen3.expert_count"},
		{"per-layer heads", set("qwen3.attention.head_count_kv", gguf.Int32s([]int32{2, 2})), ErrUnsupported, "head_count_kv"},
		{"heads", set("qwen3.attention.head_count_kv", gguf.Uint32(3)), ErrInvalid, "qwen3.attention.head_count_kv"},
		{"rope scaling", set("qwen3.rope.scaling.type", gguf.String("longrope")), ErrUnsupported, "rope.scaling.type"},
		{"missing size", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			return slices.DeleteFunc(kvs, func(kv gguf.KV) bool { return kv.Key == "qwen3.embedding_length" }), ts
		}, ErrInvalid, "qwen3.embedding_length"},
		{"tensor shape", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			for i := range ts {
				if ts[i].Name == "blk.1.ffn_up.weight" {
					ts[i].Dims = []int{ts[i].Dims[0] * 2, ts[i].Dims[1] / 2}
				}
			}
			return kvs, ts
		}, ErrInvalid, "blk.1.ffn_up.weight"},
		{"quantized", func(kvs []gguf.KV, ts []gguf.TensorData) ([]gguf.KV, []gguf.TensorData) {
			for i := range ts {
				if ts[i].Name == "blk.0.attn_v.weight" {
					ts[i].Type, ts[i].Data = quant.IQ4_NL, make([]byte, quant.IQ4_NL.RowBytes(ts[i].Dims[0])*ts[i].Dims[1])
				}
			}
			return kvs, ts
		}, ErrUnsupported, "blk.0.attn_v.weight is IQ4_NL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := rewrite(t, c.edit)
			m, err := Load(path, Options{Threads: 1})
			if err == nil {
				m.Close()
			}
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "bad.gguf") {
				t.Fatalf("got %v, want %v naming %q and the file", err, c.kind, c.says)
			}
		})
	}
}

// TestLoRAOnQuantizedBase runs a training pass of a LoRA adapter on every
// projection over a quantized GGUF file in its own types — llama-quantize's
// Q4_K_M file of llama-k256 (Q4_K and Q6_K blocks, the tied Q6_K embedding
// as the output projection) and the Q8_0 file of the two-layer
// llama3-rope, whose second layer's query and key gradients flow back
// through the first's input — and over the same weights dequantized by
// the test, query and key rows put back in Hugging Face order, as a
// float32 model in memory. The base stays frozen in the file; the backward
// pass multiplies by the dequantized weights in both, so every gradient
// handed to the trainer agrees to what the forward pass's quantized
// activations change, a small share of its norm.
func TestLoRAOnQuantizedBase(t *testing.T) {
	for _, name := range []string{"llama-k256.q4_k_m", "llama3-rope.q8_0"} {
		t.Run(name, func(t *testing.T) { checkLoRAOnQuantizedBase(t, name) })
	}
}

func checkLoRAOnQuantizedBase(t *testing.T, name string) {
	path := filepath.Join(ggufDir(), name+".gguf")
	g := readGGUFGolden(t, name)
	toks := append(slices.Clone(g.Prompt), g.Decode[0].Token)
	seqs := []TrainSequence{{Tokens: toks[:len(toks)-1], Targets: toks[1:]}}
	grads := func(m *Model) *gradientsByLayer {
		defer m.Close()
		adapter := llmtest.RandomAdapter(m.LoRAShape(), lora.Config{Rank: 4, Alpha: 8, Targets: lora.AllTargets()}, 7, 0.05)
		pass, err := m.TrainForward(seqs, TrainOptions{Adapter: adapter})
		if err != nil {
			t.Fatal(err)
		}
		dLogprobs := [][]float32{make([]float32, len(seqs[0].Tokens))}
		for i := range dLogprobs[0] {
			dLogprobs[0][i] = -1
		}
		rec := &gradientsByLayer{}
		if err := pass.Backward(dLogprobs, rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	m, err := Load(path, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.Layers[0].Q.M == nil || m.Layers[0].Q.RoPEInterleaved == 0 || m.Config.TiedEmbedding && m.LMHead != m.Embed {
		t.Fatal("the base is not held as the file stores it")
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg := m.Config
	weights := map[string][]float32{}
	for _, tn := range f.Tensors {
		name := checkpointName(tn.Name)
		w := make([]float32, tn.Elements())
		if err := quant.Dequantize(tn.Type, w, tn.Data); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(name, "q_proj.weight"):
			w = gguf.HalveRoPERows(w, cfg.Heads, cfg.HeadDim)
		case strings.HasSuffix(name, "k_proj.weight"):
			w = gguf.HalveRoPERows(w, cfg.KVHeads, cfg.HeadDim)
		}
		weights[name] = w
	}
	widened, err := FromWeights(cfg, weights, Options{Threads: 2, WeightType: F32})
	if err != nil {
		t.Fatal(err)
	}
	got, want := grads(m), grads(widened)
	if len(got.values) != len(want.values) {
		t.Fatalf("%d gradients, widened %d", len(got.values), len(want.values))
	}
	worst := 0.0
	for i, w := range want.values {
		var diff, norm float64
		for j, v := range w {
			d := float64(got.values[i][j] - v)
			diff += d * d
			norm += float64(v) * float64(v)
		}
		if norm > 0 {
			worst = max(worst, math.Sqrt(diff/norm))
		}
	}
	t.Logf("dy and dx of every projection: ‖Δ‖/‖·‖ ≤ %.3g against the widened base", worst)
	if worst > 0.05 {
		t.Fatalf("‖Δ‖/‖·‖ = %g against the widened base", worst)
	}
}

// gradientsByLayer keeps the output and input gradients of every
// projection a backward pass hands it, each on its own.
type gradientsByLayer struct{ values [][]float32 }

func (r *gradientsByLayer) Linear(_ int, _ lora.Target, _ *Linear, _, dy, dx []float32, _ int) {
	r.values = append(r.values, slices.Clone(dy), slices.Clone(dx))
}

// checkpointName is the Hugging Face name of a llama.cpp tensor name
// (gguf.TensorName's inverse on the names of a decoder).
func checkpointName(ggufName string) string {
	for _, hf := range []string{"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"} {
		if gguf.TensorName("llama", hf) == ggufName {
			return hf
		}
	}
	layer, _, _ := strings.Cut(strings.TrimPrefix(ggufName, "blk."), ".")
	for _, hf := range []string{"input_layernorm.weight", "post_attention_layernorm.weight", "self_attn.q_proj.weight",
		"self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.o_proj.weight", "mlp.gate_proj.weight",
		"mlp.up_proj.weight", "mlp.down_proj.weight"} {
		name := "model.layers." + layer + "." + hf
		if gguf.TensorName("llama", name) == ggufName {
			return name
		}
	}
	return ggufName
}

// TestStreamedInputGradientMatchesPacked checks that the gradient through
// a weight in a block format, widened a few rows at a time
// (streamedInputGradient), has the bits of the product against the whole
// weight widened and packed — rows stored interleaved included, and
// added onto what dx holds — on one thread and two.
func TestStreamedInputGradientMatchesPacked(t *testing.T) {
	const rows, in, out, hd = 37, 512, 3*streamedRows + 32, 32
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	w, dy, dx0 := random(out*in), random(rows*out), random(rows*in)
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.F16} {
		for _, interleaved := range []int{0, hd} {
			mat, err := quant.QuantizeMatrix(typ, w, out, in)
			if err != nil {
				t.Fatal(err)
			}
			l := &Linear{Out: out, In: in, M: mat, RoPEInterleaved: interleaved}
			packed := tensor.PackB(float32Weight(l), in, out, in)
			for _, threads := range []int{1, 2} {
				m := &Model{pool: tensor.NewPool(threads)}
				for _, accumulate := range []bool{false, true} {
					want, got := slices.Clone(dx0), slices.Clone(dx0)
					if accumulate {
						m.pool.MatMulAddPacked(want, dy, packed, rows)
					} else {
						m.pool.MatMulPacked(want, dy, packed, rows)
					}
					m.streamedInputGradient(got, rows, l, dy, accumulate)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%v, interleaved %d, %d threads, accumulate %v: dx[%d] = %v, packed %v", typ, interleaved, threads, accumulate, i, got[i], want[i])
						}
					}
				}
				m.pool.Close()
			}
		}
	}
}
