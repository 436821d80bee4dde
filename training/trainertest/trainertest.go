// Package trainertest is the contract of [training.Trainer] as a test suite:
// [Run] holds an implementation to what the worker relies on, so that every
// trainer (the exec trainer, the built-in one, one of a program's own) is
// checked by the same assertions.
//
//	func TestContract(t *testing.T) {
//		trainertest.Run(t, myTrainer, trainertest.Fixture{BaseModel: "my-model"})
//	}
package trainertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/weftlabs/weft/training"
)

// Fixture is what the suite needs of the trainer's setup.
type Fixture struct {
	// BaseModel is the base model the jobs name; the trainer must train it.
	BaseModel string
}

// Run runs the suite against trainer, one job at a time: RL and SFT jobs
// accepted (training_started before any gradient step, as many steps as it
// announced, numbers only, a checkpoint of adapter files), a job continuing
// a checkpoint, a job with nothing to train (no checkpoint), cancellation, a
// reporter's failure, and jobs it cannot run failing with a message. The
// jobs are tiny: a few short conversations.
func Run(t *testing.T, trainer training.Trainer, fx Fixture) {
	t.Helper()
	s := &suite{trainer: trainer, fx: fx}
	t.Run("RLJob", s.testRLJob)
	t.Run("NothingToTrain", s.testNothingToTrain)
	t.Run("SFTJob", s.testSFTJob)
	t.Run("Cancel", s.testCancel)
	t.Run("ReporterFails", s.testReporterFails)
	t.Run("JobItCannotRun", s.testJobItCannotRun)
}

type suite struct {
	trainer training.Trainer
	fx      Fixture
}

// Reporter records what a trainer reports and checks the order: Started
// once, before any Step. OnStep, when set, answers each Step.
type Reporter struct {
	OnStep func(n int) error

	mu      sync.Mutex
	started int // -1 until Started
	steps   []map[string]any
	errs    []error
}

func newReporter() *Reporter { return &Reporter{started: -1} }

// Started implements training.Reporter.
func (r *Reporter) Started(_ context.Context, n int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started >= 0 {
		r.errs = append(r.errs, errors.New("training_started reported twice"))
	}
	if n < 0 {
		r.errs = append(r.errs, fmt.Errorf("training_started with %d steps", n))
	}
	r.started = n
	return nil
}

// Step implements training.Reporter.
func (r *Reporter) Step(_ context.Context, metrics map[string]any) error {
	r.mu.Lock()
	if r.started < 0 {
		r.errs = append(r.errs, errors.New("gradient_step before training_started"))
	}
	r.steps = append(r.steps, metrics)
	n, onStep := len(r.steps), r.OnStep
	r.mu.Unlock()
	if onStep != nil {
		return onStep(n)
	}
	return nil
}

// check fails t on a report out of order, a step without a finite loss or
// a metric that is neither a number nor a boolean (NaN is a number: the
// store leaves it out, as a metric not known at that step).
func (r *Reporter) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range r.errs {
		t.Error(err)
	}
	for i, m := range r.steps {
		if loss, ok := m["loss"].(float64); !ok || math.IsNaN(loss) || math.IsInf(loss, 0) {
			t.Errorf("gradient step %d: loss = %v (%T), not a finite number", i+1, m["loss"], m["loss"])
		}
		for k, v := range m {
			switch v.(type) {
			case bool, float64, float32, int, int32, int64, uint, uint32, uint64, json.Number:
			default:
				t.Errorf("gradient step %d: %s = %v (%T), not a number", i+1, k, v, v)
			}
		}
	}
}

// job is a job of kind on the fixture's model with its own work directory.
func (s *suite) job(t *testing.T, kind string) *training.TrainJob {
	return &training.TrainJob{ID: "job-" + filepath.Base(t.Name()), Kind: kind, Attempt: 1, ProjectID: "trainertest/p",
		ModelID: "model-1", ModelName: "trainertest", BaseModel: s.fx.BaseModel, WorkDir: t.TempDir()}
}

// rlJob is an RL job of groups.
func (s *suite) rlJob(t *testing.T, groups ...training.TrajectoryGroup) *training.TrainJob {
	job := s.job(t, training.KindRL)
	job.TrajectoryGroups, _ = json.Marshal(groups)
	job.ExperimentalConfig = json.RawMessage(`{"learning_rate": 0.02}`)
	return job
}

// group is a trajectory group answering one question with replies, the
// first rewarded with rewards[0] and so on.
func group(question string, replies []string, rewards []float64) training.TrajectoryGroup {
	var g training.TrajectoryGroup
	user, _ := json.Marshal(map[string]any{"role": "user", "content": question})
	for i, reply := range replies {
		choice, _ := json.Marshal(map[string]any{"finish_reason": "stop", "index": 0,
			"message": map[string]any{"role": "assistant", "content": reply}})
		g.Trajectories = append(g.Trajectories, training.Trajectory{
			MessagesAndChoices: []json.RawMessage{user, choice}, Reward: &rewards[i]})
	}
	return g
}

// sftJob is an SFT job of n conversations in batches of batchSize.
func (s *suite) sftJob(t *testing.T, n, batchSize int) *training.TrainJob {
	job := s.job(t, training.KindSFT)
	var lines []byte
	for i := range n {
		line, _ := json.Marshal(map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": fmt.Sprintf("Say %d.", i)},
			map[string]any{"role": "assistant", "content": fmt.Sprint(i)}}})
		lines = append(append(lines, line...), '\n')
	}
	job.SFTDataFile = filepath.Join(t.TempDir(), "train.jsonl")
	if err := os.WriteFile(job.SFTDataFile, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	job.SFTConfig = json.RawMessage(fmt.Sprintf(`{"batch_size": %d, "learning_rate": 0.0001}`, batchSize))
	return job
}

