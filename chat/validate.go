package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ModelInfo is what the gateway knows about a routed model; zero fields are
// unknown, and the checks that need them are left to the upstream.
type ModelInfo struct {
	// MaxModelLen is the context length in tokens.
	MaxModelLen int64 `yaml:"max_model_len" json:"max_model_len,omitempty"`
	// VocabSize bounds token ids (logit_bias, stop_token_ids, allowed_token_ids,
	// logprob_token_ids).
	VocabSize int64 `yaml:"vocab_size" json:"vocab_size,omitempty"`
	// MaxLogprobs caps top_logprobs and prompt_logprobs. vLLM's default is 20.
	MaxLogprobs int64 `yaml:"max_logprobs" json:"max_logprobs,omitempty"`
	// PriorityScheduling tells that the upstream runs with
	// --scheduling-policy priority; without it a non-zero priority is refused.
	PriorityScheduling bool `yaml:"priority_scheduling" json:"priority_scheduling,omitempty"`

	// TokenizesPrompt tells that the route's backend tokenizes the prompt
	// itself (a model served in-process) and so checks the context length
	// against the real prompt length, with vLLM's exact messages, after
	// rendering: the gateway's estimate before it is skipped. Set by the
	// backend, never by a routing file.
	TokenizesPrompt bool `yaml:"-" json:"-"`
	// FillsInMiddle tells that the route's backend completes a text before a
	// suffix (a text completion's suffix): a model served in-process whose
	// vocabulary has fill-in-the-middle tokens. Set by the backend.
	FillsInMiddle bool `yaml:"-" json:"-"`
}

// maxN is vLLM's VLLM_MAX_N_SEQUENCES default.
const maxN = 16384

// greedyEpsilon is vLLM's threshold below which temperature means greedy.
const greedyEpsilon = 1e-5

// Validate applies vLLM's request-level validators (in vLLM's order) and the
// model-aware checks that info allows. Every failure is a 400 with vLLM's
// exact message and param.
func Validate(r *CompletionRequest, info ModelInfo) error {
	for _, check := range []func(*CompletionRequest, ModelInfo) error{
		checkCacheSalt, checkResponseFormat, checkStreamOptions, checkLogprobs,
		checkStructuredOutputs, checkTools, checkGenerationPrompt, checkLogitsProcessors,
		checkSampling, checkTokenIDs, checkModelLimits,
	} {
		if err := check(r, info); err != nil {
			return err
		}
	}
	return nil
}

func checkCacheSalt(r *CompletionRequest, _ ModelInfo) error {
	if !r.Has("cache_salt") {
		return nil
	}
	var salt string
	if err := json.Unmarshal(r.CacheSalt, &salt); err != nil || salt == "" {
		return Invalid("cache_salt", "Parameter 'cache_salt' must be a non-empty string if provided.")
	}
	if len([]rune(salt)) > 128 || strings.ContainsAny(salt, "@/\\\x00") {
		return Invalid("cache_salt", "Parameter 'cache_salt' must be at most 128 characters and must not contain '@', '/', '\\\\', or NUL.")
	}
	return nil
}

func checkResponseFormat(r *CompletionRequest, _ ModelInfo) error {
	rf := r.ResponseFormat
	if rf == nil {
		return nil
	}
	switch rf.Type {
	case "text", "json_object", "structural_tag":
	case "json_schema":
		if len(rf.JSONSchema) == 0 || bytes.Equal(rf.JSONSchema, []byte("null")) {
			return Invalid("response_format", "When response_format type is 'json_schema', the 'json_schema' field must be provided.")
		}
	default:
		return Malformed("response_format", "literal_error", "Input should be 'text', 'json_object', 'json_schema' or 'structural_tag'")
	}
	return nil
}

func checkStreamOptions(r *CompletionRequest, _ ModelInfo) error {
	if len(r.StreamOptions) > 0 && !r.Streaming() {
		return Invalid("stream_options", "Stream options can only be defined when `stream=True`.")
	}
	return nil
}

