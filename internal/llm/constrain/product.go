package constrain

import (
	"slices"
	"strconv"
	"strings"
)

// A counter runs beside a fragment's automaton: its value changes with
// each byte consumed, and the fragment only ends where the value accepts.
// The product of the two is a new fragment in which every state knows the
// count, which is how a pattern gets a length bound (count characters) and
// an integer range a divisor (count the remainder).
type counter struct {
	start int
	// next is the value after consuming c from value v; -1 ends the path.
	next   func(v int, c byte) int
	accept func(v int) bool
}

// charCounter counts UTF-8 characters up to hi (hi < 0: it stops counting
// at lo, since every count from lo on behaves alike) and accepts from lo.
func charCounter(lo, hi int) counter {
	return counter{
		next: func(v int, c byte) int {
			if c >= 0x80 && c <= 0xBF { // a continuation byte: same character
				return v
			}
			switch {
			case hi < 0:
				return min(v+1, lo)
			case v >= hi:
				return -1
			}
			return v + 1
		},
		accept: func(v int) bool { return v >= lo },
	}
}

// remainderCounter is the remainder modulo m of the decimal digits read so
// far (other bytes, a sign, leave it alone); it accepts a multiple of m.
func remainderCounter(m int) counter {
	return counter{
		next: func(v int, c byte) int {
			if c < '0' || c > '9' {
				return v
			}
			return (v*10 + int(c-'0')) % m
		},
		accept: func(v int) bool { return v == 0 },
	}
}

// product is f run beside k. f must be made of byte and empty moves only
// (no rule calls) and must not yet be wired to anything after its end.
// Only states from which the end can still be reached are built, so the
// mask never leads into a path that cannot finish; ok is false when no
// output at all satisfies both.
func (b *builder) product(f frag, k counter) (out frag, ok bool) {
	// The counter multiplies the states; a deterministic fragment usually
	// has far fewer than the one the compilers assemble.
	if d, ok := b.determinize(f); ok {
		f = d
	}
	type key struct {
		state int32
		value int
	}
	type move struct {
		lo, hi byte
		to     int // index into pairs
		eps    bool
	}
	index := map[key]int{}
	var pairs []key
	var moves [][]move
	add := func(k key) int {
		if i, ok := index[k]; ok {
			return i
		}
		index[k] = len(pairs)
		pairs = append(pairs, k)
		moves = append(moves, nil)
		return len(pairs) - 1
	}
	add(key{f.start, k.start})
	for i := 0; i < len(pairs); i++ {
		// Nearly every pair becomes a state: pairs past what the budget has
		// left end the build before they cost more.
		if len(pairs) > b.maxStates-len(b.g.edges) {
			b.overBudget()
		}
		if i%ctxCheckEvery == 0 {
			b.checkTime()
		}
		p := pairs[i]
		for _, e := range b.g.edges[p.state] {
			switch e.kind {
			case edgeEpsilon:
				moves[i] = append(moves[i], move{eps: true, to: add(key{e.to, p.value})})
			case edgeByte:
				// Consecutive bytes that lead to the same count share a move.
				for c := int(e.lo); c <= int(e.hi); {
					v := k.next(p.value, byte(c))
					end := c
					for end < int(e.hi) && k.next(p.value, byte(end+1)) == v {
						end++
					}
					if v >= 0 {
						moves[i] = append(moves[i], move{lo: byte(c), hi: byte(end), to: add(key{e.to, v})})
					}
					c = end + 1
				}
			case edgeCall:
				panic("constrain: product over a fragment that calls a rule")
			}
		}
	}
	// live[i]: the end can be reached from pair i.
	live := make([]bool, len(pairs))
	back := make([][]int, len(pairs))
	var work []int
	for i, p := range pairs {
		for _, m := range moves[i] {
			back[m.to] = append(back[m.to], i)
		}
		if p.state == f.end && k.accept(p.value) {
			live[i] = true
			work = append(work, i)
		}
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		for _, from := range back[i] {
			if !live[from] {
				live[from] = true
				work = append(work, from)
			}
		}
	}
	if !live[0] {
		return frag{}, false
	}
	states := make([]int32, len(pairs))
	for i := range pairs {
		if live[i] {
			states[i] = b.state()
		}
	}
	end := b.state()
	for i, p := range pairs {
		if !live[i] {
			continue
		}
		for _, m := range moves[i] {
			if !live[m.to] {
				continue
			}
			if m.eps {
				b.link(states[i], states[m.to])
			} else {
				b.g.edges[states[i]] = append(b.g.edges[states[i]], edge{kind: edgeByte, lo: m.lo, hi: m.hi, to: states[m.to]})
			}
		}
		if p.state == f.end && k.accept(p.value) {
			b.link(states[i], end)
		}
	}
	return frag{states[0], end}, true
}

