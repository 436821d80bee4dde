package constrain

import (
	"slices"
	"sync"
	"unsafe"
)

// The grammar runs as a lazily built deterministic automaton. A position in
// the grammar is a stack: the state being matched on top, and below it the
// states to continue at when each called rule ends. Stacks are interned as
// linked nodes (state, parent), so a stack is one int32 and equal stacks
// are equal ids. A DFA state is the set of stacks the bytes so far can have
// led to, closed over moves that consume nothing and kept only where a byte
// can be consumed next (or the output may end there). Its byte transitions
// are computed on first use and remembered, so that a walk over the token
// trie costs one table lookup per trie node once warm.

const (
	transUnknown = -2
	transDead    = -1
)

type stackNode struct {
	state  int32
	parent int32 // -1 at the bottom
	nest   int32 // calls of recursive rules open
}

type dfaState struct {
	stacks []int32 // sorted
	accept bool
	next   []int32  // by byte class; nil until the first transition is computed
	mask   []uint64 // allowed tokens, once computed for the vocabulary
}

// dfa is shared by every matcher of one compiled constraint; mu guards it.
//
// Its tables only grow as new positions are met, so they are bounded:
// when an operation leaves more than maxStates states or stacks, all of
// them are dropped and gen counts up. Matchers keep the tokens they
// accepted and, finding their generation gone, walk them again from the
// start; nothing they answer changes, only what is cached.
type dfa struct {
	mu        sync.Mutex
	g         *grammar
	maxNest   int32
	maxStates int
	gen       uint64 // counts the resets
	// Bytes that every edge of the grammar treats alike share a class, and
	// a state's transitions are kept per class: far fewer than 256.
	class    [256]uint8
	nclasses int
	// afterRecursive[s]: s is where a call of a recursive rule returns to.
	afterRecursive []bool

	nodes     []stackNode
	nodeIndex map[[2]int32]int32
	states    []dfaState
	stateKey  map[string]int32
	start     int32

	// scratch for closures
	seen map[int32]struct{}
	work []int32
	kept []int32
	// Masks are interned: states that allow the same tokens (a string's
	// interior at every length still far from its bound, say) share one,
	// so a state's mask is computed once however many states there are,
	// and maxMask bounds the distinct masks kept.
	maskIndex map[uint64][][]uint64
	masks     int // distinct masks kept
	maxMask   int
}

func newDFA(g *grammar, maxNest, maxMasks, maxStates int) *dfa {
	d := &dfa{
		g: g, maxNest: int32(maxNest), maxMask: maxMasks, maxStates: maxStates,
		afterRecursive: make([]bool, len(g.edges)),
		nodeIndex:      map[[2]int32]int32{},
		stateKey:       map[string]int32{},
		seen:           map[int32]struct{}{},
		maskIndex:      map[uint64][][]uint64{},
	}
	for _, edges := range g.edges {
		for _, e := range edges {
			if e.kind == edgeCall && g.rules[e.rule].recursive {
				d.afterRecursive[e.to] = true
			}
		}
	}
	d.classify()
	d.begin()
	return d
}

// classify splits the bytes into classes at every edge's bounds.
func (d *dfa) classify() {
	var cut [257]bool
	for _, edges := range d.g.edges {
		for _, e := range edges {
			if e.kind == edgeByte {
				cut[e.lo], cut[int(e.hi)+1] = true, true
			}
		}
	}
	c := -1
	for b := range 256 {
		if b == 0 || cut[b] {
			c++
		}
		d.class[b] = uint8(c)
	}
	d.nclasses = c + 1
}

// begin interns the start state.
func (d *dfa) begin() {
	root := d.node(d.g.rules[d.g.root].start, -1)
	d.start = d.closure([]int32{root})
}

