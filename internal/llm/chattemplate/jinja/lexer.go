package jinja

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The lexer follows Python Jinja's with the environment Hugging Face builds
// for chat templates: trim_blocks and lstrip_blocks on, keep_trailing_newline
// off, newlines normalized to "\n", whitespace control with "-" and "+".

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokData
	tokVarBegin
	tokVarEnd
	tokBlockBegin
	tokBlockEnd
	tokName
	tokString
	tokInt
	tokFloat
	tokOp
)

type token struct {
	kind tokKind
	val  string // data text, name, decoded string literal, number text or operator
	off  int    // byte offset in the normalized source
}

// operators, longest first so that "//" wins over "/".
var operators = []string{
	"//", "**", "==", "!=", "<=", ">=",
	"+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", "<", ">", "=", ".", ":", "|", ",", ";",
}

type lexer struct {
	src    string
	toks   []token
	maxLen int
}

// normalizeSource applies Jinja's newline normalization and drops one
// trailing newline, as keep_trailing_newline=False does.
func normalizeSource(src string) string {
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	return strings.TrimSuffix(src, "\n")
}

// position turns a byte offset into a line and rune column.
func position(src string, off int) Pos {
	if off > len(src) {
		off = len(src)
	}
	line := 1 + strings.Count(src[:off], "\n")
	start := strings.LastIndexByte(src[:off], '\n') + 1
	return Pos{Line: line, Col: 1 + utf8.RuneCountInString(src[start:off])}
}

func (l *lexer) fail(off int, msg string) {
	panic(failure{&SyntaxError{Pos: position(l.src, off), Msg: msg}})
}

func (l *lexer) emit(kind tokKind, val string, off int) {
	l.toks = append(l.toks, token{kind: kind, val: val, off: off})
}

// IsSpace is Python's str.isspace for one rune (it counts the information
// separators U+001C..U+001F, which Go's unicode.IsSpace does not).
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

func trimSpaceRight(s string) string { return strings.TrimRightFunc(s, IsSpace) }

func skipSpace(src string, i int) int {
	for i < len(src) {
		r, n := utf8.DecodeRuneInString(src[i:])
		if !IsSpace(r) {
			break
		}
		i += n
	}
	return i
}

func allSpace(s string) bool {
	return s != "" && strings.TrimLeftFunc(s, IsSpace) == ""
}

func lex(src string) []token {
	l := &lexer{src: src}
	pos := 0
	for pos < len(src) {
		i := nextTag(src, pos)
		if i < 0 {
			l.emit(tokData, src[pos:], pos)
			break
		}
		text := src[pos:i]
		kind := src[i+1]
		var sign byte
		if i+2 < len(src) && (src[i+2] == '-' || src[i+2] == '+') {
			sign = src[i+2]
		}
		switch {
		case sign == '-':
			text = trimSpaceRight(text)
		case sign != '+' && kind != '{':
			// lstrip_blocks: a block or comment tag preceded on its line by
			// whitespace only takes that whitespace away.
			lpos := strings.LastIndexByte(text, '\n') + 1
			if (lpos > 0 || pos == 0 || src[pos-1] == '\n') && allSpace(text[lpos:]) {
				text = text[:lpos]
			}
		}
		if text != "" {
			l.emit(tokData, text, pos)
		}
		p := i + 2
		if sign != 0 {
			p++
		}
		switch kind {
		case '#':
			pos = l.comment(i, p)
		case '%':
			if end, ok := l.raw(i, p); ok {
				pos = end
				continue
			}
			l.emit(tokBlockBegin, "{%", i)
			pos = l.tag(p, '%')
		default:
			l.emit(tokVarBegin, "{{", i)
			pos = l.tag(p, '}')
		}
	}
	l.emit(tokEOF, "", len(src))
	return l.toks
}

// nextTag finds the next "{{", "{%" or "{#" at or after pos.
func nextTag(src string, pos int) int {
	for {
		j := strings.IndexByte(src[pos:], '{')
		if j < 0 || pos+j+1 >= len(src) {
			return -1
		}
		i := pos + j
		if c := src[i+1]; c == '{' || c == '%' || c == '#' {
			return i
		}
		pos = i + 1
	}
}

