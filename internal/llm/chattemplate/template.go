package chattemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/weftlabs/weft/internal/llm/chattemplate/jinja"
)

var (
	// ErrNoTemplate: the model has no chat template and the request gave none.
	ErrNoTemplate = errors.New("chattemplate: the model has no chat template")
	// ErrInvalidInput wraps what a request got wrong: both
	// add_generation_prompt and continue_final_message, tools or documents
	// that are not JSON objects, a final message the template does not show.
	ErrInvalidInput = errors.New("chattemplate: invalid input")
	// ErrInvalidConfig wraps a tokenizer_config.json that cannot be read.
	ErrInvalidConfig = errors.New("chattemplate: invalid tokenizer config")
)

// RaiseError is the error a template raises through raise_exception; it
// reaches callers wrapped, for errors.As.
type RaiseError = jinja.RaiseError

// Template is a model's chat templates (one, or several by name) with the
// special tokens its tokenizer config defines. It is safe for concurrent use.
type Template struct {
	named   map[string]*jinja.Template
	special map[string]jinja.Value
	config  Config
}

// Config tunes rendering. The zero value is ready to use.
type Config struct {
	// Limits bound each render (see jinja.Limits for the defaults).
	Limits jinja.Limits
}

// Load reads the chat template and special tokens from tokenizer_config.json
// and, when chatTemplateJinja is not nil, takes the chat_template.jinja file
// as the default template instead of the config's (as transformers does).
// chat_template in the config may be a string or a list of {name, template};
// a model without any template loads fine and Render says ErrNoTemplate.
func Load(tokenizerConfigJSON, chatTemplateJinja []byte, cfg Config) (*Template, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(tokenizerConfigJSON, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	t := &Template{named: map[string]*jinja.Template{}, special: map[string]jinja.Value{}, config: cfg}
	if err := t.readSpecialTokens(raw); err != nil {
		return nil, err
	}
	sources := map[string]string{}
	if ct, ok := raw["chat_template"]; ok && string(ct) != "null" {
		var single string
		var list []struct {
			Name     string `json:"name"`
			Template string `json:"template"`
		}
		switch {
		case json.Unmarshal(ct, &single) == nil:
			sources["default"] = single
		case json.Unmarshal(ct, &list) == nil:
			for _, nt := range list {
				sources[nt.Name] = nt.Template
			}
		default:
			return nil, fmt.Errorf("%w: chat_template must be a string or a list of {name, template}", ErrInvalidConfig)
		}
	}
	if chatTemplateJinja != nil {
		sources["default"] = string(chatTemplateJinja)
	}
	for name, src := range sources {
		parsed, err := jinja.Parse(src)
		if err != nil {
			return nil, fmt.Errorf("chattemplate: template %q: %w", name, err)
		}
		t.named[name] = parsed
	}
	return t, nil
}

// specialTokenFields are the attributes transformers lists in
// special_tokens_map; templates see each one that is set as a variable.
var specialTokenFields = []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}

func (t *Template) readSpecialTokens(raw map[string]json.RawMessage) error {
	fields := append([]string(nil), specialTokenFields...)
	if extra, ok := raw["extra_special_tokens"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(extra, &m) == nil {
			for k, v := range m {
				if _, dup := raw[k]; !dup {
					raw[k] = v
				}
				fields = append(fields, k)
			}
		}
	}
	for _, f := range fields {
		v, ok := raw[f]
		if !ok || string(v) == "null" {
			continue
		}
		tok, err := tokenContent(v)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidConfig, f, err)
		}
		t.special[f] = tok
	}
	if add, ok := raw["additional_special_tokens"]; ok && string(add) != "null" {
		var list []json.RawMessage
		if err := json.Unmarshal(add, &list); err != nil {
			return fmt.Errorf("%w: additional_special_tokens: %v", ErrInvalidConfig, err)
		}
		if len(list) > 0 {
			items := make([]jinja.Value, len(list))
			for i, v := range list {
				tok, err := tokenContent(v)
				if err != nil {
					return fmt.Errorf("%w: additional_special_tokens: %v", ErrInvalidConfig, err)
				}
				items[i] = tok
			}
			t.special["additional_special_tokens"] = jinja.NewList(items...)
		}
	}
	return nil
}

// tokenContent reads a special token written as a string or as an
// AddedToken object {"content": ...}.
func tokenContent(v json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(v, &obj); err != nil || obj.Content == nil {
		return "", errors.New("a special token must be a string or an object with content")
	}
	return *obj.Content, nil
}

// HasTemplate reports whether the model has a chat template of its own.
func (t *Template) HasTemplate() bool { return len(t.named) > 0 }

// Names lists the model's named templates, sorted.
func (t *Template) Names() []string {
	names := make([]string, 0, len(t.named))
	for n := range t.named {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SpecialTokens returns the special tokens the templates see (bos_token,
// eos_token, ...) as strings; additional_special_tokens is left out.
func (t *Template) SpecialTokens() map[string]string {
	out := map[string]string{}
	for k, v := range t.special {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// choose picks the template as transformers' get_chat_template does: the
// request's chat_template names one of the model's templates or is itself a
// template; otherwise "tool_use" when tools are given and it exists, else
// "default".
func (t *Template) choose(override string, hasTools bool) (*jinja.Template, error) {
	if override != "" {
		if named, ok := t.named[override]; ok {
			return named, nil
		}
		parsed, err := jinja.Parse(override)
		if err != nil {
			return nil, fmt.Errorf("%w: chat_template: %w", ErrInvalidInput, err)
		}
		return parsed, nil
	}
	if len(t.named) == 0 {
		return nil, ErrNoTemplate
	}
	if hasTools {
		if tu, ok := t.named["tool_use"]; ok {
			return tu, nil
		}
	}
	if d, ok := t.named["default"]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%w: the model has several chat templates (%v) and none is named default", ErrNoTemplate, t.Names())
}
