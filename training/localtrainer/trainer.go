package localtrainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/rl"
	"github.com/weftlabs/weft/internal/llm/train"
	"github.com/weftlabs/weft/training"
)

// Trainer is the built-in [training.Trainer]: it trains LoRA adapters of the
// base models of its Config on the CPU. Jobs of one base model run one at a
// time; a model's weights are loaded by the first job that needs them.
//
// The trainer keeps its own copy of a served model's weights rather than
// sharing the engine's: a model's forward passes are serialised, so a
// shared one would stop serving for as long as a training step runs, and
// the engine may hold the weights in a serving type (int8, a GGUF block
// format) its own passes want. The copy is loaded as the file stores it
// (model.Load's auto type): a safetensors checkpoint of float32 is used in
// place from the mapped file, whose pages the engine's auto weights share;
// f16 and bf16 checkpoints are widened to float32 (4 bytes a parameter). It
// is kept until Close. What it shares with the served model is its files,
// tokenizer, chat template and end-of-turn ids (see Served).
type Trainer struct {
	cfg Config

	mu     sync.Mutex
	models map[string]*loadedModel
}

type loadedModel struct {
	mu     sync.Mutex // one job at a time
	model  *model.Model
	base   BaseModel
	maxLen int
}

// New returns a trainer of cfg's models.
func New(cfg Config) (*Trainer, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	return &Trainer{cfg: cfg, models: map[string]*loadedModel{}}, nil
}

// BaseModels are the names of the base models the trainer runs, sorted (for
// training.TrainerSet.Add).
func (t *Trainer) BaseModels() []string {
	names := make([]string, 0, len(t.cfg.Models))
	for name := range t.cfg.Models {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Close releases the loaded weights.
func (t *Trainer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for name, lm := range t.models {
		lm.mu.Lock()
		errs = append(errs, lm.model.Close())
		lm.mu.Unlock()
		delete(t.models, name)
	}
	return errors.Join(errs...)
}

func (t *Trainer) load(name string) (*loadedModel, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if lm, ok := t.models[name]; ok {
		return lm, nil
	}
	base, ok := t.cfg.Models[name]
	if !ok {
		return nil, fmt.Errorf("%w: base model %q is not one this trainer trains (%v)", training.ErrNoTrainer, name, t.BaseModels())
	}
	m, err := model.Load(base.Dir, model.Options{Threads: t.cfg.Threads})
	if err != nil {
		return nil, fmt.Errorf("load base model %s: %w", name, err)
	}
	maxLen := m.MaxLen
	if base.MaxLen > 0 {
		maxLen = min(maxLen, base.MaxLen)
	}
	lm := &loadedModel{model: m, base: base, maxLen: maxLen}
	t.models[name] = lm
	return lm, nil
}

// Train implements training.Trainer.
func (t *Trainer) Train(ctx context.Context, job *training.TrainJob, report training.Reporter) (*training.TrainResult, error) {
	lm, err := t.load(job.BaseModel)
	if err != nil {
		return nil, err
	}
	lm.mu.Lock()
	defer lm.mu.Unlock()
	rng := rand.New(rand.NewPCG(t.cfg.Seed, jobSeed(job)))

	var adapter *lora.Adapter
	if job.PreviousCheckpointDir != "" {
		if adapter, err = lora.Load(job.PreviousCheckpointDir); err != nil {
			return nil, fmt.Errorf("read checkpoint %d: %w", job.Step, err)
		}
	} else if adapter, err = lora.New(t.cfg.lora, lm.model.LoRAShape(), rng); err != nil {
		return nil, err
	}
	adapter.BaseModel = job.BaseModel
	stepper, err := train.New(lm.model, adapter, t.cfg.optimizer)
	if err != nil {
		return nil, err
	}
	if job.PreviousCheckpointDir != "" {
		// AdamW's moments continue across the jobs of a model, as in one
		// long run of the reference trainer.
		if _, err := stepper.LoadOptimizer(job.PreviousCheckpointDir); err != nil {
			return nil, fmt.Errorf("read checkpoint %d's optimizer state: %w", job.Step, err)
		}
	}

	var steps []*step
	var lossCfg *rl.Config
	switch job.Kind {
	case training.KindRL:
		cfg, err := rlConfig(job.ExperimentalConfig)
		if err != nil {
			return nil, err
		}
		lossCfg = &cfg
		plan, err := planRL(lm.base.Template, job.TrajectoryGroups, cfg, lm.maxLen, rng)
		if err != nil {
			return nil, err
		}
		steps = plan.steps
		t.cfg.Logger.DebugContext(ctx, "rl job planned", "job_id", job.ID, "rows", len(steps), "groups", plan.groupsSubmitted,
			"groups_trained", plan.groupsTrainable, "trajectories_trained", plan.trajectories)
	case training.KindSFT:
		if steps, err = planSFT(ctx, lm.base.Template, job.SFTDataFile, job.SFTConfig, lm.maxLen, t.cfg.MaxSFTTokens); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: job kind %q", ErrConversation, job.Kind)
	}
	if err := report.Started(ctx, len(steps)); err != nil {
		return nil, err
	}
	if len(steps) == 0 {
		return &training.TrainResult{}, nil // nothing trainable: the next step keeps the adapter
	}
	if lossCfg != nil && lossCfg.PrecalculateLogprobs {
		if err := t.precalculate(ctx, stepper, steps); err != nil {
			return nil, err
		}
	}
	for i, st := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		metrics, err := t.runStep(stepper, st, lossCfg)
		if err != nil {
			return nil, err
		}
		metrics["gradient_step"] = i + 1
		if err := report.Step(ctx, metrics); err != nil {
			return nil, err
		}
	}
	dir := filepath.Join(job.WorkDir, "adapter")
	if err := lora.Save(dir, adapter); err != nil {
		return nil, fmt.Errorf("save adapter: %w", err)
	}
	if err := stepper.SaveOptimizer(dir); err != nil {
		return nil, fmt.Errorf("save optimizer state: %w", err)
	}
	return &training.TrainResult{CheckpointDir: dir}, nil
}

// jobSeed is what a job mixes into Config.Seed: its project, model and
// step, and not its id, so that the same data trained onto the same
// checkpoint gives the same adapter in every run and on every attempt.
func jobSeed(job *training.TrainJob) uint64 {
	h := fnv.New64a()
	for _, s := range []string{job.ProjectID, job.ModelName, strconv.FormatInt(job.Step, 10)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// rlConfig reads a job's experimental_config (nulls already dropped) onto the
// defaults.
func rlConfig(raw json.RawMessage) (rl.Config, error) {
	cfg := rl.DefaultConfig()
	var ec training.ExperimentalConfig
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &ec); err != nil {
			return cfg, fmt.Errorf("%w: experimental_config: %v", ErrConversation, err)
		}
	}
	set := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	flag := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&cfg.AdvantageBalance, ec.AdvantageBalance)
	set(&cfg.K2Tau, ec.VariantK2Tau)
	set(&cfg.LearningRate, ec.LearningRate)
	flag(&cfg.MaskProbRatio, ec.MaskProbRatio)
	flag(&cfg.PPO, ec.PPO)
	flag(&cfg.PrecalculateLogprobs, ec.PrecalculateLogprobs)
	flag(&cfg.ScaleRewards, ec.ScaleRewards)
	cfg.Epsilon, cfg.EpsilonHigh = ec.Epsilon, ec.EpsilonHigh
	cfg.MaxImportanceWeight = ec.MaxNegativeAdvantageImportanceSamplingWeight
	if ec.ImportanceSamplingLevel != nil {
		cfg.Level = rl.Level(*ec.ImportanceSamplingLevel)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: %v", ErrConversation, err)
	}
	return cfg, nil
}

