package constrain

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Kind is which sort of constraint a Spec holds.
type Kind int

const (
	// KindChoice: the output is exactly one of Spec.Choice.
	KindChoice Kind = iota + 1
	// KindRegex: the output matches Spec.Regex from start to end.
	KindRegex
	// KindJSONSchema: the output is JSON valid under Spec.Schema.
	KindJSONSchema
	// KindJSONObject: the output is any JSON object.
	KindJSONObject
	// KindGrammar: the output is a sentence of Spec.Grammar (EBNF).
	KindGrammar
)

// Spec is a constraint as a request states it.
type Spec struct {
	Kind    Kind
	Choice  []string
	Regex   string
	Schema  []byte // JSON text
	Grammar string
	// MaxWhitespace, when not 0, lowers Config.MaxWhitespace for this
	// constraint's JSON: at most this many bytes of white space between
	// two tokens (-1 none). A caller that knows the JSON a model writes
	// (a tool call, as its chat template renders it) bounds it closer.
	MaxWhitespace int
}

// Defaults of Config, exported so that a command line or a routing file can
// show and reuse them.
const (
	// DefaultCacheSize is how many compiled constraints a Compiler keeps.
	DefaultCacheSize = 128
	// DefaultMaxStates bounds one constraint's automaton: at about 70
	// bytes a state, it keeps one compile under ~40 MiB.
	DefaultMaxStates = 500_000
	// DefaultMaxCompileTime bounds one compile's building, and apart from
	// it its wait for a turn.
	DefaultMaxCompileTime = 5 * time.Second
	// DefaultMaxCompiles is how many compiles a Compiler runs at once.
	DefaultMaxCompiles = 2
	// DefaultMaxNesting bounds how deeply rules may call each other.
	DefaultMaxNesting = 32
	// DefaultMaxDFAStates bounds the deterministic states a compiled
	// constraint keeps as it is used.
	DefaultMaxDFAStates = 1 << 14
	// DefaultMaxMasks is how many distinct allowed-token masks one
	// constraint keeps.
	DefaultMaxMasks = 512
	// DefaultMaxWhitespace is how many bytes of white space JSON output
	// may have between two of its tokens.
	DefaultMaxWhitespace = 8
)

// Config bounds what compiling and matching may cost. Zero fields take the
// documented defaults.
type Config struct {
	// CacheSize is how many compiled constraints a Compiler keeps, least
	// recently used dropped first. Default DefaultCacheSize.
	CacheSize int
	// MaxStates bounds one constraint's automaton, and so the memory and
	// time of compiling it: the build stops at the state that would go
	// over (and a repeat whose copies cannot fit stops before making
	// them), an error wrapping ErrTooComplex. Default DefaultMaxStates.
	MaxStates int
	// MaxCompileTime bounds one compile's building; past it the compile
	// is an error wrapping ErrTooComplex. Waiting for a turn (see
	// MaxCompiles) is bounded by as much again, past which the compile is
	// an error wrapping ErrBusy. Default DefaultMaxCompileTime.
	MaxCompileTime time.Duration
	// MaxCompiles is how many compiles run at once; others wait for a
	// turn, so that many requests with new constraints take at most this
	// many times one compile's memory. Constraints found in the cache do
	// not wait. Default DefaultMaxCompiles.
	MaxCompiles int
	// MaxNesting bounds how deeply rules may call each other, which bounds
	// the nesting of recursive schemas and of generic JSON values. Default
	// DefaultMaxNesting.
	MaxNesting int
	// MaxDFAStates bounds the deterministic states, and as many interned
	// stacks, that one compiled constraint keeps as it is used: each state
	// costs 4 bytes of transitions per byte class (at most 1 KiB), plus a
	// mask while it holds one, and a long-lived constraint meets
	// ever new ones (string lengths, nesting). When a call leaves more,
	// the tables are dropped and rebuilt as matchers need them, the
	// matchers walking their tokens again; outputs do not change.
	// Default DefaultMaxDFAStates (typical schemas settle below 2,000).
	MaxDFAStates int
	// MaxMasks is how many distinct allowed-token masks one constraint
	// keeps (each is Vocabulary.MaskWords words). Default DefaultMaxMasks.
	MaxMasks int
	// MaxWhitespace is how many bytes of white space JSON output may have
	// between two of its tokens. Default DefaultMaxWhitespace; -1 allows
	// none (compact JSON).
	MaxWhitespace int
	// MaxStringLength bounds the characters of a JSON string whose schema
	// sets no maxLength (and of every string in generic JSON). Default 0:
	// unbounded, since a tool's argument may be a whole file.
	MaxStringLength int
	// NumberDigits bounds the digits of a JSON number's integer part,
	// fraction and exponent (16, 16 and 2 by default: every number
	// stays within float64, as parsers read it).
	IntegerDigits, FractionDigits, ExponentDigits int
}

