package chattemplate

import "testing"

// BenchmarkRenderQwen3 renders the real Qwen3 template for a conversation
// with tools, tool calls and results (the golden case tool_calls_and_results).
func BenchmarkRenderQwen3(b *testing.B) {
	tpl, g := loadGolden(b, "qwen3")
	var c *goldenCase
	for i := range g.Cases {
		if g.Cases[i].Name == "tool_calls_and_results" {
			c = &g.Cases[i]
		}
	}
	if c == nil {
		b.Fatal("golden case tool_calls_and_results is missing")
	}
	in := c.Request.input(b)
	b.ReportAllocs()
	for b.Loop() {
		out, err := tpl.Render(in)
		if err != nil || out != *c.Output {
			b.Fatalf("render differs from the golden: %v", err)
		}
	}
}
