package tokenizer

// word is a word being merged: a doubly linked list of symbols over a slice.
type word struct {
	symbols []symbol
	// A pending unknown token, added once the run of unknown characters it
	// stands for ends (so that fuse_unk can make one of many).
	pendingUnk bool
	unkID      int
	heap       mergeHeap
}

type symbol struct {
	id         int
	prev, next int // indexes in symbols; -1 at the ends
	removed    bool
}

func newWord(capacity int) *word {
	return &word{symbols: make([]symbol, 0, capacity)}
}

func (w *word) add(id int) {
	n := len(w.symbols)
	if n > 0 {
		w.symbols[n-1].next = n
	}
	w.symbols = append(w.symbols, symbol{id: id, prev: n - 1, next: -1})
}

func (w *word) flushUnk() {
	if w.pendingUnk {
		w.pendingUnk = false
		w.add(w.unkID)
	}
}

// mergeAll applies merges, lowest rank first and leftmost first among
// equal ranks, until no adjacent pair has one.
func (w *word) mergeAll(merges *mergeTable) {
	if len(w.symbols) < 2 {
		return
	}
	w.heap = w.heap[:0]
	for i := 0; i+1 < len(w.symbols); i++ {
		if m, ok := merges.get(w.symbols[i].id, w.symbols[i+1].id); ok {
			w.heap.push(newHeapEntry(m, i, w.symbols[i].id, w.symbols[i+1].id))
		}
	}
	for len(w.heap) > 0 {
		top := w.heap.pop()
		pos := int(top.order & 0xFFFFFFFF)
		left := &w.symbols[pos]
		if left.removed || left.next < 0 {
			continue
		}
		right := &w.symbols[left.next]
		// A stale entry: the pair changed since it was queued.
		if int32(left.id) != top.left || int32(right.id) != top.right {
			continue
		}
		left.id = int(top.newID)
		left.next = right.next
		right.removed = true
		if right.next >= 0 {
			w.symbols[right.next].prev = pos
		}
		if left.prev >= 0 {
			prevID := w.symbols[left.prev].id
			if m, ok := merges.get(prevID, left.id); ok {
				w.heap.push(newHeapEntry(m, left.prev, prevID, left.id))
			}
		}
		if left.next >= 0 {
			nextID := w.symbols[left.next].id
			if m, ok := merges.get(left.id, nextID); ok {
				w.heap.push(newHeapEntry(m, pos, left.id, nextID))
			}
		}
	}
}

func (w *word) appendIDs(out []int) []int {
	for i := 0; i >= 0 && i < len(w.symbols); i = w.symbols[i].next {
		out = append(out, w.symbols[i].id)
	}
	return out
}

// heapEntry is a candidate merge of the symbols at a position and after
// it, valid while they still hold the ids left and right. order is the rank
// in the high half and the position in the low half, so that one comparison
// puts the lowest rank first and, among equal ranks, the leftmost.
type heapEntry struct {
	order       uint64
	left, right int32
	newID       int32
}

func newHeapEntry(m merge, pos, left, right int) heapEntry {
	return heapEntry{order: uint64(m.rank)<<32 | uint64(pos), left: int32(left), right: int32(right), newID: m.newID}
}

// mergeHeap is a 4-ary min-heap of candidate merges: shallower than a
// binary one, so fewer cache-missing levels per pop.
type mergeHeap []heapEntry

func (h *mergeHeap) push(e heapEntry) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 4
		if s[parent].order <= e.order {
			break
		}
		s[i] = s[parent]
		i = parent
	}
	s[i] = e
}

func (h *mergeHeap) pop() heapEntry {
	s := *h
	top := s[0]
	last := s[len(s)-1]
	s = s[:len(s)-1]
	*h = s
	if len(s) == 0 {
		return top
	}
	i := 0
	for {
		first := 4*i + 1
		if first >= len(s) {
			break
		}
		small := first
		for c := first + 1; c < first+4 && c < len(s); c++ {
			if s[c].order < s[small].order {
				small = c
			}
		}
		if s[small].order >= last.order {
			break
		}
		s[i] = s[small]
		i = small
	}
	s[i] = last
	return top
}
