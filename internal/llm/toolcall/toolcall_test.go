package toolcall

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func counter() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("id-%d", n) }
}

// streamed feeds text in random pieces and gathers the deltas, checking the
// wire rule that a call's id and name come once, first, before arguments.
func streamed(t *testing.T, p Parser, text string, rng *rand.Rand) ([]Call, string) {
	t.Helper()
	var calls []Call
	var content strings.Builder
	add := func(d Delta) {
		content.WriteString(d.Content)
		for _, c := range d.ToolCalls {
			if c.Name != "" {
				if c.Index != len(calls) {
					t.Fatalf("call %d named out of order", c.Index)
				}
				calls = append(calls, Call{ID: c.ID, Name: c.Name})
				continue
			}
			if c.Index >= len(calls) {
				t.Fatalf("arguments for call %d before its name", c.Index)
			}
			calls[c.Index].Arguments += c.Arguments
		}
	}
	for len(text) > 0 {
		n := min(len(text), 1+rng.IntN(6))
		add(p.Feed(text[:n]))
		text = text[n:]
	}
	add(p.Finish())
	return calls, content.String()
}

func ptr(s string) *string { return &s }

func TestHermes(t *testing.T) {
	cases := []struct {
		text    string
		content *string
		calls   []Call
	}{
		{ // the reference server's documented example shape
			text:  "<tool_call>\n{\"name\": \"get_current_weather\", \"arguments\": {\"city\": \"Dallas\", \"state\": \"TX\", \"unit\": \"fahrenheit\"}}\n</tool_call>",
			calls: []Call{{ID: "id-1", Name: "get_current_weather", Arguments: `{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}`}},
		},
		{
			text:    "Let me check both.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": [1, {\"y\": \"}\"}]}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>",
			content: ptr("Let me check both.\n"),
			calls:   []Call{{ID: "id-1", Name: "a", Arguments: `{"x": [1, {"y": "}"}]}`}, {ID: "id-2", Name: "b", Arguments: `{}`}},
		},
		{ // unclosed block at the end of output still counts
			text:  "<tool_call>{\"arguments\": {\"q\": \"é\"}, \"name\": \"search\"}",
			calls: []Call{{ID: "id-1", Name: "search", Arguments: `{"q": "é"}`}},
		},
		{text: "No tools needed: 2 < 3.", content: ptr("No tools needed: 2 < 3.")},
		{text: "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": }</tool_call>", content: ptr("<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": }</tool_call>")},
	}
	for i, c := range cases {
		r := ParseHermes(c.text, counter())
		if fmt.Sprint(r.ToolCalls) != fmt.Sprint(c.calls) || !samePtr(r.Content, c.content) {
			t.Errorf("case %d: got %v content %s; want %v content %s", i, r.ToolCalls, show(r.Content), c.calls, show(c.content))
		}
		if len(c.calls) == 0 {
			continue
		}
		for seed := range uint64(20) {
			calls, content := streamed(t, NewHermes(counter()), c.text, rand.New(rand.NewPCG(seed, 1)))
			if fmt.Sprint(calls) != fmt.Sprint(c.calls) || content != deref(c.content) {
				t.Errorf("case %d seed %d: streamed %v %q; whole %v %q", i, seed, calls, content, c.calls, deref(c.content))
			}
		}
	}
}

