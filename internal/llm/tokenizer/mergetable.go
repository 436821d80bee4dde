package tokenizer

import "math/bits"

// mergeTable maps a pair of ids to its merge: an open-addressing hash table
// specialised for the pair keys, which merging looks up several times per
// symbol (a generic map spends most of that time hashing).
type mergeTable struct {
	slots []mergeSlot
	mask  uint64
	n     int
}

type mergeSlot struct {
	key uint64 // pair key with usedBit set; 0 when empty
	m   merge
}

// usedBit marks an occupied slot; pair keys never have it (ids are 31-bit).
const usedBit = 1 << 63

func newMergeTable(capacity int) *mergeTable {
	size := 1 << bits.Len(uint(capacity*2)) // load factor at most one half
	return &mergeTable{slots: make([]mergeSlot, size), mask: uint64(size - 1)}
}

func mergeHash(key uint64) uint64 {
	key *= 0x9E3779B97F4A7C15
	return key ^ key>>29
}

// put sets the merge of a pair, replacing an earlier one (a later duplicate
// in the file wins, as in the reference implementation).
func (t *mergeTable) put(a, b int, m merge) {
	key := pairKey(a, b) | usedBit
	for i := mergeHash(key) & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].key {
		case 0:
			t.slots[i] = mergeSlot{key: key, m: m}
			t.n++
			return
		case key:
			t.slots[i].m = m
			return
		}
	}
}

func (t *mergeTable) get(a, b int) (merge, bool) {
	key := pairKey(a, b) | usedBit
	for i := mergeHash(key) & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].key {
		case key:
			return t.slots[i].m, true
		case 0:
			return merge{}, false
		}
	}
}
