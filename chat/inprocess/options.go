package inprocess

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The options of a local upstream in a routing file: the keys beside kind,
// model and weight that [Kind] decodes into [LocalOptions] and checks.

// LocalOptions are the knobs of a model run in-process. Zero values are the
// documented defaults.
type LocalOptions struct {
	// Path is the model directory: config.json, model.safetensors (or
	// shards with model.safetensors.index.json), tokenizer.json,
	// tokenizer_config.json and, when present, chat_template.jinja and
	// generation_config.json. Required for kind local.
	Path string `yaml:"path"`
	// Threads is how many threads a forward pass uses. Default (0): the
	// number of CPUs the process may use (GOMAXPROCS).
	Threads int `yaml:"threads"`
	// MaxSequences bounds the sequences decoded together (continuous
	// batching); requests beyond it wait in a queue. Default:
	// engine.DefaultMaxSeqs (16).
	MaxSequences int `yaml:"max_sequences"`
	// MaxBatchTokens bounds the tokens of one forward pass (decode rows
	// first, then prompt chunks); it must be at least MaxSequences.
	// Default: engine.DefaultMaxBatchTokens (512).
	MaxBatchTokens int `yaml:"max_batch_tokens"`
	// KVCacheBytes bounds the memory of the key-value cache, e.g. "512MiB"
	// or "2GiB". A request that cannot get room waits; once the queue is
	// full it is answered 503 with Retry-After. Default:
	// engine.DefaultKVCacheBytes (1GiB).
	KVCacheBytes ByteSize `yaml:"kv_cache_bytes"`
	// MaxQueued bounds the requests waiting for admission; one more is
	// answered 503 with Retry-After at once. Default:
	// engine.DefaultMaxQueued (256).
	MaxQueued int `yaml:"max_queued"`
	// MaxQueueWait bounds how long a request waits for admission (a free
	// sequence slot and room in the KV cache) before it is answered 503
	// with Retry-After. Default: engine.DefaultMaxQueueWait (10s).
	MaxQueueWait time.Duration `yaml:"max_queue_wait"`
	// MaxRequestTokens bounds n × max_tokens of one request (max_tokens
	// as sent, else what the context leaves); over it the request is
	// answered 400 naming both. Default: engine.DefaultMaxRequestTokens
	// (65536).
	MaxRequestTokens int `yaml:"max_request_tokens"`
	// WeightType is how linear-layer weights are held: "auto" (default:
	// as the model's file stores them, a GGUF file's quantised blocks
	// used in place; a safetensors checkpoint as f32), "f32" (exact),
	// "int8" (blocks of 32 weights with one scale each: a quarter
	// of the memory traffic, for speed on larger models), a GGUF block
	// format quantised at load ("q8_0", "q4_0", "q4_k", "q5_k", "q6_k") or
	// half precision ("f16", "bf16"): engine.WeightTypes.
	WeightType string `yaml:"weight_type"`
	// PromptTokensDetails reports usage.prompt_tokens_details.cached_tokens
	// (prompt tokens served from the prefix cache), as vLLM does with
	// --enable-prompt-tokens-details. Default false: the field is null.
	PromptTokensDetails bool `yaml:"prompt_tokens_details"`
	// ReasoningParser reads a thinking model's reasoning — the text of a
	// think block the prompt left open (a generation prompt ending in
	// <think>) or the model opened with <think>, up to </think> — into
	// the answer's reasoning (and reasoning_content) rather than its
	// content; the rest is content: "auto" (the default) for models whose
	// vocabulary has <think> and </think> (Qwen3), when the request leaves
	// chat_template_kwargs.enable_thinking on; "none" leaves the thinking
	// in content.
	ReasoningParser string `yaml:"reasoning_parser"`
	// StructuredOutputs bounds what constrained decoding may cost.
	StructuredOutputs StructuredOptions `yaml:"structured_outputs"`
	// TrustRequestChatTemplate lets a request bring its own chat template
	// (chat_template, or chat_template inside chat_template_kwargs), as
	// vLLM's --trust-request-chat-template does. Default false: such a
	// request is refused with a 400, since a template is a program the
	// server runs.
	TrustRequestChatTemplate bool `yaml:"trust_request_chat_template"`
}

// StructuredOptions bound structured outputs (constrained decoding) on a
// local model. Zero values are the documented defaults.
type StructuredOptions struct {
	// CacheSize is how many compiled constraints are kept, so that a
	// repeated schema is compiled once. Default 128.
	CacheSize int `yaml:"cache_size"`
	// MaxMasks is how many distinct allowed-token masks one compiled
	// constraint keeps (states allowing the same tokens share one; each
	// is vocabulary/8 bytes). Default 512.
	MaxMasks int `yaml:"max_masks"`
	// MaxWhitespace is how many bytes of white space JSON output may have
	// between two of its tokens. Default 8; -1 allows none. The tool
	// calls tool_choice required and named constrain have at most one.
	MaxWhitespace int `yaml:"max_whitespace"`
	// MaxStringLength bounds the characters of JSON strings whose schema
	// sets no maxLength. Default 0: unbounded.
	MaxStringLength int `yaml:"max_string_length"`
	// MaxNesting bounds the nesting of recursive schemas and of generic
	// JSON values (json_object). Default 32.
	MaxNesting int `yaml:"max_nesting"`
	// MaxStates bounds one constraint's automaton, and so what compiling
	// it takes (about 200 bytes of memory a state); a constraint that
	// needs more is a 400 "too complex", refused as soon as the build
	// sees it cannot fit. Default: constrain.DefaultMaxStates (500,000).
	MaxStates int `yaml:"max_states"`
	// MaxCompileTime bounds one constraint's compile (a 400 "too
	// complex" past it), and apart from it its wait for a turn.
	// Default: constrain.DefaultMaxCompileTime (5s).
	MaxCompileTime time.Duration `yaml:"max_compile_time"`
	// MaxCompiles is how many new constraints compile at once; a request
	// that finds no turn within max_compile_time is answered 503 with
	// Retry-After. Default: constrain.DefaultMaxCompiles (2).
	MaxCompiles int `yaml:"max_compiles"`
}

// ByteSize is a number of bytes, written in a routing file as an integer or
// with a unit: "512MiB", "2GiB", "1.5GB".
type ByteSize int64

// UnmarshalYAML reads an integer or a size with a unit (B, KB, MB, GB,
// KiB, MiB, GiB).
func (b *ByteSize) UnmarshalYAML(node *yaml.Node) error {
	text := strings.TrimSpace(node.Value)
	units := []struct {
		suffix string
		scale  float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	scale := 1.0
	for _, u := range units {
		if number, ok := strings.CutSuffix(text, u.suffix); ok {
			text, scale = strings.TrimSpace(number), u.scale
			break
		}
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) {
		return fmt.Errorf("line %d: %q is not a size (an integer number of bytes or e.g. 512MiB, 2GiB)", node.Line, node.Value)
	}
	*b = ByteSize(n * scale)
	return nil
}
