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
func (w *word) mergeAll(merges map[uint64]merge) {
	if len(w.symbols) < 2 {
		return
	}
	w.heap = w.heap[:0]
	for i := 0; i+1 < len(w.symbols); i++ {
		if m, ok := merges[pairKey(w.symbols[i].id, w.symbols[i+1].id)]; ok {
			w.heap.push(heapEntry{rank: m.rank, pos: int32(i), newID: m.newID})
		}
	}
	for len(w.heap) > 0 {
		top := w.heap.pop()
		left := &w.symbols[top.pos]
		if left.removed || left.next < 0 {
			continue
		}
		rightPos := left.next
		right := &w.symbols[rightPos]
		// A stale entry: the pair changed since it was queued.
		if m, ok := merges[pairKey(left.id, right.id)]; !ok || m.newID != top.newID {
			continue
		}
		left.id = int(top.newID)
		left.next = right.next
		right.removed = true
		if right.next >= 0 {
			w.symbols[right.next].prev = int(top.pos)
		}
		if left.prev >= 0 {
			if m, ok := merges[pairKey(w.symbols[left.prev].id, left.id)]; ok {
				w.heap.push(heapEntry{rank: m.rank, pos: int32(left.prev), newID: m.newID})
			}
		}
		if left.next >= 0 {
			if m, ok := merges[pairKey(left.id, w.symbols[left.next].id)]; ok {
				w.heap.push(heapEntry{rank: m.rank, pos: top.pos, newID: m.newID})
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

type heapEntry struct {
	rank, pos, newID int32
}

func (a heapEntry) less(b heapEntry) bool {
	return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos
}

// mergeHeap is a binary min-heap of candidate merges.
type mergeHeap []heapEntry

func (h *mergeHeap) push(e heapEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s[i].less(s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *mergeHeap) pop() heapEntry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, small := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].less(s[small]) {
			small = l
		}
		if r < len(s) && s[r].less(s[small]) {
			small = r
		}
		if small == i {
			break
		}
		s[i], s[small] = s[small], s[i]
		i = small
	}
	*h = s
	return top
}
