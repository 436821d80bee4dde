package engine

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/weftlabs/weft/internal/llm/lora"
)

// ErrAdapter is a request's adapter directory that cannot be served: missing,
// malformed, using a feature the engine does not apply, or shaped for
// another model. The message names the directory and the reason.
var ErrAdapter = errors.New("LoRA adapter cannot be served")

// adapterCache holds the adapters requests name, by directory, least
// recently used first out once more than max are held. An evicted adapter
// stays in memory while sequences still run with it (they hold it), and a
// later request loads it again.
type adapterCache struct {
	max   int
	mu    sync.Mutex
	order *list.List // of *heldAdapter, most recently used at the front
	byDir map[string]*list.Element
	// serial numbers the adapters loaded, for prefix-cache keys: a
	// directory loaded again (its files may have been replaced) never
	// reuses KV blocks computed under its earlier contents.
	serial uint64
}

type heldAdapter struct {
	dir     string
	adapter *lora.Adapter
	key     string // the prefix-cache key of its rows
}

func newAdapterCache(max int) *adapterCache {
	return &adapterCache{max: max, order: list.New(), byDir: map[string]*list.Element{}}
}

// get returns the adapter in dir, loading it (and checking it fits shape)
// on first use.
func (c *adapterCache) get(dir string, shape lora.Shape) (*heldAdapter, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrAdapter, dir, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byDir[abs]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*heldAdapter), nil
	}
	a, err := lora.Load(abs)
	if err == nil {
		err = a.Fits(shape)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: %v", ErrAdapter, dir, err)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrAdapter, dir, err)
	}
	c.serial++
	h := &heldAdapter{dir: abs, adapter: a, key: strconv.FormatUint(c.serial, 10)}
	c.byDir[abs] = c.order.PushFront(h)
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*heldAdapter)
		delete(c.byDir, old.dir)
	}
	return h, nil
}

// len is the number of adapters held.
func (c *adapterCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// prefixKey is the prefix-cache salt of a request: its tenant, its cache
// salt and its adapter's key when it has one, each quoted into one
// unambiguous string, so that rows computed for one tenant, under one salt
// or one adapter (or none) never serve another.
func prefixKey(tenant, salt string, adapter *heldAdapter) string {
	key := "base"
	if adapter != nil {
		key = "lora " + strconv.Quote(adapter.key)
	}
	return key + " " + strconv.Quote(tenant) + " " + strconv.Quote(salt)
}
