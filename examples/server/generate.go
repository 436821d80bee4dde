package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/weftlabs/weft/internal/llm/engine"
)

func generateCommand() *command {
	return &command{
		name:    "generate",
		summary: "continue a prompt with a local model and print the text and its speed",
		about: "Load a model directory (config.json, model.safetensors, tokenizer.json) into the built-in\n" +
			"engine, encode the prompt as the tokenizer does for a plain sequence (with the BOS token\n" +
			"where the model expects one, and no chat template), generate up to -n tokens and print\n" +
			"them as they come, then one line of timings: the prompt's tokens and their rate, the\n" +
			"generated tokens and the decode rate after the first token. -n is lowered to what fits\n" +
			"the model's context. Temperature 0 (the default) decodes greedily.",
		setup: func(fs *flag.FlagSet) action {
			var opts generateOptions
			fs.StringVar(&opts.model, "model", "", "the model `directory` (required)")
			fs.StringVar(&opts.prompt, "prompt", "", "the `text` to continue")
			fs.IntVar(&opts.tokens, "n", 256, "the most tokens to generate")
			fs.Float64Var(&opts.temperature, "temperature", 0, "sampling temperature; 0 decodes greedily")
			fs.Int64Var(&opts.seed, "seed", -1, "sampling seed; -1 draws one")
			fs.IntVar(&opts.threads, "threads", engine.DefaultThreads, "threads of the matrix products; 0 means one per CPU")
			fs.StringVar(&opts.weightType, "weight-type", string(engine.WeightAuto), "weights as auto (as the model file stores them), f32, int8, q8_0, q4_0, q4_k, q5_k, q6_k, f16 or bf16")
			return func(ctx context.Context, out io.Writer, _ []string) error {
				return generate(ctx, out, opts)
			}
		},
	}
}

type generateOptions struct {
	model, prompt string
	tokens        int
	temperature   float64
	seed          int64
	threads       int
	weightType    string
}

func generate(ctx context.Context, out io.Writer, opts generateOptions) error {
	if opts.model == "" {
		return usagef("-model is required")
	}
	if opts.tokens < 1 {
		return usagef("-n must be at least 1, got %d", opts.tokens)
	}
	wt := engine.WeightType(opts.weightType)
	if !wt.Valid() {
		return usagef("-weight-type must be one of %v, got %q", engine.WeightTypes(), opts.weightType)
	}
	eng, err := engine.Open(opts.model, engine.ModelConfig{Threads: opts.threads, WeightType: wt, MaxSeqs: 1})
	if err != nil {
		return err
	}
	defer eng.Close()
	prompt := eng.Tokenizer().Encode(opts.prompt, true)
	if len(prompt) == 0 {
		return usagef("-prompt is empty and the model adds no BOS token: give a prompt")
	}
	room := eng.MaxModelLen() - len(prompt)
	if room < 1 {
		return usagef("the prompt has %d tokens; the model's context holds %d", len(prompt), eng.MaxModelLen())
	}
	temperature := opts.temperature
	req := engine.Request{Prompt: prompt, MaxTokens: min(opts.tokens, room), Temperature: &temperature}
	if opts.seed >= 0 {
		req.Seed = &opts.seed
	}

	start := time.Now()
	gen, err := eng.Generate(ctx, req)
	if err != nil {
		return err
	}
	defer gen.Close()
	var first time.Time
	generated := 0
	for {
		c, err := gen.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if len(c.TokenIDs) > 0 && first.IsZero() {
			first = time.Now()
		}
		generated += len(c.TokenIDs)
		if _, err := io.WriteString(out, c.Text); err != nil {
			return err
		}
	}
	end := time.Now()
	_, err = fmt.Fprintf(out, "\n%s\n", generateTimings(len(prompt), generated, first.Sub(start), end.Sub(first)))
	return err
}

// generateTimings is the last line of generate: the prompt's tokens and the
// rate at which the first token came, then the generated tokens and the
// rate of those after the first (decode alone, as the first one waits for
// the whole prompt).
func generateTimings(promptTokens, generated int, toFirst, decode time.Duration) string {
	line := fmt.Sprintf("prompt: %d tokens, first token after %s (%.1f tok/s)",
		promptTokens, toFirst.Round(time.Microsecond), float64(promptTokens)/toFirst.Seconds())
	line += fmt.Sprintf("; generated: %d tokens", generated)
	if generated > 1 {
		line += fmt.Sprintf(", decode %.1f tok/s", float64(generated-1)/decode.Seconds())
	}
	return line
}
