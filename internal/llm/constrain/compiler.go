package constrain

import (
	"bytes"
	"container/list"
	"encoding/json"
	"sync"
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
}

// Config bounds what compiling and matching may cost. Zero fields take the
// documented defaults.
type Config struct {
	// CacheSize is how many compiled constraints a Compiler keeps, least
	// recently used dropped first. Default 128.
	CacheSize int
	// MaxStates bounds one constraint's automaton. Default 500,000.
	MaxStates int
	// MaxNesting bounds how deeply rules may call each other, which bounds
	// the nesting of recursive schemas and of generic JSON values. Default 32.
	MaxNesting int
	// MaxDFAStates bounds the deterministic states, and as many interned
	// stacks, that one compiled constraint keeps as it is used: each state
	// costs 4 bytes of transitions per byte class (at most 1 KiB), plus a
	// mask while it holds one, and a long-lived constraint meets
	// ever new ones (string lengths, nesting). When a call leaves more,
	// the tables are dropped and rebuilt as matchers need them, the
	// matchers walking their tokens again; outputs do not change.
	// Default 16,384 (typical schemas settle below 2,000).
	MaxDFAStates int
	// MaxMasks is how many distinct allowed-token masks one constraint
	// keeps (each is Vocabulary.MaskWords words). Default 512.
	MaxMasks int
	// MaxWhitespace is how many bytes of white space JSON output may have
	// between two of its tokens. Default 8; -1 allows none (compact JSON).
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

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.CacheSize, 128)
	def(&c.MaxStates, 500_000)
	def(&c.MaxNesting, 32)
	def(&c.MaxMasks, 512)
	def(&c.MaxDFAStates, 1<<14)
	def(&c.MaxWhitespace, 8)
	if c.MaxWhitespace < 0 {
		c.MaxWhitespace = 0
	}
	def(&c.IntegerDigits, 16)
	def(&c.FractionDigits, 16)
	def(&c.ExponentDigits, 2)
	return c
}

// Compiler compiles constraints for one vocabulary and keeps the most
// recently used ones, keyed by their canonical text, so that a repeated
// schema is compiled once. It is safe for concurrent use.
type Compiler struct {
	vocab *Vocabulary
	cfg   Config

	mu    sync.Mutex
	lru   *list.List // of *Constraint, most recent first
	byKey map[string]*list.Element
}

// NewCompiler returns a Compiler for vocab.
func NewCompiler(vocab *Vocabulary, cfg Config) *Compiler {
	return &Compiler{vocab: vocab, cfg: cfg.withDefaults(), lru: list.New(), byKey: map[string]*list.Element{}}
}

// Compile returns the constraint spec describes, from the cache when the
// same constraint was compiled before. Errors wrap ErrInvalid,
// ErrUnsupported or ErrTooComplex and name what they are about.
func (c *Compiler) Compile(spec Spec) (*Constraint, error) {
	key, err := cacheKey(spec)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*Constraint), nil
	}
	c.mu.Unlock()

	g, err := c.build(spec)
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

// Cached is how many compiled constraints the Compiler holds.
func (c *Compiler) Cached() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// cacheKey is the canonical text of a constraint: its kind and its content,
// with JSON compacted so that white space does not make a new entry.
func cacheKey(spec Spec) (string, error) {
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

func (c *Compiler) build(spec Spec) (*grammar, error) {
	b := newBuilder(c.cfg.MaxStates)
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
		sc, err := newSchemaCompiler(b, c.cfg, spec.Schema)
		if err != nil {
			return nil, err
		}
		f, err := sc.compileRoot()
		if err != nil {
			return nil, err
		}
		b.define(root, f)
	case KindJSONObject:
		j := newJSONBuilder(b, c.cfg)
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
