package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A piece is a stretch of normalized text that the model tokenizes on its
// own.
type piece struct {
	text string
	// byteLevel: the model reads text through the byte-level alphabet (the
	// ByteLevel pre-tokenizer ran); text itself stays raw UTF-8.
	byteLevel bool
	// atStart: the piece begins at the very start of the input, which is
	// where Metaspace's "first" scheme prepends its replacement.
	atStart bool
}

// A preTokenizer cuts a piece into smaller ones, appending them to out.
type preTokenizer interface {
	split(p piece, out []piece) []piece
}

func newPreTokenizer(field string, raw json.RawMessage) (preTokenizer, error) {
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
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		seq := make(preTokenizerSequence, 0, len(c.PreTokenizers))
		for i, sub := range c.PreTokenizers {
			subField := fmt.Sprintf("%s.pretokenizers[%d]", field, i)
			if len(seq) > 0 {
				if _, ok := seq[len(seq)-1].(byteLevelPreTokenizer); ok {
					return nil, unsupported(subField, "a pre-tokenizer after ByteLevel")
				}
			}
			pt, err := newPreTokenizer(subField, sub)
			if err != nil {
				return nil, err
			}
			if pt != nil {
				seq = append(seq, pt)
			}
		}
		return seq, nil
	case "Split":
		var c struct {
			Pattern  jsonPattern `json:"pattern"`
			Behavior string      `json:"behavior"`
			Invert   bool        `json:"invert"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		p, err := compilePattern(field+".pattern", c.Pattern)
		if err != nil {
			return nil, err
		}
		b, err := parseSplitBehavior(field+".behavior", c.Behavior)
		if err != nil {
			return nil, err
		}
		return splitPreTokenizer{pattern: p, behavior: b, invert: c.Invert}, nil
	case "ByteLevel":
		var c struct {
			AddPrefixSpace bool  `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		return byteLevelPreTokenizer{addPrefixSpace: c.AddPrefixSpace, useRegex: c.UseRegex == nil || *c.UseRegex}, nil
	case "Metaspace":
		return newMetaspacePreTokenizer(field, raw)
	case "Digits":
		var c struct {
			IndividualDigits bool `json:"individual_digits"`
		}
		if err := decodeStrict(field, raw, &c); err != nil {
			return nil, err
		}
		b := splitContiguous
		if c.IndividualDigits {
			b = splitIsolated
		}
		return splitPreTokenizer{pattern: runePattern(isNumber), behavior: b}, nil
	}
	return nil, unsupported(field+".type", "pre-tokenizer %q", typ)
}

type preTokenizerSequence []preTokenizer

func (seq preTokenizerSequence) split(p piece, out []piece) []piece {
	start := len(out)
	out = append(out, p)
	for _, pt := range seq {
		// Split the pieces made so far into a scratch tail, then move it
		// down over them.
		n := len(out)
		for i := start; i < n; i++ {
			out = pt.split(out[i], out)
		}
		out = append(out[:start], out[n:]...)
	}
	return out
}

// splitBehavior says what becomes of the delimiters a Split finds.
type splitBehavior int

const (
	splitRemoved splitBehavior = iota
	splitIsolated
	splitMergedWithPrevious
	splitMergedWithNext
	splitContiguous
)

func parseSplitBehavior(field, s string) (splitBehavior, error) {
	switch strings.ToLower(s) {
	case "removed":
		return splitRemoved, nil
	case "isolated":
		return splitIsolated, nil
	case "mergedwithprevious":
		return splitMergedWithPrevious, nil
	case "mergedwithnext":
		return splitMergedWithNext, nil
	case "contiguous":
		return splitContiguous, nil
	}
	return 0, unsupported(field, "split behavior %q", s)
}

type splitPreTokenizer struct {
	pattern  pattern
	behavior splitBehavior
	invert   bool
}

func (sp splitPreTokenizer) split(p piece, out []piece) []piece {
	return splitPiece(p, sp.pattern, sp.invert, sp.behavior, out)
}

// span is a part of a piece's text and whether the pattern matched it.
type span struct {
	start, end int
	match      bool
}

