package jinja

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FromJSON decodes JSON into template values as Python's json.loads does:
// objects keep their key order, integers stay integers (int64) and numbers
// with a fraction or exponent become floats.
func FromJSON(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeJSON(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("jinja: trailing data after JSON value")
	}
	return v, nil
}

// maxJSONDepth bounds the nesting of decoded JSON.
const maxJSONDepth = 512

func decodeJSON(dec *json.Decoder, depth int) (Value, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("jinja: JSON nested too deeply")
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := NewDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				d.Set(k.(string), v)
			}
			_, err := dec.Token()
			return d, err
		case '[':
			l := &List{Items: []Value{}}
			for dec.More() {
				v, err := decodeJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l.Items = append(l.Items, v)
			}
			_, err := dec.Token()
			return l, err
		}
		return nil, fmt.Errorf("jinja: unexpected JSON delimiter %v", t)
	case json.Number:
		s := string(t)
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
			if n, ok := new(big.Int).SetString(s, 10); ok {
				return bigInt{n}, nil
			}
		}
		return strconv.ParseFloat(s, 64)
	case string, bool, nil:
		return t, nil
	}
	return nil, fmt.Errorf("jinja: unexpected JSON token %v", t)
}

// jsonOptions are the arguments of the tojson filter, which in Hugging Face's
// environment is Python's json.dumps(x, ensure_ascii=False, ...).
type jsonOptions struct {
	indent        string // "" for none
	hasIndent     bool
	itemSep       string
	keySep        string
	ensureASCII   bool
	sortKeys      bool
	maxOutputSize int
}

var errJSONTooLarge = errors.New("JSON output too large")

func toJSON(v Value, o jsonOptions) (string, error) {
	if o.itemSep == "" && o.keySep == "" {
		o.itemSep, o.keySep = ", ", ": "
		if o.hasIndent {
			o.itemSep = ","
		}
	}
	var b strings.Builder
	if err := writeJSON(&b, v, o, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSON(b *strings.Builder, v Value, o jsonOptions, depth int) error {
	if o.maxOutputSize > 0 && b.Len() > o.maxOutputSize {
		return errJSONTooLarge
	}
	if depth > maxJSONDepth {
		return errors.New("JSON nested too deeply (circular reference?)")
	}
	newline := func(d int) {
		if o.hasIndent {
			b.WriteByte('\n')
			for i := 0; i < d; i++ {
				b.WriteString(o.indent)
			}
		}
	}
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case bigInt:
		b.WriteString(v.n.String())
	case float64:
		switch {
		case math.IsNaN(v):
			b.WriteString("NaN")
		case math.IsInf(v, 1):
			b.WriteString("Infinity")
		case math.IsInf(v, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(floatRepr(v))
		}
	case string:
		writeJSONString(b, v, o.ensureASCII)
	case *List:
		if v.view != "" {
			return fmt.Errorf("Object of type %s is not JSON serializable", typeName(v))
		}
		if len(v.Items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range v.Items {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			newline(depth + 1)
			if err := writeJSON(b, it, o, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte(']')
	case *Dict:
		if v.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		keys := v.keys
		if o.sortKeys {
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			newline(depth + 1)
			writeJSONString(b, k, o.ensureASCII)
			b.WriteString(o.keySep)
			if err := writeJSON(b, v.m[k], o, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte('}')
	default:
		return fmt.Errorf("Object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

// writeJSONString escapes as Python's json module: the quote, the backslash
// and control characters, nothing else (no HTML escaping); with ensureASCII
// everything past U+007E becomes \uXXXX (surrogate pairs above U+FFFF).
func writeJSONString(b *strings.Builder, s string, ensureASCII bool) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (ensureASCII && r >= 0x7f):
			writeU := func(c rune) {
				b.WriteString(`\u`)
				b.WriteByte(hex[c>>12&0xf])
				b.WriteByte(hex[c>>8&0xf])
				b.WriteByte(hex[c>>4&0xf])
				b.WriteByte(hex[c&0xf])
			}
			if r >= 0x10000 {
				r -= 0x10000
				writeU(0xd800 + (r >> 10))
				writeU(0xdc00 + (r & 0x3ff))
			} else {
				writeU(r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
