package tokenizer

import (
	"regexp"
	"strings"
)

// A pattern finds the delimiters a Split pre-tokenizer or a Replace
// normalizer works on. next reports the first match at or after byte from:
// its bounds, or ok false when there is none. Matches are never empty.
type pattern interface {
	next(s string, from int) (start, end int, ok bool)
}

// The regular expressions of the byte-level tokenizers in use. Go's regexp
// has no lookahead (\s+(?!\S)), so each is a hand-written scanner that
// follows the backtracking engine's leftmost-first choice exactly.
const (
	// gpt2Regex is GPT-2's split, also the ByteLevel pre-tokenizer's own.
	gpt2Regex = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	// qwen2Regex is the split of Qwen2, Qwen2.5 and Qwen3: one digit a piece.
	qwen2Regex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// llama3Regex is Llama 3's split (cl100k's): up to three digits a piece.
	llama3Regex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// compilePattern turns a tokenizer file's {"String": ...} or {"Regex": ...}
// into a pattern. Regexes other than the known pre-tokenizer ones go to Go's
// regexp only when they use nothing whose meaning differs between it and the
// reference engine (the Perl classes \s \d \w \b and their negations, which
// Go reads as ASCII, and lookaround, which Go lacks).
func compilePattern(field string, p jsonPattern) (pattern, error) {
	switch {
	case p.String != nil && p.Regex != nil:
		return nil, invalid(field, "both String and Regex given")
	case p.String != nil:
		return literalPattern(*p.String), nil
	case p.Regex == nil:
		return nil, invalid(field, "neither String nor Regex given")
	}
	switch *p.Regex {
	case gpt2Regex:
		return gpt2Scanner{}, nil
	case qwen2Regex:
		return cl100kScanner{maxDigits: 1}, nil
	case llama3Regex:
		return cl100kScanner{maxDigits: 3}, nil
	}
	for _, bad := range []string{`\s`, `\S`, `\d`, `\D`, `\w`, `\W`, `\b`, `\B`, `(?=`, `(?!`, `(?<=`, `(?<!`} {
		if strings.Contains(*p.Regex, bad) {
			return nil, unsupported(field+".Regex", "regular expression %q uses %s, whose meaning this engine does not reproduce", *p.Regex, bad)
		}
	}
	re, err := regexp.Compile(*p.Regex)
	if err != nil {
		return nil, unsupported(field+".Regex", "regular expression %q: %v", *p.Regex, err)
	}
	return regexPattern{re}, nil
}

// literalPattern matches a fixed string (non-overlapping, left to right).
type literalPattern string

func (p literalPattern) next(s string, from int) (int, int, bool) {
	if p == "" {
		return 0, 0, false
	}
	i := strings.Index(s[from:], string(p))
	if i < 0 {
		return 0, 0, false
	}
	return from + i, from + i + len(p), true
}

// regexPattern is a regular expression Go reads the same way.
type regexPattern struct{ re *regexp.Regexp }

func (p regexPattern) next(s string, from int) (int, int, bool) {
	for from <= len(s) {
		loc := p.re.FindStringIndex(s[from:])
		if loc == nil {
			return 0, 0, false
		}
		if loc[1] > loc[0] {
			return from + loc[0], from + loc[1], true
		}
		// An empty match splits nothing: look again one rune further.
		if from+loc[0] >= len(s) {
			return 0, 0, false
		}
		_, size := runeAt(s, from+loc[0])
		from += loc[0] + size
	}
	return 0, 0, false
}

// isOther is [^\s\p{L}\p{N}]: punctuation, symbols, marks, controls.
func isOther(r rune) bool {
	return !isWhiteSpace(r) && !isLetter(r) && !isNumber(r)
}

// runEnd is the end of the run of runes from i that satisfy in.
func runEnd(s string, i int, in func(rune) bool) int {
	for i < len(s) {
		r, size := runeAt(s, i)
		if !in(r) {
			break
		}
		i += size
	}
	return i
}

// whiteSpaceTail matches the alternatives `\s+(?!\S)|\s+` at i, where a
// run of white space ends at w: the whole run at the end of the text or when
// it is one character long, else all but its last character (which then
// leads the next word).
func whiteSpaceTail(s string, i, w int) int {
	if w == len(s) {
		return w
	}
	if last := lastRuneStart(s, w); last > i {
		return last
	}
	return w
}

// contraction reports the length of an English contraction suffix
// ('s 't 're 've 'm 'll 'd) at the start of s, which follows an apostrophe.
// With foldCase, letters match case-insensitively as under (?i:...) in the
// reference engine, whose Unicode case folding also lets 'ſ' stand for 's'.
func contraction(s string, foldCase bool) int {
	if s == "" {
		return 0
	}
	lower := func(c byte) byte {
		if foldCase && 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	switch lower(s[0]) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if len(s) > 1 && lower(s[1]) == 'e' {
			return 2
		}
	case 'l':
		if len(s) > 1 && lower(s[1]) == 'l' {
			return 2
		}
	}
	if foldCase && strings.HasPrefix(s, "ſ") {
		return len("ſ")
	}
	return 0
}

// cl100kScanner implements qwen2Regex (maxDigits 1) and llama3Regex
// (maxDigits 3). Every character starts a match, so the matches tile the
// text.
type cl100kScanner struct{ maxDigits int }

func (p cl100kScanner) next(s string, from int) (int, int, bool) {
	if from >= len(s) {
		return 0, 0, false
	}
	return from, p.matchAt(s, from), true
}

func (p cl100kScanner) matchAt(s string, i int) int {
	r, size := runeAt(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if r == '\'' {
		if n := contraction(s[i+1:], true); n > 0 {
			return i + 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(r) {
		return runEnd(s, i, isLetter)
	}
	if r != '\r' && r != '\n' && !isNumber(r) && i+size < len(s) {
		if r2, _ := runeAt(s, i+size); isLetter(r2) {
			return runEnd(s, i+size, isLetter)
		}
	}
	// \p{N}{1,maxDigits}
	if isNumber(r) {
		end := i + size
		for n := 1; n < p.maxDigits && end < len(s); n++ {
			r2, size2 := runeAt(s, end)
			if !isNumber(r2) {
				break
			}
			end += size2
		}
		return end
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n]*
	j := i
	if r == ' ' {
		j = i + 1
	}
	if j < len(s) {
		if r2, _ := runeAt(s, j); isOther(r2) {
			end := runEnd(s, j, isOther)
			for end < len(s) && (s[end] == '\r' || s[end] == '\n') {
				end++
			}
			return end
		}
	}
	// Only white space is left: r starts a run of it.
	w := runEnd(s, i, isWhiteSpace)
	// \s*[\r\n]+ : up to the run's last line break.
	for k := w - 1; k >= i; k-- {
		if s[k] == '\r' || s[k] == '\n' {
			return k + 1
		}
	}
	return whiteSpaceTail(s, i, w)
}

// gpt2Scanner implements gpt2Regex.
type gpt2Scanner struct{}

func (gpt2Scanner) next(s string, from int) (int, int, bool) {
	if from >= len(s) {
		return 0, 0, false
	}
	return from, gpt2MatchAt(s, from), true
}

func gpt2MatchAt(s string, i int) int {
	r, _ := runeAt(s, i)
	// 's|'t|'re|'ve|'m|'ll|'d
	if r == '\'' {
		if n := contraction(s[i+1:], false); n > 0 {
			return i + 1 + n
		}
	}
	//  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+
	j := i
	if r == ' ' && i+1 < len(s) {
		j = i + 1
	}
	c, _ := runeAt(s, j)
	for _, class := range []func(rune) bool{isLetter, isNumber, isOther} {
		if class(c) {
			return runEnd(s, j, class)
		}
	}
	// \s+(?!\S)|\s+
	return whiteSpaceTail(s, i, runEnd(s, i, isWhiteSpace))
}