// maxDeterminized bounds the sets determinize builds: a few expressions
// have exponentially many, and the product copes with f as it is.
// maxDeterminizedSize bounds the states they hold together (which grow
// with the square of a long chain's length), and so does what is left of
// the state budget, since each costs about as much memory as a state.
const (
	maxDeterminized     = 4096
	maxDeterminizedSize = 1 << 18
)

// determinize is a deterministic copy of f (byte and empty moves only):
// one state per set of f's states some input reaches, no empty moves, and
// disjoint byte ranges out of each state. ok is false when it would need
// more than maxDeterminized states.
func (b *builder) determinize(f frag) (d frag, ok bool) {
	closure := func(set []int32) []int32 {
		seen := map[int32]bool{}
		var out []int32
		work := append([]int32(nil), set...)
		for len(work) > 0 {
			s := work[len(work)-1]
			work = work[:len(work)-1]
			if seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, s)
			for _, e := range b.g.edges[s] {
				if e.kind == edgeEpsilon {
					work = append(work, e.to)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	keyOf := func(set []int32) string {
		var sb strings.Builder
		for _, s := range set {
			sb.WriteString(strconv.Itoa(int(s)))
			sb.WriteByte(',')
		}
		return sb.String()
	}
	end := b.state()
	index := map[string]int32{}
	var sets [][]int32
	var states []int32
	size := 0
	intern := func(set []int32) int32 {
		k := keyOf(set)
		if s, ok := index[k]; ok {
			return s
		}
		s := b.state()
		index[k] = s
		sets = append(sets, set)
		size += len(set)
		states = append(states, s)
		if slices.Contains(set, f.end) {
			b.link(s, end)
		}
		return s
	}
	start := intern(closure([]int32{f.start}))
	maxSize := min(maxDeterminizedSize, b.maxStates-len(b.g.edges))
	for i := 0; i < len(sets); i++ {
		if len(sets) > maxDeterminized || size > maxSize {
			return frag{}, false
		}
		if i%64 == 0 {
			b.checkTime()
		}
		// Cut the byte space where any edge starts or stops.
		var cuts []int
		for _, s := range sets[i] {
			for _, e := range b.g.edges[s] {
				if e.kind == edgeByte {
					cuts = append(cuts, int(e.lo), int(e.hi)+1)
				}
			}
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		for j := 0; j+1 < len(cuts); j++ {
			lo, hi := cuts[j], cuts[j+1]-1
			var next []int32
			for _, s := range sets[i] {
				for _, e := range b.g.edges[s] {
					if e.kind == edgeByte && int(e.lo) <= lo && hi <= int(e.hi) {
						next = append(next, e.to)
					}
				}
			}
			if len(next) == 0 {
				continue
			}
			to := intern(closure(next))
			b.g.edges[states[i]] = append(b.g.edges[states[i]], edge{kind: edgeByte, lo: byte(lo), hi: byte(hi), to: to})
		}
	}
	return frag{start, end}, true
}
