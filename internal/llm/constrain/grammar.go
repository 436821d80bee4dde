package constrain

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
type builder struct {
	g         grammar
	maxStates int
	err       error
}

// newBuilder starts a grammar of at most maxStates states; going over is
// recorded and reported by finish.
func newBuilder(maxStates int) *builder {
	return &builder{maxStates: maxStates}
}

func (b *builder) state() int32 {
	if len(b.g.edges) >= b.maxStates {
		b.fail()
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

// repeat matches between lo and hi copies of what make builds (hi < 0: no
// upper bound). gen is called once per copy since fragments cannot be
// shared.
func (b *builder) repeat(lo, hi int, gen func() frag) frag {
	parts := copies(lo, gen)
	switch {
	case hi < 0:
		parts = append(parts, b.star(gen()))
	case hi > lo:
		// Nested optionals: (x (x (x)?)?)? so that each copy needs the one
		// before it, keeping the automaton linear in hi.
		tail := b.empty()
		for i := hi - lo - 1; i >= 0; i-- {
			tail = b.opt(b.seq(gen(), tail))
			if b.err != nil {
				break
			}
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
	if b.err != nil {
		return nil, b.err
	}
	for _, r := range b.g.rules {
		if !r.defined {
			return nil, errorf(ErrInvalid, "rule %q is used but not defined", r.name)
		}
	}
	b.g.root = root
	return &b.g, nil
}
