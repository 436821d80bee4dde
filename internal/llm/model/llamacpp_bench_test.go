package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/quant"
	"github.com/weftlabs/weft/internal/procstat"
)

// BenchmarkVsLlamaCpp measures the engine against llama.cpp on the same
// shapes and the same weight bytes, in the same run, rounds alternating
// (weft, llama.cpp, weft, ...), 2 threads each, and reports the ratios of
// the medians (x_decode, x_prefill, x_decode8: weft's rate over
// llama.cpp's) with both rates and the bandwidth bound of a decode step
// (bw_bound_tok/s: the weights' bytes at the pool's streaming-read rate),
// and the CPU time weft's prefill took (prefill_cpu_ms, all its threads:
// what the machine's other work does not inflate, to compare two versions
// of the engine on a shared machine):
//
//	go test -run '^$' -bench VsLlamaCpp -benchtime 1x -timeout 60m ./internal/llm/model
//
// llama.cpp's tools come from $LLAMACPP, else ../shared/llamacpp beside
// the repository. The GGUF files (random weights, F32 written with
// gguf-py, quantised by llama-quantize: testdata/bench/make_gguf.py) are
// made once into $WEFT_BENCH_GGUF (default: the user cache directory); the
// engine serves the same files' tensors in their own types; making them
// needs Python's numpy, as gguf-py does (Debian's python3-numpy). Without the
// tools the llama.cpp half is skipped, saying why, and only f32 runs.
// WEFT_BENCH_ROUNDS sets the rounds (default 5), WEFT_BENCH_SHAPES a
// comma-separated subset of llama15m, llama400m.
func BenchmarkVsLlamaCpp(b *testing.B) {
	shapes := []struct {
		name    string
		dims    llmtest.Dims
		prefill int
		types   []string
	}{
		{"llama15m", llmtest.Llama15M, 200, []string{"F32", "Q8_0", "Q4_K_M", "Q4_0"}},
		{"llama400m", llmtest.Llama400M, 256, []string{"F32", "Q8_0", "Q4_K_M", "Q4_0"}},
	}
	lc, why := findLlamaCpp()
	if lc == nil {
		b.Logf("llama.cpp half skipped: %s", why)
	}
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("WEFT_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	only := os.Getenv("WEFT_BENCH_SHAPES")
	for _, s := range shapes {
		if only != "" && !strings.Contains(only, s.name) {
			continue
		}
		for _, typ := range s.types {
			b.Run(s.name+"/"+typ, func(b *testing.B) {
				if lc == nil && typ != "F32" {
					b.Skip("the quantised GGUF files need llama.cpp's llama-quantize")
				}
				var file string
				if lc != nil {
					file = lc.gguf(b, s.name, s.dims, typ)
				}
				m := benchModel(b, s.dims, file)
				against := lc
				if lc != nil {
					if why := lc.runs(file); why != "" {
						b.Logf("llama.cpp half skipped: %s", why)
						against = nil
					}
				}
				for b.Loop() {
					compareRounds(b, against, m, file, s.prefill, rounds)
				}
			})
		}
	}
}

// benchContext is the positions a benchmark sequence reaches at most.
const benchContext = 512

// benchModel loads the GGUF file as the engine serves one (Load: every
// tensor in its own type where it lies in the mapped file, the Q4_K_M
// file's Q4_K and Q6_K blocks included), or, without one, builds the shape
// with random float32 weights.
func benchModel(b *testing.B, d llmtest.Dims, file string) *Model {
	var m *Model
	var err error
	if file == "" {
		m, err = FromWeights(configOf(b, d), llmtest.FastRandomWeights(d), Options{Threads: 2, MaxLen: benchContext})
	} else {
		m, err = Load(file, Options{Threads: 2, MaxLen: benchContext})
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	if file != "" {
		types := map[quant.Type]int{}
		lins := []*Linear{m.LMHead}
		for _, ly := range m.Layers {
			lins = append(lins, ly.Q, ly.K, ly.V, ly.O, ly.Gate, ly.Up, ly.Down)
		}
		for _, l := range lins {
			if l.M != nil {
				types[l.M.Type]++
			} else {
				types[quant.F32]++
			}
		}
		b.Logf("%s: linear layers by type %v", filepath.Base(file), types)
	}
	runtime.GC()
	return m
}

// compareRounds alternates weft's and llama.cpp's decode, prefill and
// 8-stream decode and reports the medians and their ratios.
func compareRounds(b *testing.B, lc *llamaCpp, m *Model, file string, prefill, rounds int) {
	const steps = 64
	cfg := m.Config
	var weft, llama [3][]float64 // decode, prefill, decode8 rates
	prompt := randomTokens(7, prefill, cfg.VocabSize)
	probe := probeBuffer(min(m.WeightBytes(), 1<<30))
	var bw, prefillCPU []float64
	// The prompt's cache is made and filled once before the rounds, which
	// then write over it, as llama-bench keeps its context and warms it up
	// before its repetitions: a round times the pass, not the allocation
	// and first touch of the cache's memory (nor the collections that
	// allocation sets off, which took a thread from the pass and halved
	// the 15M prefill in some rounds).
	cache := NewContiguousCache(cfg, prefill)
	prefillPass := func() {
		if _, err := m.Forward(&Batch{Seqs: []Sequence{{ID: 1, Tokens: prompt}}}, cache); err != nil {
			b.Fatal(err)
		}
	}
	prefillPass()
	for range rounds {
		bw = append(bw, m.Pool().ReadBandwidth(probe, 1)/float64(m.WeightBytes())*float64(len(probe)*4)/float64(min(m.WeightBytes(), 1<<30)))
		g := newGreedy(m, 1, benchContext)
		g.step(b) // the cache's first use
		start := time.Now()
		for range steps {
			g.step(b)
		}
		weft[0] = append(weft[0], steps/time.Since(start).Seconds())
		cpu0 := procstat.CPUTime()
		start = time.Now()
		prefillPass()
		weft[1] = append(weft[1], float64(prefill)/time.Since(start).Seconds())
		prefillCPU = append(prefillCPU, float64(procstat.CPUTime()-cpu0)/1e6)
		g8 := newGreedy(m, 8, benchContext)
		g8.step(b)
		start = time.Now()
		for range steps / 2 {
			g8.step(b)
		}
		weft[2] = append(weft[2], 8*float64(steps/2)/time.Since(start).Seconds())
		if lc == nil {
			continue
		}
		llama[0] = append(llama[0], lc.bench(b, file, "-p", "0", "-n", strconv.Itoa(steps)))
		llama[1] = append(llama[1], lc.bench(b, file, "-p", strconv.Itoa(prefill), "-n", "0"))
		llama[2] = append(llama[2], lc.batched(b, file, steps/2))
	}
	names := []string{"decode", "prefill", "decode8"}
	for i, name := range names {
		b.ReportMetric(median(weft[i]), name+"_tok/s")
		if lc != nil {
			b.ReportMetric(median(llama[i]), "llamacpp_"+name+"_tok/s")
			b.ReportMetric(median(weft[i])/median(llama[i]), "x_"+name)
		}
	}
	b.ReportMetric(median(prefillCPU), "prefill_cpu_ms")
	b.ReportMetric(median(bw), "bw_bound_tok/s")
	b.ReportMetric(float64(m.WeightBytes())/1e6, "MB/tok")
	b.Logf("rounds: weft %v, llama.cpp %v", weft, llama)
}

// llamaCpp is llama.cpp's tools directory and a directory of their
// libraries' version links.
type llamaCpp struct{ dir, lib string }

// findLlamaCpp locates the tools, or says why not.
func findLlamaCpp() (*llamaCpp, string) {
	dir := os.Getenv("LLAMACPP")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "llamacpp")
	}
	if _, err := os.Stat(filepath.Join(dir, "bin", "llama-bench")); err != nil {
		return nil, fmt.Sprintf("no llama-bench in %s (set LLAMACPP)", dir)
	}
	if _, err := exec.LookPath("/usr/bin/python3"); err != nil {
		return nil, "no /usr/bin/python3 to write the GGUF files"
	}
	dir, _ = filepath.Abs(dir)
	lib, err := os.MkdirTemp("", "weft-llamacpp-lib")
	if err != nil {
		return nil, err.Error()
	}
	// A copy of the tools may keep each library's version link as a small
	// file holding its target's name: link them properly.
	entries, _ := os.ReadDir(filepath.Join(dir, "bin"))
	for _, e := range entries {
		path := filepath.Join(dir, "bin", e.Name())
		info, err := os.Lstat(path)
		if err != nil || !strings.Contains(e.Name(), ".so") || info.Mode()&os.ModeSymlink != 0 || info.Size() >= 256 {
			continue
		}
		target, err := os.ReadFile(path)
		if err == nil {
			os.Symlink(filepath.Join(dir, "bin", strings.TrimSpace(string(target))), filepath.Join(lib, e.Name()))
		}
	}
	return &llamaCpp{dir: dir, lib: lib}, ""
}

