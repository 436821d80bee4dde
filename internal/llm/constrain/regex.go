package constrain

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// maxRegexRepeat bounds a counted repetition ({n,m}) so that one regular
// expression cannot ask for an automaton of unbounded size.
const maxRegexRepeat = 1000

// regexCompiler turns a parsed regular expression into automaton
// fragments. keep lists the characters the output may contain at all (as
// sorted rune ranges); inside a JSON string it leaves out the quote, the
// backslash and control characters, which would need escaping.
type regexCompiler struct {
	b    *builder
	keep []rune
}

// parseRegex parses a regular expression with the Perl-like syntax most
// schema patterns use ("." does not match a newline).
func parseRegex(what, expr string) (*syntax.Regexp, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, errorf(ErrInvalid, "%s: %v", what, err)
	}
	return re, nil
}

// whole compiles re to match a whole output: anchors are allowed only at
// its ends, where they change nothing.
func (c *regexCompiler) whole(what string, re *syntax.Regexp) (frag, error) {
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	for len(parts) > 0 && isBeginAnchor(parts[0]) {
		parts = parts[1:]
	}
	for len(parts) > 0 && isEndAnchor(parts[len(parts)-1]) {
		parts = parts[:len(parts)-1]
	}
	return c.concat(what, parts)
}

// search compiles re as a JSON Schema pattern: it must match somewhere in
// the string (ECMA-262 search semantics), so an end without an anchor may
// be followed or preceded by anything.
func (c *regexCompiler) search(what string, re *syntax.Regexp) (frag, error) {
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	anchoredStart, anchoredEnd := false, false
	if len(parts) > 0 && isBeginAnchor(parts[0]) {
		parts, anchoredStart = parts[1:], true
	}
	if len(parts) > 0 && isEndAnchor(parts[len(parts)-1]) {
		parts, anchoredEnd = parts[:len(parts)-1], true
	}
	body, err := c.concat(what, parts)
	if err != nil {
		return frag{}, err
	}
	var seq []frag
	if !anchoredStart {
		seq = append(seq, c.b.star(c.class(anyRune)))
	}
	seq = append(seq, body)
	if !anchoredEnd {
		seq = append(seq, c.b.star(c.class(anyRune)))
	}
	return c.b.seq(seq...), nil
}

var anyRune = []rune{0, utf8.MaxRune}

func isBeginAnchor(re *syntax.Regexp) bool {
	return re.Op == syntax.OpBeginText || re.Op == syntax.OpBeginLine
}

func isEndAnchor(re *syntax.Regexp) bool {
	return re.Op == syntax.OpEndText || re.Op == syntax.OpEndLine
}

func (c *regexCompiler) concat(what string, parts []*syntax.Regexp) (frag, error) {
	frags := make([]frag, 0, len(parts))
	for _, p := range parts {
		f, err := c.compile(what, p)
		if err != nil {
			return frag{}, err
		}
		frags = append(frags, f)
	}
	return c.b.seq(frags...), nil
}

func (c *regexCompiler) compile(what string, re *syntax.Regexp) (frag, error) {
	b := c.b
	switch re.Op {
	case syntax.OpEmptyMatch:
		return b.empty(), nil
	case syntax.OpLiteral:
		frags := make([]frag, 0, len(re.Rune))
		for _, r := range re.Rune {
			ranges := []rune{r, r}
			if re.Flags&syntax.FoldCase != 0 {
				ranges = foldRanges(r)
			}
			frags = append(frags, c.class(ranges))
		}
		return b.seq(frags...), nil
	case syntax.OpCharClass:
		return c.class(re.Rune), nil
	case syntax.OpAnyCharNotNL:
		return c.class([]rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}), nil
	case syntax.OpAnyChar:
		return c.class(anyRune), nil
	case syntax.OpCapture:
		return c.compile(what, re.Sub[0])
	case syntax.OpConcat:
		return c.concat(what, re.Sub)
	case syntax.OpAlternate:
		frags := make([]frag, 0, len(re.Sub))
		for _, s := range re.Sub {
			f, err := c.compile(what, s)
			if err != nil {
				return frag{}, err
			}
			frags = append(frags, f)
		}
		return b.alt(frags...), nil
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := re.Min, re.Max
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, -1
		case syntax.OpPlus:
			lo, hi = 1, -1
		case syntax.OpQuest:
			lo, hi = 0, 1
		}
		if lo > maxRegexRepeat || hi > maxRegexRepeat {
			return frag{}, errorf(ErrUnsupported, "%s: repetition count above %d", what, maxRegexRepeat)
		}
		var err error
		f := b.repeat(lo, hi, func() frag {
			f, e := c.compile(what, re.Sub[0])
			if e != nil {
				err = e
			}
			return f
		})
		return f, err
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return frag{}, errorf(ErrUnsupported, "%s: an anchor (^ or $) inside the expression", what)
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return frag{}, errorf(ErrUnsupported, "%s: word boundaries (\\b, \\B)", what)
	case syntax.OpNoMatch:
		return frag{}, errorf(ErrInvalid, "%s: the expression matches nothing", what)
	}
	return frag{}, errorf(ErrUnsupported, "%s: regular expression construct %v", what, re.Op)
}

// class matches one character of ranges that the compiler keeps.
func (c *regexCompiler) class(ranges []rune) frag {
	if c.keep != nil {
		ranges = intersectRanges(ranges, c.keep)
	}
	return c.b.runeClass(ranges)
}

// foldRanges is every case variant of r as single-rune ranges, sorted.
func foldRanges(r rune) []rune {
	variants := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		variants = append(variants, f)
	}
	sortRunes(variants)
	out := make([]rune, 0, 2*len(variants))
	for _, v := range variants {
		out = append(out, v, v)
	}
	return out
}

func sortRunes(rs []rune) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j] < rs[j-1]; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// intersectRanges intersects two sorted lists of non-overlapping ranges.
func intersectRanges(a, b []rune) []rune {
	var out []rune
	i, j := 0, 0
	for i+1 < len(a) && j+1 < len(b) {
		lo, hi := max(a[i], b[j]), min(a[i+1], b[j+1])
		if lo <= hi {
			out = append(out, lo, hi)
		}
		if a[i+1] < b[j+1] {
			i += 2
		} else {
			j += 2
		}
	}
	return out
}