// microBatches splits a step's sequences into runs of at most
// MicroBatchTokens tokens and maxTargets trained positions (a longer
// sequence runs alone), with the offset of each run's first position in
// the step. Past maxTargets (train.Stepper.TargetsPerPass) a pass would
// compute its logits a second time in its backward pass; a further micro-
// batch costs nothing per token.
func (t *Trainer) microBatches(st *step, maxTargets int) (batches [][]model.TrainSequence, offsets []int) {
	tokens, targets, offset := 0, 0, 0
	for _, q := range st.seqs {
		n := train.CountTargets([]model.TrainSequence{q})
		if len(batches) == 0 || tokens+len(q.Tokens) > t.cfg.MicroBatchTokens || targets+n > maxTargets {
			batches = append(batches, nil)
			offsets = append(offsets, offset)
			tokens, targets = 0, 0
		}
		last := len(batches) - 1
		batches[last] = append(batches[last], q)
		tokens += len(q.Tokens)
		targets += n
		offset += len(q.Tokens)
	}
	return batches, offsets
}

// precalculate replaces every row's old log-probabilities by those of the
// policy before this job's first update (precalculate_logprobs).
func (t *Trainer) precalculate(ctx context.Context, stepper *train.Stepper, steps []*step) error {
	for _, st := range steps {
		batches, offsets := t.microBatches(st, stepper.TargetsPerPass())
		for b, mb := range batches {
			if err := ctx.Err(); err != nil {
				return err
			}
			pass, err := stepper.Forward(mb)
			if err != nil {
				return err
			}
			for i, lp := range flatten(pass.Logprobs) {
				if st.loss.Mask[offsets[b]+i] {
					st.loss.OldLogprob[offsets[b]+i] = lp
				}
			}
		}
	}
	return nil
}

