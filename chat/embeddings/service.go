package embeddings

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// Config configures a Service. Zero limits take their Default… values.
type Config struct {
	// MaxInputs bounds the inputs of one request (DefaultMaxInputs).
	MaxInputs int
	// MaxInputTokens bounds one input's tokens (DefaultMaxInputTokens).
	MaxInputTokens int
	// MaxBatchTokens bounds the tokens of one batched pass
	// (DefaultMaxBatchTokens); a request with more runs in passes of its
	// own.
	MaxBatchTokens int
}

// Service serves /v1/embeddings with embedding models loaded in-process:
// requests that arrive together share the model's batched passes.
type Service struct {
	cfg    Config
	models map[string]*Model
	order  []string
}

// New returns a Service of the models (named by Model.Name).
func New(cfg Config, models ...*Model) *Service {
	if cfg.MaxInputs <= 0 {
		cfg.MaxInputs = DefaultMaxInputs
	}
	if cfg.MaxInputTokens <= 0 {
		cfg.MaxInputTokens = DefaultMaxInputTokens
	}
	if cfg.MaxBatchTokens <= 0 {
		cfg.MaxBatchTokens = DefaultMaxBatchTokens
	}
	s := &Service{cfg: cfg, models: map[string]*Model{}}
	for _, m := range models {
		m.start(cfg.MaxBatchTokens)
		s.models[m.Name] = m
		s.order = append(s.order, m.Name)
	}
	return s
}

// Models names the models served, in order.
func (s *Service) Models() []string { return s.order }

// Close stops the models' batchers and releases them.
func (s *Service) Close() error {
	var errs []error
	for _, m := range s.models {
		errs = append(errs, m.close())
	}
	return errors.Join(errs...)
}

// Model is an embedding model served in-process: a sentence-transformers
// directory (model.ReadPooling) and its tokenizer, when it has one.
type Model struct {
	Name string
	m    *model.Model
	tok  *tokenizer.Tokenizer // nil: token-id inputs only
	jobs chan *job
	done chan struct{}
}

// ModelOptions are how an embedding model is loaded. Zero values are the
// defaults.
type ModelOptions struct {
	// WeightType is how its linear-layer weights are held, as a chat
	// model's weight_type (inprocess.LocalOptions.WeightType): "" or "auto" as
	// the file stores them, "f32", "int8", "f16", "bf16" or a GGUF block
	// format quantised at load.
	WeightType string
	// MaxLen caps the positions a sequence may reach; 0 is the model's
	// max_position_embeddings.
	MaxLen int
	// Threads is the size of the model's thread pool; 0 is GOMAXPROCS.
	Threads int
}

// Open loads the embedding model in dir, served as name ("" is the
// directory's name). A directory without sentence-transformers pooling is
// model.ErrUnsupported; one without tokenizer.json takes token ids only.
func Open(name, dir string, opts ModelOptions) (*Model, error) {
	m, err := model.Load(dir, model.Options{WeightType: model.WeightType(opts.WeightType), MaxLen: opts.MaxLen, Threads: opts.Threads})
	if err != nil {
		return nil, err
	}
	if m.Pooling == nil {
		m.Close()
		return nil, fmt.Errorf("%w: %s declares no sentence-transformers pooling (modules.json)", model.ErrUnsupported, dir)
	}
	if name == "" {
		name = filepath.Base(filepath.Clean(dir))
	}
	em := &Model{Name: name, m: m}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err == nil {
		if em.tok, err = tokenizer.Load(dir); err != nil {
			m.Close()
			return nil, err
		}
	}
	return em, nil
}

// job is one request's sequences waiting for a pass.
type job struct {
	ctx     context.Context
	seqs    [][]int32
	vectors [][]float32
	err     error
	done    chan struct{}
}

func (m *Model) start(maxBatchTokens int) {
	m.jobs, m.done = make(chan *job, 64), make(chan struct{})
	go m.batch(maxBatchTokens)
}

func (m *Model) close() error {
	if m.jobs != nil {
		close(m.jobs)
		<-m.done
	}
	return m.m.Close()
}

// batch runs the queued jobs: each pass takes the jobs waiting, up to
// maxBatchTokens tokens (a larger job alone), as one batch of sequences.
func (m *Model) batch(maxBatchTokens int) {
	defer close(m.done)
	var next *job
	for {
		first := next
		if first == nil {
			var ok bool
			if first, ok = <-m.jobs; !ok {
				return
			}
		}
		next = nil
		jobs, tokens := []*job{first}, countTokens(first.seqs)
	gather:
		for {
			select {
			case j, ok := <-m.jobs:
				if !ok {
					break gather
				}
				if n := countTokens(j.seqs); tokens+n <= maxBatchTokens {
					jobs, tokens = append(jobs, j), tokens+n
					continue
				}
				next = j
				break gather
			default:
				break gather
			}
		}
		m.run(jobs)
	}
}

func countTokens(seqs [][]int32) int {
	n := 0
	for _, s := range seqs {
		n += len(s)
	}
	return n
}

