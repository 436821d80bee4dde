package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/model"
)

// Defaults of [ModelConfig], exported so that a command line or a routing
// file can show and reuse them.
const (
	// DefaultThreads (0) runs the matrix products on GOMAXPROCS threads.
	DefaultThreads = 0
	// DefaultMaxSeqs bounds the sequences (choices) decoded together.
	DefaultMaxSeqs = 16
	// DefaultKVCacheBytes is the KV cache budget: 1 GiB.
	DefaultKVCacheBytes = 1 << 30
	// DefaultBlockSize is the number of positions a KV cache block holds.
	DefaultBlockSize = 16
	// DefaultMaxBatchTokens bounds the tokens of one forward pass: decode
	// rows first, then prompt chunks (a longer prompt is prefilled in
	// chunks across steps).
	DefaultMaxBatchTokens = 512
	// DefaultMaxQueued bounds the requests waiting for admission; one more
	// is refused at once with ErrOverloaded.
	DefaultMaxQueued = 256
	// DefaultMaxQueueWait bounds the time a request waits for admission
	// before ErrOverloaded.
	DefaultMaxQueueWait = 10 * time.Second
	// DefaultMaxLogprobs bounds top_logprobs and prompt_logprobs, as vLLM's
	// max_logprobs does.
	DefaultMaxLogprobs = 20
	// DefaultMaxAdapters bounds the LoRA adapters held in memory at once
	// (least recently used out first), as vLLM's max_loras does.
	DefaultMaxAdapters = 8
	// DefaultMaxRequestTokens bounds the tokens one request may generate,
	// n × max_tokens: 16 choices of 4,096 tokens.
	DefaultMaxRequestTokens = 1 << 16
)

// WeightType is how the engine holds the model's linear-layer weights.
type WeightType string

const (
	// WeightAuto holds every weight in the type its file stores it in (the
	// default): a GGUF model's quantised blocks, F16 and BF16 tensors are
	// multiplied where they lie in the mapped file, so the model takes about
	// its file's size in memory; a safetensors checkpoint is WeightF32.
	WeightAuto WeightType = "auto"
	// WeightF32 computes with float32 weights: f32 checkpoints are used in
	// place from the memory-mapped file, f16 and bf16 are widened exactly.
	WeightF32 WeightType = "f32"
	// WeightInt8 quantises the linear layers to int8 in blocks of 32 weights
	// with a scale each: a quarter of the memory traffic per token, at a
	// small loss of accuracy. Opt-in.
	WeightInt8 WeightType = "int8"
)

// WeightTypes are the weight types a model loads with: auto, f32, int8, the GGUF
// block formats q8_0, q4_0, q4_k, q5_k and q6_k (quantised at load as
// llama.cpp quantises them) and f16 and bf16 (model.WeightType documents
// each).
func WeightTypes() []WeightType {
	var out []WeightType
	for _, t := range model.WeightTypes {
		out = append(out, WeightType(t))
	}
	return out
}

// Valid reports whether w is one of WeightTypes.
func (w WeightType) Valid() bool { return slices.Contains(model.WeightTypes, model.WeightType(w)) }