// train runs job and checks what was reported; a finished job's result
// must be there.
func (s *suite) train(t *testing.T, ctx context.Context, job *training.TrainJob, rep *Reporter) (*training.TrainResult, error) {
	t.Helper()
	res, err := s.trainer.Train(ctx, job, rep)
	rep.check(t)
	if err == nil && res == nil {
		t.Fatal("Train returned neither a result nor an error")
	}
	return res, err
}

// accepted checks a finished job that trained: as many steps as announced,
// at least one, and a checkpoint directory of adapter files.
func accepted(t *testing.T, rep *Reporter, res *training.TrainResult) {
	t.Helper()
	if rep.started < 1 || len(rep.steps) != rep.started {
		t.Fatalf("training_started announced %d steps, %d gradient steps reported", rep.started, len(rep.steps))
	}
	if res.CheckpointDir == "" {
		t.Fatal("a job that trained returned no checkpoint")
	}
	for _, name := range []string{"adapter_config.json", "adapter_model.safetensors"} {
		if info, err := os.Stat(filepath.Join(res.CheckpointDir, name)); err != nil || info.Size() == 0 {
			t.Errorf("checkpoint %s: %s missing or empty (%v)", res.CheckpointDir, name, err)
		}
	}
	for k, v := range res.Metrics {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("checkpoint metric %s = %v", k, v)
		}
	}
}

const question = "Pick a colour."

// RL: a group whose rewards differ trains and leaves a checkpoint; a job
// from that checkpoint (the next step) trains too, into a new one.
func (s *suite) testRLJob(t *testing.T) {
	ctx := context.Background()
	job := s.rlJob(t, group(question, []string{"blue", "red"}, []float64{1, 0}))
	rep := newReporter()
	res, err := s.train(t, ctx, job, rep)
	if err != nil {
		t.Fatal(err)
	}
	accepted(t, rep, res)

	next := s.rlJob(t, group(question, []string{"green", "red"}, []float64{1, 0}))
	next.ID, next.Step, next.PreviousCheckpointDir = job.ID+"-next", 1, res.CheckpointDir
	rep = newReporter()
	res2, err := s.train(t, ctx, next, rep)
	if err != nil {
		t.Fatalf("continuing checkpoint 1: %v", err)
	}
	accepted(t, rep, res2)
	if res2.CheckpointDir == res.CheckpointDir {
		t.Errorf("the next step reuses checkpoint directory %s", res.CheckpointDir)
	}
}

// A job whose groups all have equal rewards trains nothing: it announces
// no steps and returns no checkpoint (the next step keeps the adapter).
func (s *suite) testNothingToTrain(t *testing.T) {
	rep := newReporter()
	res, err := s.train(t, context.Background(), s.rlJob(t, group(question, []string{"blue", "red"}, []float64{1, 1})), rep)
	if err != nil {
		t.Fatal(err)
	}
	if rep.started != 0 || len(rep.steps) != 0 || res.CheckpointDir != "" {
		t.Fatalf("announced %d steps, reported %d, checkpoint %q", rep.started, len(rep.steps), res.CheckpointDir)
	}
}

// SFT: three conversations in batches of two are two gradient steps and a
// checkpoint.
func (s *suite) testSFTJob(t *testing.T) {
	rep := newReporter()
	res, err := s.train(t, context.Background(), s.sftJob(t, 3, 2), rep)
	if err != nil {
		t.Fatal(err)
	}
	accepted(t, rep, res)
	if rep.started != 2 {
		t.Errorf("3 conversations in batches of 2: %d steps", rep.started)
	}
}

// A job cancelled while it runs (here: at its first gradient step of two)
// ends with the context's error and no result.
func (s *suite) testCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep := newReporter()
	rep.OnStep = func(int) error { cancel(); return nil }
	res, err := s.train(t, ctx, s.sftJob(t, 2, 1), rep)
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("cancelled job: %+v, %v", res, err)
	}
}

// A reporter's error (the job's events could not be stored) ends the job
// with that error.
func (s *suite) testReporterFails(t *testing.T) {
	refused := errors.New("trainertest: events refused")
	rep := newReporter()
	rep.OnStep = func(int) error { return refused }
	res, err := s.train(t, context.Background(), s.sftJob(t, 2, 1), rep)
	if !errors.Is(err, refused) || res != nil {
		t.Fatalf("job whose step could not be reported: %+v, %v", res, err)
	}
	if len(rep.steps) != 1 {
		t.Errorf("%d steps reported after the reporter failed", len(rep.steps)-1)
	}
}

// Jobs the trainer cannot run (a kind it does not know, trajectory groups
// that are not JSON) fail with a message, the job's error_message, before
// any gradient step.
func (s *suite) testJobItCannotRun(t *testing.T) {
	unknown := s.job(t, "dpo")
	broken := s.rlJob(t)
	broken.TrajectoryGroups = json.RawMessage(`[{"trajectories": [`)
	for _, job := range []*training.TrainJob{unknown, broken} {
		rep := newReporter()
		res, err := s.train(t, context.Background(), job, rep)
		if err == nil || err.Error() == "" || res != nil {
			t.Errorf("%s job: %+v, %v", job.Kind, res, err)
		}
		if len(rep.steps) != 0 {
			t.Errorf("%s job: %d gradient steps", job.Kind, len(rep.steps))
		}
	}
}
