package jinja

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzTemplate parses and renders arbitrary templates: no panic, and every
// render ends within the limits.
func FuzzTemplate(f *testing.F) {
	for _, name := range []string{"features.txt", "python-features.txt"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, src := range strings.Split(string(data), "\n====\n") {
			f.Add(src)
		}
	}
	for _, name := range []string{"gemma3", "deepseek_v3"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "configs", name+".tokenizer_config.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	msg := NewDict()
	msg.Set("role", "user")
	msg.Set("content", "hi <think>x</think>")
	limits := Limits{MaxOutputBytes: 1 << 16, MaxSteps: 20_000, MaxCallDepth: 16, MaxItems: 1000}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			return
		}
		out, err := tpl.Execute(map[string]Value{
			"messages":              NewList(msg, msg),
			"add_generation_prompt": true,
			"tools":                 nil,
		}, Options{Limits: limits, Now: frozenNow})
		if err == nil && len(out) > limits.MaxOutputBytes {
			t.Fatalf("output of %d bytes is over the limit", len(out))
		}
	})
}
