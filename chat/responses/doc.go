// Package responses serves OpenAI's Responses API over chat completions.
//
// A Responses request (Request) becomes a chat-completion request
// (ChatRequest): instructions a system message, the input's messages,
// function calls and their outputs the assistant and tool messages of the
// conversation, function tools chat tools, text.format response_format,
// reasoning.effort reasoning_effort; a previous_response_id's stored
// history comes first. The chat answer becomes a Response (FromChat):
// reasoning a reasoning item, content an output message, tool calls
// function_call items; a stream of chat chunks becomes the Responses event
// sequence (Stream): response.created, response.in_progress, each output
// item's added, part and delta events and their done events in order, and
// response.completed (response.incomplete when max_output_tokens cut it
// short, response.failed when the generation failed).
//
// Responses are stored (Store) per project with their input items, so
// GET and DELETE /v1/responses/{id}, input_items and previous_response_id
// chains see only the caller's project's responses.
package responses
