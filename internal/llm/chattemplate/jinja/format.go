package jinja

import (
	"strconv"
	"strings"
)

// percentFormat is Python's "format % args" for the conversions templates
// use: %s %r %d %i %f %F %e %g %x %o %c %% with flags, width and precision.
func (r *renderer) percentFormat(n node, format string, args Value) Value {
	var list []Value
	var named *Dict
	// Python takes any non-tuple object with __getitem__ (a dict, but also a
	// list or an undefined value) as a mapping: unused, it is no error.
	mappingLike := false
	switch a := args.(type) {
	case *List:
		if a.Tuple {
			list = a.Items
		} else {
			list = []Value{a}
			mappingLike = true
		}
	case *Dict:
		named = a
		list = []Value{a}
		mappingLike = true
	case Undefined:
		list = []Value{a}
		mappingLike = true
	default:
		list = []Value{a}
	}
	var b strings.Builder
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			r.fail(n, "incomplete format")
		}
		var key string
		if format[i] == '(' {
			end := strings.IndexByte(format[i:], ')')
			if end < 0 || named == nil {
				r.fail(n, "format requires a mapping")
			}
			key = format[i+1 : i+end]
			i += end + 1
		}
		start := i
		for i < len(format) && strings.IndexByte("-+ #0123456789.", format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			r.fail(n, "incomplete format")
		}
		spec, verb := format[start:i], format[i]
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		var arg Value
		if key != "" {
			v, ok := named.Get(key)
			if !ok {
				r.fail(n, "format key %s not found", quotePy(key))
			}
			arg = v
		} else {
			if next >= len(list) {
				r.fail(n, "not enough arguments for format string")
			}
			arg = list[next]
			next++
		}
		b.WriteString(r.formatOne(n, spec, verb, arg))
		r.checkString(n, b.Len())
	}
	if !mappingLike && next < len(list) {
		r.fail(n, "not all arguments converted during string formatting")
	}
	return b.String()
}

func (r *renderer) formatOne(n node, spec string, verb byte, arg Value) string {
	width, prec, flags := parseSpec(spec)
	if width > r.limits.MaxOutputBytes || prec > 1000 {
		r.checkString(n, r.limits.MaxOutputBytes+1)
	}
	var s string
	switch verb {
	case 's':
		s = str(arg)
		if prec >= 0 && runeLen(s) > prec {
			s = string([]rune(s)[:prec])
		}
	case 'r', 'a':
		s = repr(arg)
	case 'c':
		switch a := arg.(type) {
		case int64:
			s = string(rune(a))
		case string:
			s = a
		}
	case 'd', 'i', 'x', 'X', 'o', 'f', 'F', 'e', 'E', 'g', 'G':
		i, f, isFloat, ok := number(arg)
		if !ok {
			r.fail(n, "%%%c format: a real number is required, not %s", verb, typeName(arg))
		}
		switch verb {
		case 'd', 'i':
			if isFloat {
				i = int64(f)
			}
			s = strconv.FormatInt(i, 10)
		case 'x', 'X', 'o':
			if isFloat {
				r.fail(n, "%%%c format: an integer is required, not float", verb)
			}
			base := 16
			if verb == 'o' {
				base = 8
			}
			s = strconv.FormatInt(i, base)
			if verb == 'X' {
				s = strings.ToUpper(s)
			}
		default:
			if prec < 0 {
				prec = 6
			}
			fv := verb
			if fv == 'F' {
				fv = 'f'
			}
			s = strconv.FormatFloat(f, fv, prec, 64)
			if fv == 'e' || fv == 'E' || fv == 'g' || fv == 'G' {
				s = pyExponent(s)
			}
		}
		if strings.Contains(flags, "+") && !strings.HasPrefix(s, "-") {
			s = "+" + s
		} else if strings.Contains(flags, " ") && !strings.HasPrefix(s, "-") {
			s = " " + s
		}
		if strings.Contains(flags, "0") && !strings.Contains(flags, "-") && runeLen(s) < width {
			sign := ""
			if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") || strings.HasPrefix(s, " ") {
				sign, s = s[:1], s[1:]
			}
			s = sign + strings.Repeat("0", width-runeLen(s)-len(sign)) + s
		}
	default:
		r.fail(n, "unsupported format character '%c'", verb)
	}
	if runeLen(s) < width {
		if strings.Contains(flags, "-") {
			s += strings.Repeat(" ", width-runeLen(s))
		} else {
			s = strings.Repeat(" ", width-runeLen(s)) + s
		}
	}
	return s
}

func parseSpec(spec string) (width, prec int, flags string) {
	prec = -1
	i := 0
	for i < len(spec) && strings.IndexByte("-+ #0", spec[i]) >= 0 {
		i++
	}
	flags = spec[:i]
	j := i
	for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
		j++
	}
	width, _ = strconv.Atoi(spec[i:j])
	if j < len(spec) && spec[j] == '.' {
		prec, _ = strconv.Atoi(spec[j+1:])
	}
	return width, prec, flags
}

// pyExponent writes Go's exponent (e+6) the way Python does (e+06).
func pyExponent(s string) string {
	i := strings.IndexAny(s, "eE")
	if i < 0 || i+2 >= len(s) {
		return s
	}
	digits := s[i+2:]
	if len(digits) < 2 {
		digits = "0" + digits
	}
	return s[:i+2] + digits
}

// strFormat is a subset of Python's str.format: {}, {0}, {name}, {{ and }},
// without format specs.
func (r *renderer) strFormat(n node, s string, args []Value, kw *Dict) string {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				r.fail(n, "single '{' encountered in format string")
			}
			field := s[i+1 : i+end]
			i += end
			if strings.ContainsAny(field, ":!") {
				r.fail(n, "format specs in str.format are not supported")
			}
			var v Value
			switch {
			case field == "":
				if auto >= len(args) {
					r.fail(n, "replacement index %d out of range for positional args tuple", auto)
				}
				v = args[auto]
				auto++
			case field[0] >= '0' && field[0] <= '9':
				k, err := strconv.Atoi(field)
				if err != nil || k >= len(args) {
					r.fail(n, "replacement index %s out of range for positional args tuple", field)
				}
				v = args[k]
			default:
				var ok bool
				if kw != nil {
					v, ok = kw.Get(field)
				}
				if !ok {
					r.fail(n, "format key %s not found", quotePy(field))
				}
			}
			b.WriteString(str(v))
			r.checkString(n, b.Len())
		case c == '}':
			r.fail(n, "single '}' encountered in format string")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
