package inprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/constrain"
	"github.com/weftlabs/weft/internal/llm/engine"
	"github.com/weftlabs/weft/internal/llm/toolcall"
)

// model is a model served in-process (a route of kind local): its engine
// and what rendering a prompt for it takes.
type model struct {
	engine        *engine.Engine
	prompt        promptModel
	promptDetails bool
	// thinks: the model may reason in a <think> block (its vocabulary
	// has <think> and </think>, as Qwen3's does), read as reasoning when
	// enable_thinking is on; its output is reasoning only inside one.
	thinks bool
	// toolFormat is how the model writes tool calls of its own accord,
	// told by its vocabulary: Hermes' <tool_call>, or Llama 3's JSON
	// (a Llama 3 vocabulary: <|python_tag|>, or <|start_header_id|> and
	// <|eot_id|>).
	toolFormat toolFormat
	// fim are the vocabulary's fill-in-the-middle tokens, nil without:
	// a text completion's suffix needs them.
	fim *fimTokens
}

// Config configures [Open]. The zero value of every field is its
// documented default.
type Config struct {
	// Logger receives each model's readiness and the failures of closing
	// it. Defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock that stamps answers (their "created"). Defaults to
	// time.Now.
	Now func() time.Time
}

// Server is the [chat.Backend] of the models run in-process (the routes of
// kind [chat.KindLocal]): an engine per model, and vLLM's serving layer
// over it. It is safe for concurrent use. Register it with the gateway as
// chat.Config{Backends: map[string]chat.Backend{chat.KindLocal: server}};
// it serves the trained checkpoints of its models too, each request
// applying its adapter over the shared weights. Its owner closes it, after
// the gateway.
type Server struct {
	models map[string]*model // by route name
	logger *slog.Logger
	now    func() time.Time
}

var _ chat.Backend = (*Server)(nil)

