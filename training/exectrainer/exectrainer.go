// Package exectrainer runs each training job as an external program: the way to
// plug a GPU trainer (ART/Unsloth scripts, anything that can read files and
// print lines) into weft.
//
// # Protocol
//
// For each job the trainer writes job.json into the job's work directory and
// runs Command with that file's path as the last argument (also in the
// environment as WEFT_JOB_FILE). job.json holds:
//
//	{"id", "kind": "rl"|"sft", "attempt", "project_id", "model_id", "model_name",
//	 "base_model", "step", "previous_checkpoint_dir" ("" = untrained),
//	 "output_dir",                                   where to write the new adapter
//	 "trajectory_groups_file", "experimental_config" (RL),
//	 "sft_data_file", "sft_config"                   (SFT)}
//
// The program prints JSON lines on stdout, one object each:
//
//	{"type": "training_started", "data": {"num_sequences": 12}}
//	{"type": "gradient_step", "data": {"loss": 0.31, "grad_norm": 1.2, ...}}
//	{"type": "checkpoint", "path": "/dir/with/adapter/files"}
//	{"type": "metrics", "data": {"name": 1.0}}       extra checkpoint metrics
//	{"type": "error", "message": "CUDA out of memory"}
//
// Other lines are ignored. Exiting 0 means success; the checkpoint is the last
// "checkpoint" path printed, else output_dir if the program wrote files there,
// else none (nothing trained). A non-zero exit fails the attempt with the last
// "error" message, or the end of stderr.
package exectrainer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/weftlabs/weft/training"
)

// Config configures [New].
type Config struct {
	// Command is the program and its first arguments. Required.
	Command []string
	// Env adds environment variables (KEY=VALUE) to the trainer's environment,
	// which otherwise is this process's.
	Env []string
	// Dir is the program's working directory. Defaults to the job's work directory.
	Dir string
	// KillGrace is how long a cancelled trainer gets after SIGTERM before
	// SIGKILL. Defaults to 10 seconds.
	KillGrace time.Duration
}

// Trainer is a training.Trainer that runs Config.Command per job.
type Trainer struct {
	cfg Config
}

var _ training.Trainer = (*Trainer)(nil)

// New returns a Trainer for cfg.
func New(cfg Config) (*Trainer, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, errors.New("exectrainer: Config.Command is required")
	}
	if cfg.KillGrace == 0 {
		cfg.KillGrace = 10 * time.Second
	}
	return &Trainer{cfg: cfg}, nil
}

// jobFile is job.json.
type jobFile struct {
	ID                    string          `json:"id"`
	Kind                  string          `json:"kind"`
	Attempt               int             `json:"attempt"`
	ProjectID             string          `json:"project_id"`
	ModelID               string          `json:"model_id"`
	ModelName             string          `json:"model_name"`
	BaseModel             string          `json:"base_model"`
	Step                  int64           `json:"step"`
	PreviousCheckpointDir string          `json:"previous_checkpoint_dir"`
	OutputDir             string          `json:"output_dir"`
	TrajectoryGroupsFile  string          `json:"trajectory_groups_file,omitempty"`
	ExperimentalConfig    json.RawMessage `json:"experimental_config,omitempty"`
	SFTDataFile           string          `json:"sft_data_file,omitempty"`
	SFTConfig             json.RawMessage `json:"sft_config,omitempty"`
}

// line is one stdout line of the program.
type line struct {
	Type    string         `json:"type"`
	Data    map[string]any `json:"data"`
	Path    string         `json:"path"`
	Message string         `json:"message"`
}

// Train implements training.Trainer.
func (t *Trainer) Train(ctx context.Context, job *training.TrainJob, report training.Reporter) (*training.TrainResult, error) {
	spec := jobFile{ID: job.ID, Kind: job.Kind, Attempt: job.Attempt, ProjectID: job.ProjectID, ModelID: job.ModelID,
		ModelName: job.ModelName, BaseModel: job.BaseModel, Step: job.Step, PreviousCheckpointDir: job.PreviousCheckpointDir,
		OutputDir: filepath.Join(job.WorkDir, "checkpoint"), ExperimentalConfig: job.ExperimentalConfig,
		SFTDataFile: job.SFTDataFile, SFTConfig: job.SFTConfig}
	if err := os.MkdirAll(spec.OutputDir, 0o755); err != nil {
		return nil, err
	}
	if len(job.TrajectoryGroups) > 0 {
		spec.TrajectoryGroupsFile = filepath.Join(job.WorkDir, "trajectory_groups.json")
		if err := os.WriteFile(spec.TrajectoryGroupsFile, job.TrajectoryGroups, 0o600); err != nil {
			return nil, err
		}
	}
	specPath := filepath.Join(job.WorkDir, "job.json")
	b, _ := json.MarshalIndent(spec, "", "  ")
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		return nil, err
	}

	cmd := exec.CommandContext(ctx, t.cfg.Command[0], append(append([]string(nil), t.cfg.Command[1:]...), specPath)...)
	cmd.Dir = t.cfg.Dir
	if cmd.Dir == "" {
		cmd.Dir = job.WorkDir
	}
	cmd.Env = append(append(os.Environ(), t.cfg.Env...), "WEFT_JOB_FILE="+specPath)
	// Its own process group, so that cancelling also stops the program's children.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = t.cfg.KillGrace
	stderr := &tail{max: 4096}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start trainer %s: %w", t.cfg.Command[0], err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // leftovers of the group, if any

	var checkpoint, lastError string
	metrics := map[string]float64{}
	var reportErr error
	scanner := bufio.NewScanner(stdout)
	scanner.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for scanner.Scan() {
		var l line
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 || text[0] != '{' || json.Unmarshal(text, &l) != nil || reportErr != nil {
			continue
		}
		switch l.Type {
		case training.EventTrainingStarted:
			n, _ := l.Data["num_sequences"].(float64)
			reportErr = report.Started(ctx, int(n))
		case training.EventGradientStep:
			reportErr = report.Step(ctx, l.Data)
		case "checkpoint":
			checkpoint = l.Path
		case "metrics":
			for k, v := range l.Data {
				if f, ok := v.(float64); ok {
					metrics[k] = f
				}
			}
		case "error":
			lastError = l.Message
		}
		if reportErr != nil {
			_ = cmd.Cancel()
		}
	}
	waitErr := cmd.Wait()
	switch {
	case reportErr != nil:
		return nil, reportErr
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case waitErr != nil:
		msg := lastError
		if msg == "" {
			msg = strings.TrimSpace(stderr.String())
		}
		if msg == "" {
			msg = "no output on stderr"
		}
		return nil, fmt.Errorf("trainer failed (%v): %s", waitErr, msg)
	}
	if checkpoint == "" {
		if entries, _ := os.ReadDir(spec.OutputDir); len(entries) > 0 {
			checkpoint = spec.OutputDir
		}
	}
	return &training.TrainResult{CheckpointDir: checkpoint, Metrics: metrics}, nil
}

// tail keeps the last max bytes written.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