func checkLogprobs(r *CompletionRequest, _ ModelInfo) error {
	logprobs := r.Logprobs != nil && *r.Logprobs
	if r.LogprobTokenIDs != nil {
		switch {
		case len(r.LogprobTokenIDs) == 0:
			return Invalid("logprob_token_ids", "`logprob_token_ids` must not be an empty list.")
		case r.UseBeamSearch != nil && *r.UseBeamSearch:
			return Invalid("logprob_token_ids", "`logprob_token_ids` is not supported with beam search.")
		case !logprobs:
			return Invalid("logprob_token_ids", "when using `logprob_token_ids`, `logprobs` must be set to true.")
		}
	}
	if p := r.PromptLogprobs; p != nil {
		if r.Streaming() && (*p > 0 || *p == -1) {
			return Invalid("prompt_logprobs", "`prompt_logprobs` are not available when `stream=True`.")
		}
		if *p < 0 && *p != -1 {
			return Invalid("prompt_logprobs", "`prompt_logprobs` must be a positive value or -1.")
		}
	}
	if t := r.TopLogprobs; t != nil {
		if *t < 0 && *t != -1 {
			return Invalid("top_logprobs", "`top_logprobs` must be a positive value or -1.")
		}
		if (*t > 0 || *t == -1) && !logprobs {
			return Invalid("top_logprobs", "when using `top_logprobs`, `logprobs` must be set to true.")
		}
	}
	return nil
}

// constraintKinds lists the structured-output constraints present, after
// response_format has been merged in as vLLM merges it.
func (r *CompletionRequest) constraintKinds() []string {
	var kinds []string
	so := r.StructuredOutputs
	if so == nil {
		so = &StructuredOutputs{}
	}
	present := func(raw json.RawMessage) bool { return len(raw) > 0 && !bytes.Equal(raw, []byte("null")) }
	set := map[string]bool{
		"json": present(so.JSON), "regex": so.Regex != nil, "choice": so.Choice != nil,
		"grammar": so.Grammar != nil, "json_object": so.JSONObject != nil && *so.JSONObject,
		"structural_tag": present(so.StructuralTag),
	}
	if rf := r.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			set["json_object"] = true
		case "json_schema":
			set["json"] = true
		case "structural_tag":
			set["structural_tag"] = true
		}
	}
	for kind, ok := range set {
		if ok {
			kinds = append(kinds, kind)
		}
	}
	sort.Strings(kinds)
	return kinds
}

func checkStructuredOutputs(r *CompletionRequest, _ ModelInfo) error {
	if so := r.StructuredOutputs; so != nil {
		count := 0
		if len(so.JSON) > 0 && !bytes.Equal(so.JSON, []byte("null")) {
			count++
		}
		if so.Regex != nil {
			count++
		}
		if so.Choice != nil {
			count++
		}
		if count > 1 {
			return Invalid("structured_outputs", "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').")
		}
		if count > 0 && namedToolChoice(r.ToolChoice) {
			return Invalid("structured_outputs", "You can only either use constraints for structured outputs or tools, not both.")
		}
	}
	if kinds := r.constraintKinds(); len(kinds) > 1 {
		quoted := make([]string, len(kinds))
		for i, k := range kinds {
			quoted[i] = "'" + k + "'"
		}
		return Invalid("structured_outputs", "You can only use one kind of structured outputs constraint but multiple are specified: {%s}", strings.Join(quoted, ", "))
	}
	return nil
}

func namedToolChoice(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '{'
}

const correctToolChoice = "Correct usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`"