// ModelConfig tunes one served model. The zero value of every field is its
// documented default.
type ModelConfig struct {
	// Name is the model's served name; empty means the directory's base name.
	Name string
	// Threads runs the matrix products; 0 means GOMAXPROCS.
	Threads int
	// MaxSeqs bounds the sequences running at once (each of a request's n
	// choices is one); 0 means DefaultMaxSeqs.
	MaxSeqs int
	// KVCacheBytes is the memory budget of the KV cache; 0 means
	// DefaultKVCacheBytes. Requests beyond it queue, then fail with
	// ErrOverloaded: the engine never allocates past it.
	KVCacheBytes int64
	// WeightType is one of WeightTypes; "" is WeightAuto.
	WeightType WeightType
	// MaxModelLen bounds prompt plus output tokens of a sequence. 0 means
	// config.json's max_position_embeddings, lowered to what KVCacheBytes
	// holds for one sequence; an explicit value the budget cannot hold is
	// an error of Open.
	MaxModelLen int
	// BlockSize is the positions per KV cache block, the unit of prefix
	// sharing; 0 means DefaultBlockSize.
	BlockSize int
	// MaxBatchTokens bounds the tokens of one forward pass; 0 means
	// DefaultMaxBatchTokens. It must be at least MaxSeqs, so that a pass of
	// decoding sequences leaves room for a prompt chunk.
	MaxBatchTokens int
	// MaxQueued bounds the requests waiting for admission; 0 means
	// DefaultMaxQueued.
	MaxQueued int
	// MaxQueueWait bounds how long a request waits for admission; 0 means
	// DefaultMaxQueueWait.
	MaxQueueWait time.Duration
	// MaxLogprobs bounds top_logprobs and prompt_logprobs; 0 means
	// DefaultMaxLogprobs, -1 no bound.
	MaxLogprobs int
	// MaxAdapters bounds the LoRA adapters held in memory; 0 means
	// DefaultMaxAdapters. One more evicts the least recently used, which
	// requests still running keep until they end.
	MaxAdapters int
	// MaxRequestTokens bounds the tokens one request may generate: n ×
	// max_tokens (max_tokens as the request gives it, else what the
	// context leaves), so that no single request holds the engine for
	// everyone; a request over it is ErrInvalidRequest naming both. 0
	// means DefaultMaxRequestTokens.
	MaxRequestTokens int
	// Structured bounds what compiling and following output constraints
	// may cost (the compiled-constraint cache, automaton and mask sizes,
	// JSON white space and string lengths); its zero fields are package
	// constrain's documented defaults.
	Structured constrain.Config
}

// setDefaults fills zero fields and checks the others.
func (c *ModelConfig) setDefaults() error {
	if c.Threads < 0 {
		return fmt.Errorf("%w: threads must not be negative, got %d", ErrModelDir, c.Threads)
	}
	for _, f := range []struct {
		name  string
		v     *int
		value int
	}{
		{"max_seqs", &c.MaxSeqs, DefaultMaxSeqs},
		{"block_size", &c.BlockSize, DefaultBlockSize},
		{"max_batch_tokens", &c.MaxBatchTokens, DefaultMaxBatchTokens},
		{"max_queued", &c.MaxQueued, DefaultMaxQueued},
		{"max_logprobs", &c.MaxLogprobs, DefaultMaxLogprobs},
		{"max_adapters", &c.MaxAdapters, DefaultMaxAdapters},
		{"max_request_tokens", &c.MaxRequestTokens, DefaultMaxRequestTokens},
	} {
		if *f.v == 0 {
			*f.v = f.value
		}
		if *f.v < 0 && !(f.name == "max_logprobs" && *f.v == -1) {
			return fmt.Errorf("%w: %s must be positive, got %d", ErrModelDir, f.name, *f.v)
		}
	}
	if c.MaxBatchTokens < c.MaxSeqs {
		return fmt.Errorf("%w: max_batch_tokens %d must be at least max_seqs %d", ErrModelDir, c.MaxBatchTokens, c.MaxSeqs)
	}
	if c.KVCacheBytes == 0 {
		c.KVCacheBytes = DefaultKVCacheBytes
	}
	if c.KVCacheBytes < 0 {
		return fmt.Errorf("%w: kv_cache_bytes must be positive, got %d", ErrModelDir, c.KVCacheBytes)
	}
	if c.MaxQueueWait == 0 {
		c.MaxQueueWait = DefaultMaxQueueWait
	}
	if c.MaxQueueWait < 0 {
		return fmt.Errorf("%w: max_queue_wait must be positive, got %s", ErrModelDir, c.MaxQueueWait)
	}
	if c.MaxModelLen < 0 {
		return fmt.Errorf("%w: max_model_len must be positive, got %d", ErrModelDir, c.MaxModelLen)
	}
	if c.WeightType == "" {
		c.WeightType = WeightAuto
	} else if !c.WeightType.Valid() {
		return fmt.Errorf("%w: weight_type %q: want one of %v", ErrModelDir, c.WeightType, WeightTypes())
	}
	return nil
}