func TestLlama3(t *testing.T) {
	cases := []struct {
		text    string
		content *string
		calls   []Call
	}{
		{
			text:  `{"name": "get_weather", "parameters": {"location": "Paris", "days": 3}}`,
			calls: []Call{{ID: "id-1", Name: "get_weather", Arguments: `{"location": "Paris", "days": 3}`}},
		},
		{
			text: `<|python_tag|>{"name": "a", "arguments": {"n": 1}}; {"name": "b", "parameters": {"s": "x;y"}}`,
			calls: []Call{{ID: "id-1", Name: "a", Arguments: `{"n": 1}`},
				{ID: "id-2", Name: "b", Arguments: `{"s": "x;y"}`}},
		},
		{text: "The weather is fine.", content: ptr("The weather is fine.")},
		{text: `{"name": "a", "parameters": {"n": 1`, content: ptr(`{"name": "a", "parameters": {"n": 1`)},
	}
	for i, c := range cases {
		r := ParseLlama3(c.text, counter())
		if fmt.Sprint(r.ToolCalls) != fmt.Sprint(c.calls) || !samePtr(r.Content, c.content) {
			t.Errorf("case %d: got %v content %s; want %v content %s", i, r.ToolCalls, show(r.Content), c.calls, show(c.content))
		}
		for seed := range uint64(20) {
			calls, content := streamed(t, NewLlama3(counter()), c.text, rand.New(rand.NewPCG(seed, 2)))
			if len(c.calls) > 0 && (fmt.Sprint(calls) != fmt.Sprint(c.calls) || content != "") {
				t.Errorf("case %d seed %d: streamed %v %q", i, seed, calls, content)
			}
			if len(c.calls) == 0 && c.content != nil && strings.HasPrefix(c.text, "The") && content != c.text {
				t.Errorf("case %d seed %d: streamed content %q", i, seed, content)
			}
		}
	}
}

func TestReasoning(t *testing.T) {
	// open: the prompt left a think block open.
	cases := []struct {
		text               string
		open               bool
		reasoning, content *string
	}{
		{"<think>\nThe user greets.\n</think>\n\nHello!", false, ptr("\nThe user greets.\n"), ptr("\n\nHello!")},
		{"\n <think>x</think>y", false, ptr("x"), ptr("y")},
		{"Thinking in the prompt.</think>Answer", true, ptr("Thinking in the prompt."), ptr("Answer")},
		{"<think>The model's own tag in an open block.</think>Answer", true, ptr("The model's own tag in an open block."), ptr("Answer")},
		{"<think>cut off mid-thought", false, ptr("cut off mid-thought"), nil},
		{"cut off mid-thought in an open block", true, ptr("cut off mid-thought in an open block"), nil},
		{"<think>done</think>", false, ptr("done"), nil},
		{"<think></think>", false, ptr(""), nil},
		{"A model that never thought.", false, nil, ptr("A model that never thought.")},
		{"", false, nil, ptr("")},
		{"No block was open: </think> is text.", false, nil, ptr("No block was open: </think> is text.")},
		{"Before <think>inside</think> after <think>again</think>", false, ptr("inside"), ptr("Before  after <think>again</think>")},
		{"a < b </thin k> c", true, ptr("a < b </thin k> c"), nil},
		{"a < b <thin k> c <thi", false, nil, ptr("a < b <thin k> c <thi")},
	}
	for i, c := range cases {
		r, ct := SplitReasoning(c.text, c.open)
		if !samePtr(r, c.reasoning) || !samePtr(ct, c.content) {
			t.Errorf("case %d: got %s / %s, want %s / %s", i, show(r), show(ct), show(c.reasoning), show(c.content))
		}
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, 3))
			p := NewReasoning(c.open)
			var rs, cs strings.Builder
			text := c.text
			for len(text) > 0 {
				n := min(len(text), 1+rng.IntN(4))
				d := p.Feed(text[:n])
				rs.WriteString(d.Reasoning)
				cs.WriteString(d.Content)
				text = text[n:]
			}
			d := p.Finish()
			rs.WriteString(d.Reasoning)
			cs.WriteString(d.Content)
			if rs.String() != deref(c.reasoning) || cs.String() != deref(c.content) {
				t.Errorf("case %d seed %d: streamed %q / %q", i, seed, rs.String(), cs.String())
			}
		}
	}
}

