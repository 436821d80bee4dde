// Package otlp turns OpenTelemetry spans into calls: the translation behind
// weft's OTLP/HTTP trace ingest (POST /otel/v1/traces). It holds no HTTP and
// no storage: [Converter.Convert] takes decoded spans and returns, per span,
// the start and end records the trace service stores, or why the span cannot
// be one.
//
// # What is mapped
//
// A span becomes one call: its hex span, trace and parent ids become the
// call's ids, its name the op name, its times (UTC; an end before the start
// is clamped to the start) the call's times. Status ERROR or an "exception"
// event becomes the call's exception. The whole span (attributes, events,
// links, resource and scope) is kept under attributes.otel_span.
//
// Inputs, output, model, usage and display name come from the first of these
// conventions a span carries: the GenAI semantic conventions (current
// gen_ai.input.messages / gen_ai.output.messages, and the older
// gen_ai.*.message and gen_ai.choice events and gen_ai.prompt.N attributes),
// OpenInference, OpenLLMetry (traceloop.*), the Vercel AI SDK (ai.*),
// pydantic-ai and Logfire, and Weave's wandb.* keys. Chat messages of every
// convention are rewritten to the OpenAI shape the SDK-traced chats have:
// inputs {"messages": [...]} and output {"choices": [{"message": ...}]}.
//
// Usage is recorded only on spans that are one model request (a chat, a
// completion, an embedding); agent and wrapper spans that repeat their
// children's totals are not counted again. It is keyed by the response model
// and counts requests: 1.
//
// # Using it
//
//	conv := otlp.New(otlp.Config{})
//	spans, dropped := conv.Convert(traces, "entity/project")
//
// The project of a span is named by its resource's wandb.entity and
// wandb.project attributes, else the default given to Convert. Logfire's
// pending spans are dropped (counted, not returned); oversize attribute
// values are truncated with a marker ([TruncationMarker]). [New] takes a
// [Config] whose zero fields are the documented defaults.
//
// A span that cannot be a call carries an error wrapping [ErrInvalidSpan]
// (no ids, no times) or [ErrNoProject]; the calls of the others still go
// through the trace service's own checks when stored.
//
// Files: config.go, errors.go, convert.go (a span to a call: ids, times,
// exception, the raw span), extract.go (inputs and output per convention),
// messages.go (chat messages to the OpenAI shape), usage.go (which spans
// count usage, and the counters), values.go (attribute values), keys.go (the
// attribute names read).
package otlp
