package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/weftlabs/weft/internal/llm/chattemplate"
	"github.com/weftlabs/weft/internal/llm/kvcache"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/modelfiles"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// Files of a model directory besides the weights.
const (
	ConfigFile           = "config.json"
	GenerationConfigFile = "generation_config.json"
	ChatTemplateFile     = "chat_template.jinja"
)

// Engine serves one model directory: it owns the weights, the tokenizer,
// the chat template, a paged KV cache and the scheduler goroutine that runs
// every admitted request's sequences in shared forward passes. Its methods
// are safe for concurrent use.
type Engine struct {
	name, dir string
	cfg       ModelConfig
	model     *model.Model
	cache     *kvcache.Cache
	tok       *tokenizer.Tokenizer
	tmpl      *chattemplate.Template
	defaults  SamplingDefaults
	eos       int   // the tokenizer's end-of-sequence id, -1 when none
	extraEOS  []int // generation_config.json's other end-of-sequence ids
	// reasoningStart and reasoningEnd are the tokens that open and close
	// a thinking model's reasoning, -1 when the vocabulary has none.
	reasoningStart, reasoningEnd int
	constraints                  constraints
	maxModelLen                  int
	adapters                     *adapterCache

	submit   chan *request
	wake     chan struct{}
	quit     chan struct{}
	loopDone chan struct{}
	closing  sync.Once
	seqIDs   atomic.Uint64
	arrivals atomic.Uint64

	statsMu sync.Mutex
	stats   Stats
}

// SamplingDefaults are the sampling options generation_config.json sets, as
// vLLM reads them (only fields that differ from transformers' defaults:
// temperature 1, top_p 1, top_k 50 and repetition_penalty 1 count as unset).
// A request's nil option takes these; nil here means the OpenAI default.
type SamplingDefaults struct {
	Temperature       *float64
	TopP              *float64
	TopK              *int
	MinP              *float64
	RepetitionPenalty *float64
	// MaxTokens is max_new_tokens: the default bound of generated tokens.
	MaxTokens *int
}

// Stats is a snapshot of the engine's load.
type Stats struct {
	// Running is the sequences holding KV blocks; Waiting the sequences
	// queued for admission (new requests, preempted or forked choices).
	Running, Waiting int
	// Preemptions counts sequences swapped out of the cache so far.
	Preemptions int
	// Steps counts forward passes so far, Rows the sequences they carried
	// (Rows/Steps is the mean batch).
	Steps, Rows int
	// KV counts the cache's blocks by state.
	KV KVBlocks
}

// KVBlocks counts KV cache blocks: in use by sequences, idle (holding a
// reusable prefix, evictable) and free.
type KVBlocks struct {
	Total, InUse, Idle, Free int
}

// Open loads the model directory dir (Hugging Face layout: config.json,
// model.safetensors or its shards, tokenizer.json, tokenizer_config.json,
// optional chat_template.jinja and generation_config.json) and starts its
// scheduler. A file or field the engine cannot serve is an error wrapping
// ErrModelDir (and the model or tokenizer package's ErrUnsupported /
// ErrInvalid) that names it.
func Open(dir string, cfg ModelConfig) (*Engine, error) {
	err := cfg.setDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{dir: dir, cfg: cfg, name: cfg.Name, eos: -1, reasoningStart: -1, reasoningEnd: -1, adapters: newAdapterCache(cfg.MaxAdapters)}
	if e.name == "" {
		if e.name, err = modelfiles.Name(dir); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrModelDir, err)
		}
	}
	mc, err := model.ReadConfig(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelDir, err)
	}
	if e.maxModelLen, err = resolveMaxModelLen(mc, cfg); err != nil {
		return nil, err
	}
	if e.tok, err = tokenizer.Load(dir); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelDir, err)
	}
	if e.tok.VocabSize() > mc.VocabSize {
		return nil, fmt.Errorf("%w: %s: vocab_size %d is smaller than the tokenizer's %d ids",
			ErrModelDir, ConfigFile, mc.VocabSize, e.tok.VocabSize())
	}
	if e.tmpl, err = LoadChatTemplate(dir); err != nil {
		return nil, err
	}
	if id := e.tok.SpecialTokens().EOS.ID; id >= 0 {
		e.eos = id
	}
	if id, ok := e.tok.TokenToID(reasoningStartText); ok {
		e.reasoningStart = id
	}
	if id, ok := e.tok.TokenToID(reasoningEndText); ok {
		e.reasoningEnd = id
	}
	if e.defaults, e.extraEOS, err = loadGenerationConfig(dir, e.eos, mc.VocabSize); err != nil {
		return nil, err
	}
	if e.model, err = model.Load(dir, model.Options{WeightType: model.WeightType(cfg.WeightType), MaxLen: e.maxModelLen, Threads: cfg.Threads}); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelDir, err)
	}
	kc := kvcache.ForModel(mc, cfg.KVCacheBytes)
	kc.BlockSize = cfg.BlockSize
	if e.cache, err = kvcache.New(kc); err != nil {
		e.model.Close()
		return nil, fmt.Errorf("%w: kv_cache_bytes: %w", ErrModelDir, err)
	}
	e.submit = make(chan *request)
	e.wake = make(chan struct{}, 1)
	e.quit = make(chan struct{})
	e.loopDone = make(chan struct{})
	go e.loop()
	return e, nil
}