// comment skips a comment whose "{#" is at start and whose body starts at p.
func (l *lexer) comment(start, p int) int {
	j := strings.Index(l.src[p:], "#}")
	if j < 0 {
		l.fail(start, "missing end of comment tag")
	}
	end := p + j
	if end > p && l.src[end-1] == '-' {
		return skipSpace(l.src, end+2)
	}
	return trimNewline(l.src, end+2)
}

func trimNewline(src string, i int) int {
	if i < len(src) && src[i] == '\n' {
		return i + 1
	}
	return i
}

// raw handles "{% raw %}...{% endraw %}", whose body is data however it looks.
func (l *lexer) raw(start, p int) (int, bool) {
	q := skipSpace(l.src, p)
	if !strings.HasPrefix(l.src[q:], "raw") {
		return 0, false
	}
	q = skipSpace(l.src, q+3)
	stripAfter := false
	switch {
	case strings.HasPrefix(l.src[q:], "-%}"):
		stripAfter = true
		q += 3
	case strings.HasPrefix(l.src[q:], "%}"):
		q += 2
	default:
		return 0, false
	}
	if stripAfter {
		q = skipSpace(l.src, q)
	}
	bodyStart := q
	for {
		i := strings.Index(l.src[q:], "{%")
		if i < 0 {
			l.fail(start, "missing endraw for raw block")
		}
		i += q
		r := i + 2
		var sign byte
		if r < len(l.src) && (l.src[r] == '-' || l.src[r] == '+') {
			sign = l.src[r]
			r++
		}
		r = skipSpace(l.src, r)
		if !strings.HasPrefix(l.src[r:], "endraw") {
			q = i + 2
			continue
		}
		r = skipSpace(l.src, r+len("endraw"))
		body := l.src[bodyStart:i]
		if sign == '-' {
			body = trimSpaceRight(body)
		}
		var end int
		switch {
		case strings.HasPrefix(l.src[r:], "-%}"):
			end = skipSpace(l.src, r+3)
		case strings.HasPrefix(l.src[r:], "+%}"):
			end = r + 3
		case strings.HasPrefix(l.src[r:], "%}"):
			end = trimNewline(l.src, r+2)
		default:
			q = i + 2
			continue
		}
		if body != "" {
			l.emit(tokData, body, bodyStart)
		}
		return end, true
	}
}