// setDefaults fills zero fields with the documented defaults.
func (c *Config) setDefaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.CacheSize, DefaultCacheSize)
	def(&c.MaxStates, DefaultMaxStates)
	def(&c.MaxCompiles, DefaultMaxCompiles)
	def(&c.MaxNesting, DefaultMaxNesting)
	def(&c.MaxMasks, DefaultMaxMasks)
	def(&c.MaxDFAStates, DefaultMaxDFAStates)
	def(&c.MaxWhitespace, DefaultMaxWhitespace)
	if c.MaxWhitespace < 0 {
		c.MaxWhitespace = 0
	}
	if c.MaxCompileTime <= 0 {
		c.MaxCompileTime = DefaultMaxCompileTime
	}
	def(&c.IntegerDigits, 16)
	def(&c.FractionDigits, 16)
	def(&c.ExponentDigits, 2)
}

// Compiler compiles constraints for one vocabulary and keeps the most
// recently used ones, keyed by their canonical text, so that a repeated
// schema is compiled once. It is safe for concurrent use.
type Compiler struct {
	vocab *Vocabulary
	cfg   Config

	turns chan struct{} // one per compile running, MaxCompiles long

	mu    sync.Mutex
	lru   *list.List // of *Constraint, most recent first
	byKey map[string]*list.Element
}

// NewCompiler returns a Compiler for vocab.
func NewCompiler(vocab *Vocabulary, cfg Config) *Compiler {
	cfg.setDefaults()
	return &Compiler{vocab: vocab, cfg: cfg, turns: make(chan struct{}, cfg.MaxCompiles),
		lru: list.New(), byKey: map[string]*list.Element{}}
}

// Compile is CompileContext without a context of its own.
func (c *Compiler) Compile(spec Spec) (*Constraint, error) {
	return c.CompileContext(context.Background(), spec)
}

// errCompileTime is the cause of a compile's own deadline.
var errCompileTime = errors.New("compile time over")

// CompileContext returns the constraint spec describes, from the cache when
// the same constraint was compiled before. A new one waits for its turn
// (Config.MaxCompiles) and is built within Config.MaxStates and
// Config.MaxCompileTime. Errors wrap ErrInvalid, ErrUnsupported,
// ErrTooComplex or ErrBusy and name what they are about, or are ctx's
// error when it ends first.
func (c *Compiler) CompileContext(ctx context.Context, spec Spec) (*Constraint, error) {
	key, err := cacheKey(spec)
	if err != nil {
		return nil, err
	}
	if con := c.cached(key); con != nil {
		return con, nil
	}

	if err := c.takeTurn(ctx); err != nil {
		return nil, err
	}
	defer func() { <-c.turns }()
	if con := c.cached(key); con != nil { // compiled while this one waited
		return con, nil
	}
	buildCtx, cancel := context.WithTimeoutCause(ctx, c.cfg.MaxCompileTime, errCompileTime)
	defer cancel()
	g, err := c.build(buildCtx, spec)
	if errors.Is(err, errCompileTime) {
		err = errorf(ErrTooComplex, "the constraint takes longer than %s to compile", c.cfg.MaxCompileTime)
	}
	if err != nil {
		return nil, err
	}
	con := &Constraint{dfa: newDFA(g, c.cfg.MaxNesting, c.cfg.MaxMasks, c.cfg.MaxDFAStates), vocab: c.vocab, key: key}

	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok { // compiled meanwhile by another caller
		c.lru.MoveToFront(el)
		return el.Value.(*Constraint), nil
	}
	c.byKey[key] = c.lru.PushFront(con)
	for c.lru.Len() > c.cfg.CacheSize {
		old := c.lru.Remove(c.lru.Back()).(*Constraint)
		delete(c.byKey, old.key)
	}
	return con, nil
}

