package model

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/safetensors"
	"github.com/weftlabs/weft/internal/llm/tensor"
)

// Options are the load-time choices of a model.
type Options struct {
	// WeightType is one of WeightTypes; "" is Auto.
	WeightType WeightType
	// MaxLen caps the positions a sequence may reach (and the size of the
	// RoPE tables). 0 means max_position_embeddings. With dynamic RoPE
	// scaling it may exceed max_position_embeddings.
	MaxLen int
	// Pool runs the matrix products; nil starts one of Threads threads,
	// which Close stops.
	Pool *tensor.Pool
	// Threads is the size of the pool started when Pool is nil; 0 means
	// GOMAXPROCS.
	Threads int
}

// Model is a loaded decoder: its configuration, weights and the tables and
// buffers its forward pass uses. Forward calls are serialised.
type Model struct {
	Config *Config
	// MaxLen is the number of positions a sequence may reach.
	MaxLen int
	// Embed is the token embedding table [VocabSize × HiddenSize]: float32
	// in W, or as its file stores it in M, whose rows are dequantised as
	// tokens look them up.
	Embed  *Linear
	Layers []*Layer
	// Norm is the final RMSNorm's weight.
	Norm []float32
	// LMHead is the output projection; with tied embeddings its weight is
	// Embed (or a quantised copy of it). An embedding model without tied
	// embeddings has none (nil): its checkpoint holds no lm_head.
	LMHead *Linear
	// Pooling, for an embedding model (a sentence-transformers directory,
	// ReadPooling), is how Embeddings pools its final states; nil
	// otherwise.
	Pooling *Pooling

	rope *tensor.RoPE
	// localRope is the table of the sliding-window layers when they rotate
	// by their own base (Config.LocalRopeTheta), else nil.
	localRope *tensor.RoPE
	pool      *tensor.Pool
	ownsPool  bool
	files     io.Closer        // the mapped weight files, released by Close
	bw        *backwardWeights // built by the first training pass
	// spareExps is a backward-ed training pass's buffer of exponentials
	// [targets × vocabulary], handed to the next pass: the largest buffer
	// of a step, not allocated (and zeroed) again each step.
	spareExps []float32
	// spareRecord is a backward-ed training pass's arena of activations,
	// handed to the next the same way.
	spareRecord []float32
	// streamed holds the rows of a weight in a block format widened for
	// the gradient through it, and the gradient's matching columns
	// (streamedInputGradient).
	streamed []float32

	mu sync.Mutex // one forward pass at a time: ws is shared
	ws workspace
}

// Load reads a model: a Hugging Face model directory (config.json and the
// safetensors weights, see package safetensors), or a GGUF model — a .gguf
// file, a directory holding one, or an Ollama model (see gguf.Locate and
// LoadGGUF). Float32 weights stay in the mapped files, which Close
// releases.
func Load(path string, opts Options) (*Model, error) {
	if loc, ok, err := gguf.Locate(path); err != nil {
		return nil, err
	} else if ok {
		return LoadGGUF(loc.File, opts)
	}
	cfg, err := ReadConfig(path)
	if err != nil {
		return nil, err
	}
	ckpt, err := safetensors.OpenDir(path)
	if err != nil {
		return nil, err
	}
	pooling, err := ReadPooling(path)
	if err != nil {
		ckpt.Close()
		return nil, err
	}
	read := bareCheckpoint(ckpt, checkpointReader(ckpt))
	if cfg.Architecture == Gemma3 {
		if read, err = gemma3Checkpoint(cfg, ckpt, read); err != nil {
			ckpt.Close()
			return nil, err
		}
	}
	m, err := build(cfg, newLoader(cfg, read, opts.WeightType), opts, pooling)
	if err != nil {
		ckpt.Close()
		return nil, err
	}
	m.files = ckpt
	return m, nil
}

// ReadConfig reads the configuration of the model at path: config.json of a
// Hugging Face directory, or a GGUF model's metadata (ConfigFromGGUF).
func ReadConfig(path string) (*Config, error) {
	if loc, ok, err := gguf.Locate(path); err != nil {
		return nil, err
	} else if ok {
		f, err := gguf.Open(loc.File)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ConfigFromGGUF(f)
	}
	data, err := os.ReadFile(filepath.Join(path, "config.json"))
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	return c, nil
}

// FromWeights builds a model from float32 weights in memory, named and
// shaped as in a checkpoint (model.embed_tokens.weight,
// model.layers.0.self_attn.q_proj.weight, ...). The model keeps the slices.
func FromWeights(cfg *Config, weights map[string][]float32, opts Options) (*Model, error) {
	return build(cfg, newLoader(cfg, mapReader(weights), opts.WeightType), opts, nil)
}

