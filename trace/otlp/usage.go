package otlp

import (
	"strings"
)

// llmOperations are the GenAI operation names (and OpenLLMetry request
// types) of one model request.
var llmOperations = map[string]bool{
	"chat": true, "text_completion": true, "generate_content": true, "embeddings": true,
	"completion": true, "embedding": true,
}

// isModelRequest reports whether the span is one request to a model, the
// only kind whose usage counts: an agent, chain or SDK wrapper span that
// repeats its children's totals (pydantic-ai's agent run, the AI SDK's
// ai.generateText around its doGenerate) would count them twice.
func isModelRequest(a attrs, name string) bool {
	op := a.str(keyAIOperationID)
	if op == "" && strings.HasPrefix(name, "ai.") {
		op = name
	}
	if op != "" {
		return strings.HasSuffix(op, ".doGenerate") || strings.HasSuffix(op, ".doStream") || strings.HasSuffix(op, ".doEmbed")
	}
	if kind := a.str(keyOISpanKind); kind != "" {
		return strings.EqualFold(kind, "LLM") || strings.EqualFold(kind, "EMBEDDING")
	}
	if op := a.str(keyGenAIOperation); op != "" {
		return llmOperations[op]
	}
	if typ := a.str(keyLLMRequestType); typ != "" {
		return llmOperations[typ]
	}
	if a.str(keyTraceloopSpanKind) != "" || a.str(keyGenAIAgentName) != "" {
		return false
	}
	// No convention says what the span is: a span naming a model and
	// counting tokens is taken for a model request.
	_, hasTokens := a.firstNumber(append(append([]string{}, promptTokenKeys...), completionTokenKeys...))
	return hasTokens && (a.str(keyGenAIRequestModel) != "" || a.str(keyGenAIResponseModel) != "" || a.str(keyOIModelName) != "")
}

// usageOf is the span's summary.usage entry in the counters the trace
// service reads (requests, prompt_tokens, completion_tokens, total_tokens,
// cache_read_input_tokens, cache_creation_input_tokens) plus
// reasoning_tokens when sent. Input tokens include cached ones in every
// convention read here, so no counter is added to another.
func usageOf(a attrs) map[string]any {
	u := map[string]any{"requests": 1}
	prompt, hasPrompt := a.firstNumber(promptTokenKeys)
	completion, hasCompletion := a.firstNumber(completionTokenKeys)
	if hasPrompt {
		u["prompt_tokens"] = count(prompt)
	}
	if hasCompletion {
		u["completion_tokens"] = count(completion)
	}
	if total, ok := a.firstNumber(totalTokenKeys); ok {
		u["total_tokens"] = count(total)
	} else if hasPrompt || hasCompletion {
		u["total_tokens"] = count(prompt + completion)
	}
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"cache_read_input_tokens", cacheReadTokenKeys},
		{"cache_creation_input_tokens", cacheCreationTokenKeys},
		{"reasoning_tokens", reasoningTokenKeys},
	} {
		if n, ok := a.firstNumber(c.keys); ok {
			u[c.name] = count(n)
		}
	}
	return u
}

// count writes a whole token count as an integer.
func count(f float64) any {
	if f == float64(int64(f)) {
		return int64(f)
	}
	return f
}
