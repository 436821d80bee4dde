package engine

import "github.com/weftlabs/weft/internal/llm/constrain"

// Request is one completion for the engine: a prompt already rendered and
// tokenized by the caller, and the options of a vLLM SamplingParams. The zero
// value of each field is vLLM's default, except where a pointer is nil: a nil
// sampling option takes the model's generation_config.json default (as
// vLLM's default "auto" generation config does), else the OpenAI default.
type Request struct {
	// Prompt is the token ids to continue; it must not be empty and every id
	// must be below VocabSize.
	Prompt []int
	// N is the number of choices; 0 means 1. Choices share the prompt's KV
	// blocks; with a Seed, choice i samples with seed Seed+i.
	N int

	// Temperature, TopP, TopK, MinP and RepetitionPenalty: nil takes the
	// model's default (generation_config.json), else 1, 1, 0 (off), 0 (off)
	// and 1. Temperature 0 is greedy, and then N must be 1.
	Temperature       *float64
	TopP              *float64
	TopK              *int
	MinP              *float64
	RepetitionPenalty *float64
	// PresencePenalty and FrequencyPenalty, in [-2, 2], apply to generated
	// tokens only.
	PresencePenalty  float64
	FrequencyPenalty float64
	// LogitBias adds to the logits of token ids (clamped to [-100, 100]).
	LogitBias map[int]float64
	// Seed makes sampling reproducible; nil (or -1) draws a random seed.
	Seed *int64
	// BadWords are words that must not be generated; each is tokenized as
	// vLLM does (with and without a leading space).
	BadWords []string
	// AllowedTokenIDs, when not nil, restricts sampling to these ids.
	AllowedTokenIDs []int

	// MaxTokens bounds the generated tokens of each choice; 0 means the
	// model's max_new_tokens default, else all of MaxModelLen left after the
	// prompt. Prompt plus MaxTokens beyond MaxModelLen is ErrPromptTooLong.
	MaxTokens int
	// MinTokens suppresses end-of-sequence and stop tokens (and stop
	// strings) until this many tokens are generated.
	MinTokens int
	// Stop strings end a choice when its text contains one; the text is cut
	// before it unless IncludeStopStrInOutput.
	Stop []string
	// StopTokenIDs end a choice when generated (the id is in TokenIDs; its
	// text is left out unless IncludeStopStrInOutput). The model's extra
	// end-of-sequence ids from generation_config.json are added to them,
	// unless IgnoreEOS.
	StopTokenIDs           []int
	IncludeStopStrInOutput bool
	// IgnoreEOS keeps generating past end-of-sequence tokens.
	IgnoreEOS bool

	// Logprobs asks for each generated token's log-probability and its
	// TopLogprobs most likely alternatives (-1: the whole vocabulary).
	Logprobs    bool
	TopLogprobs int
	// PromptLogprobs asks for each prompt token's log-probability and its
	// PromptTopLogprobs most likely alternatives (-1: the whole vocabulary).
	// Such a request does not read the prefix cache (as in vLLM), so its
	// cached tokens are 0.
	PromptLogprobs    bool
	PromptTopLogprobs int

	// SkipSpecialTokens drops special tokens from the text; nil means true.
	SkipSpecialTokens *bool
	// SpacesBetweenSpecialTokens is accepted for vLLM compatibility; with
	// tokenizer.json tokenizers (vLLM's "fast" ones) it changes nothing, as
	// in vLLM. nil means true.
	SpacesBetweenSpecialTokens *bool

	// Constraint, when not nil, narrows every choice's output to text it
	// accepts (structured outputs: a choice, a regular expression, a JSON
	// Schema, any JSON object, a grammar): at each step the tokens that
	// could not continue a valid output are masked before sampling. It must
	// come from this engine's [Engine.Compile]. Each choice follows it with
	// a matcher of its own; a choice whose output is complete and admits
	// nothing longer ends with finish_reason "stop" (stop_reason nil)
	// without waiting for an end-of-sequence token, which the mask allows
	// only once the output is complete.
	Constraint *constrain.Constraint
	// ConstrainAfterReasoning holds the Constraint back while the choice
	// reasons, until it generates the model's reasoning end token
	// ([Engine.ReasoningEnd], Qwen3's </think>): the reasoning is free text
	// and the answer after it is constrained. The choice reasons from its
	// first token when ReasoningOpen; otherwise only when its first token
	// opens reasoning (<think>), which the mask then allows beside the
	// constraint's, and else the constraint applies from that first token.
	// A model without both tokens refuses it.
	ConstrainAfterReasoning bool
	// ReasoningOpen tells ConstrainAfterReasoning that the prompt left the
	// model reasoning (its generation prompt ends in <think>).
	ReasoningOpen bool

	// Priority orders admission and preemption: lower values first (vLLM's
	// priority scheduling); ties go by arrival.
	Priority int
	// Tenant names whose request this is (an account, a team: any string
	// the caller keys its users by). The prefix cache keeps tenants apart:
	// a request reuses only KV blocks computed for the same tenant, so the
	// cached tokens it reports (and how fast its first token comes) tell
	// nothing of another tenant's prompts. Admission is fair across
	// tenants: within a priority, the tenant running the fewest sequences
	// goes first, one running two or more sequences more than a waiting
	// tenant gives up a slot (preempted) to it, and a full queue gives a
	// newcomer the place of the newest request of the tenant queuing the
	// most, so one tenant's queued work does not hold another's past
	// MaxQueueWait.
	Tenant string
	// CacheSalt further isolates prefix caching within the tenant: a
	// request only reuses KV blocks computed under the same tenant and
	// salt ("" is a salt of its own).
	CacheSalt string

	// Adapter, when not empty, is a LoRA adapter directory in the standard
	// layout (adapter_config.json, adapter_model.safetensors) to apply to
	// the model for this request: a trained checkpoint. The engine loads it
	// on first use and holds up to ModelConfig.MaxAdapters; requests under
	// different adapters, or none, run in the same forward passes, and
	// reuse only prefixes computed under the same adapter.
	Adapter string
}

// choices is N with its default.
func (r *Request) choices() int { return max(r.N, 1) }