// tag lexes the inside of a "{% %}" (closer '%') or "{{ }}" (closer '}')
// tag from p, emits its end token and returns the offset after it.
func (l *lexer) tag(p int, closer byte) int {
	src := l.src
	var open []byte // brackets not closed yet; the closing tag counts only outside them
	for {
		p = skipSpace(src, p)
		if p >= len(src) {
			if closer == '%' {
				l.fail(p, "unexpected end of template, expected '%}'")
			}
			l.fail(p, "unexpected end of template, expected '}}'")
		}
		if len(open) == 0 {
			if closer == '%' {
				switch {
				case strings.HasPrefix(src[p:], "-%}"):
					l.emit(tokBlockEnd, "%}", p)
					return skipSpace(src, p+3)
				case strings.HasPrefix(src[p:], "+%}"):
					l.emit(tokBlockEnd, "%}", p)
					return p + 3
				case strings.HasPrefix(src[p:], "%}"):
					l.emit(tokBlockEnd, "%}", p)
					return trimNewline(src, p+2)
				}
			} else {
				switch {
				case strings.HasPrefix(src[p:], "-}}"):
					l.emit(tokVarEnd, "}}", p)
					return skipSpace(src, p+3)
				case strings.HasPrefix(src[p:], "}}"):
					l.emit(tokVarEnd, "}}", p)
					return p + 2
				}
			}
		}
		c := src[p]
		switch {
		case c == '\'' || c == '"':
			p = l.stringLit(p)
		case c >= '0' && c <= '9':
			p = l.number(p)
		case c == '_' || c >= 0x80 || unicode.IsLetter(rune(c)):
			q := p
			for q < len(src) {
				r, n := utf8.DecodeRuneInString(src[q:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				q += n
			}
			if q == p {
				l.fail(p, "unexpected character "+quoteRune(src[p:]))
			}
			l.emit(tokName, src[p:q], p)
			p = q
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(src[p:], o) {
					op = o
					break
				}
			}
			if op == "" {
				l.fail(p, "unexpected character "+quoteRune(src[p:]))
			}
			switch op {
			case "(", "[", "{":
				open = append(open, map[string]byte{"(": ')', "[": ']', "{": '}'}[op])
			case ")", "]", "}":
				if len(open) == 0 {
					l.fail(p, "unexpected '"+op+"'")
				}
				if want := open[len(open)-1]; want != op[0] {
					l.fail(p, "unexpected '"+op+"', expected '"+string(want)+"'")
				}
				open = open[:len(open)-1]
			}
			l.emit(tokOp, op, p)
			p += len(op)
		}
	}
}

func quoteRune(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	return "'" + string(r) + "'"
}

func isDigitOrUnderscore(c byte) bool { return (c >= '0' && c <= '9') || c == '_' }

// number lexes an integer or float literal (Python syntax: underscores,
// exponents, 0x/0o/0b prefixes).
func (l *lexer) number(p int) int {
	src := l.src
	q := p
	if src[p] == '0' && p+1 < len(src) && strings.IndexByte("xXoObB", src[p+1]) >= 0 {
		q = p + 2
		for q < len(src) && (isHex(src[q]) || src[q] == '_') {
			q++
		}
		l.emit(tokInt, src[p:q], p)
		return q
	}
	for q < len(src) && isDigitOrUnderscore(src[q]) {
		q++
	}
	isFloat := false
	afterDot := len(l.toks) > 0 && l.toks[len(l.toks)-1].kind == tokOp && l.toks[len(l.toks)-1].val == "."
	if !afterDot {
		if q+1 < len(src) && src[q] == '.' && src[q+1] >= '0' && src[q+1] <= '9' {
			isFloat = true
			q++
			for q < len(src) && isDigitOrUnderscore(src[q]) {
				q++
			}
		}
		if q < len(src) && (src[q] == 'e' || src[q] == 'E') {
			r := q + 1
			if r < len(src) && (src[r] == '+' || src[r] == '-') {
				r++
			}
			if r < len(src) && src[r] >= '0' && src[r] <= '9' {
				isFloat = true
				q = r
				for q < len(src) && isDigitOrUnderscore(src[q]) {
					q++
				}
			}
		}
	}
	if isFloat {
		l.emit(tokFloat, src[p:q], p)
	} else {
		l.emit(tokInt, src[p:q], p)
	}
	return q
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// stringLit lexes a quoted string with Python's escapes; unknown escapes
// keep their backslash, as Python does.
func (l *lexer) stringLit(p int) int {
	src := l.src
	quote := src[p]
	var b strings.Builder
	q := p + 1
	for {
		if q >= len(src) {
			l.fail(p, "unterminated string literal")
		}
		c := src[q]
		if c == quote {
			l.emit(tokString, b.String(), p)
			return q + 1
		}
		if c != '\\' {
			b.WriteByte(c)
			q++
			continue
		}
		if q+1 >= len(src) {
			l.fail(p, "unterminated string literal")
		}
		e := src[q+1]
		q += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'a':
			b.WriteByte('\a')
		case '\\', '\'', '"':
			b.WriteByte(e)
		case '\n':
			// a backslash-newline continues the line
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if q+n > len(src) {
				l.fail(q-2, "truncated \\"+string(e)+" escape")
			}
			var r rune
			for _, h := range []byte(src[q : q+n]) {
				if !isHex(h) {
					l.fail(q-2, "truncated \\"+string(e)+" escape")
				}
				r = r*16 + rune(hexVal(h))
			}
			if r > unicode.MaxRune {
				l.fail(q-2, "illegal Unicode character in escape")
			}
			b.WriteRune(r)
			q += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			r := rune(e - '0')
			for k := 0; k < 2 && q < len(src) && src[q] >= '0' && src[q] <= '7'; k++ {
				r = r*8 + rune(src[q]-'0')
				q++
			}
			b.WriteRune(r)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