func checkTools(r *CompletionRequest, _ ModelInfo) error {
	if r.Tools != nil && len(r.Tools) == 0 {
		return Invalid("tools", "`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.")
	}
	if !r.Has("tool_choice") {
		return nil
	}
	var choice any
	if err := json.Unmarshal(r.ToolChoice, &choice); err != nil {
		return Malformed("tool_choice", "type_error", "Input should be a valid string or dictionary")
	}
	if choice == "none" {
		return nil
	}
	if r.Tools == nil {
		return Invalid("tool_choice", "When using `tool_choice`, `tools` must be set.")
	}
	named, isObject := choice.(map[string]any)
	if choice != "auto" && choice != "required" && !isObject {
		return Invalid("tool_choice", "Invalid value for `tool_choice`: %s! Only named tools, \"none\", \"auto\" or \"required\" are supported.", pythonRepr(choice))
	}
	if !isObject {
		return nil
	}
	function, ok := named["function"].(map[string]any)
	if !ok {
		return Invalid("tool_choice.function", "Invalid value for `function`: `%s` in `tool_choice`! %s", pythonRepr(named["function"]), correctToolChoice)
	}
	nameValue, ok := function["name"]
	if !ok {
		return Invalid("tool_choice.function", "Expected field `name` in `function` in `tool_choice`! %s", correctToolChoice)
	}
	name, ok := nameValue.(string)
	if !ok || name == "" {
		return Invalid("tool_choice.function.name", "Invalid `name` in `function`: `%s` in `tool_choice`! %s", pythonRepr(nameValue), correctToolChoice)
	}
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return nil
		}
	}
	return Invalid("tool_choice", "The tool specified in `tool_choice` does not match any of the specified `tools`")
}