// splitPiece cuts p at the matches of pat and treats them per behavior,
// as the reference implementation's NormalizedString::split does.
func splitPiece(p piece, pat pattern, invert bool, behavior splitBehavior, out []piece) []piece {
	s := p.text
	if s == "" {
		return out
	}
	if behavior == splitIsolated {
		// Every match and every gap is a piece: no bookkeeping needed.
		prev := 0
		emit := func(start, end int) {
			out = append(out, piece{text: s[start:end], byteLevel: p.byteLevel, atStart: p.atStart && start == 0})
		}
		for {
			start, end, ok := pat.next(s, prev)
			if !ok {
				break
			}
			if prev < start {
				emit(prev, start)
			}
			emit(start, end)
			prev = end
		}
		if prev < len(s) {
			emit(prev, len(s))
		}
		return out
	}
	var stack [64]span
	spans := stack[:0]
	prev := 0
	for from := 0; ; {
		start, end, ok := pat.next(s, from)
		if !ok {
			break
		}
		if prev < start {
			spans = append(spans, span{prev, start, invert})
		}
		spans = append(spans, span{start, end, !invert})
		prev, from = end, end
	}
	if prev < len(s) {
		spans = append(spans, span{prev, len(s), invert})
	}

	switch behavior {
	case splitContiguous, splitMergedWithPrevious:
		merged := spans[:0]
		previousMatch := false
		for _, sp := range spans {
			join := sp.match == previousMatch
			if behavior == splitMergedWithPrevious {
				join = sp.match && !previousMatch
			}
			if join && len(merged) > 0 {
				merged[len(merged)-1].end = sp.end
			} else {
				merged = append(merged, span{sp.start, sp.end, false})
			}
			previousMatch = sp.match
		}
		spans = merged
	case splitMergedWithNext:
		// Walk backwards, folding each delimiter into the piece after it.
		merged := make([]span, 0, len(spans))
		previousMatch := false
		for i := len(spans) - 1; i >= 0; i-- {
			sp := spans[i]
			if sp.match && !previousMatch && len(merged) > 0 {
				merged[len(merged)-1].start = sp.start
			} else {
				merged = append(merged, span{sp.start, sp.end, false})
			}
			previousMatch = sp.match
		}
		for i, j := 0, len(merged)-1; i < j; i, j = i+1, j-1 {
			merged[i], merged[j] = merged[j], merged[i]
		}
		spans = merged
	}
	for _, sp := range spans {
		if sp.match || sp.start == sp.end {
			continue
		}
		out = append(out, piece{text: s[sp.start:sp.end], byteLevel: p.byteLevel, atStart: p.atStart && sp.start == 0})
	}
	return out
}

// runePattern matches single runes of a class.
type runePattern func(rune) bool

func (in runePattern) next(s string, from int) (int, int, bool) {
	for i := from; i < len(s); {
		r, size := runeAt(s, i)
		if in(r) {
			return i, i + size, true
		}
		i += size
	}
	return 0, 0, false
}

// byteLevelPreTokenizer hands pieces to the model as bytes, optionally first
// splitting them with GPT-2's regex and giving them a leading space.
type byteLevelPreTokenizer struct {
	addPrefixSpace bool
	useRegex       bool
}

func (b byteLevelPreTokenizer) split(p piece, out []piece) []piece {
	if b.addPrefixSpace && !strings.HasPrefix(p.text, " ") {
		p.text = " " + p.text
	}
	p.byteLevel = true
	if !b.useRegex {
		if p.text != "" {
			out = append(out, p)
		}
		return out
	}
	return splitPiece(p, gpt2Scanner{}, false, splitIsolated, out)
}

// prependScheme says where Metaspace puts its replacement before a piece.
type prependScheme int

const (
	prependAlways prependScheme = iota
	prependFirst
	prependNever
)

func parsePrependScheme(field string, s *string, addPrefixSpace *bool) (prependScheme, error) {
	scheme := prependAlways
	if s != nil {
		switch *s {
		case "always":
		case "first":
			scheme = prependFirst
		case "never":
			scheme = prependNever
		default:
			return 0, unsupported(field+".prepend_scheme", "%q", *s)
		}
	}
	// The older add_prefix_space=false means "never".
	if addPrefixSpace != nil && !*addPrefixSpace {
		if scheme != prependNever && s != nil {
			return 0, invalid(field+".add_prefix_space", "false does not match prepend_scheme %q", *s)
		}
		scheme = prependNever
	}
	return scheme, nil
}

type jsonMetaspace struct {
	Replacement    string  `json:"replacement"`
	PrependScheme  *string `json:"prepend_scheme"`
	AddPrefixSpace *bool   `json:"add_prefix_space"`
	Split          *bool   `json:"split"`
}

// metaspacePreTokenizer writes spaces as a visible character (SentencePiece's
// "▁"), adds one before the text, and splits before each.
type metaspacePreTokenizer struct {
	replacement rune
	scheme      prependScheme
	split_      bool
}

func newMetaspacePreTokenizer(field string, raw json.RawMessage) (preTokenizer, error) {
	var c jsonMetaspace
	if err := decodeStrict(field, raw, &c); err != nil {
		return nil, err
	}
	r, err := singleRune(field+".replacement", c.Replacement)
	if err != nil {
		return nil, err
	}
	scheme, err := parsePrependScheme(field, c.PrependScheme, c.AddPrefixSpace)
	if err != nil {
		return nil, err
	}
	return metaspacePreTokenizer{replacement: r, scheme: scheme, split_: c.Split == nil || *c.Split}, nil
}

func (m metaspacePreTokenizer) split(p piece, out []piece) []piece {
	rep := string(m.replacement)
	text := strings.ReplaceAll(p.text, " ", rep)
	if !strings.HasPrefix(text, rep) && (m.scheme == prependAlways || m.scheme == prependFirst && p.atStart) {
		text = rep + text
	}
	p.text = text
	if !m.split_ {
		if text != "" {
			out = append(out, p)
		}
		return out
	}
	return splitPiece(p, literalPattern(rep), false, splitMergedWithNext, out)
}
