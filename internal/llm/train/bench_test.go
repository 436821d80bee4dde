package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/procstat"
)

// Benchmarks of training (go test -run '^$' -bench . ./internal/llm/train).
//
// BenchmarkTrainStep15M: trained tokens per second of a whole LoRA step
// as the built-in trainer runs it (forward with the entropies it reports,
// backward, clipping, AdamW; rank 8 on every projection) on the
// 15M Llama with random weights, a batch of 4 sequences of 128 tokens each
// trained on its next token at every position. In the same run, each step
// is paired with the engine's prefill of the same batch (Forward, the
// logits of each sequence's last token), and the same step is timed in
// PyTorch on the CPU by testdata/torch/bench_train.py when /usr/bin/python3
// has torch (WEFT_BENCH_TORCH=off leaves it out: with the reference BLAS
// of Debian's build it takes minutes). Reported: train_tok/s, prefill_tok/s and x_prefill (their
// ratio over the same iterations), x_prefill_median (the median over
// iterations of the step's own ratio, which one slow step on a shared
// machine does not move) and x_prefill_cpu (the ratio of the process's CPU
// time, both threads, which waiting for a busy machine's cores does not
// count), all_logits_tok/s and x_all_logits
// (against a forward pass that computes the logits of every position, as
// the step does), torch_tok/s and x_torch, and the peak resident memory of
// this process and of the PyTorch one.

const (
	benchSeqs = 4
	benchLen  = 128
)

