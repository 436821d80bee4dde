package train

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/lora"
)

// The optimizer's state survives a save and a load exactly (moments and
// step count); a directory without the file starts fresh; a file of
// another adapter's shape is refused.
func TestOptimizerStateRoundTrip(t *testing.T) {
	const name = "llama3-rope"
	g := readTrainGolden(t, name)
	m := loadTiny(t, name)
	tr, err := New(m, goldenAdapter(t, m, g), Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tr.SaveOptimizer(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, OptimizerFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a stepper that never stepped wrote its state: %v", err)
	}
	pass, err := tr.Forward(g.batch())
	if err != nil {
		t.Fatal(err)
	}
	batch := g.batch()
	_, d := CrossEntropy(pass, batch, CountTargets(batch))
	if err := tr.Backward(pass, d); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(0.01); err != nil {
		t.Fatal(err)
	}
	if err := tr.SaveOptimizer(dir); err != nil {
		t.Fatal(err)
	}

	again, err := New(m, tr.Adapter(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := again.LoadOptimizer(t.TempDir()); ok || err != nil {
		t.Fatalf("a directory without state: %v %v", ok, err)
	}
	if ok, err := again.LoadOptimizer(dir); !ok || err != nil {
		t.Fatalf("LoadOptimizer = %v %v", ok, err)
	}
	if again.opt.Steps() != 1 || len(again.opt.m) != len(tr.opt.m) {
		t.Fatalf("step %d, %d moments; want 1, %d", again.opt.Steps(), len(again.opt.m), len(tr.opt.m))
	}
	for i := range tr.opt.m {
		if !slices.Equal(again.opt.m[i], tr.opt.m[i]) || !slices.Equal(again.opt.v[i], tr.opt.v[i]) {
			t.Fatalf("moments of tensor %d differ after the round trip", i)
		}
	}

	other, err := lora.New(lora.Config{Rank: 2}, m.LoRAShape(), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	mismatched, err := New(m, other, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mismatched.LoadOptimizer(dir); !errors.Is(err, ErrInvalid) {
		t.Fatalf("state of another adapter's shape: %v, want ErrInvalid", err)
	}
}
