package jinja

// lazySeq is what Python's generator-returning filters give (map, select,
// reject, selectattr, rejectattr, unique, batch, items) and what reverse
// gives for a list (an iterator). Like a Python generator it is always true,
// has no length, runs when first iterated (so its errors show up then, or
// never) and is used up by iterating: a second loop over it sees nothing.
type lazySeq struct {
	kind    string // Python's type: "generator", "list_reverseiterator" or "reversed"
	fn      string // the generator function, which Python prints
	produce func() []Value
	items   []Value
	pos     int
	started bool
}

func (s *lazySeq) fill() {
	if !s.started {
		s.started = true
		s.items = s.produce()
		s.produce = nil
	}
}

// rest consumes and returns what is left.
func (s *lazySeq) rest() []Value {
	s.fill()
	items := s.items[s.pos:]
	s.pos = len(s.items)
	return items
}

// next consumes one item.
func (s *lazySeq) next() (Value, bool) {
	s.fill()
	if s.pos >= len(s.items) {
		return nil, false
	}
	s.pos++
	return s.items[s.pos-1], true
}

// containsItem is Python's "x in iterator": it consumes up to the match.
func (s *lazySeq) containsItem(x Value) bool {
	for {
		it, ok := s.next()
		if !ok {
			return false
		}
		if equal(it, x) {
			return true
		}
	}
}

func generator(fn string, produce func() []Value) *lazySeq {
	return &lazySeq{kind: "generator", fn: fn, produce: produce}
}

// String prints as Python does, with a made-up address.
func (s *lazySeq) String() string {
	if s.kind == "generator" {
		return "<generator object " + s.fn + " at 0x7f0000000000>"
	}
	return "<" + s.kind + " object at 0x7f0000000000>"
}
