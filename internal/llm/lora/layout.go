package lora

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/weftlabs/weft/internal/llm/safetensors"
)

// The files of an adapter directory in the standard layout.
const (
	ConfigFile  = "adapter_config.json"
	WeightsFile = "adapter_model.safetensors"
)

// fileConfig is adapter_config.json: the fields this package reads and
// writes, named as the reference library names them.
type fileConfig struct {
	PeftType          string             `json:"peft_type"`
	TaskType          string             `json:"task_type"`
	BaseModel         string             `json:"base_model_name_or_path"`
	R                 int                `json:"r"`
	LoraAlpha         float64            `json:"lora_alpha"`
	LoraDropout       float64            `json:"lora_dropout"`
	TargetModules     json.RawMessage    `json:"target_modules"`
	UseRSLoRA         bool               `json:"use_rslora"`
	Bias              string             `json:"bias"`
	FanInFanOut       bool               `json:"fan_in_fan_out"`
	InferenceMode     bool               `json:"inference_mode"`
	InitLoraWeights   bool               `json:"init_lora_weights"`
	UseDoRA           bool               `json:"use_dora"`
	ModulesToSave     []string           `json:"modules_to_save"`
	LayersToTransform json.RawMessage    `json:"layers_to_transform"`
	RankPattern       map[string]float64 `json:"rank_pattern"`
	AlphaPattern      map[string]float64 `json:"alpha_pattern"`
}

// weightKey is the tensor name of a factor in adapter_model.safetensors;
// factor is "lora_A" or "lora_B".
func weightKey(layer int, t Target, factor string) string {
	return fmt.Sprintf("base_model.model.model.layers.%d.%s.%s.weight", layer, t.Module(), factor)
}

// keyPattern parses weightKey's names.
var keyPattern = regexp.MustCompile(`^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.([a-z_]+)\.(lora_A|lora_B)\.weight$`)

// Save writes the adapter to dir (created if missing) in the standard
// layout, the factors as float32.
func Save(dir string, a *Adapter) error {
	return SaveAs(dir, a, safetensors.F32)
}

