package chat

import (
	"bytes"
	"encoding/json"

	"github.com/weftlabs/weft"
)

// vllmOnly lists vLLM's extensions with the value that means "not used": an
// OpenAI upstream gets the request without them when they hold that value and
// a 400 otherwise. structured_outputs and the xargs are handled separately.
var vllmOnly = map[string]string{
	"use_beam_search": "false", "top_k": "", "min_p": "", "repetition_penalty": "", "length_penalty": "1",
	"stop_token_ids": "[]", "include_stop_str_in_output": "false", "ignore_eos": "false", "min_tokens": "0",
	"skip_special_tokens": "true", "spaces_between_special_tokens": "true", "truncate_prompt_tokens": "",
	"prompt_logprobs": "", "logprob_token_ids": "", "allowed_token_ids": "", "bad_words": "[]", "echo": "false",
	"add_generation_prompt": "true", "continue_final_message": "false", "add_special_tokens": "false",
	"documents": "", "chat_template": "", "chat_template_kwargs": "", "mm_processor_kwargs": "",
	"priority": "0", "request_id": "", "logits_processors": "", "return_tokens_as_token_ids": "false",
	"return_token_ids": "false", "cache_salt": "", "kv_transfer_params": "", "include_reasoning": "true",
	"thinking_token_budget": "", "repetition_detection": "", "stream_interval": "", "session_id": "",
	"truncation_side": "", "watermarking": "", "return_prompt_text": "false", "media_io_kwargs": "",
	"ec_transfer_params": "", "routed_experts_prompt_start": "0",
}

// upstreamBody is the request as upstream u takes it: the client's JSON with
// the model renamed, engine_xargs under vLLM's name, and for OpenAI upstreams
// the vLLM extensions translated or refused. Everything else is forwarded as
// the client sent it.
func upstreamBody(req *CompletionRequest, u Upstream) ([]byte, error) {
	edits := map[string]json.RawMessage{}
	if model, _ := req.Field("model"); string(model) != strconvQuote(u.Model) {
		edits["model"], _ = json.Marshal(u.Model)
	}
	xargs, hasXargs := req.Field("engine_xargs")
	if hasXargs {
		edits["engine_xargs"] = nil
	}
	if vx, ok := req.Field("vllm_xargs"); ok && !isNull(vx) {
		xargs, hasXargs = vx, true
	}
	if u.Kind == KindVLLM {
		if hasXargs {
			edits["vllm_xargs"] = xargs
		}
		if len(edits) == 0 {
			return req.raw, nil
		}
		return patchObject(req.raw, req.members, edits), nil
	}
	edits["vllm_xargs"] = nil
	if hasXargs && !isNull(xargs) {
		return nil, unsupported("vllm_xargs", u)
	}
	if err := translateStructuredOutputs(req, edits, u); err != nil {
		return nil, err
	}
	for name, unused := range vllmOnly {
		v, ok := req.Field(name)
		if !ok {
			continue
		}
		if isNull(v) || (unused != "" && string(bytes.TrimSpace(v)) == unused) {
			edits[name] = nil
			continue
		}
		return nil, unsupported(name, u)
	}
	return patchObject(req.raw, req.members, edits), nil
}

// strconvQuote is the JSON text of a string.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// translateStructuredOutputs turns structured_outputs.json into OpenAI's
// response_format json_schema and json_object into response_format
// json_object; the other constraint kinds have no OpenAI equivalent.
func translateStructuredOutputs(req *CompletionRequest, edits map[string]json.RawMessage, u Upstream) error {
	so := req.StructuredOutputs
	edits["structured_outputs"] = nil
	if so == nil {
		return nil
	}
	switch {
	case so.Regex != nil:
		return unsupported("structured_outputs.regex", u)
	case so.Choice != nil:
		return unsupported("structured_outputs.choice", u)
	case so.Grammar != nil:
		return unsupported("structured_outputs.grammar", u)
	case len(so.StructuralTag) > 0 && !isNull(so.StructuralTag):
		return unsupported("structured_outputs.structural_tag", u)
	case len(so.JSON) > 0 && !isNull(so.JSON):
		schema := so.JSON
		var text string
		if json.Unmarshal(schema, &text) == nil { // a schema sent as a JSON string
			if !json.Valid([]byte(text)) {
				return Invalid("structured_outputs", "structured_outputs.json is not a valid JSON schema")
			}
			schema = json.RawMessage(text)
		}
		rf, _ := json.Marshal(map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "structured_output", "schema": schema, "strict": true,
		}})
		edits["response_format"] = rf
	case so.JSONObject != nil && *so.JSONObject:
		edits["response_format"] = json.RawMessage(`{"type":"json_object"}`)
	}
	return nil
}

func unsupported(field string, u Upstream) error {
	return weft.WithFields(ErrUnsupportedField, map[string]any{"param": field},
		"`%s` is not supported by the upstream serving model `%s` (kind %s) and has no translation.", field, u.Model, u.Kind)
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }
