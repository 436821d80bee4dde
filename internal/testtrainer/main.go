// Command testtrainer is a stand-in GPU trainer for tests of the exec trainer
// protocol (package training/exectrainer). It reads job.json, plans one
// gradient step per trainable trajectory (RL: trajectories whose group rewards
// differ; SFT: one per batch), prints realistic events and writes a small
// adapter directory.
//
// Environment knobs: TESTTRAINER_STEP_DELAY (a duration between steps),
// TESTTRAINER_FAIL (exit 1 with this message), TESTTRAINER_PID_FILE (write the
// process id there, so that a test can kill it mid-job),
// TESTTRAINER_ADAPTERS (a directory whose subdirectory step<N> holds the real
// adapter to write as checkpoint N, so that a test can serve it),
// TESTTRAINER_HOLD_FILE (while this file exists, a job waits after its first
// gradient step, so that a test sees the rest of its steps arrive however
// slow the machine).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

type job struct {
	ID                    string          `json:"id"`
	Kind                  string          `json:"kind"`
	Attempt               int             `json:"attempt"`
	BaseModel             string          `json:"base_model"`
	Step                  int64           `json:"step"`
	PreviousCheckpointDir string          `json:"previous_checkpoint_dir"`
	OutputDir             string          `json:"output_dir"`
	TrajectoryGroupsFile  string          `json:"trajectory_groups_file"`
	ExperimentalConfig    json.RawMessage `json:"experimental_config"`
	SFTDataFile           string          `json:"sft_data_file"`
	SFTConfig             json.RawMessage `json:"sft_config"`
}

func main() {
	if err := run(os.Args[len(os.Args)-1]); err != nil {
		emit(map[string]any{"type": "error", "message": err.Error()})
		fmt.Fprintln(os.Stderr, "testtrainer:", err)
		os.Exit(1)
	}
}

func emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func run(specPath string) error {
	if f := os.Getenv("TESTTRAINER_PID_FILE"); f != "" {
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var j job
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	fmt.Println("loading base model", j.BaseModel) // not JSON: ignored by the protocol
	if msg := os.Getenv("TESTTRAINER_FAIL"); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	delay, _ := time.ParseDuration(os.Getenv("TESTTRAINER_STEP_DELAY"))
	lr := 5e-6
	var steps int
	switch j.Kind {
	case "rl":
		var cfg struct {
			LearningRate *float64 `json:"learning_rate"`
		}
		_ = json.Unmarshal(j.ExperimentalConfig, &cfg)
		if cfg.LearningRate != nil {
			lr = *cfg.LearningRate
		}
		steps, err = trainableTrajectories(j.TrajectoryGroupsFile)
	case "sft":
		lr = 5e-5
		steps, err = batches(j.SFTDataFile, j.SFTConfig)
	default:
		err = fmt.Errorf("unknown job kind %q", j.Kind)
	}
	if err != nil {
		return err
	}
	emit(map[string]any{"type": "training_started", "data": map[string]any{"num_sequences": steps}})
	hold := os.Getenv("TESTTRAINER_HOLD_FILE")
	for i := range steps {
		time.Sleep(delay)
		for i == 1 && hold != "" && exists(hold) {
			time.Sleep(20 * time.Millisecond)
		}
		loss := 1.0 / float64(i+2)
		emit(map[string]any{"type": "gradient_step", "data": map[string]any{
			"loss": loss, "policy_loss": loss * 0.9, "grad_norm": 0.5 + math.Sin(float64(i)),
			"learning_rate": lr, "entropy": 1.5 - 0.01*float64(i), "num_trainable_tokens": 128 + i,
			"tokens_per_second": 2048.0,
		}})
	}
	if steps == 0 {
		return nil // nothing trained: the previous adapter carries over
	}
	if err := os.MkdirAll(j.OutputDir, 0o755); err != nil {
		return err
	}
	if from := os.Getenv("TESTTRAINER_ADAPTERS"); from != "" {
		if err := copyAdapter(filepath.Join(from, fmt.Sprintf("step%d", j.Step+1)), j.OutputDir); err != nil {
			return err
		}
		emit(map[string]any{"type": "checkpoint", "path": j.OutputDir})
		return nil
	}
	config, _ := json.Marshal(map[string]any{"base_model_name_or_path": j.BaseModel, "peft_type": "LORA", "r": 8, "lora_alpha": 16,
		"trained_from_step": j.Step, "job_id": j.ID})
	if err := os.WriteFile(filepath.Join(j.OutputDir, "adapter_config.json"), config, 0o644); err != nil {
		return err
	}
	weights := fmt.Appendf(nil, "weights of step %d", j.Step+1)
	if err := os.WriteFile(filepath.Join(j.OutputDir, "adapter_model.safetensors"), weights, 0o644); err != nil {
		return err
	}
	emit(map[string]any{"type": "metrics", "data": map[string]any{"trainer/steps": steps}})
	emit(map[string]any{"type": "checkpoint", "path": j.OutputDir})
	return nil
}

func trainableTrajectories(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	var groups []struct {
		Trajectories []struct {
			Reward float64 `json:"reward"`
		} `json:"trajectories"`
	}
	if err := json.Unmarshal(b, &groups); err != nil {
		return 0, err
	}
	n := 0
	for _, g := range groups {
		for _, t := range g.Trajectories {
			if t.Reward != g.Trajectories[0].Reward {
				n += len(g.Trajectories)
				break
			}
		}
	}
	return n, nil
}

func batches(file string, config json.RawMessage) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lines := 0
	scanner := bufio.NewScanner(f)
	scanner.Buffer(nil, 64<<20)
	for scanner.Scan() {
		if len(scanner.Bytes()) > 0 {
			lines++
		}
	}
	var cfg struct {
		BatchSize any `json:"batch_size"`
	}
	_ = json.Unmarshal(config, &cfg)
	size := 2
	if n, ok := cfg.BatchSize.(float64); ok && n >= 1 {
		size = int(n)
	}
	return (lines + size - 1) / size, scanner.Err()
}

// copyAdapter copies an adapter directory's two files.
func copyAdapter(from, to string) error {
	for _, name := range []string{"adapter_config.json", "adapter_model.safetensors"} {
		b, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// exists reports whether path names a file.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
