package chat

import (
	"encoding/json"
)

// CompletionRequest is the part of a chat-completion request the gateway reads: every
// field of vLLM's ChatCompletionRequest that a validator, the router or a
// translation looks at. Pointers tell "absent or null" from a value. The
// request is forwarded from its raw JSON, so fields not listed here (and
// unknown fields) reach the upstream unchanged.
//
// Defaults (applied by the upstream, documented here as vLLM has them):
// logprobs false, top_logprobs 0, n 1, stop [], stream false,
// stream_options.include_usage false, stream_options.continuous_usage_stats
// false, tool_choice "none" ("auto" when tools are given), include_reasoning
// true, parallel_tool_calls true, use_beam_search false, length_penalty 1,
// stop_token_ids [], include_stop_str_in_output false, ignore_eos false,
// min_tokens 0, skip_special_tokens true, spaces_between_special_tokens true,
// echo false, add_generation_prompt true, continue_final_message false,
// add_special_tokens false, priority 0, request_id random.
type CompletionRequest struct {
	Messages            json.RawMessage    `json:"messages"`
	Model               string             `json:"model"`
	FrequencyPenalty    *float64           `json:"frequency_penalty"`
	LogitBias           map[string]float64 `json:"logit_bias"`
	Logprobs            *bool              `json:"logprobs"`
	TopLogprobs         *int64             `json:"top_logprobs"`
	MaxTokens           *int64             `json:"max_tokens"`
	MaxCompletionTokens *int64             `json:"max_completion_tokens"`
	N                   *int64             `json:"n"`
	PresencePenalty     *float64           `json:"presence_penalty"`
	ResponseFormat      *ResponseFormat    `json:"response_format"`
	Seed                *int64             `json:"seed"`
	Stop                json.RawMessage    `json:"stop"`
	Stream              *bool              `json:"stream"`
	StreamOptions       map[string]any     `json:"stream_options"`
	Temperature         *float64           `json:"temperature"`
	TopP                *float64           `json:"top_p"`
	Tools               []Tool             `json:"tools"`
	ToolChoice          json.RawMessage    `json:"tool_choice"`
	ReasoningEffort     *string            `json:"reasoning_effort"`
	ThinkingTokenBudget *int64             `json:"thinking_token_budget"`
	IncludeReasoning    *bool              `json:"include_reasoning"`
	ParallelToolCalls   *bool              `json:"parallel_tool_calls"`
	User                *string            `json:"user"`

	UseBeamSearch              *bool    `json:"use_beam_search"`
	TopK                       *int64   `json:"top_k"`
	MinP                       *float64 `json:"min_p"`
	RepetitionPenalty          *float64 `json:"repetition_penalty"`
	LengthPenalty              *float64 `json:"length_penalty"`
	StopTokenIDs               []int64  `json:"stop_token_ids"`
	IncludeStopStrInOutput     *bool    `json:"include_stop_str_in_output"`
	IgnoreEOS                  *bool    `json:"ignore_eos"`
	MinTokens                  *int64   `json:"min_tokens"`
	SkipSpecialTokens          *bool    `json:"skip_special_tokens"`
	SpacesBetweenSpecialTokens *bool    `json:"spaces_between_special_tokens"`
	TruncatePromptTokens       *int64   `json:"truncate_prompt_tokens"`
	PromptLogprobs             *int64   `json:"prompt_logprobs"`
	LogprobTokenIDs            []int64  `json:"logprob_token_ids"`
	AllowedTokenIDs            []int64  `json:"allowed_token_ids"`
	BadWords                   []string `json:"bad_words"`

	Echo                   *bool              `json:"echo"`
	AddGenerationPrompt    *bool              `json:"add_generation_prompt"`
	ContinueFinalMessage   *bool              `json:"continue_final_message"`
	AddSpecialTokens       *bool              `json:"add_special_tokens"`
	Documents              []map[string]any   `json:"documents"`
	ChatTemplate           *string            `json:"chat_template"`
	ChatTemplateKwargs     map[string]any     `json:"chat_template_kwargs"`
	MMProcessorKwargs      map[string]any     `json:"mm_processor_kwargs"`
	StructuredOutputs      *StructuredOutputs `json:"structured_outputs"`
	Priority               *int64             `json:"priority"`
	RequestID              *string            `json:"request_id"`
	LogitsProcessors       json.RawMessage    `json:"logits_processors"`
	ReturnTokensAsTokenIDs *bool              `json:"return_tokens_as_token_ids"`
	ReturnTokenIDs         *bool              `json:"return_token_ids"`
	CacheSalt              json.RawMessage    `json:"cache_salt"`
	KVTransferParams       map[string]any     `json:"kv_transfer_params"`
	// EngineXargs is vllm_xargs under the service interface's name; either
	// key is accepted and forwarded as vllm_xargs.
	EngineXargs map[string]any `json:"engine_xargs"`
	VLLMXargs   map[string]any `json:"vllm_xargs"`

	// raw is the request as sent; members are its top-level members, known
	// or not, in order.
	raw     []byte
	members []member
	// tenant is whose request it is: the entity of the project it is
	// traced into. A local model keeps tenants' prefix caches apart.
	tenant string
}

// ResponseFormat is OpenAI's response_format.
type ResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema json.RawMessage `json:"json_schema"`
}

// StructuredOutputs is vLLM's structured_outputs constraint set.
type StructuredOutputs struct {
	JSON          json.RawMessage `json:"json"`
	Regex         *string         `json:"regex"`
	Choice        []string        `json:"choice"`
	Grammar       *string         `json:"grammar"`
	JSONObject    *bool           `json:"json_object"`
	StructuralTag json.RawMessage `json:"structural_tag"`
}

// Tool is one entry of tools.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Parameters is the function's JSON Schema, which tool_choice
		// required or naming the function constrains the output to.
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// ImageRequest is the body of POST /image/create.
type ImageRequest struct {
	ProjectID string `json:"project_id"`
	// Inputs holds model and prompt (required) and n; other keys are passed
	// to the provider.
	Inputs json.RawMessage `json:"inputs"`
	// TrackLLMCall records the generation as a call (default true).
	TrackLLMCall *bool `json:"track_llm_call,omitempty"`
}

// ImageResult is the answer of POST /image/create. Failures are reported in
// Response as {"error": "..."} with a 2xx status, as Weave does.
type ImageResult struct {
	Response    json.RawMessage `json:"response"`
	TraceCallID *string         `json:"trace_call_id"`
}

// maxImageBytes bounds one downloaded image.

// ModelCard is one entry of GET /v1/models.
type ModelCard struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	// Root is the model's served name, as vLLM shows a served model's
	// (never a path on the server).
	Root string `json:"root,omitempty"`
	// Parent is a trained model's base model, as vLLM shows a LoRA
	// adapter's.
	Parent      string `json:"parent,omitempty"`
	MaxModelLen int64  `json:"max_model_len,omitempty"`
	// Endpoints are the APIs that serve the model: chat, completions,
	// embeddings, responses.
	Endpoints []string `json:"endpoints"`
}
