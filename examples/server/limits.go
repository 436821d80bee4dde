package main

import (
	"errors"
	"flag"
	"strconv"
	"time"

	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/embeddings"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/chat/responses"
	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/engine"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// serverLimits bound what one connection or one API key may hold of the
// server.
type serverLimits struct {
	// header, body and idle bound how long a connection may hold the server
	// while it sends nothing useful.
	header, body, idle time.Duration
	otlp               httpapi.OTLPConfig
	// liveStreams and liveRefreshes bound the web UI's live pages
	// (webui.Config.MaxLiveStreams, LiveRefreshes).
	liveStreams, liveRefreshes count
	// exportRows bounds one export of the web UI's trace list, a table or
	// an evaluation comparison (webui.Config.MaxExportRows).
	exportRows count
	// localRequestTokens, localLogprobs, localStates, localQueueWait and
	// localCompileTime bound one request to a model served in-process
	// (inprocess.Limits), where the routing file leaves them unset.
	localRequestTokens, localLogprobs, localStates count
	localQueueWait, localCompileTime               time.Duration
	// responseItems and responseChain bound a Responses request's
	// conversation (responses.Config.MaxInputItems, MaxChainDepth).
	responseItems, responseChain count
	// embeddings bounds an embeddings request and the model's batches.
	embeddings embeddings.Config
	// completionPrompts and completionTokens bound one /v1/completions
	// request (chat.Config.MaxCompletionPrompts, MaxCompletionTokens).
	completionPrompts, completionTokens count
	// statsRange bounds the window of one /calls/stats, /feedback/stats or
	// monitor stats request (trace.Config.StatsMaxRange,
	// feedback.Config.StatsMaxRange, monitor.Config.StatsMaxRange).
	statsRange time.Duration
}

// localLimits are the -local-… flags as inprocess.Limits.
func (l *serverLimits) localLimits() inprocess.Limits {
	return inprocess.Limits{MaxRequestTokens: int(l.localRequestTokens), MaxLogprobs: int64(l.localLogprobs), MaxQueueWait: l.localQueueWait,
		MaxStates: int(l.localStates), MaxCompileTime: l.localCompileTime}
}

func limitFlags(fs *flag.FlagSet, l *serverLimits) {
	fs.DurationVar(&l.header, "read-header-timeout", httpapi.DefaultReadHeaderTimeout, "longest a request's headers may take to arrive; then the connection is closed")
	fs.DurationVar(&l.body, "body-read-timeout", httpapi.DefaultBodyReadTimeout, "longest a request's body may take to arrive (API and web UI); then 408 and the connection is closed")
	fs.DurationVar(&l.idle, "idle-timeout", httpapi.DefaultIdleTimeout, "longest a keep-alive connection may wait for its next request; then it is closed")
	fs.IntVar(&l.otlp.MaxInFlight, "otlp-max-in-flight", httpapi.DefaultOTLPMaxInFlight, "OpenTelemetry exports decoded and stored at once; more get 503 with Retry-After")
	fs.IntVar(&l.otlp.MaxInFlightPerKey, "otlp-max-in-flight-per-key", httpapi.DefaultOTLPMaxInFlightPerKey, "OpenTelemetry exports one API key may have in progress at once, bodies still arriving included; more get 429 with Retry-After")
	l.liveStreams, l.liveRefreshes = webui.DefaultMaxLiveStreams, webui.DefaultLiveRefreshes
	fs.Var(&l.liveStreams, "live-streams-per-session", "the `number` of live pages (trace lists, training charts) one web UI sign-in may follow at once; one more gets 429")
	fs.Var(&l.liveRefreshes, "live-refreshes", "the `number` of live trace list refreshes run at once, whatever their project and view (streams of one view share each); the others wait their turn")
	l.exportRows = webui.DefaultMaxExportRows
	fs.Var(&l.exportRows, "export-max-rows", "the `number` of rows one CSV or JSONL export of the web UI writes (calls of the trace list, rows of a table, examples of an evaluation comparison): the first of its view")
	l.localRequestTokens, l.localLogprobs, l.localStates = engine.DefaultMaxRequestTokens, engine.DefaultMaxLogprobs, constrain.DefaultMaxStates
	fs.Var(&l.localRequestTokens, "local-max-request-tokens", "the `number` of tokens one request may ask a model served in-process for (n × max_tokens); more get 400 (a route's max_request_tokens wins)")
	fs.Var(&l.localLogprobs, "local-max-logprobs", "the largest top_logprobs and prompt_logprobs `number` a request to a model served in-process may ask for; more get 400 (a route's max_logprobs wins)")
	fs.DurationVar(&l.localQueueWait, "local-max-queue-wait", engine.DefaultMaxQueueWait, "longest a request waits for a model served in-process to admit it; then 503 with Retry-After (a route's max_queue_wait wins)")
	fs.Var(&l.localStates, "local-max-constraint-states", "the `number` of automaton states one request's structured output may compile to; more get 400 too complex (a route's structured_outputs.max_states wins)")
	fs.IntVar(&l.embeddings.MaxInputs, "embeddings-max-inputs", embeddings.DefaultMaxInputs, "inputs one /v1/embeddings request may hold; more get 400")
	fs.IntVar(&l.embeddings.MaxInputTokens, "embeddings-max-input-tokens", embeddings.DefaultMaxInputTokens, "tokens one embeddings input may have (after truncate_prompt_tokens); more get 400")
	fs.IntVar(&l.embeddings.MaxBatchTokens, "embeddings-max-batch-tokens", embeddings.DefaultMaxBatchTokens, "tokens one batched pass of an embedding model runs, over the requests waiting")
	l.completionPrompts, l.completionTokens = chat.DefaultMaxCompletionPrompts, chat.DefaultMaxCompletionTokens
	fs.Var(&l.completionPrompts, "completions-max-prompts", "the `number` of prompts one /v1/completions batch may hold; more get 400")
	fs.Var(&l.completionTokens, "completions-max-tokens", "the `number` of tokens one /v1/completions request may ask for (prompts × max(n, best_of) × max_tokens); more get 400")
	l.responseItems, l.responseChain = responses.DefaultMaxInputItems, responses.DefaultMaxChainDepth
	fs.Var(&l.responseItems, "responses-max-input-items", "the `number` of items a Responses request's conversation may hold, its input and its previous_response_id chain's together; more get 400")
	fs.Var(&l.responseChain, "responses-max-chain-depth", "the `number` of previous responses a previous_response_id chain may reach back through; more get 400")
	fs.DurationVar(&l.statsRange, "stats-max-range", trace.DefaultStatsMaxRange, "longest window one /calls/stats or /feedback/stats request (start to end) or one /v2/{entity}/{project}/monitors/{monitor_id}/stats?granularity= request (from to before, the monitor page's chart too) may span; longer gets 400")
	fs.DurationVar(&l.localCompileTime, "local-max-constraint-compile-time", constrain.DefaultMaxCompileTime, "longest one request's structured output may take to compile; then 400 too complex (a route's structured_outputs.max_compile_time wins)")
}

// count is a flag of a whole number ≥ 1.
type count int

func (c *count) String() string { return strconv.Itoa(int(*c)) }

func (c *count) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return errors.New("want a whole number ≥ 1")
	}
	*c = count(n)
	return nil
}