// SaveAs is Save storing the factors as dtype (F32, F16 or BF16).
func SaveAs(dir string, a *Adapter, dtype safetensors.DType) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, len(a.Config.Targets))
	for i, t := range a.Config.Targets {
		names[i] = t.String()
	}
	targets, err := json.Marshal(names)
	if err != nil {
		return err
	}
	cfg := fileConfig{
		PeftType: "LORA", TaskType: "CAUSAL_LM", BaseModel: a.BaseModel,
		R: a.Config.Rank, LoraAlpha: a.Config.Alpha, LoraDropout: a.Config.Dropout,
		TargetModules: targets, UseRSLoRA: a.Config.RSLoRA, Bias: "none",
		InferenceMode: true, InitLoraWeights: true,
		RankPattern: map[string]float64{}, AlphaPattern: map[string]float64{},
		LayersToTransform: json.RawMessage("null"),
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	var entries []safetensors.Entry
	for l, ly := range a.Layers {
		for t, f := range ly {
			if f == nil {
				continue
			}
			entries = append(entries,
				safetensors.Entry{Name: weightKey(l, Target(t), "lora_A"), DType: dtype, Shape: []int{f.Rank, f.In}, Data: f.A},
				safetensors.Entry{Name: weightKey(l, Target(t), "lora_B"), DType: dtype, Shape: []int{f.Out, f.Rank}, Data: f.B})
		}
	}
	// The weights first: a directory whose config exists is complete.
	if err := safetensors.WriteFile(filepath.Join(dir, WeightsFile), entries, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ConfigFile), append(data, '\n'))
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Load reads an adapter directory in the standard layout. The factors are
// copied into memory as float32 (f16 and bf16 widened exactly); which
// layers and projections are adapted, and the rank, come from the tensors
// the file holds. Check Fits before applying it to a model.
func Load(dir string) (*Adapter, error) {
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s has no %s", ErrInvalid, dir, ConfigFile)
	}
	if err != nil {
		return nil, err
	}
	var fc fileConfig
	if err := json.Unmarshal(data, &fc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, ConfigFile, err)
	}
	if err := fc.supported(); err != nil {
		return nil, err
	}
	cfg := Config{Rank: fc.R, Alpha: fc.LoraAlpha, Dropout: fc.LoraDropout, RSLoRA: fc.UseRSLoRA}
	f, err := safetensors.Open(filepath.Join(dir, WeightsFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a := &Adapter{BaseModel: fc.BaseModel}
	targeted := map[Target]bool{}
	for _, name := range f.Names() {
		m := keyPattern.FindStringSubmatch(name)
		if m == nil {
			return nil, fmt.Errorf("%w: tensor %q is not a LoRA factor of a decoder projection", ErrUnsupported, name)
		}
		layer, err := strconv.Atoi(m[1])
		if err != nil || layer > 1<<16 {
			return nil, fmt.Errorf("%w: tensor %q: layer %s", ErrInvalid, name, m[1])
		}
		t, err := ParseTarget(m[3])
		if err != nil || t.Module() != m[2]+"."+m[3] {
			return nil, fmt.Errorf("%w: tensor %q is not a LoRA factor of a decoder projection", ErrUnsupported, name)
		}
		for len(a.Layers) <= layer {
			a.Layers = append(a.Layers, [NumTargets]*Factors{})
		}
		fs := a.Layers[layer][t]
		if fs == nil {
			fs = &Factors{}
			a.Layers[layer][t] = fs
		}
		ten, _ := f.Tensor(name)
		if len(ten.Shape) != 2 {
			return nil, fmt.Errorf("%w: tensor %q has shape %v, want a matrix", ErrInvalid, name, ten.Shape)
		}
		values := append([]float32(nil), ten.Float32()...) // outlives the file
		if m[4] == "lora_A" {
			fs.Rank, fs.In, fs.A = ten.Shape[0], ten.Shape[1], values
		} else {
			fs.Out, fs.B = ten.Shape[0], values
			if fs.A == nil {
				fs.Rank = ten.Shape[1]
			}
			if ten.Shape[1] != fs.Rank {
				return nil, fmt.Errorf("%w: tensor %q has rank %d, lora_A has %d", ErrInvalid, name, ten.Shape[1], fs.Rank)
			}
		}
		targeted[t] = true
	}
	for l, ly := range a.Layers {
		for t, fs := range ly {
			switch {
			case fs == nil:
			case fs.A == nil || fs.B == nil:
				return nil, fmt.Errorf("%w: layer %d %s has only one of lora_A and lora_B", ErrInvalid, l, Target(t))
			case fs.Rank != len(fs.B)/max(fs.Out, 1) || fs.Rank != cfg.Rank:
				return nil, fmt.Errorf("%w: layer %d %s has rank %d, %s gives r = %d", ErrInvalid, l, Target(t), fs.Rank, ConfigFile, cfg.Rank)
			}
		}
	}
	if len(targeted) == 0 {
		return nil, fmt.Errorf("%w: %s holds no LoRA factors", ErrInvalid, WeightsFile)
	}
	for t := range NumTargets {
		if targeted[t] {
			cfg.Targets = append(cfg.Targets, t)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a.Config, a.Scale = cfg, cfg.Scale()
	return a, nil
}

// supported rejects the features of the layout this package does not
// apply, naming them.
func (fc *fileConfig) supported() error {
	unsupported := func(what string) error {
		return fmt.Errorf("%w: %s in %s", ErrUnsupported, what, ConfigFile)
	}
	switch {
	case fc.PeftType != "" && fc.PeftType != "LORA":
		return unsupported(fmt.Sprintf("peft_type %q (LORA only)", fc.PeftType))
	case fc.UseDoRA:
		return unsupported("use_dora")
	case fc.Bias != "" && fc.Bias != "none":
		return unsupported(fmt.Sprintf("bias %q (none only)", fc.Bias))
	case fc.FanInFanOut:
		return unsupported("fan_in_fan_out")
	case len(fc.ModulesToSave) > 0:
		return unsupported("modules_to_save")
	case len(fc.RankPattern) > 0 || len(fc.AlphaPattern) > 0:
		return unsupported("rank_pattern or alpha_pattern")
	}
	return nil
}
