package webui

import (
	"slices"
	"sync"
)

// maxKeptAlignments bounds the alignments the handler keeps (one of two
// runs over 10,000 examples holds a few megabytes).
const maxKeptAlignments = 8

// alignmentCache keeps the alignments of the comparisons viewed last, by
// alignmentKey: aligning two runs of 10,000 examples reads 20,000 calls,
// while the filters, baselines and directions of a comparison, and each of
// its pages, only reread an alignment. A key names the runs as they were
// (ended, with so many examples), so an entry never goes stale; the least
// recently used goes first. The zero value is empty and ready.
type alignmentCache struct {
	mu      sync.Mutex
	entries map[string]*alignment
	// order has the keys, least recently used first.
	order []string
}

// get returns the alignment kept under key, nil when there is none ("" is
// the key of what is never kept).
func (c *alignmentCache) get(key string) *alignment {
	if key == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	al := c.entries[key]
	if al != nil {
		c.touch(key)
	}
	return al
}

// put keeps al under key, dropping the least recently used beyond
// maxKeptAlignments.
func (c *alignmentCache) put(key string, al *alignment) {
	if key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*alignment{}
	}
	c.entries[key] = al
	c.touch(key)
	for len(c.order) > maxKeptAlignments {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
}

// touch makes key the most recently used.
func (c *alignmentCache) touch(key string) {
	c.order = append(slices.DeleteFunc(c.order, func(k string) bool { return k == key }), key)
}
