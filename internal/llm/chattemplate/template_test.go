package chattemplate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/llm/chattemplate/jinja"
)

func mustLoad(t *testing.T, config string, file []byte) *Template {
	t.Helper()
	tpl, err := Load([]byte(config), file, Config{})
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func user(s string) Message { return Message{Role: "user", Content: s} }

func TestNamedTemplatesSelection(t *testing.T) {
	tpl := mustLoad(t, `{"chat_template": [
		{"name": "default", "template": "D{{ messages|length }}"},
		{"name": "tool_use", "template": "T{{ tools|length }}"},
		{"name": "rag", "template": "R{{ documents[0].title }}"}
	]}`, nil)
	for _, c := range []struct {
		in   Input
		want string
	}{
		{Input{Messages: []Message{user("a")}}, "D1"},
		{Input{Messages: []Message{user("a")}, Tools: []json.RawMessage{json.RawMessage(`{"type":"function"}`)}}, "T1"},
		{Input{Messages: []Message{user("a")}, ChatTemplate: "rag", Documents: []json.RawMessage{json.RawMessage(`{"title":"t","text":"x"}`)}}, "Rt"},
		{Input{Messages: []Message{user("a")}, ChatTemplate: "inline {{ messages[0].content }}"}, "inline a"},
	} {
		got, err := tpl.Render(c.in)
		if err != nil || got != c.want {
			t.Errorf("got %q, %v; want %q", got, err, c.want)
		}
	}
	if names := tpl.Names(); strings.Join(names, ",") != "default,rag,tool_use" {
		t.Errorf("names %v", names)
	}
}

func TestNoDefaultTemplate(t *testing.T) {
	tpl := mustLoad(t, `{"chat_template": [{"name": "rag", "template": "x"}]}`, nil)
	if _, err := tpl.Render(Input{Messages: []Message{user("a")}}); !errors.Is(err, ErrNoTemplate) {
		t.Fatalf("got %v", err)
	}
	none := mustLoad(t, `{"bos_token": "<s>"}`, nil)
	if none.HasTemplate() {
		t.Fatal("a config without chat_template has no template")
	}
	if _, err := none.Render(Input{Messages: []Message{user("a")}}); !errors.Is(err, ErrNoTemplate) {
		t.Fatalf("got %v", err)
	}
	// A request's own template works without the model's.
	got, err := none.Render(Input{Messages: []Message{user("a")}, ChatTemplate: "{{ bos_token }}{{ messages[0].content }}"})
	if err != nil || got != "<s>a" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestJinjaFileOverridesConfig(t *testing.T) {
	tpl := mustLoad(t, `{"chat_template": "config", "eos_token": "</s>"}`, []byte("file {{ eos_token }}\n"))
	got, err := tpl.Render(Input{Messages: []Message{user("a")}})
	if err != nil || got != "file </s>" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestSpecialTokens(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "configs", "deepseek_v3.tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := Load(data, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	sp := tpl.SpecialTokens()
	if sp["bos_token"] != "<｜begin▁of▁sentence｜>" || sp["eos_token"] != "<｜end▁of▁sentence｜>" {
		t.Fatalf("AddedToken objects should give their content: %v", sp)
	}
	if _, ok := sp["unk_token"]; ok {
		t.Fatal("a null special token is not a variable")
	}
	tpl = mustLoad(t, `{"chat_template": "{{ bos_token }}|{{ additional_special_tokens|join(',') }}|{{ image_token }}|{{ pad_token is defined }}", "bos_token": "<b>", "additional_special_tokens": ["<x>", {"content": "<y>"}], "extra_special_tokens": {"image_token": "<img>"}}`, nil)
	got, err := tpl.Render(Input{Messages: []Message{user("a")}, Special: map[string]string{"bos_token": "<B>"}})
	if err != nil || got != "<B>|<x>,<y>|<img>|False" {
		t.Fatalf("got %q, %v", got, err)
	}
	// chat_template_kwargs override special tokens.
	got, err = tpl.Render(Input{Messages: []Message{user("a")}, Kwargs: map[string]any{"bos_token": "kw"}})
	if err != nil || !strings.HasPrefix(got, "kw|") {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, cfg := range []string{`not json`, `{"chat_template": 5}`, `{"bos_token": 5}`, `{"additional_special_tokens": "x"}`} {
		if _, err := Load([]byte(cfg), nil, Config{}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: got %v", cfg, err)
		}
	}
	_, err := Load([]byte(`{"chat_template": "{% if %}"}`), nil, Config{})
	var se *jinja.SyntaxError
	if !errors.As(err, &se) || se.Pos.Line != 1 {
		t.Errorf("got %v", err)
	}
}

func TestInvalidInput(t *testing.T) {
	tpl := mustLoad(t, `{"chat_template": "{% for m in messages %}{{ m.content }}{% if m.tool_calls %}{{ m.tool_calls[0].function.arguments|tojson }}{% endif %}{% endfor %}"}`, nil)
	for name, in := range map[string]Input{
		"both flags":  {Messages: []Message{user("a")}, AddGenerationPrompt: true, ContinueFinalMessage: true},
		"bad tool":    {Messages: []Message{user("a")}, Tools: []json.RawMessage{json.RawMessage(`[1]`)}},
		"bad kwargs":  {Messages: []Message{user("a")}, Kwargs: map[string]any{"x": struct{}{}}},
		"bad inline":  {Messages: []Message{user("a")}, ChatTemplate: "{{ x"},
		"not in chat": {Messages: []Message{user("a"), {Role: "assistant", Content: "zzz"}}, ContinueFinalMessage: true, ChatTemplate: "{{ messages[0].content }}"},
	} {
		if _, err := tpl.Render(in); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func TestToolCallArguments(t *testing.T) {
	tpl := mustLoad(t, `{"chat_template": "{% for tc in messages[0].tool_calls %}{{ tc.id }} {{ tc.type }} {{ tc.function.name }} {{ tc.function.arguments|tojson }};{% endfor %}"}`, nil)
	got, err := tpl.Render(Input{Messages: []Message{{Role: "assistant", NullContent: true, ToolCalls: []ToolCall{
		{ID: "a", Name: "f", Arguments: `{"z": 1, "a": "\u00e9<>&", "n": 1.5e3, "big": 12345678901234567890}`},
		{Name: "g", Arguments: "  "},
		{Name: "h", Arguments: "{not json"},
		{Name: "i", Arguments: `[1, 2]`},
	}}}})
	want := `a function f {"z": 1, "a": "é<>&", "n": 1500.0, "big": 12345678901234567890}; function g {}; function h {}; function i [1, 2];`
	if err != nil || got != want {
		t.Fatalf("got  %q, %v\nwant %q", got, err, want)
	}
}

func TestMessageFields(t *testing.T) {
	tpl := mustLoad(t, `{"chat_template": "{% for m in messages %}{{ m|tojson }}\n{% endfor %}"}`, nil)
	r := "why"
	got, err := tpl.Render(Input{Messages: []Message{
		{Role: "assistant", Content: "a", Name: "bot", Reasoning: &r, ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: `{"x": 1}`}}, ToolCallID: "ignored"},
		{Role: "assistant", Content: "b", ToolCalls: []ToolCall{}},
		{Role: "tool", ToolCallID: "c", Parts: []ContentPart{{Type: "text", Text: "r1"}, {Type: "text", Text: "r2"}}, Reasoning: &r},
		{Role: "user", Content: "u", ToolCallID: "ignored", Name: "ann"},
	}, ContentFormat: ContentFormatOpenAI})
	want := `{"role": "assistant", "content": [{"type": "text", "text": "a"}], "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}], "reasoning": "why", "reasoning_content": "why", "name": "bot"}
{"role": "assistant", "content": [{"type": "text", "text": "b"}]}
{"role": "tool", "content": "r1\nr2", "tool_call_id": "c"}
{"role": "user", "content": [{"type": "text", "text": "u"}], "name": "ann"}
`
	if err != nil || got != want {
		t.Fatalf("got  %s, %v\nwant %s", got, err, want)
	}
}

func TestKwargsOverrideRequestFields(t *testing.T) {
	tpl := mustLoad(t, `{"chat_template": "{{ messages[0].content }}{% if add_generation_prompt %}+gen{% endif %}{% if documents %}{{ documents[0].title }}{% endif %}{{ extra }}"}`, nil)
	got, err := tpl.Render(Input{
		Messages:            []Message{user("a")},
		AddGenerationPrompt: true,
		Documents:           []json.RawMessage{json.RawMessage(`{"title": "from request"}`)},
		Kwargs:              map[string]any{"add_generation_prompt": false, "documents": []any{map[string]any{"title": "from kwargs"}}, "extra": "!"},
	})
	if err != nil || got != "afrom kwargs!" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, kw := range []map[string]any{{"chat_template": "x"}, {"tokenize": true}, {"add_generation_prompt": "yes"}} {
		if _, err := tpl.Render(Input{Messages: []Message{user("a")}, Kwargs: kw}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%v: got %v", kw, err)
		}
	}
}

func TestContentFormats(t *testing.T) {
	parts := Message{Role: "user", Parts: []ContentPart{{Type: "text", Text: "a"}, {Type: "image_url"}, {Type: "text", Text: "b"}}}
	null := Message{Role: "assistant", NullContent: true}
	stringTpl := mustLoad(t, `{"chat_template": "{% for m in messages %}[{{ m.content }}]{% endfor %}"}`, nil)
	got, err := stringTpl.Render(Input{Messages: []Message{parts, null}})
	if err != nil || got != "[a\nb][]" {
		t.Fatalf("string format: got %q, %v", got, err)
	}
	partsTpl := mustLoad(t, `{"chat_template": "{% for m in messages %}{% for p in m.content %}<{{ p.type }}:{{ p.text }}>{% endfor %}|{% endfor %}"}`, nil)
	got, err = partsTpl.Render(Input{Messages: []Message{parts, null, user("s")}})
	if err != nil || got != "<text:a><image_url:><text:b>||<text:s>|" {
		t.Fatalf("openai format: got %q, %v", got, err)
	}
	// Forcing a format wins over detection.
	got, err = partsTpl.Render(Input{Messages: []Message{user("xy")}, ContentFormat: ContentFormatString})
	if err != nil || got != "<:><:>|" {
		t.Fatalf("forced string format: got %q, %v", got, err)
	}
}

func TestContinueFinalMessage(t *testing.T) {
	trimming := mustLoad(t, `{"chat_template": "{% for m in messages %}<{{ m.role }}>{{ m.content|trim }}</{{ m.role }}>{% endfor %}"}`, nil)
	keeping := mustLoad(t, `{"chat_template": "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}"}`, nil)
	for _, c := range []struct {
		tpl           *Template
		content, want string
	}{
		{trimming, "The answer is  ", "<user>q</user><assistant>The answer is"},
		{keeping, "The answer is  ", "<user>q</user><assistant>The answer is  "},
		// transformers compares with the message before lstrip: leading
		// whitespace makes it drop the trailing whitespace too.
		{keeping, "  The answer is  ", "<user>q</user><assistant>  The answer is"},
	} {
		msgs := []Message{user("q"), {Role: "assistant", Content: c.content}}
		got, err := c.tpl.Render(Input{Messages: msgs, ContinueFinalMessage: true})
		if err != nil || got != c.want {
			t.Errorf("got %q, %v; want %q", got, err, c.want)
		}
	}
	// The last occurrence counts; parts continue their last text part.
	got, err := keeping.Render(Input{Messages: []Message{user("go"), {Role: "assistant", Parts: []ContentPart{{Type: "text", Text: "x"}, {Type: "text", Text: "go"}}}}, ContinueFinalMessage: true, ContentFormat: ContentFormatString})
	if err != nil || got != "<user>go</user><assistant>x\ngo" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestStrftimeNowAndLimits(t *testing.T) {
	tpl, err := Load([]byte(`{"chat_template": "{{ strftime_now('%d %b %Y') }}{% for i in range(n) %}x{% endfor %}"}`), nil, Config{Limits: jinja.Limits{MaxOutputBytes: 100}})
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	got, err := tpl.Render(Input{Messages: []Message{user("a")}, Kwargs: map[string]any{"n": 3}, Now: now})
	if err != nil || got != "02 Jan 2025xxx" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := tpl.Render(Input{Messages: []Message{user("a")}, Kwargs: map[string]any{"n": 1000}, Now: now}); !errors.Is(err, jinja.ErrLimit) {
		t.Fatalf("want a limit error, got %v", err)
	}
}
