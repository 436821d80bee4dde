package localtrainer

import (
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/train"
)

// The public LoRA and Optimizer configurations read as the engine's own:
// targets by module name, zero fields as the defaults; a bad value fails
// New.
func TestConfigMapsLoRAAndOptimizer(t *testing.T) {
	models := map[string]BaseModel{"tiny": {Dir: t.TempDir(), Template: &Template{}}}
	tr, err := New(Config{Models: models, LoRA: LoRA{Rank: 4, Targets: []string{"v_proj", "q_proj"}, RSLoRA: true},
		Optimizer: Optimizer{WeightDecay: -1, Seed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if l := tr.cfg.lora; l.Rank != 4 || l.Alpha != DefaultLoRAAlpha || !l.RSLoRA || !slices.Equal(l.Targets, []lora.Target{lora.Q, lora.V}) {
		t.Errorf("lora config %+v", l)
	}
	if o := tr.cfg.optimizer; o != (train.Config{WeightDecay: -1, Seed: 3}) {
		t.Errorf("optimizer config %+v", o)
	}
	if all := mustNew(t, Config{Models: models}).cfg.lora; all.Rank != DefaultLoRARank || len(all.Targets) != int(lora.NumTargets) {
		t.Errorf("default lora config %+v", all)
	}
	for _, bad := range []Config{
		{Models: models, LoRA: LoRA{Targets: []string{"qkv_proj"}}},
		{Models: models, LoRA: LoRA{Dropout: 1}},
		{Models: models, Optimizer: Optimizer{Beta1: 1}},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) took it", bad)
		}
	}
}

func mustNew(t *testing.T, cfg Config) *Trainer {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
