// Package inprocess serves chat models in-process as a vLLM server would:
// the [chat.Backend] of the routes of kind local, over weft's engine
// (internal/llm/engine), one engine per model.
//
// A routing file's local upstreams are checked by [Kind], handed to
// chat.ParseRouting; [AddModels] routes model directories and [ApplyLimits]
// the operator's per-request limits. [Open] opens the model of every local
// route of a [chat.Routing] once and fills the route's model metadata from
// it; the [Server] it returns is
// registered with the gateway, which keeps routing, validation, retries,
// fallbacks, relaying and tracing:
//
//	routing, err := chat.LoadRouting("routing.yaml", inprocess.Kind)
//	models, err := inprocess.Open(routing, inprocess.Config{})
//	defer models.Close() // after the gateway's Close
//	gateway, err := chat.New(chat.Config{Routing: routing, Backends: map[string]chat.Backend{chat.KindLocal: models}})
//
// A request's way through the server: the request's sampling, structured
// output, tool and reasoning fields become a plan (output.go: a constraint
// the engine masks every step with, and how the text is read back); the
// messages are rendered with the model's chat template and tokenized,
// then fitted to the context with vLLM's 400 messages (prompt.go); the
// engine generates (server.go) and its output is shaped as vLLM's
// ChatCompletionResponse (answer.go) or pushed into the relay's
// chat.FrameSink chunk by chunk as frames (stream.go), with reasoning and tool calls read back as
// vLLM's parsers read them (parse.go). POST /tokenize and /detokenize are
// answered with the model's own tokenizer and template (tokenize.go).
// Fields a local model cannot honour (beam search, structural tags) are a
// 400 naming the field. The engine's errors take weft's classes at this
// boundary (errors.go): an overloaded engine is a 503 with Retry-After,
// which the route's fallbacks may answer instead; a client that
// disconnects stops its generation.
package inprocess