// run embeds the live jobs' sequences in one pass.
func (m *Model) run(jobs []*job) {
	var seqs [][]int32
	var live []*job
	for _, j := range jobs {
		if err := j.ctx.Err(); err != nil {
			j.err = err
			close(j.done)
			continue
		}
		live = append(live, j)
		seqs = append(seqs, j.seqs...)
	}
	if len(live) == 0 {
		return
	}
	vectors, err := m.m.Embeddings(seqs, 0)
	for _, j := range live {
		j.vectors, j.err = vectors[:len(j.seqs):len(j.seqs)], err
		if err == nil {
			vectors = vectors[len(j.seqs):]
		}
		close(j.done)
	}
}

// Serves reports whether model is one of the Service's.
func (s *Service) Serves(model string) bool {
	_, ok := s.models[model]
	return ok
}

// Parse checks a raw embeddings request against the Service's limits (see
// ParseRequest; token-id inputs of more than MaxInputTokens are refused
// here, text inputs once tokenized): the check of a request whatever model
// answers it.
func (s *Service) Parse(raw []byte) (*Request, []Input, error) {
	req, inputs, err := ParseRequest(raw, s.cfg.MaxInputs)
	if err != nil {
		return nil, nil, err
	}
	for i, in := range inputs {
		keep := len(in.Tokens)
		if req.TruncatePromptTokens != nil && *req.TruncatePromptTokens > 0 {
			keep = min(keep, *req.TruncatePromptTokens)
		}
		if keep > s.cfg.MaxInputTokens {
			return nil, nil, invalid("input", "input[%d] has %d tokens, more than the %d allowed (truncate_prompt_tokens cuts it).", i, keep, s.cfg.MaxInputTokens)
		}
	}
	return req, inputs, nil
}

// Embed answers a raw embeddings request.
func (s *Service) Embed(ctx context.Context, raw []byte) (*Response, error) {
	req, inputs, err := s.Parse(raw)
	if err != nil {
		return nil, err
	}
	return s.EmbedInputs(ctx, req, inputs)
}

// EmbedInputs answers a request Parse checked.
func (s *Service) EmbedInputs(ctx context.Context, req *Request, inputs []Input) (*Response, error) {
	m, ok := s.models[req.Model]
	if !ok {
		return nil, weftModelNotFound(req.Model)
	}
	d := m.m.Config.HiddenSize
	dims := 0
	if req.Dimensions != nil {
		dims = *req.Dimensions
		if err := m.m.Pooling.CheckDimensions(dims, d); err != nil {
			return nil, invalid("dimensions", "%v", err)
		}
	}
	seqs, total, err := s.tokens(m, req, inputs)
	if err != nil {
		return nil, err
	}
	j := &job{ctx: ctx, seqs: seqs, done: make(chan struct{})}
	select {
	case m.jobs <- j:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if j.err != nil {
		return nil, j.err
	}
	if dims != 0 && dims != d {
		for i, v := range j.vectors {
			j.vectors[i] = truncate(v, dims, m.m.Pooling.Normalize)
		}
	}
	return NewResponse(req, j.vectors, total), nil
}

// tokens are the inputs' token ids, truncated as the request asks, each
// checked against the vocabulary and the length bounds.
func (s *Service) tokens(m *Model, req *Request, inputs []Input) ([][]int32, int, error) {
	limit := min(s.cfg.MaxInputTokens, m.m.MaxLen)
	keep := 0
	if req.TruncatePromptTokens != nil {
		keep = *req.TruncatePromptTokens
		if keep == -1 {
			keep = limit
		}
		if keep > limit {
			return nil, 0, invalid("truncate_prompt_tokens", "truncate_prompt_tokens %d is more than the %d tokens an input may have.", keep, limit)
		}
	}
	seqs := make([][]int32, len(inputs))
	total := 0
	for i, in := range inputs {
		ids := in.Tokens
		if in.IsText {
			if m.tok == nil {
				return nil, 0, invalid("input", "The model %s has no tokenizer: send token ids.", m.Name)
			}
			for _, id := range m.tok.Encode(in.Text, true) {
				ids = append(ids, int32(id))
			}
		}
		for _, id := range ids {
			if id < 0 || int(id) >= m.m.Config.VocabSize {
				return nil, 0, invalid("input", "Token id %d of input[%d] is outside the vocabulary of %d.", id, i, m.m.Config.VocabSize)
			}
		}
		if keep > 0 && len(ids) > keep {
			ids = ids[len(ids)-keep:]
		}
		if len(ids) > limit {
			return nil, 0, invalid("input", "input[%d] has %d tokens, more than the %d allowed (truncate_prompt_tokens cuts it).", i, len(ids), limit)
		}
		seqs[i] = ids
		total += len(ids)
	}
	return seqs, total, nil
}

// truncate keeps v's first n elements, scaled to unit length again when
// the model normalises (the same direction as truncating before
// normalising).
func truncate(v []float32, n int, normalize bool) []float32 {
	v = v[:n:n]
	if !normalize {
		return v
	}
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	norm := max(math.Sqrt(ss), 1e-12)
	for i, x := range v {
		v[i] = float32(float64(x) / norm)
	}
	return v
}

func weftModelNotFound(name string) error {
	return weft.WithFields(ErrModelNotFound, map[string]any{"param": "model"}, "The model `%s` does not exist.", name)
}
