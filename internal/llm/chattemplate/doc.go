// Package chattemplate turns a chat conversation into a model's prompt text
// with the model's own chat template, byte for byte as vLLM does with
// Hugging Face transformers.
//
// A Template is loaded from tokenizer_config.json (chat_template as a string
// or as a list of named templates) and, when the model directory has one,
// chat_template.jinja, which wins over the config's. The config's special
// tokens (bos_token, eos_token, ..., additional_special_tokens and
// extra_special_tokens; AddedToken objects by their content) become template
// variables, as transformers' special_tokens_map does.
//
// Render builds the variables the way vLLM hands them to the template:
//
//   - messages carry role and content; an assistant's also tool_calls (when
//     there are any, arguments parsed from their JSON text, {} when that is
//     not JSON) and reasoning / reasoning_content; a tool's tool_call_id; and
//     name, each only when the request gave it;
//   - content is a string (text parts joined with "\n", null as "") unless
//     the template walks message content as a list of parts, in which case it
//     gets the parts (a string as one text part; tool results stay text):
//     vLLM's "auto" content format, see DetectContentFormat;
//   - tools and documents are passed in order, None when absent;
//   - add_generation_prompt, and a request's chat_template_kwargs (which
//     override special tokens) as variables of their own.
//
// Templates run in package jinja, which follows Python Jinja's semantics
// (not JavaScript's): its output is what vLLM renders.
// continue_final_message cuts the prompt after the final message's text as
// transformers does; raise_exception surfaces as a *RaiseError. Every error
// Render returns comes from the request or the template (a 400 for a
// server), never from the engine.
//
// The tests compare with golden files rendered by @huggingface/jinja from the
// real tokenizer configs of Qwen3, Llama 3, Gemma 3 and DeepSeek V3 (see
// internal/llm/testdata/oracle/gen-template-golden.mjs), and package jinja's
// with a feature corpus rendered by both @huggingface/jinja and Python's
// Jinja2.
package chattemplate
