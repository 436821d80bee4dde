package llmtest

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/llm/arch"
	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/quant"
)

// GGUFModel describes a GGUF model file to write.
type GGUFModel struct {
	Dims    Dims
	Weights map[string][]float32 // nil: RandomWeights(Dims, 1)
	// Tokenizer names the npm tokenizer whose vocabulary the file carries
	// (VocabGGUF); "" writes none.
	Tokenizer string
}

// Write writes the model as name.gguf under a new temporary directory of
// tb and returns the file's path.
func (m GGUFModel) Write(tb testing.TB, name string) string {
	tb.Helper()
	if m.Tokenizer != "" {
		RequireTokenizer(tb, m.Tokenizer)
	}
	path := filepath.Join(tb.TempDir(), name+gguf.Ext)
	if err := m.WriteTo(path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// WriteTo writes the model to path as llama.cpp's converter lays a model
// of its architecture out: the hyperparameters under general.architecture's
// keys, the vocabulary, and every weight in F32 under llama.cpp's name
// (gguf.TensorName), Llama's query and key rows interleaved
// (gguf.InterleaveRoPERows); no output.weight when the embedding is tied.
func (m GGUFModel) WriteTo(path string) error {
	d := m.Dims
	a, _ := arch.Lookup(d.Architecture)
	ggufArch := a.GGUF
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String(ggufArch)},
		{Key: ggufArch + ".context_length", Value: gguf.Uint32(uint32(d.MaxPositions))},
		{Key: ggufArch + ".embedding_length", Value: gguf.Uint32(uint32(d.HiddenSize))},
		{Key: ggufArch + ".block_count", Value: gguf.Uint32(uint32(d.Layers))},
		{Key: ggufArch + ".feed_forward_length", Value: gguf.Uint32(uint32(d.IntermediateSize))},
		{Key: ggufArch + ".attention.head_count", Value: gguf.Uint32(uint32(d.Heads))},
		{Key: ggufArch + ".attention.head_count_kv", Value: gguf.Uint32(uint32(d.KVHeads))},
		{Key: ggufArch + ".attention.key_length", Value: gguf.Uint32(uint32(d.HeadDim))},
		{Key: ggufArch + ".attention.value_length", Value: gguf.Uint32(uint32(d.HeadDim))},
		{Key: ggufArch + ".rope.dimension_count", Value: gguf.Uint32(uint32(d.HeadDim))},
		{Key: ggufArch + ".rope.freq_base", Value: gguf.Float32(float32(d.RopeTheta))},
		{Key: ggufArch + ".attention.layer_norm_rms_epsilon", Value: gguf.Float32(float32(d.RMSNormEps))},
		{Key: ggufArch + ".vocab_size", Value: gguf.Uint32(uint32(d.VocabSize))},
	}
	if m.Tokenizer != "" {
		vocab, err := VocabGGUF(m.Tokenizer)
		if err != nil {
			return err
		}
		for _, kv := range vocab {
			if strings.HasPrefix(kv.Key, "tokenizer.") {
				kvs = append(kvs, kv)
			}
		}
	}
	weights := m.Weights
	if weights == nil {
		weights = RandomWeights(d, 1)
	}
	var tensors []gguf.TensorData
	for _, t := range d.tensors() {
		w := weights[t.name]
		if ggufArch == "llama" && strings.Contains(t.name, ".q_proj.") {
			w = gguf.InterleaveRoPERows(w, d.Heads, d.HeadDim)
		}
		if ggufArch == "llama" && strings.Contains(t.name, ".k_proj.") {
			w = gguf.InterleaveRoPERows(w, d.KVHeads, d.HeadDim)
		}
		dims := make([]int, len(t.shape))
		for i, s := range t.shape {
			dims[len(dims)-1-i] = s
		}
		raw := make([]byte, 4*len(w))
		for i, x := range w {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
		}
		tensors = append(tensors, gguf.TensorData{Name: gguf.TensorName(ggufArch, t.name), Type: quant.F32, Dims: dims, Data: raw})
	}
	return gguf.WriteFile(path, kvs, tensors)
}
