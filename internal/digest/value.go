package digest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the type of a JSON value.
type Kind uint8

// The JSON kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON value that remembers what encoding/json forgets and a
// digest depends on: the literal text of numbers (so 1 stays an integer and 1.0
// a float) and the order of object members.
type Value struct {
	Kind Kind
	// Bool is the value of a Bool.
	Bool bool
	// Text is the contents of a String, or the literal of a Number as written.
	Text string
	// Items are the elements of an Array.
	Items []Value
	// Members are the members of an Object in document order, duplicates included.
	Members []Member
}

// Member is one "key": value pair of an object.
type Member struct {
	Key   string
	Value Value
}

// Str, Int, Obj, Arr and NullValue build values in code (for objects the
// server composes itself, such as the v2 evaluation object).
func Str(s string) Value           { return Value{Kind: String, Text: s} }
func Int(i int64) Value            { return Value{Kind: Number, Text: strconv.FormatInt(i, 10)} }
func Obj(members ...Member) Value  { return Value{Kind: Object, Members: members} }
func Arr(items ...Value) Value     { return Value{Kind: Array, Items: items} }
func NullValue() Value             { return Value{Kind: Null} }
func M(key string, v Value) Member { return Member{Key: key, Value: v} }

// Get returns the member key of an object. As in Python's json.loads, the last
// of duplicate keys wins.
func (v Value) Get(key string) (Value, bool) {
	if v.Kind != Object {
		return Value{}, false
	}
	for i := len(v.Members) - 1; i >= 0; i-- {
		if v.Members[i].Key == key {
			return v.Members[i].Value, true
		}
	}
	return Value{}, false
}

// IsFloat reports whether a Number was written as a float (with '.', 'e' or 'E').
func (v Value) IsFloat() bool {
	return v.Kind == Number && strings.ContainsAny(v.Text, ".eE")
}

// maxDepth bounds nesting so that a hostile document cannot exhaust the stack.
const maxDepth = 1000

// ErrSyntax is returned (wrapped) for text that is not one JSON value.
var ErrSyntax = errors.New("invalid JSON")

// Parse parses one JSON document (RFC 8259; surrounding white space allowed).
// Invalid UTF-8 and unpaired surrogate escapes become U+FFFD, as in encoding/json.
func Parse(data []byte) (Value, error) {
	p := parser{data: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.space()
	if p.pos != len(p.data) {
		return Value{}, p.fail("unexpected data after the value")
	}
	return v, nil
}

type parser struct {
	data []byte
	pos  int
}

func (p *parser) fail(msg string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrSyntax, msg, p.pos)
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) literal(word string) bool {
	if strings.HasPrefix(string(p.data[p.pos:min(len(p.data), p.pos+len(word))]), word) {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *parser) value(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, p.fail("nesting too deep")
	}
	if p.pos >= len(p.data) {
		return Value{}, p.fail("unexpected end")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.string()
		return Value{Kind: String, Text: s}, err
	case c == 't' && p.literal("true"):
		return Value{Kind: Bool, Bool: true}, nil
	case c == 'f' && p.literal("false"):
		return Value{Kind: Bool}, nil
	case c == 'n' && p.literal("null"):
		return Value{Kind: Null}, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return Value{}, p.fail("unexpected character")
}

func (p *parser) object(depth int) (Value, error) {
	p.pos++ // {
	v := Value{Kind: Object, Members: []Member{}}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return Value{}, p.fail("expected a string key")
		}
		key, err := p.string()
		if err != nil {
			return Value{}, err
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return Value{}, p.fail("expected ':'")
		}
		p.pos++
		p.space()
		member, err := p.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		v.Members = append(v.Members, Member{Key: key, Value: member})
		p.space()
		if p.pos >= len(p.data) {
			return Value{}, p.fail("unexpected end in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return Value{}, p.fail("expected ',' or '}'")
		}
	}
}

func (p *parser) array(depth int) (Value, error) {
	p.pos++ // [
	v := Value{Kind: Array, Items: []Value{}}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.space()
		item, err := p.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		v.Items = append(v.Items, item)
		p.space()
		if p.pos >= len(p.data) {
			return Value{}, p.fail("unexpected end in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return Value{}, p.fail("expected ',' or ']'")
		}
	}
}

func (p *parser) number() (Value, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return Value{}, p.fail("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return Value{}, p.fail("invalid number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return Value{}, p.fail("invalid number")
		}
	}
	return Value{Kind: Number, Text: string(p.data[start:p.pos])}, nil
}

