package chat

import (
	"errors"
	"testing"

	"github.com/weftlabs/weft"
)

// Every vLLM request-level validator, with its exact message and param.
func TestValidate(t *testing.T) {
	t.Parallel()
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	info := ModelInfo{MaxModelLen: 4096, VocabSize: 1000}
	for _, tc := range []struct {
		name, body string
		info       ModelInfo
		param, msg string
		class      error
	}{
		{name: "valid", body: `{"model":"m",` + msgs + `,"n":2,"temperature":0.7,"unknown_field":{"x":1}}`},
		{name: "top_logprobs without logprobs", body: `{` + msgs + `,"top_logprobs":3}`, param: "top_logprobs", msg: "when using `top_logprobs`, `logprobs` must be set to true."},
		{name: "top_logprobs negative", body: `{` + msgs + `,"logprobs":true,"top_logprobs":-2}`, param: "top_logprobs", msg: "`top_logprobs` must be a positive value or -1."},
		{name: "top_logprobs not integer", body: `{` + msgs + `,"logprobs":true,"top_logprobs":1.5}`, param: "top_logprobs", msg: "`top_logprobs` must be an integer."},
		{name: "top_logprobs over max", body: `{` + msgs + `,"logprobs":true,"top_logprobs":21}`, param: "top_logprobs", msg: "Requested top_logprob of 21, which is greater than max allowed: 20"},
		{name: "prompt_logprobs with stream", body: `{` + msgs + `,"stream":true,"prompt_logprobs":1}`, param: "prompt_logprobs", msg: "`prompt_logprobs` are not available when `stream=True`."},
		{name: "prompt_logprobs negative", body: `{` + msgs + `,"prompt_logprobs":-3}`, param: "prompt_logprobs", msg: "`prompt_logprobs` must be a positive value or -1."},
		{name: "logprob_token_ids empty", body: `{` + msgs + `,"logprob_token_ids":[]}`, param: "logprob_token_ids", msg: "`logprob_token_ids` must not be an empty list."},
		{name: "logprob_token_ids beam", body: `{` + msgs + `,"logprob_token_ids":[1],"use_beam_search":true}`, param: "logprob_token_ids", msg: "`logprob_token_ids` is not supported with beam search."},
		{name: "logprob_token_ids without logprobs", body: `{` + msgs + `,"logprob_token_ids":[1]}`, param: "logprob_token_ids", msg: "when using `logprob_token_ids`, `logprobs` must be set to true."},
		{name: "continue_final_message with add_generation_prompt", body: `{` + msgs + `,"continue_final_message":true}`, msg: "Cannot set both `continue_final_message` and `add_generation_prompt` to True."},
		{name: "continue_final_message alone", body: `{` + msgs + `,"continue_final_message":true,"add_generation_prompt":false}`},
		{name: "two structured outputs", body: `{` + msgs + `,"structured_outputs":{"json":{"type":"object"},"regex":"a+"}}`, param: "structured_outputs", msg: "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice')."},
		{name: "structured output with named tool", body: `{` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}},"structured_outputs":{"choice":["a"]}}`, param: "structured_outputs", msg: "You can only either use constraints for structured outputs or tools, not both."},
		{name: "response_format plus grammar", body: `{` + msgs + `,"response_format":{"type":"json_object"},"structured_outputs":{"grammar":"root ::= x"}}`, param: "structured_outputs", msg: "You can only use one kind of structured outputs constraint but multiple are specified: {'grammar', 'json_object'}"},
		{name: "json_schema without schema", body: `{` + msgs + `,"response_format":{"type":"json_schema"}}`, param: "response_format", msg: "When response_format type is 'json_schema', the 'json_schema' field must be provided."},
		{name: "stream_options without stream", body: `{` + msgs + `,"stream_options":{"include_usage":true}}`, param: "stream_options", msg: "Stream options can only be defined when `stream=True`."},
		{name: "empty stream_options without stream", body: `{` + msgs + `,"stream_options":{}}`},
		{name: "empty tools", body: `{` + msgs + `,"tools":[]}`, param: "tools", msg: "`tools` must not be an empty array. Either provide at least one tool or omit the field entirely."},
		{name: "tool_choice without tools", body: `{` + msgs + `,"tool_choice":"auto"}`, param: "tool_choice", msg: "When using `tool_choice`, `tools` must be set."},
		{name: "tool_choice none without tools", body: `{` + msgs + `,"tool_choice":"none"}`},
		{name: "tool_choice bad string", body: `{` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"always"}`, param: "tool_choice", msg: "Invalid value for `tool_choice`: always! Only named tools, \"none\", \"auto\" or \"required\" are supported."},
		{name: "tool_choice function not object", body: `{` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":"f"}}`, param: "tool_choice.function", msg: "Invalid value for `function`: `f` in `tool_choice`! " + correctToolChoice},
		{name: "tool_choice without name", body: `{` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{}}}`, param: "tool_choice.function", msg: "Expected field `name` in `function` in `tool_choice`! " + correctToolChoice},
		{name: "tool_choice empty name", body: `{` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":""}}}`, param: "tool_choice.function.name", msg: "Invalid `name` in `function`: `` in `tool_choice`! " + correctToolChoice},
		{name: "tool_choice unknown tool", body: `{` + msgs + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, param: "tool_choice", msg: "The tool specified in `tool_choice` does not match any of the specified `tools`"},
		{name: "n zero", body: `{` + msgs + `,"n":0}`, param: "n", msg: "n must be at least 1, got 0."},
		{name: "n too large", body: `{` + msgs + `,"n":16385}`, param: "n", msg: "n must be at most 16384, got 16385. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable."},
		{name: "n with greedy", body: `{` + msgs + `,"n":2,"temperature":0}`, param: "n", msg: "n must be 1 when using greedy sampling, got 2."},
		{name: "n with greedy beam search", body: `{` + msgs + `,"n":2,"temperature":0,"use_beam_search":true}`},
		{name: "truncate_prompt_tokens below -1", body: `{` + msgs + `,"truncate_prompt_tokens":-2}`, param: "truncate_prompt_tokens", msg: "1 validation error:\n  {'type': 'greater_than_equal', 'loc': ('body', 'truncate_prompt_tokens'), 'msg': 'Input should be greater than or equal to -1'}", class: ErrMalformed},
		{name: "truncate_prompt_tokens -1", body: `{` + msgs + `,"truncate_prompt_tokens":-1}`},
		{name: "truncate_prompt_tokens over context", info: info, body: `{` + msgs + `,"truncate_prompt_tokens":5000}`, param: "truncate_prompt_tokens", msg: "truncate_prompt_tokens value is greater than max_model_len. Please, select a smaller truncation size."},
		{name: "seed out of range", body: `{` + msgs + `,"seed":9223372036854775808}`, param: "seed", msg: "1 validation error:\n  {'type': 'less_than_equal', 'loc': ('body', 'seed'), 'msg': 'Input should be between -9223372036854775808 and 9223372036854775807'}", class: ErrMalformed},
		{name: "seed at bound", body: `{` + msgs + `,"seed":-9223372036854775808}`},
		{name: "logits_processors not list", body: `{` + msgs + `,"logits_processors":"a.b"}`, param: "logits_processors", msg: "1 validation error:\n  {'type': 'list_type', 'loc': ('body', 'logits_processors'), 'msg': 'Input should be a valid list'}", class: ErrMalformed},
		{name: "logits_processors without qualname", body: `{` + msgs + `,"logits_processors":[{"args":[1]}]}`, param: "logits_processors.0.qualname", msg: "1 validation error:\n  {'type': 'missing', 'loc': ('body', 'logits_processors.0.qualname'), 'msg': 'Field required'}", class: ErrMalformed},
		{name: "logits_processors extra key", body: `{` + msgs + `,"logits_processors":["a.b",{"qualname":"x.y","other":1}]}`, param: "logits_processors.1.other", msg: "1 validation error:\n  {'type': 'extra_forbidden', 'loc': ('body', 'logits_processors.1.other'), 'msg': 'Extra inputs are not permitted'}", class: ErrMalformed},
		{name: "logits_processors valid", body: `{` + msgs + `,"logits_processors":["a.b",{"qualname":"x.y","args":[1],"kwargs":{"k":2}}]}`},
		{name: "priority without scheduling", body: `{` + msgs + `,"priority":5}`, param: "priority", msg: "Got priority 5 but Priority scheduling is not enabled."},
		{name: "priority with scheduling", info: ModelInfo{PriorityScheduling: true}, body: `{` + msgs + `,"priority":5}`},
		{name: "cache_salt empty", body: `{` + msgs + `,"cache_salt":""}`, param: "cache_salt", msg: "Parameter 'cache_salt' must be a non-empty string if provided."},
		{name: "cache_salt slash", body: `{` + msgs + `,"cache_salt":"a/b"}`, param: "cache_salt", msg: "Parameter 'cache_salt' must be at most 128 characters and must not contain '@', '/', '\\\\', or NUL."},
		{name: "temperature too high", body: `{` + msgs + `,"temperature":2.5}`, param: "temperature", msg: "temperature must be in [0, 2], got 2.5."},
		{name: "top_p zero", body: `{` + msgs + `,"top_p":0}`, param: "top_p", msg: "top_p must be in (0, 1], got 0.0."},
		{name: "top_k below -1", body: `{` + msgs + `,"top_k":-2}`, param: "top_k", msg: "top_k must be 0 (disable), or at least 1, got -2."},
		{name: "frequency_penalty range", body: `{` + msgs + `,"frequency_penalty":3}`, param: "frequency_penalty", msg: "frequency_penalty must be in [-2, 2], got 3.0."},
		{name: "max_tokens zero", body: `{` + msgs + `,"max_tokens":0}`, param: "max_tokens", msg: "max_tokens must be at least 1, got 0."},
		{name: "max_tokens over context", info: info, body: `{` + msgs + `,"max_tokens":5000}`, param: "max_tokens", msg: "'max_tokens' or 'max_completion_tokens' is too large: 5000. This model's maximum context length is 4096 tokens and your request has at least 1 input token (5000 > 4096 - 1)."},
		{name: "stop empty string", body: `{` + msgs + `,"stop":["a",""]}`, param: "stop", msg: "stop cannot contain an empty string."},
		{name: "logit_bias bad key", body: `{` + msgs + `,"logit_bias":{"x":1}}`, param: "logit_bias", msg: "logit_bias contains key(s) that cannot be converted to integer token IDs: ['x']"},
		{name: "logit_bias out of vocab", info: info, body: `{` + msgs + `,"logit_bias":{"1000":1}}`, param: "logit_bias", msg: "token_id(s) [1000] in logit_bias contain out-of-vocab token ids. Vocabulary size: 1000"},
		{name: "stop_token_ids out of vocab", info: info, body: `{` + msgs + `,"stop_token_ids":[5,2000]}`, param: "stop_token_ids", msg: "token_id(s) [2000] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: 1000"},
		{name: "allowed_token_ids empty", body: `{` + msgs + `,"allowed_token_ids":[]}`, param: "allowed_token_ids", msg: "allowed_token_ids is not None and empty!"},
		{name: "messages missing", body: `{"model":"m"}`, param: "messages", msg: "1 validation error:\n  {'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field required'}", class: ErrMalformed},
		{name: "n wrong type", body: `{` + msgs + `,"n":"two"}`, param: "n", msg: "1 validation error:\n  {'type': 'type_error', 'loc': ('body', 'n'), 'msg': 'Input should be a valid integer'}", class: ErrMalformed},
		{name: "not an object", body: `[1]`, msg: "1 validation error:\n  {'type': 'dict_type', 'loc': ('body'), 'msg': 'Input should be a valid dictionary'}", class: ErrMalformed},
		{name: "not json", body: `{`, msg: "1 validation error:\n  {'type': 'json_invalid', 'loc': ('body'), 'msg': 'JSON decode error'}", class: ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := ParseRequest([]byte(tc.body))
			if err == nil {
				err = Validate(req, tc.info)
			}
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want %q, got no error", tc.msg)
			}
			class := tc.class
			if class == nil {
				class = ErrBadRequest
			}
			if !errors.Is(err, class) || !errors.Is(err, weft.ErrInvalid) {
				t.Errorf("error class of %v: want %v", err, class)
			}
			if err.Error() != tc.msg {
				t.Errorf("message:\n got %q\nwant %q", err.Error(), tc.msg)
			}
			param, _ := weft.ErrorFields(err)["param"].(string)
			if param != tc.param {
				t.Errorf("param = %q, want %q", param, tc.param)
			}
		})
	}
}