// benchModel is the 15M Llama with random weights.
func benchModel(b *testing.B, threads int) *model.Model {
	b.Helper()
	cfg, err := model.ParseConfig(llmtest.Llama15M.ConfigJSON())
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.FromWeights(cfg, llmtest.FastRandomWeights(llmtest.Llama15M), model.Options{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

// benchStepper is a stepper of a rank-8 adapter on every projection of the
// 15M Llama (benchModel).
func benchStepper(b *testing.B, threads int) (*model.Model, *Stepper) {
	b.Helper()
	m := benchModel(b, threads)
	adapter, err := lora.New(lora.Config{Rank: 8}, m.LoRAShape(), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	tr, err := New(m, adapter, Config{})
	if err != nil {
		b.Fatal(err)
	}
	return m, tr
}

// trainStep is one step as the local trainer takes it: batch in
// micro-batches of per sequences, each forward (with the entropies the
// trainer reports), cross-entropy over total targets and backward, then
// the optimizer.
func trainStep(b *testing.B, tr *Stepper, batch []model.TrainSequence, per, total int) {
	for i := 0; i < len(batch); i += per {
		mb := batch[i:min(i+per, len(batch))]
		pass, err := tr.Forward(mb)
		if err != nil {
			b.Fatal(err)
		}
		pass.Entropies()
		_, d := CrossEntropy(pass, mb, total)
		if err := tr.Backward(pass, d); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := tr.Step(1e-4); err != nil {
		b.Fatal(err)
	}
}

// nextTokenBatch is seqs random sequences of n tokens, every position
// trained on its next token.
func nextTokenBatch(seqs, n, vocab int) []model.TrainSequence {
	out := make([]model.TrainSequence, seqs)
	for i := range out {
		toks := llmtest.RandomTokens(uint64(i+1), n+1, vocab)
		out[i] = model.TrainSequence{Tokens: toks[:n], Targets: toks[1:]}
	}
	return out
}

// peakRSS is the process's peak resident set (VmHWM), 0 where unknown.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// torchResult is what bench_train.py prints.
type torchResult struct {
	TokensPerSecond float64 `json:"tokens_per_second"`
	PeakRSSBytes    int64   `json:"peak_rss_bytes"`
}

// torchStep times the same step in PyTorch; ok is false (with the reason)
// where python3 or torch is missing.
func torchStep(threads, steps int) (torchResult, string) {
	const python = "/usr/bin/python3"
	if os.Getenv("WEFT_BENCH_TORCH") == "off" {
		return torchResult{}, "WEFT_BENCH_TORCH=off"
	}
	if _, err := os.Stat(python); err != nil {
		return torchResult{}, "no " + python
	}
	script := filepath.Join("..", "testdata", "torch", "bench_train.py")
	cmd := exec.Command(python, script, "--threads", fmt.Sprint(threads), "--seqs", fmt.Sprint(benchSeqs),
		"--len", fmt.Sprint(benchLen), "--steps", fmt.Sprint(steps), "--warmup", "1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return torchResult{}, fmt.Sprintf("%v: %s", err, stderr.String())
	}
	var r torchResult
	if err := json.Unmarshal(out, &r); err != nil {
		return torchResult{}, fmt.Sprintf("%v: %s", err, out)
	}
	return r, ""
}

func BenchmarkTrainStep15M(b *testing.B) {
	threads := runtime.GOMAXPROCS(0)
	m, tr := benchStepper(b, threads)
	batch := nextTokenBatch(benchSeqs, benchLen, m.Config.VocabSize)
	total := CountTargets(batch)
	step := func() { trainStep(b, tr, batch, len(batch), total) }
	prefill := func(allLogits bool) func() {
		return func() {
			bt := &model.Batch{}
			for i, s := range batch {
				bt.Seqs = append(bt.Seqs, model.Sequence{ID: model.SeqID(i), Tokens: s.Tokens, AllLogits: allLogits})
			}
			if _, err := m.Forward(bt, model.NewContiguousCache(m.Config, benchLen)); err != nil {
				b.Fatal(err)
			}
		}
	}
	// timed returns f's wall time and the process's CPU time during it.
	timed := func(f func()) (wall, cpu time.Duration) {
		c0, start := procstat.CPUTime(), time.Now()
		f()
		return time.Since(start), procstat.CPUTime() - c0
	}
	step()
	prefill(false)()
	var train, pre, all, trainCPU, preCPU time.Duration
	var ratios []float64
	for b.Loop() {
		tw, tc := timed(step)
		pw, pc := timed(prefill(false))
		aw, _ := timed(prefill(true))
		train, pre, all = train+tw, pre+pw, all+aw
		trainCPU, preCPU = trainCPU+tc, preCPU+pc
		ratios = append(ratios, pw.Seconds()/tw.Seconds())
	}
	slices.Sort(ratios)
	tokens := float64(benchSeqs * benchLen * b.N)
	rate := tokens / train.Seconds()
	b.ReportMetric(rate, "train_tok/s")
	b.ReportMetric(tokens/pre.Seconds(), "prefill_tok/s")
	b.ReportMetric(pre.Seconds()/train.Seconds(), "x_prefill")
	b.ReportMetric(ratios[len(ratios)/2], "x_prefill_median")
	b.ReportMetric(preCPU.Seconds()/trainCPU.Seconds(), "x_prefill_cpu")
	b.ReportMetric(tokens/all.Seconds(), "all_logits_tok/s")
	b.ReportMetric(all.Seconds()/train.Seconds(), "x_all_logits")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak_RSS_MB")
	b.StopTimer()
	if r, why := torchStep(threads, max(1, min(b.N, 3))); why != "" {
		b.Logf("PyTorch step not timed: %s", why)
	} else {
		b.ReportMetric(r.TokensPerSecond, "torch_tok/s")
		b.ReportMetric(rate/r.TokensPerSecond, "x_torch")
		b.ReportMetric(float64(r.PeakRSSBytes)/(1<<20), "torch_peak_RSS_MB")
	}
}

// BenchmarkStepPastLogitsBudget: one step over 32 sequences of 128 tokens
// (4,096 targets, twice what the default logits budget keeps for the 15M
// Llama's 32,000-token vocabulary), trained as one pass — whose backward
// recomputes the logits, a third output projection — or as the micro-batches
// of at most TargetsPerPass targets that the local trainer makes.
// Reported: trained tok/s of each.
func BenchmarkStepPastLogitsBudget(b *testing.B) {
	m, tr := benchStepper(b, runtime.GOMAXPROCS(0))
	batch := nextTokenBatch(32, benchLen, m.Config.VocabSize)
	total := CountTargets(batch)
	for _, name := range []string{"one_pass", "micro_batches"} {
		b.Run(name, func(b *testing.B) {
			per := len(batch)
			if name == "micro_batches" {
				per = tr.TargetsPerPass() / benchLen
			}
			for b.Loop() {
				trainStep(b, tr, batch, per, total)
			}
			b.ReportMetric(float64(total*b.N)/b.Elapsed().Seconds(), "train_tok/s")
		})
	}
}
