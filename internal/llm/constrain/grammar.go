package constrain

import "context"

// A grammar is a set of rules, each a byte-level automaton whose edges
// consume one byte out of a range, consume nothing, or call another rule
// (a recursive transition network). Every constraint compiles to one: a
// regular expression is a single rule, a JSON Schema with $ref is several
// rules calling each other. All rules share one state space; a rule is a
// start state and an end state with no edges of its own.

// edgeKind tells what an edge does.
type edgeKind uint8

const (
	edgeByte edgeKind = iota // consume one byte in [lo, hi]
	edgeEpsilon
	edgeCall // run rule `rule`, then continue at `to`
)

type edge struct {
	kind   edgeKind
	lo, hi byte
	rule   int32
	to     int32
}

type rule struct {
	name       string
	start, end int32
	defined    bool
	// recursive rules count towards Config.MaxNesting: a call to one is
	// not offered once that many are open.
	recursive bool
}

// grammar is a compiled constraint's automaton. root is the rule an output
// must match from start to end.
type grammar struct {
	edges     [][]edge // by state
	ruleOfEnd []int32  // by state: the rule a state ends, or -1
	rules     []rule
	root      int32
}

// frag is a piece of automaton under construction with one entry and one
// exit state.
type frag struct{ start, end int32 }

// builder assembles a grammar; its methods build fragments that are then
// wired together.
//
// Its budget is a hard stop: the state that would go over maxStates, or
// the first state made once ctx is done, is never made; the builder
// panics with a buildStop instead, which Compiler.build recovers into the
// error. Compilers of every kind nest deeply (a repeat of an alternative
// of a class), and no path may keep growing an automaton already refused,
// so the stop is taken where states are made rather than checked by each
// caller.
type builder struct {
	g         grammar
	maxStates int
	ctx       context.Context // the compile's deadline; checked every ctxCheckEvery states
}

// ctxCheckEvery is how many states are made between looks at the
// compile's deadline.
const ctxCheckEvery = 1024

// buildStop is the panic value that ends a build: err says why.
type buildStop struct{ err error }

// newBuilder starts a grammar of at most maxStates states, built while ctx
// is not done.
func newBuilder(ctx context.Context, maxStates int) *builder {
	return &builder{maxStates: maxStates, ctx: ctx}
}

// stop ends the build with err.
func (b *builder) stop(err error) {
	panic(buildStop{err})
}

// overBudget ends the build: the constraint needs more states than allowed.
func (b *builder) overBudget() {
	b.stop(errorf(ErrTooComplex, "the constraint needs more than %d automaton states", b.maxStates))
}

// reserve ends the build at once when n more states would go over the
// budget, before any of them is made.
func (b *builder) reserve(n int) {
	if n > b.maxStates-len(b.g.edges) {
		b.overBudget()
	}
}

// checkTime ends the build once its context is done.
func (b *builder) checkTime() {
	if b.ctx.Err() != nil {
		b.stop(context.Cause(b.ctx))
	}
}

func (b *builder) state() int32 {
	n := len(b.g.edges)
	if n >= b.maxStates {
		b.overBudget()
	}
	if n%ctxCheckEvery == 0 {
		b.checkTime()
	}
	b.g.edges = append(b.g.edges, nil)
	b.g.ruleOfEnd = append(b.g.ruleOfEnd, -1)
	return int32(len(b.g.edges) - 1)
}

func (b *builder) link(from, to int32) {
	b.g.edges[from] = append(b.g.edges[from], edge{kind: edgeEpsilon, to: to})
}

// empty matches the empty string.
func (b *builder) empty() frag {
	s := b.state()
	return frag{s, s}
}

// byteRange matches one byte in [lo, hi].
func (b *builder) byteRange(lo, hi byte) frag {
	s, e := b.state(), b.state()
	b.g.edges[s] = append(b.g.edges[s], edge{kind: edgeByte, lo: lo, hi: hi, to: e})
	return frag{s, e}
}