// bareCheckpoint reads a checkpoint saved from the decoder without its
// language-model head (Qwen3-Embedding's embed_tokens.weight, layers.0.…,
// norm.weight) by the names of a full one (model.embed_tokens.weight, …).
func bareCheckpoint(ckpt *safetensors.Checkpoint, read func(string, ...int) ([]float32, error)) func(string, ...int) ([]float32, error) {
	names := ckpt.Names()
	if slices.Contains(names, "model.embed_tokens.weight") || !slices.Contains(names, "embed_tokens.weight") {
		return read
	}
	return func(name string, shape ...int) ([]float32, error) {
		if rest, ok := strings.CutPrefix(name, "model."); ok {
			name = rest
		}
		return read(name, shape...)
	}
}

// build loads the weights of cfg through l; pooling, when not nil, makes
// the model an embedding model (an untied lm_head is then not read).
func build(cfg *Config, l *loader, opts Options, pooling *Pooling) (*Model, error) {
	if opts.WeightType == "" {
		l.weightType = Auto
	} else if !slices.Contains(WeightTypes, opts.WeightType) {
		return nil, unsupported("weight type", "%q (one of %v)", opts.WeightType, WeightTypes)
	}
	m := &Model{Config: cfg, MaxLen: cfg.MaxPositions, Pooling: pooling}
	if opts.MaxLen > 0 {
		if opts.MaxLen > cfg.MaxPositions && (cfg.RopeScaling == nil || cfg.RopeScaling.Type != "dynamic") {
			return nil, unsupported("max length", "%d beyond max_position_embeddings %d needs dynamic RoPE scaling", opts.MaxLen, cfg.MaxPositions)
		}
		m.MaxLen = opts.MaxLen
	}
	var err error
	d := cfg.HiddenSize
	if m.Embed, err = l.embedding(cfg.VocabSize, d); err != nil {
		return nil, err
	}
	for i := range cfg.Layers {
		ly, err := l.layer(cfg, i)
		if err != nil {
			return nil, err
		}
		m.Layers = append(m.Layers, ly)
	}
	if m.Norm, err = l.norm("model.norm.weight", d); err != nil {
		return nil, err
	}
	if cfg.TiedEmbedding && l.weightType == Auto {
		m.LMHead = m.Embed // the table itself, in its own type
	} else if cfg.TiedEmbedding {
		m.LMHead = &Linear{Out: cfg.VocabSize, In: d, Name: m.Embed.Name}
		if err := l.setWeight(m.LMHead, float32Weight(m.Embed)); err != nil {
			return nil, err
		}
	} else if pooling != nil {
		m.LMHead = nil
	} else if m.LMHead, err = l.linear("lm_head", cfg.VocabSize, d, false); err != nil {
		return nil, err
	}
	m.rope = cfg.ropeTable(min(m.MaxLen, cfg.MaxPositions))
	if cfg.LocalRopeTheta > 0 {
		m.localRope = tensor.NewRoPE(defaultInvFreq(float32(cfg.LocalRopeTheta), cfg.rotaryDim()), m.MaxLen, 1)
	}
	m.pool, m.ownsPool = opts.Pool, false
	if m.pool == nil {
		m.pool, m.ownsPool = tensor.NewPool(opts.Threads), true
	}
	return m, nil
}

// Pool is the thread pool the model's matrix products run on.
func (m *Model) Pool() *tensor.Pool { return m.pool }

// WeightBytes is the number of weight bytes a decode step streams: every
// linear layer, the norms and the output projection (embedding rows are
// looked up, not streamed).
func (m *Model) WeightBytes() int {
	n := 4 * len(m.Norm)
	for _, ly := range m.Layers {
		for _, lin := range []*Linear{ly.Q, ly.K, ly.V, ly.O, ly.Gate, ly.Up, ly.Down} {
			n += lin.Bytes()
		}
		n += 4 * (len(ly.InputNorm) + len(ly.MLPNorm) + len(ly.AttnOutNorm) + len(ly.MLPOutNorm) + len(ly.QNorm) + len(ly.KNorm))
	}
	if m.LMHead != nil {
		n += m.LMHead.Bytes()
	}
	return n
}

// Close stops the pool the model started and releases the mapped weights.
func (m *Model) Close() error {
	if m.ownsPool {
		m.pool.Close()
	}
	if m.files != nil {
		return m.files.Close()
	}
	return nil
}

// String describes the model for logs.
func (m *Model) String() string {
	c := m.Config
	return fmt.Sprintf("%s: %d layers, hidden %d, %d heads (%d kv) of %d, vocab %d",
		c.Architecture, c.Layers, c.HiddenSize, c.Heads, c.KVHeads, c.HeadDim, c.VocabSize)
}
