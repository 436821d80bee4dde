package train

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/safetensors"
)

// OptimizerFile is the file beside an adapter's (lora.Save's directory) that
// holds the optimizer's state, so that training continued from the adapter
// continues its AdamW moments too, as one long run would: the first and
// second moments of every factor (float32, named
// "layers.<l>.<target>.<lora_A|lora_B>.<exp_avg|exp_avg_sq>") and the step
// count in the metadata. Adapter loaders ignore it.
const OptimizerFile = "optimizer.safetensors"

// momentPrefix begins the names of a factor's moments in OptimizerFile.
func momentPrefix(layer int, t lora.Target, factor string) string {
	return fmt.Sprintf("layers.%d.%s.%s.", layer, t, factor)
}

// optimizerEntries lists the adapter's factors in the order of pairs (the
// order of the optimizer's moments): their moments' name prefixes and
// their shapes.
func optimizerEntries(a *lora.Adapter) (names []string, shapes [][]int) {
	for l, ly := range a.Layers {
		for t, f := range ly {
			if f == nil {
				continue
			}
			names = append(names, momentPrefix(l, lora.Target(t), "lora_A"), momentPrefix(l, lora.Target(t), "lora_B"))
			shapes = append(shapes, []int{f.Rank, f.In}, []int{f.Out, f.Rank})
		}
	}
	return names, shapes
}

// SaveOptimizer writes the optimizer's state to dir/OptimizerFile. A
// stepper that has not stepped writes nothing.
func (t *Stepper) SaveOptimizer(dir string) error {
	o := t.opt
	if o.m == nil {
		return nil
	}
	names, shapes := optimizerEntries(t.adapter)
	entries := make([]safetensors.Entry, 0, 2*len(names))
	for i, name := range names {
		entries = append(entries,
			safetensors.Entry{Name: name + "exp_avg", DType: safetensors.F32, Shape: shapes[i], Data: o.m[i]},
			safetensors.Entry{Name: name + "exp_avg_sq", DType: safetensors.F32, Shape: shapes[i], Data: o.v[i]})
	}
	return safetensors.WriteFile(filepath.Join(dir, OptimizerFile), entries, map[string]string{"step": strconv.Itoa(o.step)})
}

// LoadOptimizer resumes the optimizer's state from dir/OptimizerFile,
// reporting whether there was one; without it (an adapter trained elsewhere,
// or never trained) the optimizer starts fresh. A file that does not fit the
// adapter is an ErrInvalid error.
func (t *Stepper) LoadOptimizer(dir string) (bool, error) {
	path := filepath.Join(dir, OptimizerFile)
	f, err := safetensors.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	step, err := strconv.Atoi(f.Metadata["step"])
	if err != nil || step < 1 {
		return false, fmt.Errorf("%w: %s: step %q", ErrInvalid, path, f.Metadata["step"])
	}
	names, shapes := optimizerEntries(t.adapter)
	if len(f.Names()) != 2*len(names) {
		return false, fmt.Errorf("%w: %s holds %d tensors, the adapter has %d factors", ErrInvalid, path, len(f.Names()), len(names))
	}
	m, v := make([][]float32, len(names)), make([][]float32, len(names))
	for i, name := range names {
		for _, moment := range []struct {
			suffix string
			dst    *[]float32
		}{{"exp_avg", &m[i]}, {"exp_avg_sq", &v[i]}} {
			ten, err := f.Tensor(name + moment.suffix)
			if err != nil {
				return false, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
			}
			if ten.Len() != shapes[i][0]*shapes[i][1] {
				return false, fmt.Errorf("%w: %s: %s has %d values, the factor %d", ErrInvalid, path, name+moment.suffix, ten.Len(), shapes[i][0]*shapes[i][1])
			}
			*moment.dst = append([]float32(nil), ten.Float32()...) // outlives the file
		}
	}
	t.opt.m, t.opt.v, t.opt.step = m, v, step
	return true, nil
}