// kvBytesPerToken is the KV cache memory one position takes in every layer.
func kvBytesPerToken(c *model.Config) int64 {
	return int64(c.Layers) * 2 * int64(c.KVHeads*c.HeadDim) * 4
}

// resolveMaxModelLen applies ModelConfig.MaxModelLen's rules: the config's
// max_position_embeddings by default, lowered to what the KV budget holds
// for one sequence; an explicit length must fit the budget.
func resolveMaxModelLen(mc *model.Config, cfg ModelConfig) (int, error) {
	blockBytes := kvBytesPerToken(mc) * int64(cfg.BlockSize)
	capacity := int(cfg.KVCacheBytes/blockBytes) * cfg.BlockSize
	if capacity == 0 {
		return 0, fmt.Errorf("%w: kv_cache_bytes %d does not hold one block of %d positions (%d bytes)",
			ErrModelDir, cfg.KVCacheBytes, cfg.BlockSize, blockBytes)
	}
	if cfg.MaxModelLen == 0 {
		return min(mc.MaxPositions, capacity), nil
	}
	if cfg.MaxModelLen > capacity {
		return 0, fmt.Errorf("%w: max_model_len %d needs %d bytes of KV cache for one sequence, more than kv_cache_bytes %d (which holds %d positions)",
			ErrModelDir, cfg.MaxModelLen, int64(cfg.MaxModelLen)*kvBytesPerToken(mc), cfg.KVCacheBytes, capacity)
	}
	return cfg.MaxModelLen, nil
}

// LoadChatTemplate reads a model directory's chat template as Open does:
// chat_template.jinja, else tokenizer_config.json's, with the special
// tokens the template sees. An error wraps ErrModelDir.
func LoadChatTemplate(dir string) (*chattemplate.Template, error) {
	config, err := modelfiles.ReadFile(dir, tokenizer.TokenizerConfigFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %v", ErrModelDir, err)
	}
	jinja, err := modelfiles.ReadFile(dir, ChatTemplateFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %v", ErrModelDir, err)
	}
	t, err := chattemplate.Load(config, jinja, chattemplate.Config{})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelDir, err)
	}
	return t, nil
}