// The prompt leaves a block open when its last <think> is not closed: the
// generation prompts of Qwen3-Thinking-2507 and the DeepSeek-R1 distills,
// not Qwen3's with thinking on (the model opens the block) or off (the
// prompt closes it).
func TestPromptLeavesReasoningOpen(t *testing.T) {
	for prompt, want := range map[string]bool{
		"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n":                               true,
		"<｜User｜>hi<｜Assistant｜><think>\n":                                                               true,
		"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n":                                        false,
		"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n":                 false,
		"<|im_start|>assistant\n<think>\nold\n</think>\n\nold answer<|im_end|>\n<|im_start|>assistant\n": false,
	} {
		if got := PromptLeavesReasoningOpen(prompt); got != want {
			t.Errorf("%q: %v, want %v", prompt, got, want)
		}
	}
}

func samePtr(a, b *string) bool { return (a == nil) == (b == nil) && deref(a) == deref(b) }
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
func show(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

// The forced shapes: a named function's output is its arguments, opened
// with the first text; "required" reads an array of {name, parameters}.
func TestForced(t *testing.T) {
	args := `{"city": "Paris", "days": [1, {"x": "]"}]}`
	if r := ParseNamed("get_weather", args, counter()); fmt.Sprint(r.ToolCalls) != fmt.Sprint([]Call{{ID: "id-1", Name: "get_weather", Arguments: args}}) {
		t.Errorf("named: %v", r.ToolCalls)
	}
	if r := ParseNamed("f", "", counter()); len(r.ToolCalls) != 0 {
		t.Errorf("named without output: %v", r.ToolCalls)
	}
	text := `[{"name": "a", "parameters": {"s": "}, {"}}, {"name":"b","parameters":{}}]`
	want := []Call{{ID: "id-1", Name: "a", Arguments: `{"s": "}, {"}`}, {ID: "id-2", Name: "b", Arguments: `{}`}}
	if calls := ParseRequired(text, counter()).ToolCalls; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("required: %v", calls)
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 4))
		if got, content := streamed(t, NewRequired(counter()), text, rng); fmt.Sprint(got) != fmt.Sprint(want) || content != "" {
			t.Errorf("seed %d: required streamed %v %q", seed, got, content)
		}
		if got, _ := streamed(t, NewNamed("get_weather", counter()), args, rng); fmt.Sprint(got) != fmt.Sprint([]Call{{ID: "id-1", Name: "get_weather", Arguments: args}}) {
			t.Errorf("seed %d: named streamed %v", seed, got)
		}
	}
}

// A "required" output cut off anywhere reads alike whole and streamed: a
// call is sent once its name is written and its parameters have begun
// (or its object closed), as the reference server streams it, and then
// with its parameters as far as written.
func TestRequiredCutShort(t *testing.T) {
	text := `[{"name": "a", "parameters": {"s": "x"}}, {"name": "bb", "parameters": {}}, {"name": "c", "parameters": {"n": [1, 2]}}]`
	for cut := range len(text) + 1 {
		prefix := text[:cut]
		whole := ParseRequired(prefix, counter()).ToolCalls
		for seed := range uint64(3) {
			if got, content := streamed(t, NewRequired(counter()), prefix, rand.New(rand.NewPCG(seed, 5))); fmt.Sprint(got) != fmt.Sprint(whole) || content != "" {
				t.Fatalf("%q: whole %v, streamed %v %q", prefix, whole, got, content)
			}
		}
	}
	for prefix, want := range map[string][]Call{
		`[{"name": "a"`:                                     nil,
		`[{"name": "a", "parameters":`:                      nil,
		`[{"name": "a", "parameters": {"s"`:                 {{ID: "id-1", Name: "a", Arguments: `{"s"`}},
		`[{"name": "a", "parameters": {"s": "x"}}, {"name"`: {{ID: "id-1", Name: "a", Arguments: `{"s": "x"}`}},
		`[{"name": "a", "parameters": {}}, {"name": "b"}`:   {{ID: "id-1", Name: "a", Arguments: `{}`}, {ID: "id-2", Name: "b"}},
	} {
		if got := ParseRequired(prefix, counter()).ToolCalls; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: %v, want %v", prefix, got, want)
		}
	}
}
