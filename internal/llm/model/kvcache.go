package model

import "fmt"

// SeqID names a sequence in a KV cache.
type SeqID uint64

// KVCache holds the keys and values of every layer for the positions of
// each sequence that a forward pass has seen. The model reads and writes it
// in blocks of BlockSize positions, so the same forward pass serves a
// contiguous cache (one block as long as the sequence may grow) and a paged
// one whose blocks may be shared between sequences with a common prefix:
// the model writes only positions at or after a batch's Start, which
// Prepare makes private to the sequence.
//
// Forward calls Prepare for every sequence of a batch before any layer
// runs, then Blocks once per sequence and layer from the calling goroutine;
// it writes the returned blocks from several threads, never the same
// position twice.
type KVCache interface {
	// BlockSize is the number of positions a block holds.
	BlockSize() int
	// Prepare makes positions [start, start+n) of seq writable in every
	// layer. Positions below start must hold what earlier passes wrote (a
	// cache may also accept a start below what it holds: the later
	// positions are then overwritten). ErrCacheFull when there is no room.
	Prepare(seq SeqID, start, n int) error
	// Blocks returns the key and value blocks of seq in layer that cover
	// positions [0, end), block i holding positions [i·BlockSize,
	// (i+1)·BlockSize). A key block is [BlockSize × KVHeads·HeadDim], a row
	// per position; a value block is the transpose, [KVHeads·HeadDim ×
	// BlockSize], so that weighting values by attention probabilities is a
	// matrix product along positions.
	Blocks(seq SeqID, layer, end int) (keys, values [][]float32)
}

// ContiguousCache is the simplest KVCache: each sequence owns one block per
// layer of Capacity positions, allocated when the sequence first appears.
type ContiguousCache struct {
	layers, rowLen, capacity int
	seqs                     map[SeqID]*contiguousSeq
}

type contiguousSeq struct {
	length int
	keys   [][][]float32 // [layer] → one block
	values [][][]float32
}

// NewContiguousCache returns a cache for sequences of up to capacity
// positions of the model described by c.
func NewContiguousCache(c *Config, capacity int) *ContiguousCache {
	return &ContiguousCache{
		layers:   c.Layers,
		rowLen:   c.KVHeads * c.HeadDim,
		capacity: capacity,
		seqs:     map[SeqID]*contiguousSeq{},
	}
}

// BlockSize is the capacity: one block holds a whole sequence.
func (c *ContiguousCache) BlockSize() int { return c.capacity }

// Prepare allocates a new sequence's storage, and checks that start does
// not skip positions and that the sequence fits.
func (c *ContiguousCache) Prepare(seq SeqID, start, n int) error {
	s, ok := c.seqs[seq]
	if start < 0 || (ok && start > s.length) || (!ok && start != 0) {
		have := 0
		if ok {
			have = s.length
		}
		return fmt.Errorf("%w: sequence %d starts at position %d but the cache holds %d", ErrBatch, seq, start, have)
	}
	if start+n > c.capacity {
		return fmt.Errorf("%w: sequence %d needs %d positions, capacity %d", ErrCacheFull, seq, start+n, c.capacity)
	}
	if !ok {
		s = &contiguousSeq{keys: make([][][]float32, c.layers), values: make([][][]float32, c.layers)}
		for l := range c.layers {
			s.keys[l] = [][]float32{make([]float32, c.capacity*c.rowLen)}
			s.values[l] = [][]float32{make([]float32, c.capacity*c.rowLen)}
		}
		c.seqs[seq] = s
	}
	s.length = start + n
	return nil
}

// Blocks returns the sequence's one block per layer.
func (c *ContiguousCache) Blocks(seq SeqID, layer, end int) (keys, values [][]float32) {
	s := c.seqs[seq]
	return s.keys[layer], s.values[layer]
}

// Len is the number of positions the cache holds for seq.
func (c *ContiguousCache) Len(seq SeqID) int {
	if s, ok := c.seqs[seq]; ok {
		return s.length
	}
	return 0
}

// Free forgets seq and releases its storage.
func (c *ContiguousCache) Free(seq SeqID) { delete(c.seqs, seq) }
