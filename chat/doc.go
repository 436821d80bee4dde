// Package chat is weft's OpenAI/vLLM-compatible gateway: POST
// /v1/chat/completions validates a request the way vLLM does, routes it to an
// OpenAI-compatible upstream chosen by a routing configuration, relays the
// answer (streamed frame by frame or whole) and records the exchange as a traced
// call in the caller's project. POST /image/create does the same for image
// generation and stores the images as files.
//
// # Compatibility
//
// Request fields, defaults and validator messages follow vLLM's
// ChatCompletionRequest at the revision weft pins (see [VLLMVersion]). Unknown
// fields are accepted and forwarded upstream untouched: the gateway keeps the
// request's raw JSON and only rewrites the keys it must (the upstream's model
// name, aliases, translations for upstream kinds that do not take vLLM's
// extensions).
//
// # Trained models
//
// A model name that no route serves but that names a trained model
// ("<entity>/<project>/<name>", "…:step<N>" or "wandb-artifact:///…") is asked
// of an [AdapterResolver]; a resolved LoRA adapter is loaded into the
// configured LoRA-capable vLLM upstream on first use and then addressed by name.
package chat