func (l *llamaCpp) command(tool string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(l.dir, "bin", tool), args...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+l.lib, "LLAMACPP="+l.dir, "PYTHONPATH="+filepath.Join(l.dir, "gguf-py"))
	return cmd
}

// gguf returns the shape's file of type typ, made if missing.
func (l *llamaCpp) gguf(b *testing.B, name string, d llmtest.Dims, typ string) string {
	dir := os.Getenv("WEFT_BENCH_GGUF")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			b.Fatal(err)
		}
		dir = filepath.Join(cache, "weft-bench-gguf")
	}
	file := filepath.Join(dir, name+"."+typ+".gguf")
	if _, err := os.Stat(file); err == nil {
		return file
	}
	tied := 0
	if d.TiedEmbedding {
		tied = 1
	}
	script, _ := filepath.Abs(filepath.Join("..", "testdata", "bench", "make_gguf.py"))
	args := []string{script, dir, name}
	for _, v := range []int{d.VocabSize, d.HiddenSize, d.IntermediateSize, d.Layers, d.Heads, d.KVHeads, tied} {
		args = append(args, strconv.Itoa(v))
	}
	if typ != "F32" {
		args = append(args, typ)
	}
	cmd := exec.Command("/usr/bin/python3", args...)
	cmd.Env = l.command("").Env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("make_gguf.py (gguf-py needs numpy: apt-get install python3-numpy): %v\n%s", err, out)
	}
	return file
}

