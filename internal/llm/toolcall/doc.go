// Package toolcall reads tool calls and reasoning out of a model's text,
// whole or as it streams, the way the reference server's parsers do:
//
//   - Hermes / Qwen: <tool_call>{"name": ..., "arguments": {...}}</tool_call>
//     blocks; text before the first block is content.
//   - Llama 3 JSON: output that starts with <|python_tag|> or "{" is one
//     or more {"name": ..., "parameters"|"arguments": {...}} objects
//     separated by ";".
//   - Forced shapes: tool_choice naming a function (the output is its
//     arguments) and "required" (a JSON array of {"name", "parameters"}
//     objects; cut short, the calls as far as written, as streamed).
//   - Reasoning: the text of a think block the prompt left open or the
//     model opened with <think>, up to </think>; the rest is content.
//
// Every parser is incremental: Feed takes the next piece of text and
// returns what can be sent now — content, and tool-call deltas that give a
// call's index, id, type and name once, then fragments of its arguments —
// and Finish flushes the rest. The whole-text functions run the same
// parser over the whole text, so a streamed answer always concatenates to
// the non-streamed one. Arguments are the JSON text of the arguments value
// as the model wrote it (the reference server streams that text too; its
// non-streaming path re-serializes it, which changes only white space).
package toolcall
