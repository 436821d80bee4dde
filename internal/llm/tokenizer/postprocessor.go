package tokenizer

import (
	"encoding/json"
	"fmt"
)

// A postProcessor adds the special tokens of an encoding (BOS and the like)
// when the caller asks for them; it is what "add special tokens" means.
type postProcessor interface {
	process(ids []int, addSpecial bool) []int
}

func newPostProcessor(field string, raw json.RawMessage) (postProcessor, error) {
	if isNull(raw) {
		return nil, nil
	}
	typ, err := componentType(field, raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Sequence":
		var c struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		seq, err := parts(field, "processors", c.Processors, newPostProcessor)
		if err != nil {
			return nil, err
		}
		return postProcessorSequence(seq), nil
	case "ByteLevel":
		// It only trims offsets, which encodings here do not carry.
		return nil, nil
	case "TemplateProcessing":
		return newTemplateProcessing(field, raw)
	case "BertProcessing", "RobertaProcessing":
		var c struct {
			Sep [2]json.RawMessage `json:"sep"`
			Cls [2]json.RawMessage `json:"cls"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		var sep, cls int
		if err := decodeStrict(field+".sep[1]", c.Sep[1], &sep); err != nil {
			return nil, err
		}
		if err := decodeStrict(field+".cls[1]", c.Cls[1], &cls); err != nil {
			return nil, err
		}
		return templateProcessing{{ids: []int{cls}}, {sequence: true}, {ids: []int{sep}}}, nil
	}
	return nil, unsupported(field+".type", "post-processor %q", typ)
}

type postProcessorSequence []postProcessor

func (seq postProcessorSequence) process(ids []int, addSpecial bool) []int {
	for _, p := range seq {
		ids = p.process(ids, addSpecial)
	}
	return ids
}

// templateProcessing is the single-sequence template of a
// TemplateProcessing: special tokens around the sequence ($A).
type templateProcessing []templatePiece

type templatePiece struct {
	sequence bool
	ids      []int // the special token's ids
}

func newTemplateProcessing(field string, raw json.RawMessage) (postProcessor, error) {
	var c struct {
		Single []struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
			Sequence *struct {
				ID string `json:"id"`
			} `json:"Sequence"`
		} `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int `json:"ids"`
		} `json:"special_tokens"`
	}
	if err := decodeStrict(field, raw, &c); err != nil {
		return nil, err
	}
	var t templateProcessing
	for i, item := range c.Single {
		itemField := fmt.Sprintf("%s.single[%d]", field, i)
		switch {
		case item.Sequence != nil:
			if item.Sequence.ID != "A" {
				return nil, unsupported(itemField+".Sequence.id", "%q in a single-sequence template", item.Sequence.ID)
			}
			t = append(t, templatePiece{sequence: true})
		case item.SpecialToken != nil:
			st, ok := c.SpecialTokens[item.SpecialToken.ID]
			if !ok {
				return nil, invalid(itemField+".SpecialToken.id", "%q is not in special_tokens", item.SpecialToken.ID)
			}
			t = append(t, templatePiece{ids: st.IDs})
		default:
			return nil, invalid(itemField, "neither Sequence nor SpecialToken")
		}
	}
	return t, nil
}

func (t templateProcessing) process(ids []int, addSpecial bool) []int {
	if !addSpecial {
		return ids
	}
	n := len(ids)
	for _, p := range t {
		n += len(p.ids)
	}
	out := make([]int, 0, n)
	for _, p := range t {
		if p.sequence {
			out = append(out, ids...)
		} else {
			out = append(out, p.ids...)
		}
	}
	return out
}