// Open opens the model of every route of kind local in routing, once, and
// fills each such route's ModelInfo from the model itself (its context
// length and vocabulary; the prompt is counted by the server), so that
// routing is ready for chat.New. A model that cannot be opened fails Open
// with its name, closing those already open.
func Open(routing *chat.Routing, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{models: map[string]*model{}, logger: cfg.Logger, now: cfg.Now}
	for i := range routing.Models {
		route := &routing.Models[i]
		if len(route.Upstreams) != 1 || route.Upstreams[0].Kind != chat.KindLocal {
			continue
		}
		if err := s.open(route); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// open opens the model of one local route.
func (s *Server) open(route *chat.Route) error {
	o := optionsOf(route.Upstreams[0])
	eng, err := engine.Open(o.Path, engine.ModelConfig{
		Name: route.Name, Threads: o.Threads, MaxSeqs: o.MaxSequences, KVCacheBytes: int64(o.KVCacheBytes),
		WeightType: engine.WeightType(o.WeightType), MaxModelLen: int(route.MaxModelLen), MaxLogprobs: int(route.MaxLogprobs),
		MaxBatchTokens: o.MaxBatchTokens, MaxQueued: o.MaxQueued, MaxQueueWait: o.MaxQueueWait, MaxRequestTokens: o.MaxRequestTokens,
		Structured: constrain.Config{
			CacheSize: o.StructuredOutputs.CacheSize, MaxMasks: o.StructuredOutputs.MaxMasks,
			MaxWhitespace: o.StructuredOutputs.MaxWhitespace, MaxStringLength: o.StructuredOutputs.MaxStringLength,
			MaxNesting: o.StructuredOutputs.MaxNesting, MaxStates: o.StructuredOutputs.MaxStates,
			MaxCompileTime: o.StructuredOutputs.MaxCompileTime, MaxCompiles: o.StructuredOutputs.MaxCompiles,
		},
	})
	if err != nil {
		return fmt.Errorf("chat: model %q: %w", route.Name, fromEngine(err))
	}
	m := &model{
		engine: eng,
		prompt: promptModel{
			tokenizer: eng.Tokenizer(), template: eng.ChatTemplate(), maxModelLen: eng.MaxModelLen(),
			trustRequestTemplate: o.TrustRequestChatTemplate,
		},
		promptDetails: o.PromptTokensDetails,
	}
	m.readFormats(o.ReasoningParser != "none")
	if route.Endpoints == nil { // a route built in code, not checked by Kind
		route.Endpoints = slices.Clone(endpoints)
	}
	m.fim = readFIM(eng.Tokenizer())
	route.ModelInfo = chat.ModelInfo{
		MaxModelLen: int64(eng.MaxModelLen()), VocabSize: int64(eng.VocabSize()),
		MaxLogprobs: route.MaxLogprobs, PriorityScheduling: true, TokenizesPrompt: true, FillsInMiddle: m.fim != nil,
	}
	s.models[route.Name] = m
	s.logger.Info("chat: local model ready", "model", route.Name, "path", o.Path,
		"max_model_len", eng.MaxModelLen(), "weight_type", o.WeightType)
	return nil
}

// ServedModel is a model the server runs, as the built-in trainer reads
// it (training/localtrainer.Served): its files, context length and
// end-of-turn ids. It stays valid until the server's Close.
type ServedModel struct{ engine *engine.Engine }

// Dir is the model directory.
func (m *ServedModel) Dir() string { return m.engine.Dir() }

// MaxModelLen is the most tokens (prompt plus output) a sequence may hold.
func (m *ServedModel) MaxModelLen() int { return m.engine.MaxModelLen() }

// EOSTokenIDs are the ids that end a choice: the tokenizer's
// end-of-sequence token, then generation_config.json's others.
func (m *ServedModel) EOSTokenIDs() []int { return m.engine.EOSTokenIDs() }

// Models are the models served, by route name: the handles the built-in
// trainer reads them through (training/localtrainer.Served). The server
// owns them; they stay open until Close.
func (s *Server) Models() map[string]*ServedModel {
	out := make(map[string]*ServedModel, len(s.models))
	for name, m := range s.models {
		out[name] = &ServedModel{engine: m.engine}
	}
	return out
}

// Close stops every engine.
func (s *Server) Close() error {
	for name, m := range s.models {
		if err := m.engine.Close(); err != nil {
			s.logger.Warn("chat: closing a local model", "model", name, "error", err)
		}
		delete(s.models, name)
	}
	return nil
}

// modelOf is the model serving t: its route's, or for a trained
// checkpoint its base model's.
func (s *Server) modelOf(t chat.Target) (*model, error) {
	name := t.Route.Name
	if t.Adapter != nil {
		name = t.Adapter.BaseModel
	}
	m := s.models[name]
	if m == nil {
		return nil, weft.Errorf(chat.ErrUpstreamUnavailable, "model %s is not open", name)
	}
	return m, nil
}

// readFormats tells from the model's vocabulary whether it thinks (unless
// the route turns the reasoning parser off) and how it writes tool calls.
func (lm *model) readFormats(parseReasoning bool) {
	tok := lm.engine.Tokenizer()
	has := func(text string) bool { _, ok := tok.TokenToID(text); return ok }
	lm.thinks = parseReasoning && has("<think>") && has("</think>")
	switch {
	case has("<tool_call>") && has("</tool_call>"):
		lm.toolFormat = formatHermes
	case has("<|python_tag|>") || has("<|start_header_id|>") && has("<|eot_id|>"):
		lm.toolFormat = formatLlama3
	}
}

// notYetLocal lists the request fields local models refuse, with the value
// that means "not used": beam search and the engine extensions below.
var notYetLocal = []struct{ field, unused string }{
	{"use_beam_search", "false"}, {"logprob_token_ids", ""}, {"thinking_token_budget", ""},
	{"repetition_detection", ""}, {"logits_processors", "[]"},
}

// refuseNotYetLocal answers 400 for a field a local model cannot honour,
// naming it, rather than silently ignoring it.
func refuseNotYetLocal(req *chat.CompletionRequest) error {
	for _, f := range notYetLocal {
		v, ok := req.Field(f.field)
		if !ok || isNull(v) || (f.unused != "" && strings.TrimSpace(string(v)) == f.unused) {
			continue
		}
		return weft.WithFields(chat.ErrUnsupportedField, map[string]any{"param": f.field}, "`%s` is not supported by local models yet.", f.field)
	}
	return nil
}

// Complete answers a request with a local model: it renders and fits the
// prompt, starts the generation and answers what a vLLM upstream would
// have (a chat.completion, or its chunks as they are generated). An
// overloaded engine is chat.Retryable (the route's fallbacks may answer
// instead).
func (s *Server) Complete(ctx context.Context, t chat.Target, req *chat.CompletionRequest) (*chat.Answer, error) {
	r := t.Route
	lm, err := s.modelOf(t)
	if err != nil {
		return nil, err
	}
	if err := refuseNotYetLocal(req); err != nil {
		return nil, err
	}
	plan, err := lm.planOutput(req)
	if err != nil {
		return nil, err
	}
	constraint, err := plan.compile(ctx, lm.engine)
	if err != nil {
		return overloaded(err)
	}
	var in chatInput
	if err := req.Decode(&in); err != nil {
		return nil, err
	}
	prompt, err := lm.prompt.render(&in)
	if err != nil {
		return nil, err
	}
	plan.reasoningOpen = plan.thinking && toolcall.PromptLeavesReasoningOpen(prompt.text)
	requested, param := req.MaxCompletionTokens, "max_completion_tokens"
	if requested == nil {
		requested, param = req.MaxTokens, "max_tokens"
	}
	side, err := truncationSide(req)
	if err != nil {
		return nil, err
	}
	ids, maxTokens, err := lm.prompt.fitPrompt(prompt.ids, requested, param, req.TruncatePromptTokens, side)
	if err != nil {
		return nil, err
	}
	if d := lm.engine.SamplingDefaults().MaxTokens; requested == nil && d != nil {
		maxTokens = min(maxTokens, *d) // generation_config.json's max_new_tokens
	}
	engineReq := engineRequest(req, ids, maxTokens)
	engineReq.Constraint, engineReq.ConstrainAfterReasoning = constraint, constraint != nil && plan.thinking
	engineReq.ReasoningOpen = plan.reasoningOpen
	opts := answerOptions{
		id: "chatcmpl-" + requestID(ctx, req), model: r.Name, created: s.now().Unix(), role: prompt.role,
		logprobs: req.Logprobs != nil && *req.Logprobs, asTokenIDs: req.ReturnTokensAsTokenIDs != nil && *req.ReturnTokensAsTokenIDs,
		tokenIDs: req.ReturnTokenIDs != nil && *req.ReturnTokenIDs, tok: lm.engine.Tokenizer(), promptIDs: ids,
		includeUsage: req.IncludeUsage(), promptDetails: lm.promptDetails, plan: plan,
	}
	if req.TopLogprobs != nil {
		opts.topLogprobs = int(*req.TopLogprobs)
	}
	opts.continuousUsage = opts.includeUsage && req.StreamOptions["continuous_usage_stats"] == true
	if req.Echo != nil && *req.Echo && prompt.lastRole == prompt.role {
		opts.echo = prompt.lastContent
	}

	if t.Adapter != nil {
		engineReq.Adapter = t.Adapter.Path // a trained checkpoint: its adapter applies ("" for step 0: the base model)
	}
	genCtx, cancel := context.WithCancel(ctx)
	gen, err := lm.engine.Generate(genCtx, engineReq)
	if err != nil {
		cancel()
		return overloaded(err)
	}
	if req.Streaming() {
		return &chat.Answer{Status: http.StatusOK, ContentType: "text/event-stream",
			Frames: newLocalFrames(gen, cancel, &opts, engineReq.N)}, nil
	}
	defer cancel()
	defer gen.Close()
	res, err := gen.Wait()
	if err != nil {
		return nil, fromEngine(err)
	}
	return &chat.Answer{Status: http.StatusOK, ContentType: "application/json", Body: opts.completionBody(res)}, nil
}

// truncationSide is the request's truncation_side ("left" or "right"),
// nil when left out.
func truncationSide(req *chat.CompletionRequest) (*string, error) {
	raw, ok := req.Field("truncation_side")
	if !ok || isNull(raw) {
		return nil, nil
	}
	var v string
	if json.Unmarshal(raw, &v) != nil || (v != "left" && v != "right") {
		return nil, chat.Malformed("truncation_side", "literal_error", "Input should be 'left' or 'right'")
	}
	return &v, nil
}

// overloaded is Complete's answer to an engine error, mapped to weft's
// classes: an OverloadedError is a 503 with its Retry-After, which the
// route's fallbacks may answer instead (chat.Retryable).
func overloaded(err error) (*chat.Answer, error) {
	if errors.Is(err, engine.ErrOverloaded) {
		return nil, chat.Retryable(fromEngine(err))
	}
	return nil, fromEngine(err)
}

// requestID is the client's X-Request-Id (see WithRequestID), else the
// request's request_id, else a random one as vLLM makes them (32 hex
// digits).
func requestID(ctx context.Context, req *chat.CompletionRequest) string {
	if id := chat.RequestIDFrom(ctx); id != "" {
		return id
	}
	if req.RequestID != nil && *req.RequestID != "" {
		return *req.RequestID
	}
	return strings.ReplaceAll(uuid.NewString(), "-", "")
}

// engineRequest turns the request's sampling options into the engine's,
// every one passed through; the engine applies the model's defaults to
// those left out.
func engineRequest(req *chat.CompletionRequest, prompt []int, maxTokens int) engine.Request {
	er := engine.Request{
		Prompt: prompt, N: 1, MaxTokens: maxTokens,
		Temperature: req.Temperature, TopP: req.TopP, MinP: req.MinP, RepetitionPenalty: req.RepetitionPenalty,
		Seed: req.Seed, BadWords: req.BadWords,
		SkipSpecialTokens: req.SkipSpecialTokens, SpacesBetweenSpecialTokens: req.SpacesBetweenSpecialTokens,
	}
	if req.N != nil {
		er.N = int(*req.N)
	}
	if req.TopK != nil {
		k := int(*req.TopK)
		er.TopK = &k
	}
	if req.PresencePenalty != nil {
		er.PresencePenalty = *req.PresencePenalty
	}
	if req.FrequencyPenalty != nil {
		er.FrequencyPenalty = *req.FrequencyPenalty
	}
	if len(req.LogitBias) > 0 {
		er.LogitBias = make(map[int]float64, len(req.LogitBias))
		for k, v := range req.LogitBias {
			id, _ := strconv.Atoi(strings.TrimSpace(k))
			er.LogitBias[id] = v
		}
	}
	if req.AllowedTokenIDs != nil {
		er.AllowedTokenIDs = ints(req.AllowedTokenIDs)
	}
	er.StopTokenIDs = ints(req.StopTokenIDs)
	if req.MinTokens != nil {
		er.MinTokens = int(*req.MinTokens)
	}
	if req.Has("stop") {
		if req.Stop[0] == '"' {
			var one string
			_ = json.Unmarshal(req.Stop, &one)
			er.Stop = []string{one}
		} else {
			_ = json.Unmarshal(req.Stop, &er.Stop)
		}
	}
	er.IncludeStopStrInOutput = req.IncludeStopStrInOutput != nil && *req.IncludeStopStrInOutput
	er.IgnoreEOS = req.IgnoreEOS != nil && *req.IgnoreEOS
	if req.Logprobs != nil && *req.Logprobs {
		er.Logprobs = true
		if req.TopLogprobs != nil {
			er.TopLogprobs = int(*req.TopLogprobs)
		}
	}
	// echo asks for the prompt's logprobs too, with top_logprobs of them,
	// when prompt_logprobs is not given.
	switch {
	case req.PromptLogprobs != nil:
		er.PromptLogprobs, er.PromptTopLogprobs = true, int(*req.PromptLogprobs)
	case req.Echo != nil && *req.Echo:
		er.PromptLogprobs = true
		if req.TopLogprobs != nil {
			er.PromptTopLogprobs = int(*req.TopLogprobs)
		}
	}
	if req.Priority != nil {
		er.Priority = int(*req.Priority)
	}
	er.Tenant = req.Tenant()
	if req.Has("cache_salt") {
		_ = json.Unmarshal(req.CacheSalt, &er.CacheSalt)
	}
	return er
}

func ints(ids []int64) []int {
	if ids == nil {
		return nil
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}
