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
// ChatCompletionRequest at the revision weft pins (see [VLLMVersion]); errors
// use vLLM's envelope {"error":{"message","type","param","code"}}: 400 for
// validation (type "BadRequestError", or "Bad Request" for a body of the wrong
// shape), 404 with param "model" for an unknown model. Unknown fields are
// accepted and forwarded upstream untouched: the gateway keeps the request's
// raw JSON and only rewrites the keys it must (the upstream's model name,
// engine_xargs sent as vllm_xargs, translations for upstream kinds that do not
// take vLLM's extensions). Model-aware checks (vocabulary bounds,
// max_logprobs, context length, priority scheduling) run when the route
// declares the metadata they need; unlike vLLM they answer 400 before a stream
// starts rather than as an in-stream error.
//
// # Routing
//
// [Routing] (a YAML or JSON file, see [LoadRouting]) maps public model names
// to upstreams with weights, per-route timeouts, retries with exponential
// backoff and ordered fallbacks. Connect errors, timeouts, 5xx and 429 are
// retried; when everything failed the last upstream error is relayed with its
// status and body. Other upstream errors (4xx) are relayed unchanged. All
// upstream requests share one keep-alive transport ([NewTransport]).
//
// # Backends
//
// Every upstream is a [Backend], answering the gateway's [Target]s with an
// [Answer]: a whole body, or a stream as frames (one chunk's JSON each,
// which the backend pushes into the relay's [FrameSink] as it makes them,
// so that an answer flows one way: gateway, backend, engine, and back
// through the sink to the client and the trace) or as server-sent events.
// A routing file's upstream options beyond [Upstream]'s own keys are its
// kind's ([UpstreamKind.Options]). The gateway's own relay serves the remote kinds
// (vllm, openai); other kinds are served by the backends registered for
// them in [Config.Backends], and a routing file names those kinds only
// through the [UpstreamKind] checks their packages hand [ParseRouting]. A
// route whose upstream is of kind local (or a directory given to the
// server's -model flag, see inprocess.AddModels) is checked and served
// in-process by package chat/inprocess: vLLM's serving layer over weft's
// engine, opened, owned and closed by whoever registers it. Relaying and tracing are the ones every backend
// goes through. POST /tokenize and /detokenize ([Gateway.Tokenize],
// [Gateway.Detokenize]) are answered by the backend of the named model;
// the remote relay refuses them.
//
// # Streaming
//
// Upstream server-sent events are relayed as they arrive, flushed event by
// event, so the role chunk, per-choice chunks and the usage chunk reach the
// client exactly as the upstream sent them. The stream always ends with
// "data: [DONE]"; an upstream that breaks off is reported as one error event
// first. A client that disconnects cancels the upstream request. Usage is
// never invented: a stream without a usage chunk is traced without usage.
//
// # Tracing
//
// Each completion becomes a call in the caller's project (the OpenAI-Project
// header, else "<default entity>/chat", see [Service.ProjectFor]): op
// "chat.completions.create", inputs = the request, output = the response
// (assembled from the chunks for a stream), summary.usage = {<model>: usage
// with "requests": 1}, exception on failure. The call id is returned in the
// Weft-Call-Id response header. Calls are handed to a bounded queue written by
// one background goroutine ([CallRecorder]); a full queue drops calls
// (weft_chat_trace_dropped_total) instead of delaying a completion.
//
// # Trained models
//
// A model name that no route serves but that names a trained model
// ("<entity>/<project>/<name>", "…:step<N>" or "wandb-artifact:///…") is asked
// of an [AdapterResolver]. A checkpoint whose base model is a route of a
// registered backend is served by that backend with the checkpoint's
// adapter ([Target.Adapter]): the in-process engine applies it to each of
// its requests (many adapters over one copy of the weights, batched
// together); the untrained step 0 is the base model. Any other resolved LoRA adapter is loaded into the configured
// LoRA-capable vLLM upstream on first use and then addressed by name.
//
// # Using it
//
// [Service] is the contract and [Gateway] its implementation over the model
// servers of a [Routing]; [New] takes a [Config] whose zero fields are the
// documented defaults ([DefaultQueueSize], [DefaultMaxResponseBytes], ...).
// The acting user comes from the context:
//
//	routing, err := chat.LoadRouting("routing.yaml", inprocess.Kind)
//	models, err := inprocess.Open(routing, inprocess.Config{}) // the routes of kind local
//	gateway, err := chat.New(chat.Config{Routing: routing, Recorder: chatstore.Recorder{Trace: calls},
//		Backends: map[string]chat.Backend{chat.KindLocal: models}})
//	completion, err := gateway.Complete(weft.WithPrincipal(ctx, p), projectID, body)
//
// Errors wrap this package's sentinels ([ErrBadRequest], [ErrModelNotFound],
// ...), each of a weft error class that decides its HTTP status. The files
// follow the layout every domain shares (see package weft): service.go,
// errors.go, types.go, config.go and gateway.go, beside the routing file
// (routing.go) and the request's way through (validate.go, completion.go,
// stream.go, record.go), backend.go (the Backend contract) and tokenize.go.
package chat
