package kvcache

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/weftlabs/weft/internal/llm/model"
)

// ErrNotAttached is returned by Commit for a sequence that did not declare
// its salt with Attach: registering its blocks under a guessed salt could
// share them with requests that must not see them.
var ErrNotAttached = errors.New("kvcache: sequence not attached")

// Config sizes a cache.
type Config struct {
	// Layers and RowLen (KVHeads·HeadDim) are the model's.
	Layers, RowLen int
	// BlockSize is the number of positions a block holds; 0 means 16.
	BlockSize int
	// BudgetBytes bounds the memory of the pool: it holds
	// BudgetBytes / (Layers·2·BlockSize·RowLen·4) blocks.
	BudgetBytes int64
}

// ForModel returns the Config of a cache for c with the given budget.
func ForModel(c *model.Config, budgetBytes int64) Config {
	return Config{Layers: c.Layers, RowLen: c.KVHeads * c.HeadDim, BudgetBytes: budgetBytes}
}

// blockKey names the content of a full block: the hash chained over the
// salt and the tokens of every block up to this one.
type blockKey [sha256.Size]byte

// block is one physical block: BlockSize positions of every layer.
type block struct {
	keys, values [][]float32 // [layer] → block, allocated on first use
	refs         int         // sequences mapping the block
	key          blockKey    // valid when registered
	registered   bool        // in Cache.byKey, content immutable while shared
	lastUse      uint64      // for evicting the least recently used
}

type sequence struct {
	blocks   []int
	length   int
	salt     string
	attached bool
}

// Cache is a paged model.KVCache with prefix sharing. Its methods may be
// called from several goroutines.
type Cache struct {
	cfg   Config
	mu    sync.Mutex
	pool  []block
	free  []int            // unreferenced, unregistered blocks
	idle  map[int]struct{} // unreferenced, registered blocks: evictable
	byKey map[blockKey]int
	seqs  map[model.SeqID]*sequence
	clock uint64
}

// Stats counts the blocks of the pool by state.
type Stats struct {
	Total int // blocks the budget holds
	InUse int // mapped by at least one sequence
	Idle  int // registered for reuse, unreferenced, evictable
	Free  int // neither
}

// New returns an empty cache. It fails when the budget does not hold one
// block.
func New(cfg Config) (*Cache, error) {
	if cfg.BlockSize == 0 {
		cfg.BlockSize = 16
	}
	if cfg.Layers <= 0 || cfg.RowLen <= 0 || cfg.BlockSize < 0 {
		return nil, fmt.Errorf("kvcache: invalid shape: %d layers, row length %d, block size %d", cfg.Layers, cfg.RowLen, cfg.BlockSize)
	}
	n := cfg.BudgetBytes / cfg.blockBytes()
	if n < 1 {
		return nil, fmt.Errorf("kvcache: budget of %d bytes holds no block of %d bytes", cfg.BudgetBytes, cfg.blockBytes())
	}
	c := &Cache{
		cfg:   cfg,
		pool:  make([]block, n),
		free:  make([]int, 0, n),
		idle:  map[int]struct{}{},
		byKey: map[blockKey]int{},
		seqs:  map[model.SeqID]*sequence{},
	}
	for i := int(n) - 1; i >= 0; i-- { // pop from the end: low ids first
		c.free = append(c.free, i)
	}
	return c, nil
}

func (cfg Config) blockBytes() int64 {
	return int64(cfg.Layers) * 2 * int64(cfg.BlockSize) * int64(cfg.RowLen) * 4
}

// BlockSize is the number of positions a block holds.
func (c *Cache) BlockSize() int { return c.cfg.BlockSize }

// Stats reports the pool's blocks by state.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Stats{Total: len(c.pool), Idle: len(c.idle), Free: len(c.free)}
	s.InUse = s.Total - s.Idle - s.Free
	return s
}

// Len is the number of positions the cache holds for seq.
func (c *Cache) Len(seq model.SeqID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.seqs[seq]; ok {
		return s.length
	}
	return 0
}

// Prepare makes positions [start, start+n) of seq writable: it takes new
// blocks for the positions past the sequence's last block and copies any
// shared block the positions fall in. When the pool, after evicting idle
// blocks, cannot supply them all it takes none and returns
// model.ErrCacheFull.
func (c *Cache) Prepare(seq model.SeqID, start, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.seqs[seq]
	if !ok {
		s = &sequence{}
	}
	if start < 0 || start > s.length {
		return fmt.Errorf("%w: sequence %d starts at position %d but the cache holds %d", model.ErrBatch, seq, start, s.length)
	}
	bs := c.cfg.BlockSize
	need := (start + n + bs - 1) / bs
	first := start / bs // first block written
	copies := 0
	for i := first; i < min(need, len(s.blocks)); i++ {
		if c.pool[s.blocks[i]].refs > 1 {
			copies++
		}
	}
	if want := copies + max(0, need-len(s.blocks)); want > len(c.free)+len(c.idle) {
		return fmt.Errorf("%w: sequence %d needs %d more blocks, %d available", model.ErrCacheFull, seq, want, len(c.free)+len(c.idle))
	}
	if !ok {
		c.seqs[seq] = s
	}
	for _, id := range s.blocks[min(need, len(s.blocks)):] { // positions past the new end
		c.unref(id)
	}
	s.blocks = s.blocks[:min(need, len(s.blocks))]
	for i := first; i < len(s.blocks); i++ {
		id := s.blocks[i]
		b := &c.pool[id]
		switch {
		case b.refs > 1:
			cp := c.take()
			c.copyBlock(cp, id)
			b.refs--
			s.blocks[i] = cp
		case b.registered:
			// Only this sequence maps it: its content is about to change,
			// so it can no longer be found under its key.
			c.unregister(id)
		}
	}
	for len(s.blocks) < need {
		s.blocks = append(s.blocks, c.take())
	}
	s.length = start + n
	return nil
}

