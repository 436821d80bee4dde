package localtrainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weftlabs/weft/internal/llm/chattemplate"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/llm/train"
	"github.com/weftlabs/weft/training"
)

// events records what a trainer reports.
type events struct {
	mu      sync.Mutex
	started int
	steps   []map[string]any
}

func (e *events) Started(_ context.Context, n int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.started = n
	return nil
}

func (e *events) Step(_ context.Context, m map[string]any) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.steps = append(e.steps, m)
	return nil
}

// tinyTrainer is a trainer of a tiny random Qwen3 ("tiny", the real Qwen3
// tokenizer and template) and that model loaded for checking results.
func tinyTrainer(t *testing.T) (*Trainer, *model.Model) {
	t.Helper()
	tp := qwen3(t)
	dir := llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	tr, err := New(Config{Models: map[string]BaseModel{"tiny": {Dir: dir, Template: tp, MaxLen: 256}},
		LoRA: LoRA{Rank: 4}, Threads: 1, Seed: 7, MicroBatchTokens: 40})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	m, err := model.Load(dir, model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return tr, m
}

// promptAndReply are the tokens of the engine's prompt for a user message
// prompt (ctx) and of that prompt followed by reply (ids).
func promptAndReply(t *testing.T, tp *Template, prompt, reply string) (ctx, ids []int) {
	t.Helper()
	text, err := tp.chat.Render(chattemplate.Input{Messages: []chattemplate.Message{{Role: "user", Content: prompt}}, AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx = tp.tokenizer.Encode(text, false)
	return ctx, append(append([]int(nil), ctx...), tp.tokenizer.Encode(reply, false)...)
}

// replyLogprob is the summed log-probability of reply (the tokens of the
// assistant's turn) after the engine's prompt for messages, under adapter
// (nil: the base model), and the per-token log-probabilities.
func replyLogprob(t *testing.T, m *model.Model, adapter *lora.Adapter, tp *Template, prompt string, reply string) (float64, []float64) {
	t.Helper()
	ctx, ids := promptAndReply(t, tp, prompt, reply)
	s := Sequence{IDs: ids, Trained: make([]bool, len(ids)), Logprobs: make([]float64, len(ids))}
	for i := len(ctx); i < len(ids); i++ {
		s.Trained[i] = true
	}
	pass, err := m.TrainForward([]model.TrainSequence{trainSequence(s)}, model.TrainOptions{Adapter: adapter})
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var each []float64
	for i := len(ctx) - 1; i < len(ids)-1; i++ {
		lp := float64(pass.Logprobs[0][i])
		sum += lp
		each = append(each, lp)
	}
	return sum, each
}

// replyEntropies are the entropies, in float64 from the served forward
// pass's logits, of the base model's next-token distributions at the
// positions that score reply's tokens after the prompt for prompt: what a
// step's "entropy" averages before the first update.
func replyEntropies(t *testing.T, m *model.Model, tp *Template, prompt, reply string) []float64 {
	t.Helper()
	ctx, ids := promptAndReply(t, tp, prompt, reply)
	tokens := make([]int32, len(ids))
	for i, id := range ids {
		tokens[i] = int32(id)
	}
	out, err := m.Forward(&model.Batch{Seqs: []model.Sequence{{ID: 1, Tokens: tokens, AllLogits: true}}}, model.NewContiguousCache(m.Config, len(tokens)))
	if err != nil {
		t.Fatal(err)
	}
	v := m.Config.VocabSize
	var hs []float64
	for pos := len(ctx) - 1; pos < len(ids)-1; pos++ {
		row := out[0][pos*v : (pos+1)*v]
		mx := math.Inf(-1)
		for _, x := range row {
			mx = max(mx, float64(x))
		}
		var z float64
		for _, x := range row {
			z += math.Exp(float64(x) - mx)
		}
		var h float64
		for _, x := range row {
			lp := float64(x) - mx - math.Log(z)
			h -= math.Exp(lp) * lp
		}
		hs = append(hs, h)
	}
	return hs
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// sampledChoice is a choice of reply with the base model's log-probabilities
// as the sampler reports them.
func sampledChoice(t *testing.T, m *model.Model, tp *Template, prompt, reply string) map[string]any {
	_, lps := replyLogprob(t, m, nil, tp, prompt, reply)
	var entries []any
	for i, id := range tp.tokenizer.Encode(reply, false) {
		entries = append(entries, map[string]any{"token": fmt.Sprintf("token_id:%d", id), "logprob": lps[i]})
	}
	return map[string]any{"finish_reason": "stop", "index": 0, "message": map[string]any{"role": "assistant", "content": reply},
		"logprobs": map[string]any{"content": entries}}
}

const (
	colourPrompt = "Pick a colour."
	colourGood   = "blue blue blue<|im_end|>"
	colourBad    = "red red red<|im_end|>"
)

// colourJob is an RL job over two groups: one where the good reply earns 1
// and the bad 0, and one of equal rewards, which trains nothing.
func colourJob(t *testing.T, m *model.Model, tp *Template) *training.TrainJob {
	t.Helper()
	reward := func(r float64) *float64 { return &r }
	user := json.RawMessage(`{"role":"user","content":"Pick a colour."}`)
	group := training.TrajectoryGroup{Trajectories: []training.Trajectory{
		{MessagesAndChoices: append([]json.RawMessage{user}, raws(t, sampledChoice(t, m, tp, colourPrompt, colourGood))...), Reward: reward(1)},
		{MessagesAndChoices: append([]json.RawMessage{user}, raws(t, sampledChoice(t, m, tp, colourPrompt, colourBad))...), Reward: reward(0)},
	}}
	flat := training.TrajectoryGroup{Trajectories: []training.Trajectory{group.Trajectories[0], group.Trajectories[0]}}
	groups, _ := json.Marshal([]training.TrajectoryGroup{group, flat})
	return &training.TrainJob{ID: "job-rl", Kind: training.KindRL, BaseModel: "tiny", WorkDir: t.TempDir(),
		TrajectoryGroups: groups, ExperimentalConfig: json.RawMessage(`{"learning_rate": 0.02}`)}
}

// A job's result depends on its data, its model and its step, not on its
// id or attempt: the same job run again under another id leaves the same
// adapter to the bit (a pipeline run twice trains the same checkpoints),
// while another model draws another initial adapter.
func TestJobsAreReproducible(t *testing.T) {
	tr, m := tinyTrainer(t)
	tp := qwen3(t)
	run := func(id, modelName string, attempt int) string {
		t.Helper()
		job := colourJob(t, m, tp)
		job.ID, job.ModelName, job.Attempt, job.ProjectID = id, modelName, attempt, "admin/colours"
		res, err := tr.Train(context.Background(), job, &events{})
		if err != nil {
			t.Fatal(err)
		}
		return res.CheckpointDir
	}
	first := run("job-1", "picker", 1)
	if d := adapterDistance(t, run("job-2", "picker", 2), first); d != 0 {
		t.Errorf("the same job under another id and attempt lands %.3g (relative) away", d)
	}
	if d := adapterDistance(t, run("job-3", "other-picker", 1), first); d == 0 {
		t.Error("another model's first job drew the same adapter")
	}
}

// An RL job over one group: the rewarded reply becomes likelier, the
// unrewarded one less likely; every step reports finite numbers.
func TestTrainRL(t *testing.T) {
	tr, m := tinyTrainer(t)
	tp := qwen3(t)
	prompt, good, bad := colourPrompt, colourGood, colourBad
	job := colourJob(t, m, tp)
	rep := &events{}
	res, err := tr.Train(context.Background(), job, rep)
	if err != nil {
		t.Fatal(err)
	}
	if rep.started != 1 || len(rep.steps) != 1 {
		t.Fatalf("started %d, %d steps", rep.started, len(rep.steps))
	}
	step := rep.steps[0]
	for _, k := range []string{"loss", "policy_loss", "grad_norm", "learning_rate", "num_trainable_tokens", "num_tokens",
		"importance_ratio_mean", "mismatch_kl", "entropy"} {
		v, ok := step[k]
		if !ok {
			t.Errorf("step lacks %s", k)
			continue
		}
		if f, isFloat := v.(float64); isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
			t.Errorf("%s = %v", k, f)
		}
	}
	// Both replies' tokens (4 each, through <|im_end|>) are trained; the
	// first forward pass is the sampler's policy, so every ratio is 1.
	if step["num_trainable_tokens"] != 8 {
		t.Errorf("step = %v", step)
	}
	// The entropy is that of the policy before the update (the base model:
	// a new adapter's B is zero) at the eight trained positions, each
	// trajectory's weight 1/4 normalised to 1: Σ H / (8 + 1e-6).
	want := (sum(replyEntropies(t, m, tp, prompt, good)) + sum(replyEntropies(t, m, tp, prompt, bad))) / (8 + 1e-6)
	if got := step["entropy"].(float64); math.Abs(got-want) > 1e-5*want {
		t.Errorf("entropy %v, want %v", got, want)
	}
	if r := step["importance_ratio_mean"].(float64); math.Abs(r-1) > 1e-4 {
		t.Errorf("importance ratio %v on the sampler's own policy", r)
	}
	if g := step["grad_norm"].(float64); !(g > 0) {
		t.Errorf("grad_norm %v", g)
	}
	adapter, err := lora.Load(res.CheckpointDir)
	if err != nil {
		t.Fatal(err)
	}
	goodBefore, _ := replyLogprob(t, m, nil, tp, prompt, good)
	badBefore, _ := replyLogprob(t, m, nil, tp, prompt, bad)
	goodAfter, _ := replyLogprob(t, m, adapter, tp, prompt, good)
	badAfter, _ := replyLogprob(t, m, adapter, tp, prompt, bad)
	if !(goodAfter > goodBefore) || !(badAfter < badBefore) {
		t.Errorf("log p(good) %v → %v, log p(bad) %v → %v", goodBefore, goodAfter, badBefore, badAfter)
	}

	// A second job continues from the checkpoint.
	job2 := *job
	job2.ID, job2.WorkDir, job2.PreviousCheckpointDir = "job-rl-2", t.TempDir(), res.CheckpointDir
	job2.ExperimentalConfig = json.RawMessage(`{"learning_rate": 0.02, "ppo": true, "importance_sampling_level": "sequence", "precalculate_logprobs": true}`)
	res2, err := tr.Train(context.Background(), &job2, &events{})
	if err != nil {
		t.Fatal(err)
	}
	adapter2, err := lora.Load(res2.CheckpointDir)
	if err != nil {
		t.Fatal(err)
	}
	goodAfter2, _ := replyLogprob(t, m, adapter2, tp, prompt, good)
	if !(goodAfter2 > goodAfter) {
		t.Errorf("second job: log p(good) %v → %v", goodAfter, goodAfter2)
	}
}

// An SFT job: batches of batch_size conversations with one learning rate
// each; the trained answer becomes likelier; a schedule of the wrong length
// fails as untrainable.
func TestTrainSFT(t *testing.T) {
	tr, m := tinyTrainer(t)
	tp := qwen3(t)
	answer := "The capital is Paris."
	var lines []byte
	for range 3 {
		line, _ := json.Marshal(map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": "Capital of France?"},
			map[string]any{"role": "assistant", "content": answer}}})
		lines = append(append(lines, line...), '\n')
	}
	data := filepath.Join(t.TempDir(), "train.jsonl")
	if err := os.WriteFile(data, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	job := &training.TrainJob{ID: "job-sft", Kind: training.KindSFT, BaseModel: "tiny", WorkDir: t.TempDir(),
		SFTDataFile: data, SFTConfig: json.RawMessage(`{"batch_size": 2, "learning_rate": [0.02, 0.01]}`)}
	rep := &events{}
	res, err := tr.Train(context.Background(), job, rep)
	if err != nil {
		t.Fatal(err)
	}
	if rep.started != 2 || len(rep.steps) != 2 {
		t.Fatalf("started %d, %d steps", rep.started, len(rep.steps))
	}
	if rep.steps[0]["learning_rate"] != 0.02 || rep.steps[1]["learning_rate"] != 0.01 {
		t.Errorf("learning rates %v, %v", rep.steps[0]["learning_rate"], rep.steps[1]["learning_rate"])
	}
	// The first batch's loss is the base model's mean negative log-likelihood
	// of the trained tokens: the answer through <|im_end|>, after the empty
	// reasoning block the template writes.
	reply := "<think>\n\n</think>\n\n" + answer + "<|im_end|>"
	base, each := replyLogprob(t, m, nil, tp, "Capital of France?", reply)
	if got, want := rep.steps[0]["loss"].(float64), -base/float64(len(each)); math.Abs(got-want) > 1e-4*math.Abs(want) {
		t.Errorf("first loss %v, want %v", got, want)
	}
	hs := replyEntropies(t, m, tp, "Capital of France?", reply)
	if got, want := rep.steps[0]["entropy"].(float64), sum(hs)/float64(len(hs)); math.Abs(got-want) > 1e-5*want {
		t.Errorf("first entropy %v, want %v", got, want)
	}
	if rep.steps[0]["num_trainable_tokens"] != 2*len(each) {
		t.Errorf("trainable tokens %v, want %d", rep.steps[0]["num_trainable_tokens"], 2*len(each))
	}
	adapter, err := lora.Load(res.CheckpointDir)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := replyLogprob(t, m, adapter, tp, "Capital of France?", reply); !(after > base) {
		t.Errorf("log p(answer) %v → %v", base, after)
	}

	job.SFTConfig = json.RawMessage(`{"batch_size": 2, "learning_rate": [0.02]}`)
	job.WorkDir = t.TempDir()
	if _, err := tr.Train(context.Background(), job, &events{}); !errors.Is(err, training.ErrUntrainable) {
		t.Fatalf("a schedule of the wrong length: %v", err)
	}
}

// The optimizer's state travels with the checkpoint: two one-step SFT jobs,
// the second continuing the first's checkpoint, leave the adapter one
// two-step job leaves (AdamW's moments and step count resumed); with the
// state file removed the second job starts AdamW afresh and ends elsewhere.
func TestOptimizerStateCarriesAcrossJobs(t *testing.T) {
	tr, _ := tinyTrainer(t)
	conversation := func(q, a string) string {
		line, _ := json.Marshal(map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": q}, map[string]any{"role": "assistant", "content": a}}})
		return string(line) + "\n"
	}
	first, second := conversation("Capital of France?", "Paris."), conversation("Capital of Italy?", "Rome.")
	data := func(lines ...string) string {
		path := filepath.Join(t.TempDir(), "train.jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run := func(id, file, previous, config string) string {
		t.Helper()
		// The first job of a model draws its adapter from the model and step,
		// the same here for every job: the two-step job and the first one-step
		// job share theirs.
		job := &training.TrainJob{ID: id, Kind: training.KindSFT, BaseModel: "tiny", WorkDir: t.TempDir(),
			SFTDataFile: file, SFTConfig: json.RawMessage(config), PreviousCheckpointDir: previous}
		res, err := tr.Train(context.Background(), job, &events{})
		if err != nil {
			t.Fatal(err)
		}
		return res.CheckpointDir
	}
	whole := run("job-a", data(first, second), "", `{"batch_size": 1, "learning_rate": [0.02, 0.02]}`)
	half := run("job-b", data(first), "", `{"batch_size": 1, "learning_rate": 0.02}`)
	if _, err := os.Stat(filepath.Join(half, train.OptimizerFile)); err != nil {
		t.Fatalf("the checkpoint has no optimizer state: %v", err)
	}
	resumed := run("job-c", data(second), half, `{"batch_size": 1, "learning_rate": 0.02}`)
	same := adapterDistance(t, resumed, whole)
	if same > 1e-5 {
		t.Errorf("two one-step jobs differ from one two-step job by %.3g relative", same)
	}
	if err := os.Remove(filepath.Join(half, train.OptimizerFile)); err != nil {
		t.Fatal(err)
	}
	fresh := run("job-d", data(second), half, `{"batch_size": 1, "learning_rate": 0.02}`)
	apart := adapterDistance(t, fresh, whole)
	if apart < 1e-3 {
		t.Errorf("without the optimizer state the second job still lands within %.3g of the two-step job", apart)
	}
	t.Logf("relative distance to the two-step job: resumed %.3g, fresh %.3g", same, apart)
}

// adapterDistance is the largest difference between two saved adapters'
// factors relative to the largest factor value of want.
func adapterDistance(t *testing.T, gotDir, wantDir string) float64 {
	t.Helper()
	got, err := lora.Load(gotDir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := lora.Load(wantDir)
	if err != nil {
		t.Fatal(err)
	}
	var diff, scale float64
	for l, ly := range want.Layers {
		for tg, f := range ly {
			if f == nil {
				continue
			}
			g := got.Layers[l][tg]
			for _, pair := range [][2][]float32{{g.A, f.A}, {g.B, f.B}} {
				for i, w := range pair[1] {
					diff = max(diff, math.Abs(float64(pair[0][i])-float64(w)))
					scale = max(scale, math.Abs(float64(w)))
				}
			}
		}
	}
	return diff / scale
}

// TestMicroBatchesKeepTheSoftmaxInBudget: a step's sequences are split into
// micro-batches by tokens and by trained positions, so that no pass holds
// more softmax rows than its logits budget allows (where it would compute
// its logits twice); sequences stay whole and in order, a longer one alone.
func TestMicroBatchesKeepTheSoftmaxInBudget(t *testing.T) {
	seq := func(tokens, targets int) model.TrainSequence {
		s := model.TrainSequence{Tokens: make([]int32, tokens), Targets: make([]int32, tokens)}
		for i := range s.Targets {
			if i >= targets {
				s.Targets[i] = model.NoTarget
			}
		}
		return s
	}
	tr := &Trainer{cfg: Config{MicroBatchTokens: 100}}
	st := &step{seqs: []model.TrainSequence{seq(30, 20), seq(30, 20), seq(30, 5), seq(60, 60), seq(10, 10), seq(40, 0)}}
	batches, offsets := tr.microBatches(st, 45)
	var sizes [][2]int
	for _, b := range batches {
		sizes = append(sizes, [2]int{len(b), train.CountTargets(b)})
	}
	// 20+20+5 = 45 targets; the 60-target sequence alone, past the bound;
	// then 10 targets and 50 tokens.
	want := [][2]int{{3, 45}, {1, 60}, {2, 10}}
	if fmt.Sprint(sizes) != fmt.Sprint(want) || fmt.Sprint(offsets) != fmt.Sprint([]int{0, 90, 150}) {
		t.Fatalf("micro-batches (sequences, targets) %v at offsets %v, want %v at [0 90 150]", sizes, offsets, want)
	}
	// By tokens alone when the budget is wide.
	batches, _ = tr.microBatches(st, 1<<20)
	if len(batches) != 3 || len(batches[0]) != 3 || len(batches[1]) != 2 || len(batches[2]) != 1 {
		t.Fatalf("split by 100 tokens: %d micro-batches", len(batches))
	}
}