// takeTurn waits for one of the Config.MaxCompiles turns, at most
// Config.MaxCompileTime.
func (c *Compiler) takeTurn(ctx context.Context) error {
	select {
	case c.turns <- struct{}{}:
		return nil
	default:
	}
	wait := time.NewTimer(c.cfg.MaxCompileTime)
	defer wait.Stop()
	select {
	case c.turns <- struct{}{}:
		return nil
	case <-wait.C:
		return errorf(ErrBusy, "no turn to compile within %s: %d compiles are running", c.cfg.MaxCompileTime, c.cfg.MaxCompiles)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cached is the compiled constraint of key, nil when the cache has none.
func (c *Compiler) cached(key string) *Constraint {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*Constraint)
	}
	return nil
}

// Cached is how many compiled constraints the Compiler holds.
func (c *Compiler) Cached() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// cacheKey is the canonical text of a constraint: its kind and its content,
// with JSON compacted so that white space does not make a new entry.
func cacheKey(spec Spec) (string, error) {
	if spec.MaxWhitespace != 0 && (spec.Kind == KindJSONSchema || spec.Kind == KindJSONObject) {
		key, err := cacheKey(Spec{Kind: spec.Kind, Schema: spec.Schema})
		return fmt.Sprintf("ws%d:%s", spec.MaxWhitespace, key), err
	}
	switch spec.Kind {
	case KindChoice:
		b, _ := json.Marshal(spec.Choice)
		return "choice:" + string(b), nil
	case KindRegex:
		return "regex:" + spec.Regex, nil
	case KindJSONSchema:
		var buf bytes.Buffer
		if err := json.Compact(&buf, spec.Schema); err != nil {
			return "", errorf(ErrInvalid, "the JSON schema is not valid JSON: %v", err)
		}
		return "json:" + buf.String(), nil
	case KindJSONObject:
		return "json_object", nil
	case KindGrammar:
		return "grammar:" + spec.Grammar, nil
	}
	return "", errorf(ErrInvalid, "no constraint kind given")
}

// jsonConfig is the Config spec's JSON is built under: its own
// MaxWhitespace when that is lower.
func (c *Compiler) jsonConfig(spec Spec) Config {
	cfg := c.cfg
	if spec.MaxWhitespace != 0 {
		cfg.MaxWhitespace = min(cfg.MaxWhitespace, max(spec.MaxWhitespace, 0))
	}
	return cfg
}

// build compiles spec into a grammar within the state budget and while
// ctx lasts.
func (c *Compiler) build(ctx context.Context, spec Spec) (g *grammar, err error) {
	b := newBuilder(ctx, c.cfg.MaxStates)
	defer func() {
		if r := recover(); r != nil {
			stop, ok := r.(buildStop)
			if !ok {
				panic(r)
			}
			g, err = nil, stop.err
		}
	}()
	root := b.newRule("root")
	switch spec.Kind {
	case KindChoice:
		if len(spec.Choice) == 0 {
			return nil, errorf(ErrInvalid, "choice: the list of choices is empty")
		}
		alts := make([]frag, 0, len(spec.Choice))
		for _, s := range spec.Choice {
			alts = append(alts, b.literal(s))
		}
		b.define(root, b.alt(alts...))
	case KindRegex:
		re, err := parseRegex("regex", spec.Regex)
		if err != nil {
			return nil, err
		}
		f, err := (&regexCompiler{b: b}).whole("regex", re)
		if err != nil {
			return nil, err
		}
		b.define(root, f)
	case KindJSONSchema:
		sc, err := newSchemaCompiler(b, c.jsonConfig(spec), spec.Schema)
		if err != nil {
			return nil, err
		}
		f, err := sc.compileRoot()
		if err != nil {
			return nil, err
		}
		b.define(root, f)
	case KindJSONObject:
		j := newJSONBuilder(b, c.jsonConfig(spec))
		b.define(root, j.anyObject())
	case KindGrammar:
		f, err := compileEBNF(b, spec.Grammar)
		if err != nil {
			return nil, err
		}
		b.define(root, f)
	}
	return b.finish(root)
}
