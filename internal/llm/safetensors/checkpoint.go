package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The file names of a Hugging Face model directory.
const (
	SingleFile = "model.safetensors"
	IndexFile  = "model.safetensors.index.json"
)

// Checkpoint is the weights of a model directory: one file, or the shards
// an index names, seen as one set of tensors.
type Checkpoint struct {
	files   []*File
	tensors map[string]*Tensor
}

// OpenDir opens the weights of a model directory: model.safetensors if it
// exists, else the shards listed by model.safetensors.index.json, whose
// weight_map must name, for every tensor, a shard of the directory that
// holds it.
func OpenDir(dir string) (*Checkpoint, error) {
	single := filepath.Join(dir, SingleFile)
	if _, err := os.Stat(single); err == nil {
		f, err := Open(single)
		if err != nil {
			return nil, err
		}
		return &Checkpoint{files: []*File{f}, tensors: f.tensors}, nil
	}
	index := filepath.Join(dir, IndexFile)
	data, err := os.ReadFile(index)
	if errors.Is(err, fs.ErrNotExist) {
		// No weights at all is a missing file, not a missing tensor: name
		// the file people put there.
		return nil, fmt.Errorf("%s: no such file (nor %s, the index of a sharded checkpoint): %w", single, IndexFile, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, index, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("%w: %s: weight_map is missing or empty", ErrInvalid, index)
	}
	c := &Checkpoint{tensors: make(map[string]*Tensor, len(idx.WeightMap))}
	shards := map[string]*File{}
	names := make([]string, 0, len(idx.WeightMap))
	for name := range idx.WeightMap {
		names = append(names, name)
	}
	slices.Sort(names) // errors name the same tensor on every run
	for _, name := range names {
		shard := idx.WeightMap[name]
		if shard == "" || shard != filepath.Base(shard) || strings.HasPrefix(shard, ".") {
			c.Close()
			return nil, fmt.Errorf("%w: %s: weight_map[%q] = %q is not a file name in the directory", ErrInvalid, index, name, shard)
		}
		f, ok := shards[shard]
		if !ok {
			f, err = Open(filepath.Join(dir, shard))
			if err != nil {
				c.Close()
				return nil, fmt.Errorf("weight_map[%q] in %s: %w", name, index, err)
			}
			shards[shard] = f
			c.files = append(c.files, f)
		}
		t, err := f.Tensor(name)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("weight_map[%q] in %s: %w", name, index, err)
		}
		c.tensors[name] = t
	}
	return c, nil
}

// Tensor returns the named tensor, ErrNotFound naming it if no file holds it.
func (c *Checkpoint) Tensor(name string) (*Tensor, error) {
	t, ok := c.tensors[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	return t, nil
}

// Names lists every tensor, sorted.
func (c *Checkpoint) Names() []string {
	names := make([]string, 0, len(c.tensors))
	for n := range c.tensors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Close releases every file. Tensors (and float32 views of them) must not
// be used afterwards.
func (c *Checkpoint) Close() error {
	var errs []error
	for _, f := range c.files {
		errs = append(errs, f.Close())
	}
	c.files, c.tensors = nil, nil
	return errors.Join(errs...)
}