func (p *parser) string() (string, error) {
	p.pos++ // opening quote
	var b strings.Builder
	for {
		if p.pos >= len(p.data) {
			return "", p.fail("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", p.fail("control character in string")
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			b.WriteRune(r) // RuneError for invalid bytes, i.e. U+FFFD
			p.pos += size
		}
	}
}

func (p *parser) escape(b *strings.Builder) error {
	if p.pos+1 >= len(p.data) {
		return p.fail("unterminated escape")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return p.fail("invalid \\u escape")
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate followed by an escaped low one is one code point.
			save := p.pos
			if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
				p.pos += 2
				if low, ok := p.hex4(); ok {
					if pair := utf16.DecodeRune(r, low); pair != utf8.RuneError {
						b.WriteRune(pair)
						return nil
					}
				}
			}
			p.pos = save
			r = utf8.RuneError
		}
		b.WriteRune(r)
	default:
		return p.fail("invalid escape")
	}
	return nil
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(n), true
}

// Canonical returns v serialised as Python's json.dumps(v, sort_keys=True)
// does: the text whose SHA-256 is the digest.
func (v Value) Canonical() []byte {
	return v.appendCanonical(nil)
}

func (v Value) appendCanonical(b []byte) []byte {
	switch v.Kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		if v.Bool {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case Number:
		return appendPythonNumber(b, v)
	case String:
		return appendASCIIString(b, v.Text)
	case Array:
		b = append(b, '[')
		for i, item := range v.Items {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = item.appendCanonical(b)
		}
		return append(b, ']')
	default:
		members := uniqueMembers(v.Members)
		slices.SortFunc(members, func(x, y Member) int { return strings.Compare(x.Key, y.Key) })
		b = append(b, '{')
		for i, m := range members {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendASCIIString(b, m.Key)
			b = append(b, ": "...)
			b = m.Value.appendCanonical(b)
		}
		return append(b, '}')
	}
}

// uniqueMembers keeps, for each key, the last value (Python dict semantics).
func uniqueMembers(members []Member) []Member {
	out := make([]Member, 0, len(members))
	index := make(map[string]int, len(members))
	for _, m := range members {
		if i, ok := index[m.Key]; ok {
			out[i].Value = m.Value
			continue
		}
		index[m.Key] = len(out)
		out = append(out, m)
	}
	return out
}

// appendPythonNumber writes an integer literal exactly (Python ints are
// unbounded) and a float the way Python's repr does.
func appendPythonNumber(b []byte, v Value) []byte {
	if !v.IsFloat() {
		if strings.TrimLeft(v.Text, "-0") == "" {
			return append(b, '0') // -0 is the integer 0
		}
		return append(b, v.Text...)
	}
	f, err := strconv.ParseFloat(v.Text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return append(b, v.Text...) // unreachable for text the parser accepted
	}
	return AppendPythonFloat(b, f)
}

// AppendPythonFloat appends Python's repr of f: the shortest digits that round
// trip, in fixed notation when the decimal exponent is in [-4, 16) (with ".0"
// for integral values), otherwise as d.ddde±XX.
func AppendPythonFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	if sci[0] == '-' {
		b = append(b, '-')
		sci = sci[1:]
	}
	mantissa, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mantissa, ".", "", 1)
	if exp < -4 || exp >= 16 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	if exp < 0 {
		b = append(b, "0."...)
		b = append(b, strings.Repeat("0", -exp-1)...)
		return append(b, digits...)
	}
	if len(digits) <= exp+1 {
		b = append(b, digits...)
		b = append(b, strings.Repeat("0", exp+1-len(digits))...)
		return append(b, ".0"...)
	}
	b = append(b, digits[:exp+1]...)
	b = append(b, '.')
	return append(b, digits[exp+1:]...)
}

const hexDigits = "0123456789abcdef"

// appendASCIIString writes s as Python's ensure_ascii encoder does: every
// character outside printable ASCII as \uXXXX (lowercase; surrogate pairs above
// U+FFFF), with the short escapes for quote, backslash and \b \f \n \r \t.
func appendASCIIString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		default:
			switch {
			case r >= 0x20 && r <= 0x7e:
				b = append(b, byte(r))
			case r > 0xffff:
				hi, lo := utf16.EncodeRune(r)
				b = appendU4(appendU4(b, hi), lo)
			default:
				b = appendU4(b, r)
			}
		}
	}
	return append(b, '"')
}

func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// Compact returns v as compact JSON in document order, numbers as written: the
// text stored for values the server composes itself.
func (v Value) Compact() []byte {
	return v.appendCompact(nil)
}

func (v Value) appendCompact(b []byte) []byte {
	switch v.Kind {
	case Array:
		b = append(b, '[')
		for i, item := range v.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.appendCompact(b)
		}
		return append(b, ']')
	case Object:
		b = append(b, '{')
		for i, m := range v.Members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendASCIIString(b, m.Key)
			b = append(b, ':')
			b = m.Value.appendCompact(b)
		}
		return append(b, '}')
	case Number:
		return append(b, v.Text...)
	default:
		return v.appendCanonical(b)
	}
}