// literal matches exactly the bytes of s.
func (b *builder) literal(s string) frag {
	start := b.state()
	cur := start
	for i := 0; i < len(s); i++ {
		next := b.state()
		b.g.edges[cur] = append(b.g.edges[cur], edge{kind: edgeByte, lo: s[i], hi: s[i], to: next})
		cur = next
	}
	return frag{start, cur}
}

// seq matches its parts one after the other.
func (b *builder) seq(parts ...frag) frag {
	if len(parts) == 0 {
		return b.empty()
	}
	for i := 1; i < len(parts); i++ {
		b.link(parts[i-1].end, parts[i].start)
	}
	return frag{parts[0].start, parts[len(parts)-1].end}
}

// alt matches any one of its parts.
func (b *builder) alt(parts ...frag) frag {
	if len(parts) == 1 {
		return parts[0]
	}
	s, e := b.state(), b.state()
	for _, p := range parts {
		b.link(s, p.start)
		b.link(p.end, e)
	}
	return frag{s, e}
}

// opt matches f or nothing.
func (b *builder) opt(f frag) frag {
	s, e := b.state(), b.state()
	b.link(s, f.start)
	b.link(f.end, e)
	b.link(s, e)
	return frag{s, e}
}

// star matches f any number of times.
func (b *builder) star(f frag) frag {
	s := b.state()
	b.link(s, f.start)
	b.link(f.end, s)
	return frag{s, s}
}

// repeat matches between lo and hi copies of what gen builds (hi < 0: no
// upper bound). gen is called once per copy since fragments cannot be
// shared. Once the second copy is built the size of each further one is
// known (the first may also define rules the others only call), and a
// repeat whose copies cannot fit in the budget ends the build there,
// before the others are made.
func (b *builder) repeat(lo, hi int, gen func() frag) frag {
	total := max(lo, hi)
	if hi < 0 {
		total = lo + 1
	}
	made := 0
	copyOf := func() frag {
		made++
		if made != 2 {
			return gen()
		}
		before := len(b.g.edges)
		f := gen()
		// Each further copy costs as much, and an optional one two more.
		b.reserve((total - made) * (len(b.g.edges) - before + 2))
		return f
	}
	parts := copies(lo, copyOf)
	switch {
	case hi < 0:
		parts = append(parts, b.star(copyOf()))
	case hi > lo:
		// Nested optionals: (x (x (x)?)?)? so that each copy needs the one
		// before it, keeping the automaton linear in hi.
		tail := b.empty()
		for i := hi - lo - 1; i >= 0; i-- {
			tail = b.opt(b.seq(copyOf(), tail))
		}
		parts = append(parts, tail)
	}
	return b.seq(parts...)
}

func copies(n int, gen func() frag) []frag {
	parts := make([]frag, 0, n+1)
	for range n {
		parts = append(parts, gen())
	}
	return parts
}

// newRule reserves a rule so that it can be called before it is defined.
func (b *builder) newRule(name string) int32 {
	s, e := b.state(), b.state()
	b.g.rules = append(b.g.rules, rule{name: name, start: s, end: e})
	id := int32(len(b.g.rules) - 1)
	b.g.ruleOfEnd[e] = id
	return id
}

// define sets what a reserved rule matches.
func (b *builder) define(id int32, body frag) {
	r := &b.g.rules[id]
	b.link(r.start, body.start)
	b.link(body.end, r.end)
	r.defined = true
}

// call matches what rule id matches.
func (b *builder) call(id int32) frag {
	s, e := b.state(), b.state()
	b.g.edges[s] = append(b.g.edges[s], edge{kind: edgeCall, rule: id, to: e})
	return frag{s, e}
}

// finish makes rule root the grammar's start and checks that every rule
// called is defined.
func (b *builder) finish(root int32) (*grammar, error) {
	for _, r := range b.g.rules {
		if !r.defined {
			return nil, errorf(ErrInvalid, "rule %q is used but not defined", r.name)
		}
	}
	b.g.root = root
	return &b.g, nil
}
