package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The shapes of tokenizer.json as Hugging Face tokenizers writes it. Parts
// whose shape depends on their "type" stay raw until that type is known.

type jsonFile struct {
	Version       string           `json:"version"`
	Truncation    json.RawMessage  `json:"truncation"`
	Padding       json.RawMessage  `json:"padding"`
	AddedTokens   []jsonAddedToken `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	Model         json.RawMessage  `json:"model"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
}

type jsonAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

// jsonPattern is {"String": "..."} or {"Regex": "..."}.
type jsonPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// jsonComponent is what every typed part has in common.
type jsonComponent struct {
	Type string `json:"type"`
}

// isNull reports a missing or null part.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// componentType reads the "type" of a typed part.
func componentType(field string, raw json.RawMessage) (string, error) {
	var c jsonComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", invalid(field, "%v", err)
	}
	if c.Type == "" {
		return "", invalid(field+".type", "missing")
	}
	return c.Type, nil
}

// decodeStrict unmarshals a part into v, naming the field on failure.
func decodeStrict(field string, raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid(field, "%v", err)
	}
	return nil
}

// singleRune reads a one-character setting (a Metaspace replacement, a
// Strip content), which the reference implementation types as a char.
func singleRune(field, s string) (rune, error) {
	rs := []rune(s)
	if len(rs) != 1 {
		return 0, invalid(field, "want exactly one character, got %q", s)
	}
	return rs[0], nil
}

// jsonConfig is the part of tokenizer_config.json the tokenizer uses.
type jsonConfig struct {
	TokenizerClass            string          `json:"tokenizer_class"`
	BOSToken                  json.RawMessage `json:"bos_token"`
	EOSToken                  json.RawMessage `json:"eos_token"`
	PadToken                  json.RawMessage `json:"pad_token"`
	UnkToken                  json.RawMessage `json:"unk_token"`
	AddBOSToken               *bool           `json:"add_bos_token"`
	AddEOSToken               *bool           `json:"add_eos_token"`
	CleanUpTokenizationSpaces *bool           `json:"clean_up_tokenization_spaces"`
	ModelMaxLength            json.Number     `json:"model_max_length"`
	ChatTemplate              json.RawMessage `json:"chat_template"`
}

// configToken reads a special token setting of tokenizer_config.json: null,
// a string, or an AddedToken object {"content": ...}.
func configToken(field string, raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Content == nil {
		return "", invalid(field, "want a string or an object with content, got %s", fmt.Sprint(string(raw)))
	}
	return *obj.Content, nil
}

// parts builds the members of a Sequence component, each with build at the
// field path "field.key[i]"; members that build to nothing (null) are left out.
func parts[T any](field, key string, raws []json.RawMessage, build func(field string, raw json.RawMessage) (T, error)) ([]T, error) {
	out := make([]T, 0, len(raws))
	for i, raw := range raws {
		p, err := build(fmt.Sprintf("%s.%s[%d]", field, key, i), raw)
		if err != nil {
			return nil, err
		}
		if any(p) != nil {
			out = append(out, p)
		}
	}
	return out, nil
}
