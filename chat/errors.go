package chat

import "github.com/weftlabs/weft"

// VLLMVersion names the vLLM revision whose request model, defaults and
// validator messages this package reproduces: the 2026 line of
// vllm/entrypoints/openai/chat_completion/protocol.py (commit 002032ee) with
// vllm/sampling_params.py (commit 00388f65). In that revision
// stream_options.include_usage defaults to false, parallel_tool_calls to true,
// "tools": [] is rejected and truncate_prompt_tokens accepts -1. The request
// shape check of logits_processors comes from the last revision that still
// took the field (protocol.py 0052bed3), because the service interface lists it.
const VLLMVersion = "vllm@002032ee (2026; sampling_params@00388f65)"

// Errors. Each carries vLLM's error type; a "param" field names the request
// field at fault, as vLLM's envelope does.
var (
	// ErrBadRequest is a request that breaks one of vLLM's request-level rules.
	ErrBadRequest = weft.DefineError(weft.ErrInvalid, "BadRequestError", "bad request")
	// ErrMalformed is a request body that is not the documented shape (wrong
	// JSON type, missing messages); vLLM reports these as "Bad Request".
	ErrMalformed = weft.DefineError(weft.ErrInvalid, "Bad Request", "malformed request")
	// ErrModelNotFound is a model that no route serves and no adapter resolves.
	ErrModelNotFound = weft.DefineError(weft.ErrNotFound, "NotFoundError", "model not found")
	// ErrUnsupportedField is a field the routed upstream kind cannot take and
	// the gateway cannot translate.
	ErrUnsupportedField = weft.DefineError(weft.ErrInvalid, "BadRequestError", "field not supported by the upstream")
	// ErrUnsupportedEndpoint is a request through an API the model's route
	// does not serve (Route.Endpoints).
	ErrUnsupportedEndpoint = weft.DefineError(weft.ErrInvalid, "BadRequestError", "endpoint not served by the model")
	// ErrUpstreamUnavailable means every upstream of a route and its fallbacks
	// failed to answer (connect errors, timeouts, 5xx or 429 after retries).
	ErrUpstreamUnavailable = weft.DefineError(weft.ErrUpstream, "BadGatewayError", "no upstream answered")
)

// Invalid is ErrBadRequest about param, worded by format as vLLM words
// the rule broken; an empty param is sent as null.
func Invalid(param, format string, args ...any) error {
	if param == "" {
		return weft.Errorf(ErrBadRequest, format, args...)
	}
	return weft.WithFields(ErrBadRequest, map[string]any{"param": param}, format, args...)
}