// runs says why llama.cpp cannot run the file on this CPU, or "" when it
// can: a build for other CPUs dies of SIGILL in the kernels of some types
// only (the AVX-VNNI build on Zen 4 runs F32 and dies on Q4_0), so each
// file is tried, with one decode step. Other failures are left to bench.
func (l *llamaCpp) runs(file string) string {
	err := l.command("llama-bench", "-m", file, "-t", "2", "-r", "1", "-p", "0", "-n", "1", "-o", "json").Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGILL {
			return fmt.Sprintf("llama-bench dies of SIGILL on %s: this CPU lacks an instruction its build uses (see its README)", filepath.Base(file))
		}
	}
	return ""
}

// bench runs one llama-bench repetition on 2 threads and returns its rate.
func (l *llamaCpp) bench(b *testing.B, file string, args ...string) float64 {
	out, err := l.command("llama-bench", append([]string{"-m", file, "-t", "2", "-r", "1", "-o", "json"}, args...)...).Output()
	if err != nil {
		b.Fatalf("llama-bench: %v", err)
	}
	var res []struct {
		AvgTS float64 `json:"avg_ts"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res) != 1 {
		b.Fatalf("llama-bench output %q: %v", out, err)
	}
	return res[0].AvgTS
}

// batched runs llama-batched-bench with 8 sequences generating steps
// tokens each on 2 threads and returns their aggregate generation rate.
func (l *llamaCpp) batched(b *testing.B, file string, steps int) float64 {
	out, err := l.command("llama-batched-bench", "-m", file, "-c", "2048", "-t", "2", "-npp", "32",
		"-ntg", strconv.Itoa(steps), "-npl", "8", "--output-format", "jsonl").Output()
	if err != nil {
		b.Fatalf("llama-batched-bench: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		var res struct {
			SpeedTG float64 `json:"speed_tg"`
		}
		if json.Unmarshal([]byte(line), &res) == nil && res.SpeedTG > 0 {
			return res.SpeedTG
		}
	}
	b.Fatalf("llama-batched-bench output %q", out)
	return 0
}