func checkGenerationPrompt(r *CompletionRequest, _ ModelInfo) error {
	addPrompt := r.AddGenerationPrompt == nil || *r.AddGenerationPrompt
	if r.ContinueFinalMessage != nil && *r.ContinueFinalMessage && addPrompt {
		return Invalid("", "Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
	}
	return nil
}

// checkLogitsProcessors checks the shape the field had while vLLM took it: a
// list of qualified names or {qualname, args?, kwargs?} objects.
func checkLogitsProcessors(r *CompletionRequest, _ ModelInfo) error {
	if !r.Has("logits_processors") {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(r.LogitsProcessors, &items); err != nil {
		return Malformed("logits_processors", "list_type", "Input should be a valid list")
	}
	for i, item := range items {
		var name string
		if json.Unmarshal(item, &name) == nil {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(item, &obj); err != nil || obj == nil {
			return Malformed(fmt.Sprintf("logits_processors.%d", i), "model_type", "Input should be a valid string or an object with a qualname")
		}
		if err := json.Unmarshal(obj["qualname"], &name); err != nil || name == "" {
			return Malformed(fmt.Sprintf("logits_processors.%d.qualname", i), "missing", "Field required")
		}
		for key, value := range obj {
			switch key {
			case "qualname":
			case "args":
				if value[0] != '[' && !bytes.Equal(value, []byte("null")) {
					return Malformed(fmt.Sprintf("logits_processors.%d.args", i), "list_type", "Input should be a valid list")
				}
			case "kwargs":
				if value[0] != '{' && !bytes.Equal(value, []byte("null")) {
					return Malformed(fmt.Sprintf("logits_processors.%d.kwargs", i), "dict_type", "Input should be a valid dictionary")
				}
			default:
				return Malformed(fmt.Sprintf("logits_processors.%d.%s", i, key), "extra_forbidden", "Extra inputs are not permitted")
			}
		}
	}
	return nil
}

// checkSampling mirrors SamplingParams._verify_args and the serving layer's
// n and priority checks.
func checkSampling(r *CompletionRequest, info ModelInfo) error {
	if r.N != nil {
		if *r.N < 1 {
			return Invalid("n", "n must be at least 1, got %d.", *r.N)
		}
		if *r.N > maxN {
			return Invalid("n", "n must be at most %d, got %d. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.", maxN, *r.N)
		}
	}
	beam := r.UseBeamSearch != nil && *r.UseBeamSearch
	for _, penalty := range []struct {
		name  string
		value *float64
	}{{"presence_penalty", r.PresencePenalty}, {"frequency_penalty", r.FrequencyPenalty}} {
		if v := penalty.value; v != nil && (*v < -2 || *v > 2) {
			return Invalid(penalty.name, "%s must be in [-2, 2], got %s.", penalty.name, pyFloat(*v))
		}
	}
	if v := r.RepetitionPenalty; v != nil && (*v <= 0 || math.IsInf(*v, 0)) {
		return Invalid("repetition_penalty", "repetition_penalty must be a positive finite number, got %s.", pyFloat(*v))
	}
	if t := r.Temperature; t != nil {
		switch {
		case *t < 0:
			return Invalid("temperature", "temperature must be non-negative, got %s.", pyFloat(*t))
		case *t > 2:
			return Invalid("temperature", "temperature must be in [0, 2], got %s.", pyFloat(*t))
		}
		if *t < greedyEpsilon && !beam && r.N != nil && *r.N > 1 {
			return Invalid("n", "n must be 1 when using greedy sampling, got %d.", *r.N)
		}
	}
	if v := r.TopP; v != nil && (*v <= 0 || *v > 1) {
		return Invalid("top_p", "top_p must be in (0, 1], got %s.", pyFloat(*v))
	}
	if v := r.TopK; v != nil && *v < -1 {
		return Invalid("top_k", "top_k must be 0 (disable), or at least 1, got %d.", *v)
	}
	if v := r.MinP; v != nil && (*v < 0 || *v > 1) {
		return Invalid("min_p", "min_p must be in [0, 1], got %s.", pyFloat(*v))
	}
	maxTokens := r.MaxCompletionTokens
	if maxTokens == nil {
		maxTokens = r.MaxTokens
	}
	if maxTokens != nil && *maxTokens < 1 {
		return Invalid("max_tokens", "max_tokens must be at least 1, got %d.", *maxTokens)
	}
	if v := r.MinTokens; v != nil {
		if *v < 0 {
			return Invalid("min_tokens", "min_tokens must be greater than or equal to 0, got %d.", *v)
		}
		if maxTokens != nil && *v > *maxTokens {
			return Invalid("min_tokens", "min_tokens must be less than or equal to max_tokens=%d, got %d.", *maxTokens, *v)
		}
	}
	if err := checkStop(r); err != nil {
		return err
	}
	if v := r.TruncatePromptTokens; v != nil {
		if *v < -1 {
			return Malformed("truncate_prompt_tokens", "greater_than_equal", "Input should be greater than or equal to -1")
		}
		if info.MaxModelLen > 0 && *v > info.MaxModelLen {
			return Invalid("truncate_prompt_tokens", "truncate_prompt_tokens value is greater than max_model_len. Please, select a smaller truncation size.")
		}
	}
	if v := r.ThinkingTokenBudget; v != nil && *v < -1 {
		return Invalid("thinking_token_budget", "`thinking_token_budget` must be a non-negative integer or -1 for unlimited.")
	}
	if r.AllowedTokenIDs != nil && len(r.AllowedTokenIDs) == 0 {
		return Invalid("allowed_token_ids", "allowed_token_ids is not None and empty!")
	}
	for _, w := range r.BadWords {
		if w == "" {
			return Invalid("bad_words", "bad_words cannot contain an empty string.")
		}
	}
	if bad := nonIntegerKeys(r.LogitBias); len(bad) > 0 {
		return Invalid("logit_bias", "logit_bias contains key(s) that cannot be converted to integer token IDs: [%s]", strings.Join(bad, ", "))
	}
	if p := r.Priority; p != nil && *p != 0 && !info.PriorityScheduling {
		return Invalid("priority", "Got priority %d but Priority scheduling is not enabled.", *p)
	}
	return nil
}

func checkStop(r *CompletionRequest) error {
	if !r.Has("stop") {
		return nil
	}
	var stops []string
	if r.Stop[0] == '"' {
		var one string
		if err := json.Unmarshal(r.Stop, &one); err != nil {
			return Malformed("stop", "string_type", "Input should be a valid string")
		}
		stops = []string{one}
	} else if err := json.Unmarshal(r.Stop, &stops); err != nil {
		return Malformed("stop", "list_type", "Input should be a valid string or list of strings")
	}
	for _, s := range stops {
		if s == "" {
			return Invalid("stop", "stop cannot contain an empty string.")
		}
	}
	return nil
}

func nonIntegerKeys(bias map[string]float64) []string {
	var bad []string
	for k := range bias {
		if _, err := strconv.ParseInt(strings.TrimSpace(k), 10, 64); err != nil {
			bad = append(bad, "'"+k+"'")
		}
	}
	sort.Strings(bad)
	return bad
}

// checkTokenIDs bounds token ids by the vocabulary when it is known.
func checkTokenIDs(r *CompletionRequest, info ModelInfo) error {
	if info.VocabSize <= 0 {
		return nil
	}
	outside := func(ids []int64) []string {
		var bad []string
		for _, id := range ids {
			if id < 0 || id >= info.VocabSize {
				bad = append(bad, strconv.FormatInt(id, 10))
			}
		}
		return bad
	}
	var biasIDs []int64
	for k := range r.LogitBias {
		id, _ := strconv.ParseInt(strings.TrimSpace(k), 10, 64)
		biasIDs = append(biasIDs, id)
	}
	sort.Slice(biasIDs, func(i, j int) bool { return biasIDs[i] < biasIDs[j] })
	if bad := outside(biasIDs); len(bad) > 0 {
		return Invalid("logit_bias", "token_id(s) [%s] in logit_bias contain out-of-vocab token ids. Vocabulary size: %d", strings.Join(bad, ", "), info.VocabSize)
	}
	if bad := outside(r.StopTokenIDs); len(bad) > 0 {
		return Invalid("stop_token_ids", "token_id(s) [%s] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: %d", strings.Join(bad, ", "), info.VocabSize)
	}
	if len(outside(r.AllowedTokenIDs)) > 0 {
		return Invalid("allowed_token_ids", "allowed_token_ids contains out-of-vocab token id!")
	}
	if bad := outside(r.LogprobTokenIDs); len(bad) > 0 {
		return Invalid("logprob_token_ids", "token_id(s) [%s] in logprob_token_ids contain out-of-vocab token ids. Vocabulary size: %d", strings.Join(bad, ", "), info.VocabSize)
	}
	return nil
}

// checkModelLimits applies max_logprobs and the context length.
func checkModelLimits(r *CompletionRequest, info ModelInfo) error {
	maxLogprobs := info.MaxLogprobs
	if maxLogprobs == 0 {
		maxLogprobs = 20
	}
	for _, lp := range []struct {
		name  string
		value *int64
	}{{"top_logprobs", r.TopLogprobs}, {"prompt_logprobs", r.PromptLogprobs}} {
		if v := lp.value; v != nil && *v > maxLogprobs {
			return Invalid(lp.name, "Requested %s of %d, which is greater than max allowed: %d", strings.TrimSuffix(lp.name, "s"), *v, maxLogprobs)
		}
	}
	maxTokens := r.MaxCompletionTokens
	if maxTokens == nil {
		maxTokens = r.MaxTokens
	}
	if info.MaxModelLen > 0 && !info.TokenizesPrompt && maxTokens != nil && *maxTokens >= info.MaxModelLen {
		return Invalid("max_tokens", "'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is %d tokens and your request has at least 1 input token (%d > %d - 1).", *maxTokens, info.MaxModelLen, *maxTokens, info.MaxModelLen)
	}
	return nil
}

// pythonRepr renders a decoded JSON value as Python's str() would, for
// messages that embed the offending value.
func pythonRepr(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case string:
		return v
	case float64:
		return pyFloat(v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = "'" + k + "': " + quotedRepr(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, item := range v {
			parts[i] = quotedRepr(item)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func quotedRepr(v any) string {
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	return pythonRepr(v)
}

// pyFloat formats a float as Python prints it (2.5, 3.0).
func pyFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