// loadGenerationConfig reads generation_config.json when there is one:
// the sampling defaults vLLM takes from it and its end-of-sequence ids other
// than the tokenizer's.
func loadGenerationConfig(dir string, eos, vocab int) (SamplingDefaults, []int, error) {
	var d SamplingDefaults
	raw, err := modelfiles.ReadFile(dir, GenerationConfigFile)
	if errors.Is(err, os.ErrNotExist) {
		return d, nil, nil
	}
	if err != nil {
		return d, nil, fmt.Errorf("%w: %v", ErrModelDir, err)
	}
	var g struct {
		EOS               json.RawMessage `json:"eos_token_id"`
		Temperature       *float64        `json:"temperature"`
		TopP              *float64        `json:"top_p"`
		TopK              *int            `json:"top_k"`
		MinP              *float64        `json:"min_p"`
		RepetitionPenalty *float64        `json:"repetition_penalty"`
		MaxNewTokens      *int            `json:"max_new_tokens"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return d, nil, fmt.Errorf("%w: %s: %v", ErrModelDir, GenerationConfigFile, err)
	}
	// transformers' GenerationConfig drops values equal to its defaults
	// before vLLM sees them.
	unlessDefault := func(v *float64, def float64) *float64 {
		if v == nil || *v == def {
			return nil
		}
		return v
	}
	d.Temperature = unlessDefault(g.Temperature, 1)
	d.TopP = unlessDefault(g.TopP, 1)
	d.RepetitionPenalty = unlessDefault(g.RepetitionPenalty, 1)
	d.MinP = g.MinP
	if g.TopK != nil && *g.TopK != 50 {
		d.TopK = g.TopK
	}
	d.MaxTokens = g.MaxNewTokens
	var ids []int
	if len(g.EOS) > 0 && string(g.EOS) != "null" {
		var one int
		if json.Unmarshal(g.EOS, &one) == nil {
			ids = []int{one}
		} else if err := json.Unmarshal(g.EOS, &ids); err != nil {
			return d, nil, fmt.Errorf("%w: %s: eos_token_id: want an id or a list of ids", ErrModelDir, GenerationConfigFile)
		}
	}
	var extra []int
	for _, id := range ids {
		if id < 0 || id >= vocab {
			return d, nil, fmt.Errorf("%w: %s: eos_token_id %d is outside the vocabulary", ErrModelDir, GenerationConfigFile, id)
		}
		if id != eos && !containsInt(extra, id) {
			extra = append(extra, id)
		}
	}
	return d, extra, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Close stops the scheduler, fails every request still running or queued
// with ErrClosed and releases the model's memory. It waits for the step in
// progress to end.
func (e *Engine) Close() error {
	e.closing.Do(func() {
		close(e.quit)
		<-e.loopDone
		e.model.Close()
	})
	return nil
}

// Name is the model's served name (ModelConfig.Name, else the directory's
// base name).
func (e *Engine) Name() string { return e.name }

// Dir is the model directory.
func (e *Engine) Dir() string { return e.dir }

// Config is the engine's configuration with defaults filled in.
func (e *Engine) Config() ModelConfig { return e.cfg }

// MaxModelLen is the most tokens (prompt plus output) a sequence may hold.
func (e *Engine) MaxModelLen() int { return e.maxModelLen }

// VocabSize is the model's vocabulary size (config.json's vocab_size): the
// bound of every token id a request names. It may exceed the tokenizer's.
func (e *Engine) VocabSize() int { return e.model.Config.VocabSize }

// MaxLogprobs bounds TopLogprobs and PromptTopLogprobs (-1: no bound).
func (e *Engine) MaxLogprobs() int { return e.cfg.MaxLogprobs }

// EOSTokenIDs are the ids that end a choice unless IgnoreEOS: the
// tokenizer's eos_token first (when it has one), then generation_config's
// others.
func (e *Engine) EOSTokenIDs() []int {
	var ids []int
	if e.eos >= 0 {
		ids = append(ids, e.eos)
	}
	return append(ids, e.extraEOS...)
}

// Tokenizer is the model's tokenizer (tokenizer.json and
// tokenizer_config.json: special tokens, clean-up, added tokens).
func (e *Engine) Tokenizer() *tokenizer.Tokenizer { return e.tok }

// ChatTemplate is the model's chat template (chat_template.jinja, else
// tokenizer_config.json's) with the special tokens the template sees.
func (e *Engine) ChatTemplate() *chattemplate.Template { return e.tmpl }

// SamplingDefaults are the defaults generation_config.json sets.
func (e *Engine) SamplingDefaults() SamplingDefaults { return e.defaults }

// Stats reports the engine's load as of its last step.
func (e *Engine) Stats() Stats {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return e.stats
}

// Generate validates req and queues it. It returns once the request is
// admitted — its prompt holds KV blocks and the scheduler runs it — with
// the Generation to read chunks from; or with an error: ErrInvalidRequest /
// ErrPromptTooLong at once, ErrOverloaded when the queue is full or the
// request was not admitted within MaxQueueWait, ctx's error when ctx ends
// first, ErrClosed when the engine closes. ctx governs the whole
// generation: cancelling it frees the request's slots and KV blocks before
// the next step.
func (e *Engine) Generate(ctx context.Context, req Request) (*Generation, error) {
	r, err := e.resolve(req)
	if err != nil {
		return nil, err
	}
	r.gen = newGeneration(ctx, req.Prompt)
	r.admitted = make(chan error, 1)
	r.arrival = e.arrivals.Add(1)
	select {
	case e.submit <- r:
	case <-ctx.Done():
		r.gen.cancel()
		return nil, ctx.Err()
	case <-e.quit:
		r.gen.cancel()
		return nil, ErrClosed
	}
	select {
	case err := <-r.admitted:
		if err != nil {
			r.gen.cancel()
			return nil, err
		}
		return r.gen, nil
	case <-ctx.Done():
		r.gen.cancel()
		e.poke()
		return nil, ctx.Err()
	}
}

// poke wakes the scheduler to notice a cancellation.
func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}