// runStep runs one gradient step, micro-batch by micro-batch, and returns
// its metrics. lossCfg nil means SFT: the mean negative log-likelihood of
// the step's trained tokens. entropy is the policy's mean entropy at the
// trained tokens (RL: weighted by the trajectories' weights, as the loss).
func (t *Trainer) runStep(stepper *train.Stepper, st *step, lossCfg *rl.Config) (map[string]any, error) {
	start := time.Now()
	trained := train.CountTargets(st.seqs)
	batches, offsets := t.microBatches(st, stepper.TargetsPerPass())
	var loss, entropy, ratioSum, klSum float64
	ratioMin, ratioMax := math.Inf(1), math.Inf(-1)
	newAll := make([]float64, 0, st.tokens())
	for b, mb := range batches {
		pass, err := stepper.Forward(mb)
		if err != nil {
			return nil, err
		}
		entropies := pass.Entropies()
		if lossCfg == nil {
			part, d := train.CrossEntropy(pass, mb, trained)
			loss += part
			entropy += meanOverTargets(entropies, mb, trained)
			if err := stepper.Backward(pass, d); err != nil {
				return nil, err
			}
			continue
		}
		newLP := flatten(pass.Logprobs)
		newAll = append(newAll, newLP...)
		{
			lo, hi := offsets[b], offsets[b]+len(newLP)
			part := rl.Row{Mask: st.loss.Mask[lo:hi], OldLogprob: st.loss.OldLogprob[lo:hi], Advantage: st.loss.Advantage[lo:hi],
				Weight: st.loss.Weight[lo:hi], Seq: st.loss.Seq[lo:hi]}
			res, err := lossCfg.LossPart(&part, newLP, trained)
			if err != nil {
				return nil, err
			}
			h, err := part.Entropy(flatten(entropies), trained)
			if err != nil {
				return nil, err
			}
			entropy += h
			loss += res.Loss
			if res.AssistantTokens > 0 {
				ratioSum += res.ImportanceRatioMean * float64(res.AssistantTokens)
				klSum += res.MismatchKL * float64(res.AssistantTokens)
				ratioMin, ratioMax = min(ratioMin, res.ImportanceRatioMin), max(ratioMax, res.ImportanceRatioMax)
			}
			if err := stepper.Backward(pass, unflatten(res.Grad, mb)); err != nil {
				return nil, err
			}
		}
	}
	res, err := stepper.Step(st.lr)
	if err != nil {
		return nil, err
	}
	elapsed := time.Since(start).Seconds()
	metrics := map[string]any{
		"loss": loss, "grad_norm": res.GradNorm, "learning_rate": st.lr,
		"num_tokens": st.tokens(), "num_trainable_tokens": trained, "train_tokens": trained, "entropy": entropy,
	}
	if elapsed > 0 {
		metrics["tokens_per_second"] = float64(st.tokens()) / elapsed
	}
	if lossCfg != nil && trained > 0 {
		metrics["policy_loss"] = loss
		metrics["importance_ratio_mean"] = ratioSum / float64(trained)
		metrics["importance_ratio_min"] = ratioMin
		metrics["importance_ratio_max"] = ratioMax
		metrics["mismatch_kl"] = klSum / float64(trained)
		metrics["probs_corr"] = rl.ProbsCorr(maskedOld(st.loss), newAll)
	}
	return metrics, nil
}

// meanOverTargets is a micro-batch's share of the mean of per-position
// values (shaped as a pass's Logprobs) over a step's total targets.
func meanOverTargets(values [][]float32, seqs []model.TrainSequence, total int) float64 {
	var sum float64
	for i, s := range seqs {
		for j, t := range s.Targets {
			if t != model.NoTarget {
				sum += float64(values[i][j])
			}
		}
	}
	return sum / float64(total)
}

// maskedOld is the row's old log-probabilities at its assistant positions,
// NaN elsewhere.
func maskedOld(row rl.Row) []float64 {
	out := slices.Clone(row.OldLogprob)
	for i, m := range row.Mask {
		if !m {
			out[i] = math.NaN()
		}
	}
	return out
}

func flatten(per [][]float32) []float64 {
	var out []float64
	for _, s := range per {
		for _, v := range s {
			out = append(out, float64(v))
		}
	}
	return out
}

func unflatten(flat []float64, seqs []model.TrainSequence) [][]float32 {
	out := make([][]float32, len(seqs))
	i := 0
	for s, q := range seqs {
		out[s] = make([]float32, len(q.Tokens))
		for j := range q.Tokens {
			out[s][j] = float32(flat[i])
			i++
		}
	}
	return out
}
