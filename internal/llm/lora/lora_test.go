package lora

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/safetensors"
)

// testShape is a small decoder: hidden 12, q 16, kv 8, MLP 20, 2 layers.
var testShape = Shape{
	Layers: 2,
	In:     [NumTargets]int{12, 12, 12, 16, 12, 12, 20},
	Out:    [NumTargets]int{16, 8, 8, 12, 20, 20, 12},
}

// randomAdapter is New with B filled too, so the delta is not zero.
func randomAdapter(t *testing.T, cfg Config, seed uint64) *Adapter {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	a, err := New(cfg, testShape, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, ly := range a.Layers {
		for _, f := range ly {
			if f != nil {
				for i := range f.B {
					f.B[i] = float32(rng.NormFloat64())
				}
			}
		}
	}
	return a
}

func TestNewInitialisesAsTheReference(t *testing.T) {
	a, err := New(Config{}, testShape, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if a.Config.Rank != 8 || a.Config.Alpha != 16 || len(a.Config.Targets) != int(NumTargets) || a.Scale != 2 {
		t.Fatalf("defaults: %+v scale %g", a.Config, a.Scale)
	}
	for l, ly := range a.Layers {
		for tg, f := range ly {
			bound := float32(1 / math.Sqrt(float64(testShape.In[tg])))
			lo, hi := slices.Min(f.A), slices.Max(f.A)
			if lo < -bound || hi > bound || hi-lo < bound { // spread over the interval
				t.Fatalf("layer %d %s: A in [%g, %g], want within ±%g and spread", l, Target(tg), lo, hi, bound)
			}
			if slices.ContainsFunc(f.B, func(v float32) bool { return v != 0 }) {
				t.Fatalf("layer %d %s: B not zero", l, Target(tg))
			}
		}
	}
	rs := Config{Rank: 16, Alpha: 8, RSLoRA: true}.WithDefaults()
	if rs.Scale() != 2 {
		t.Fatalf("rsLoRA scale %g, want 8/√16 = 2", rs.Scale())
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	for _, c := range []Config{{Rank: -1}, {Alpha: -2}, {Dropout: 1}, {Alpha: math.NaN()}, {Targets: []Target{NumTargets}}} {
		if _, err := New(c, testShape, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", c, err)
		}
	}
	if _, err := ParseTarget("lm_head"); !errors.Is(err, ErrInvalid) {
		t.Errorf("lm_head: %v", err)
	}
	for tg := range NumTargets {
		if p, err := ParseTarget(tg.String()); err != nil || p != tg {
			t.Errorf("%s: %v %v", tg, p, err)
		}
	}
}

func TestApplyAddsTheScaledLowRankProduct(t *testing.T) {
	a := randomAdapter(t, Config{Rank: 3, Alpha: 5}, 7)
	f := a.Factors(1, Down)
	rows := 4
	rng := rand.New(rand.NewPCG(3, 3))
	x := make([]float32, rows*f.In)
	y := make([]float32, rows*f.Out)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for i := range y {
		y[i] = float32(rng.NormFloat64())
	}
	want := make([]float64, len(y))
	for r := range rows {
		for o := range f.Out {
			s := 0.0
			for k := range f.Rank {
				ax := 0.0
				for i := range f.In {
					ax += float64(f.A[k*f.In+i]) * float64(x[r*f.In+i])
				}
				s += float64(f.B[o*f.Rank+k]) * ax
			}
			want[r*f.Out+o] = float64(y[r*f.Out+o]) + 5.0/3*s
		}
	}
	bT := make([]float32, f.Rank*f.Out)
	f.TransposeB(bT)
	f.Apply(y, x, rows, a.Scale, make([]float32, rows*f.Rank), bT, make([]float32, rows*f.Out))
	for i := range y {
		if math.Abs(float64(y[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
			t.Fatalf("y[%d] = %g, want %g", i, y[i], want[i])
		}
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	a := randomAdapter(t, Config{Rank: 4, Alpha: 8, Dropout: 0.05, Targets: []Target{V, Q, Down}, RSLoRA: true}, 5)
	a.BaseModel = "tiny"
	dir := filepath.Join(t.TempDir(), "step3")
	if err := Save(dir, a); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["peft_type"] != "LORA" || cfg["r"] != 4.0 || cfg["lora_alpha"] != 8.0 || cfg["use_rslora"] != true ||
		!slices.Equal(toStrings(cfg["target_modules"]), []string{"q_proj", "v_proj", "down_proj"}) {
		t.Fatalf("adapter_config.json: %s", data)
	}
	f, err := safetensors.Open(filepath.Join(dir, WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	names := f.Names()
	f.Close()
	if !slices.Contains(names, "base_model.model.model.layers.1.mlp.down_proj.lora_B.weight") ||
		!slices.Contains(names, "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight") || len(names) != 12 {
		t.Fatalf("tensor names %v", names)
	}
	b, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Scale != a.Scale || !slices.Equal(b.Config.Targets, a.Config.Targets) || b.Config.Rank != 4 || b.BaseModel != "tiny" {
		t.Fatalf("loaded %+v scale %g", b.Config, b.Scale)
	}
	for l := range a.Layers {
		for tg := range NumTargets {
			fa, fb := a.Layers[l][tg], b.Layers[l][tg]
			if (fa == nil) != (fb == nil) || fa != nil && (!slices.Equal(fa.A, fb.A) || !slices.Equal(fa.B, fb.B)) {
				t.Fatalf("layer %d %s differs after the round trip", l, tg)
			}
		}
	}
	if err := b.Fits(testShape); err != nil {
		t.Fatal(err)
	}
	other := testShape
	other.In[Down] = 24
	if err := b.Fits(other); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Fits a wider MLP: %v", err)
	}

	// bf16 storage rounds each factor to 8 bits of mantissa.
	if err := SaveAs(dir, a, safetensors.BF16); err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, want := c.Layers[0][Q].B, a.Layers[0][Q].B
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > math.Abs(float64(want[i]))/128 {
			t.Fatalf("bf16 B[%d] = %g, want ≈ %g", i, got[i], want[i])
		}
	}
}

func TestLoadRejectsWhatItCannotApply(t *testing.T) {
	a := randomAdapter(t, Config{Rank: 2}, 9)
	for name, edit := range map[string]func(map[string]any){
		"dora":         func(c map[string]any) { c["use_dora"] = true },
		"rank pattern": func(c map[string]any) { c["rank_pattern"] = map[string]any{"q_proj": 4} },
		"bias":         func(c map[string]any) { c["bias"] = "all" },
		"other type":   func(c map[string]any) { c["peft_type"] = "IA3" },
		"rank":         func(c map[string]any) { c["r"] = 3 },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Save(dir, a); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, ConfigFile)
			data, _ := os.ReadFile(path)
			var c map[string]any
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatal(err)
			}
			edit(c)
			data, _ = json.Marshal(c)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(dir); !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Load: %v", err)
			}
		})
	}
	dir := t.TempDir()
	err := safetensors.WriteFile(filepath.Join(dir, WeightsFile), []safetensors.Entry{
		{Name: "base_model.model.lm_head.lora_A.weight", DType: safetensors.F32, Shape: []int{1, 1}, Data: []float32{1}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(`{"peft_type":"LORA","r":1,"lora_alpha":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("lm_head factor: %v", err)
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty directory: %v", err)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
