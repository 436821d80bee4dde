package monitor

import (
	"encoding/json"
	"strings"

	"github.com/weftlabs/weft"
)

// Template is a judge's prompt template, in the format Weave's
// LLMAsAJudgeScorer gives Python's str.format: text with replacement fields
// {name}, where name is output, inputs, children, or the name of one of the
// call's inputs, optionally followed by members: {output.answer},
// {output[answer]}, {inputs.messages.0.content}. {{ and }} are literal
// braces. A string value is replaced by its text, any other by its JSON.
type Template struct {
	parts []templatePart
}

// templatePart is literal text, or a field when path is set.
type templatePart struct {
	text string
	path []string
}

// maxTemplateLength bounds a template, in bytes.
const maxTemplateLength = 64 << 10

// ParseTemplate reads a template. A brace that opens no field, or a field
// that never closes, is ErrInvalidScorer.
func ParseTemplate(s string) (*Template, error) {
	if len(s) > maxTemplateLength {
		return nil, weft.Errorf(ErrInvalidScorer, "the prompt template is longer than %d bytes", maxTemplateLength)
	}
	t := &Template{}
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{', c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte(c)
			i++
		case c == '}':
			return nil, weft.Errorf(ErrInvalidScorer, "the prompt template has a single '}' at byte %d (write }} for a brace)", i)
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, weft.Errorf(ErrInvalidScorer, "the prompt template opens a field at byte %d that never closes", i)
			}
			path, err := parseTemplateField(s[i+1 : i+end])
			if err != nil {
				return nil, err
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, templatePart{text: lit.String()})
				lit.Reset()
			}
			t.parts = append(t.parts, templatePart{path: path})
			i += end
		default:
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, templatePart{text: lit.String()})
	}
	return t, nil
}

// parseTemplateField reads "name.member[key]" into its segments.
func parseTemplateField(f string) ([]string, error) {
	if f == "" {
		return nil, weft.Errorf(ErrInvalidScorer, "the prompt template has an empty field {} (Weave names every field)")
	}
	if strings.ContainsAny(f, "!:{") {
		return nil, weft.Errorf(ErrInvalidScorer, "the prompt template field {%s} has a conversion or format spec, which a judge does not apply", f)
	}
	var path []string
	for _, dotted := range strings.Split(strings.ReplaceAll(strings.ReplaceAll(f, "[", "."), "]", ""), ".") {
		if dotted == "" {
			return nil, weft.Errorf(ErrInvalidScorer, "the prompt template field {%s} has an empty member", f)
		}
		path = append(path, dotted)
	}
	return path, nil
}

// Fields lists the names the template reads (the first segment of each
// field), in order of first use.
func (t *Template) Fields() []string {
	var out []string
	for _, p := range t.parts {
		if p.path != nil && !contains(out, p.path[0]) {
			out = append(out, p.path[0])
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Render fills the template from vars (each a JSON value). A field whose
// name vars lacks, or whose members lead nowhere, is an error naming it.
func (t *Template) Render(vars map[string]json.RawMessage) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.path == nil {
			b.WriteString(p.text)
			continue
		}
		raw, ok := vars[p.path[0]]
		for _, seg := range p.path[1:] {
			if !ok {
				break
			}
			raw = member(raw, seg)
			ok = raw != nil
		}
		if !ok {
			return "", weft.Errorf(ErrInvalidScorer, "the prompt template field {%s} names nothing in this call", strings.Join(p.path, "."))
		}
		var text string
		if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &text) == nil {
			b.WriteString(text)
		} else {
			b.Write(raw)
		}
	}
	return b.String(), nil
}