// trim drops every table once they hold more than the budget; it runs at
// the end of each operation, when no state id is held but the matchers'.
func (d *dfa) trim() {
	if len(d.states) <= d.maxStates && len(d.nodes) <= d.maxStates {
		return
	}
	d.nodes = d.nodes[:0]
	clear(d.nodeIndex)
	d.states = nil // the old states hold transition tables and masks
	clear(d.stateKey)
	clear(d.maskIndex)
	d.masks = 0
	d.gen++
	d.begin()
}

func (d *dfa) node(state, parent int32) int32 {
	key := [2]int32{state, parent}
	if id, ok := d.nodeIndex[key]; ok {
		return id
	}
	nest := int32(0)
	if parent >= 0 {
		p := d.nodes[parent]
		nest = p.nest
		if d.afterRecursive[p.state] {
			nest++
		}
	}
	d.nodes = append(d.nodes, stackNode{state: state, parent: parent, nest: nest})
	id := int32(len(d.nodes) - 1)
	d.nodeIndex[key] = id
	return id
}

// closure follows every move that consumes nothing from the given stacks
// and interns the resulting DFA state (transDead when nothing is left).
func (d *dfa) closure(from []int32) int32 {
	clear(d.seen)
	d.work = append(d.work[:0], from...)
	d.kept = d.kept[:0]
	accept := false
	rootEnd := d.g.rules[d.g.root].end
	for len(d.work) > 0 {
		id := d.work[len(d.work)-1]
		d.work = d.work[:len(d.work)-1]
		if _, ok := d.seen[id]; ok {
			continue
		}
		d.seen[id] = struct{}{}
		n := d.nodes[id]
		if d.g.ruleOfEnd[n.state] >= 0 {
			if n.parent >= 0 {
				d.work = append(d.work, n.parent) // the called rule returns
			} else if n.state == rootEnd {
				accept = true
			}
			continue
		}
		consumes := false
		for _, e := range d.g.edges[n.state] {
			switch e.kind {
			case edgeByte:
				consumes = true
			case edgeEpsilon:
				d.work = append(d.work, d.node(e.to, n.parent))
			case edgeCall:
				if d.g.rules[e.rule].recursive && n.nest >= d.maxNest {
					continue // nesting beyond the bound is not offered
				}
				ret := d.node(e.to, n.parent)
				d.work = append(d.work, d.node(d.g.rules[e.rule].start, ret))
			}
		}
		if consumes {
			d.kept = append(d.kept, id)
		}
	}
	if len(d.kept) == 0 && !accept {
		return transDead
	}
	slices.Sort(d.kept)
	key := unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(d.kept))), 4*len(d.kept))
	if accept {
		key += "$"
	}
	if id, ok := d.stateKey[key]; ok {
		return id
	}
	d.states = append(d.states, dfaState{stacks: slices.Clone(d.kept), accept: accept})
	id := int32(len(d.states) - 1)
	d.stateKey[string([]byte(key))] = id
	return id
}

// step is the DFA state after consuming byte c in state s.
func (d *dfa) step(s int32, c byte) int32 {
	st := &d.states[s]
	k := d.class[c]
	if st.next != nil {
		if t := st.next[k]; t != transUnknown {
			return t
		}
	}
	var moved []int32
	for _, id := range st.stacks {
		n := d.nodes[id]
		for _, e := range d.g.edges[n.state] {
			if e.kind == edgeByte && e.lo <= c && c <= e.hi {
				moved = append(moved, d.node(e.to, n.parent))
			}
		}
	}
	t := int32(transDead)
	if len(moved) > 0 {
		t = d.closure(moved)
	}
	st = &d.states[s] // closure may have grown d.states
	if st.next == nil {
		st.next = make([]int32, d.nclasses)
		for i := range st.next {
			st.next[i] = transUnknown
		}
	}
	st.next[k] = t
	return t
}

// walk consumes bytes from state s; transDead if some byte is not allowed.
func (d *dfa) walk(s int32, bytes []byte) int32 {
	for _, c := range bytes {
		if s = d.step(s, c); s == transDead {
			return transDead
		}
	}
	return s
}