// Blocks returns seq's blocks of layer covering positions [0, end).
func (c *Cache) Blocks(seq model.SeqID, layer, end int) (keys, values [][]float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.seqs[seq]
	n := (end + c.cfg.BlockSize - 1) / c.cfg.BlockSize
	keys, values = make([][]float32, n), make([][]float32, n)
	for i, id := range s.blocks[:n] {
		keys[i], values[i] = c.pool[id].keys[layer], c.pool[id].values[layer]
	}
	return keys, values
}

// Attach starts seq, which must be new, with the longest run of resident
// registered blocks matching the full blocks of tokens under salt, and
// returns the number of positions they cover: the forward pass starts at
// that position. It leaves at least the last token uncovered, since the
// pass needs one to compute logits. The salt is remembered for Commit.
func (c *Cache) Attach(seq model.SeqID, salt string, tokens []int32) (cachedPositions int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seqs[seq]; ok {
		return 0, fmt.Errorf("%w: sequence %d is already in the cache", model.ErrBatch, seq)
	}
	s := &sequence{salt: salt, attached: true}
	c.seqs[seq] = s
	bs := c.cfg.BlockSize
	full := max(0, len(tokens)-1) / bs
	key := saltKey(salt)
	for i := range full {
		key = chain(key, tokens[i*bs:(i+1)*bs])
		id, ok := c.byKey[key]
		if !ok {
			break
		}
		b := &c.pool[id]
		if b.refs == 0 {
			delete(c.idle, id)
		}
		b.refs++
		c.touch(id)
		s.blocks = append(s.blocks, id)
	}
	s.length = len(s.blocks) * bs
	return s.length, nil
}

// Commit registers the full blocks of seq covering tokens, its tokens from
// position 0, under the salt given to Attach, for later sequences to
// attach. A block whose content is already registered by another block is
// left private.
func (c *Cache) Commit(seq model.SeqID, tokens []int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.seqs[seq]
	if !ok || !s.attached {
		return fmt.Errorf("%w: sequence %d", ErrNotAttached, seq)
	}
	if len(tokens) > s.length {
		return fmt.Errorf("%w: sequence %d commits %d tokens but the cache holds %d", model.ErrBatch, seq, len(tokens), s.length)
	}
	bs := c.cfg.BlockSize
	key := saltKey(s.salt)
	for i := range len(tokens) / bs {
		key = chain(key, tokens[i*bs:(i+1)*bs])
		id := s.blocks[i]
		b := &c.pool[id]
		if b.registered {
			continue // attached, or committed before
		}
		if _, taken := c.byKey[key]; taken {
			continue
		}
		b.key, b.registered = key, true
		c.byKey[key] = id
		c.touch(id)
	}
	return nil
}

// Release forgets seq. Its blocks that no other sequence maps become free,
// or idle when registered.
func (c *Cache) Release(seq model.SeqID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.seqs[seq]
	if !ok {
		return
	}
	// Last block first: the end of a prefix is then older than its start
	// and evicted before it, keeping the shorter prefix attachable.
	for i := len(s.blocks) - 1; i >= 0; i-- {
		c.unref(s.blocks[i])
	}
	delete(c.seqs, seq)
}

func (c *Cache) unref(id int) {
	b := &c.pool[id]
	b.refs--
	if b.refs > 0 {
		return
	}
	if b.registered {
		c.idle[id] = struct{}{}
		c.touch(id)
	} else {
		c.free = append(c.free, id)
	}
}

// take returns a block with one reference: a free one, else the least
// recently used idle one. The caller has checked that one exists.
func (c *Cache) take() int {
	var id int
	if n := len(c.free); n > 0 {
		id = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		id = -1
		for i := range c.idle {
			if id < 0 || c.pool[i].lastUse < c.pool[id].lastUse {
				id = i
			}
		}
		delete(c.idle, id)
		c.unregister(id)
	}
	b := &c.pool[id]
	if b.keys == nil {
		size := c.cfg.BlockSize * c.cfg.RowLen
		b.keys, b.values = make([][]float32, c.cfg.Layers), make([][]float32, c.cfg.Layers)
		for l := range c.cfg.Layers {
			b.keys[l], b.values[l] = make([]float32, size), make([]float32, size)
		}
	}
	b.refs = 1
	c.touch(id)
	return id
}

func (c *Cache) copyBlock(dst, src int) {
	for l := range c.cfg.Layers {
		copy(c.pool[dst].keys[l], c.pool[src].keys[l])
		copy(c.pool[dst].values[l], c.pool[src].values[l])
	}
}

func (c *Cache) unregister(id int) {
	b := &c.pool[id]
	if b.registered {
		delete(c.byKey, b.key)
		b.registered = false
	}
}

func (c *Cache) touch(id int) {
	c.clock++
	c.pool[id].lastUse = c.clock
}

func saltKey(salt string) blockKey {
	return sha256.Sum256(append([]byte("salt:"), salt...))
}

// chain extends the key of the blocks before with one block's tokens.
func chain(prev blockKey, tokens []int32) blockKey {
	buf := make([]byte, len(prev), len(prev)+4*len(tokens))
	copy(buf, prev[:])
	for _, t := range tokens {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(t))
	}
	return sha256.Sum256(buf)
}
