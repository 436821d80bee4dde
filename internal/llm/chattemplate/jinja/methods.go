package jinja

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// method returns the bound method name of obj, or nil. Only methods that do
// not modify their object exist, as in the immutable sandbox Hugging Face
// renders chat templates in.
func (r *renderer) method(n node, obj Value, name string) *Func {
	var fn func(r *renderer, args []Value, kwargs *Dict) Value
	switch o := obj.(type) {
	case string:
		fn = r.stringMethod(n, o, name)
	case *Dict:
		fn = dictMethod(n, o, name)
	case *List:
		fn = listMethod(n, o, name)
	}
	if fn == nil {
		return nil
	}
	return &Func{name: name, fn: func(r *renderer, _ node, args []Value, kw *Dict) Value { return fn(r, args, kw) }}
}

// argument reads positional argument i or keyword name, with a default.
func argument(args []Value, kwargs *Dict, i int, name string, def Value) Value {
	if i < len(args) {
		return args[i]
	}
	if kwargs != nil {
		if v, ok := kwargs.Get(name); ok {
			return v
		}
	}
	return def
}

func (r *renderer) stringArg(n node, v Value, what string) string {
	s, ok := v.(string)
	if !ok {
		if u, isU := v.(Undefined); isU {
			r.undefinedError(n, u)
		}
		r.fail(n, "%s must be str, not %s", what, typeName(v))
	}
	return s
}

func (r *renderer) intArg(n node, v Value, what string) int64 {
	i, ok := indexKey(v)
	if !ok {
		r.fail(n, "%s must be an integer, not %s", what, typeName(v))
	}
	return i
}

// stripChars strips with Python's semantics: whitespace when chars is None.
func (r *renderer) stripChars(n node, s string, chars Value, left, right bool) string {
	cut := IsSpace
	if chars != nil {
		if _, isU := chars.(Undefined); !isU {
			set := r.stringArg(n, chars, "strip arg")
			cut = func(c rune) bool { return strings.ContainsRune(set, c) }
		}
	}
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	return s
}

func (r *renderer) stringMethod(n node, s string, name string) func(*renderer, []Value, *Dict) Value {
	switch name {
	case "strip", "lstrip", "rstrip":
		return func(r *renderer, args []Value, kw *Dict) Value {
			return r.stripChars(n, s, argument(args, kw, 0, "chars", nil), name != "rstrip", name != "lstrip")
		}
	case "split", "rsplit":
		return func(r *renderer, args []Value, kw *Dict) Value {
			sep := argument(args, kw, 0, "sep", nil)
			max := r.intArg(n, argument(args, kw, 1, "maxsplit", int64(-1)), "maxsplit")
			var parts []string
			if sep == nil {
				parts = splitWhitespace(s, max, name == "rsplit")
			} else {
				sp := r.stringArg(n, sep, "separator")
				if sp == "" {
					r.fail(n, "empty separator")
				}
				parts = splitSep(s, sp, max, name == "rsplit")
			}
			items := make([]Value, len(parts))
			for i, p := range parts {
				items[i] = p
			}
			return &List{Items: items}
		}
	case "splitlines":
		return func(r *renderer, args []Value, kw *Dict) Value {
			keep := truthy(argument(args, kw, 0, "keepends", false))
			var items []Value
			for _, l := range splitLines(s, keep) {
				items = append(items, l)
			}
			return &List{Items: items}
		}
	case "startswith", "endswith":
		return func(r *renderer, args []Value, kw *Dict) Value {
			if len(args) == 0 {
				r.fail(n, "%s() takes at least 1 argument (0 given)", name)
			}
			has := strings.HasPrefix
			if name == "endswith" {
				has = strings.HasSuffix
			}
			if l, ok := args[0].(*List); ok && l.Tuple {
				for _, it := range l.Items {
					if has(s, r.stringArg(n, it, name+" tuple item")) {
						return true
					}
				}
				return false
			}
			return has(s, r.stringArg(n, args[0], name+" first arg"))
		}
	case "upper":
		return func(*renderer, []Value, *Dict) Value { return pyUpper(s) }
	case "lower":
		return func(*renderer, []Value, *Dict) Value { return pyLower(s) }
	case "title":
		return func(*renderer, []Value, *Dict) Value { return pyTitle(s) }
	case "capitalize":
		return func(*renderer, []Value, *Dict) Value { return pyCapitalize(s) }
	case "swapcase":
		return func(*renderer, []Value, *Dict) Value {
			return strings.Map(func(c rune) rune {
				if unicode.IsUpper(c) {
					return unicode.ToLower(c)
				}
				return unicode.ToUpper(c)
			}, s)
		}
	case "replace":
		return func(r *renderer, args []Value, kw *Dict) Value {
			if len(args) < 2 {
				r.fail(n, "replace() takes at least 2 arguments")
			}
			old, new := r.stringArg(n, args[0], "replace() argument 1"), r.stringArg(n, args[1], "replace() argument 2")
			count := r.intArg(n, argument(args, kw, 2, "count", int64(-1)), "count")
			return r.replace(n, s, old, new, count)
		}
	case "find", "rfind", "index", "rindex", "count":
		return func(r *renderer, args []Value, kw *Dict) Value {
			if len(args) == 0 {
				r.fail(n, "%s() takes at least 1 argument (0 given)", name)
			}
			sub := r.stringArg(n, args[0], name+"() argument")
			switch name {
			case "count":
				if sub == "" {
					return int64(runeLen(s) + 1)
				}
				return int64(strings.Count(s, sub))
			case "find", "index":
				i := strings.Index(s, sub)
				if i < 0 && name == "index" {
					r.fail(n, "substring not found")
				}
				if i < 0 {
					return int64(-1)
				}
				return int64(runeLen(s[:i]))
			default:
				i := strings.LastIndex(s, sub)
				if i < 0 && name == "rindex" {
					r.fail(n, "substring not found")
				}
				if i < 0 {
					return int64(-1)
				}
				return int64(runeLen(s[:i]))
			}
		}
	case "join":
		return func(r *renderer, args []Value, kw *Dict) Value {
			if len(args) != 1 {
				r.fail(n, "join() takes exactly one argument")
			}
			var b strings.Builder
			for i, it := range r.iterate(n, args[0]) {
				if i > 0 {
					b.WriteString(s)
				}
				b.WriteString(r.stringArg(n, it, "sequence item"))
				r.checkString(n, b.Len())
			}
			return b.String()
		}
	case "removeprefix":
		return func(r *renderer, args []Value, kw *Dict) Value {
			return strings.TrimPrefix(s, r.stringArg(n, argument(args, kw, 0, "prefix", nil), "prefix"))
		}
	case "removesuffix":
		return func(r *renderer, args []Value, kw *Dict) Value {
			return strings.TrimSuffix(s, r.stringArg(n, argument(args, kw, 0, "suffix", nil), "suffix"))
		}
	case "isdigit", "isnumeric", "isdecimal", "isalpha", "isalnum", "isspace", "isupper", "islower":
		return func(*renderer, []Value, *Dict) Value { return stringClass(s, name) }
	case "zfill":
		return func(r *renderer, args []Value, kw *Dict) Value {
			width := int(r.intArg(n, argument(args, kw, 0, "width", int64(0)), "width"))
			r.checkString(n, width)
			pad := width - runeLen(s)
			if pad <= 0 {
				return s
			}
			sign := ""
			rest := s
			if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
				sign, rest = s[:1], s[1:]
			}
			return sign + strings.Repeat("0", pad) + rest
		}
	case "center", "ljust", "rjust":
		return func(r *renderer, args []Value, kw *Dict) Value {
			width := int(r.intArg(n, argument(args, kw, 0, "width", int64(0)), "width"))
			fill := r.stringArg(n, argument(args, kw, 1, "fillchar", " "), "fillchar")
			r.checkString(n, width*len(fill))
			return pad(s, width, fill, name)
		}
	case "format":
		return func(r *renderer, args []Value, kw *Dict) Value { return r.strFormat(n, s, args, kw) }
	}
	return nil
}

func pad(s string, width int, fill, how string) string {
	total := width - runeLen(s)
	if total <= 0 || runeLen(fill) != 1 {
		return s
	}
	switch how {
	case "ljust":
		return s + strings.Repeat(fill, total)
	case "rjust":
		return strings.Repeat(fill, total) + s
	}
	// Python's center puts the extra space on the left when width is odd.
	left := total / 2
	if total%2 == 1 && width%2 == 1 {
		left++
	}
	return strings.Repeat(fill, left) + s + strings.Repeat(fill, total-left)
}

func stringClass(s, name string) bool {
	if s == "" {
		return false
	}
	cased := false
	for _, c := range s {
		switch name {
		case "isdigit", "isnumeric", "isdecimal":
			if !unicode.IsDigit(c) {
				return false
			}
		case "isalpha":
			if !unicode.IsLetter(c) {
				return false
			}
		case "isalnum":
			if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
				return false
			}
		case "isspace":
			if !IsSpace(c) {
				return false
			}
		case "isupper":
			if unicode.IsLower(c) {
				return false
			}
			cased = cased || unicode.IsUpper(c)
		case "islower":
			if unicode.IsUpper(c) {
				return false
			}
			cased = cased || unicode.IsLower(c)
		}
	}
	if name == "isupper" || name == "islower" {
		return cased
	}
	return true
}

// pyUpper and pyLower are Python's str.upper and str.lower: full Unicode
// case mappings ("ß" upper-cases to "SS"), which Go's strings package does
// not apply.
func pyUpper(s string) string { return cases.Upper(language.Und).String(s) }

func pyLower(s string) string { return cases.Lower(language.Und).String(s) }

// pyTitle is Python's str.title: a letter after a non-letter is upper-cased,
// every other letter lower-cased.
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, c := range s {
		if prevCased {
			b.WriteRune(unicode.ToLower(c))
		} else {
			b.WriteRune(unicode.ToTitle(c))
		}
		prevCased = unicode.IsLetter(c)
	}
	return b.String()
}

// pyCapitalize is Python's str.capitalize: first character upper, rest lower.
// The first character's length is the bytes it was decoded from: a byte
// that is not UTF-8 decodes as U+FFFD, which is three bytes long.
func pyCapitalize(s string) string {
	if s == "" {
		return s
	}
	c, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToTitle(c)) + pyLower(s[size:])
}

func splitWhitespace(s string, max int64, fromRight bool) []string {
	if max < 0 {
		return strings.FieldsFunc(s, IsSpace)
	}
	// With a maximum, the rest of the string (inner and trailing whitespace
	// kept) is the last part, as Python does.
	var parts []string
	if !fromRight {
		rest := strings.TrimLeftFunc(s, IsSpace)
		for int64(len(parts)) < max && rest != "" {
			i := strings.IndexFunc(rest, IsSpace)
			if i < 0 {
				break
			}
			parts = append(parts, rest[:i])
			rest = strings.TrimLeftFunc(rest[i:], IsSpace)
		}
		if rest != "" {
			parts = append(parts, rest)
		}
		return parts
	}
	rest := strings.TrimRightFunc(s, IsSpace)
	for int64(len(parts)) < max && rest != "" {
		i := strings.LastIndexFunc(rest, IsSpace)
		if i < 0 {
			break
		}
		_, size := utf8.DecodeRuneInString(rest[i:])
		parts = append([]string{rest[i+size:]}, parts...)
		rest = strings.TrimRightFunc(rest[:i], IsSpace)
	}
	if rest != "" {
		parts = append([]string{rest}, parts...)
	}
	return parts
}

func splitSep(s, sep string, max int64, fromRight bool) []string {
	if max < 0 {
		return strings.Split(s, sep)
	}
	if !fromRight {
		return strings.SplitN(s, sep, int(max)+1)
	}
	var parts []string
	rest := s
	for int64(len(parts)) < max {
		i := strings.LastIndex(rest, sep)
		if i < 0 {
			break
		}
		parts = append([]string{rest[i+len(sep):]}, parts...)
		rest = rest[:i]
	}
	return append([]string{rest}, parts...)
}

// splitLines is Python's str.splitlines.
func splitLines(s string, keep bool) []string {
	var lines []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch c {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		default:
			continue
		}
		end := i + 1
		if c == '\r' && i+1 < len(rs) && rs[i+1] == '\n' {
			end = i + 2
		}
		if keep {
			lines = append(lines, string(rs[start:end]))
		} else {
			lines = append(lines, string(rs[start:i]))
		}
		start = end
		i = end - 1
	}
	if start < len(rs) {
		lines = append(lines, string(rs[start:]))
	}
	return lines
}

func (r *renderer) replace(n node, s, old, new string, count int64) string {
	if count < 0 {
		count = -1
	}
	if old != "" && int64(len(new)) > int64(len(old)) {
		occurrences := int64(strings.Count(s, old))
		if count >= 0 && occurrences > count {
			occurrences = count
		}
		r.checkString(n, len(s)+int(occurrences)*(len(new)-len(old)))
	} else if old == "" {
		r.checkString(n, len(s)+(runeLen(s)+1)*len(new))
	}
	return strings.Replace(s, old, new, int(count))
}

func dictMethod(n node, d *Dict, name string) func(*renderer, []Value, *Dict) Value {
	switch name {
	case "items":
		return func(*renderer, []Value, *Dict) Value {
			items := make([]Value, len(d.keys))
			for i, k := range d.keys {
				items[i] = &List{Items: []Value{k, d.m[k]}, Tuple: true}
			}
			return &List{Items: items, view: "dict_items"}
		}
	case "keys":
		return func(*renderer, []Value, *Dict) Value {
			items := make([]Value, len(d.keys))
			for i, k := range d.keys {
				items[i] = k
			}
			return &List{Items: items, view: "dict_keys"}
		}
	case "values":
		return func(*renderer, []Value, *Dict) Value {
			items := make([]Value, len(d.keys))
			for i, k := range d.keys {
				items[i] = d.m[k]
			}
			return &List{Items: items, view: "dict_values"}
		}
	case "get":
		return func(r *renderer, args []Value, kw *Dict) Value {
			if len(args) == 0 {
				r.fail(n, "get expected at least 1 argument, got 0")
			}
			if k, ok := args[0].(string); ok {
				if v, ok := d.m[k]; ok {
					return v
				}
			}
			if len(args) > 1 {
				return args[1]
			}
			return nil
		}
	case "copy":
		return func(*renderer, []Value, *Dict) Value { return d.copyDict() }
	}
	return nil
}

func listMethod(n node, l *List, name string) func(*renderer, []Value, *Dict) Value {
	switch name {
	case "index":
		return func(r *renderer, args []Value, _ *Dict) Value {
			if len(args) == 0 {
				r.fail(n, "index expected at least 1 argument, got 0")
			}
			for i, it := range l.Items {
				if equal(it, args[0]) {
					return int64(i)
				}
			}
			r.fail(n, "%s is not in list", repr(args[0]))
			return nil
		}
	case "count":
		return func(r *renderer, args []Value, _ *Dict) Value {
			if len(args) == 0 {
				r.fail(n, "count() takes exactly one argument (0 given)")
			}
			c := 0
			for _, it := range l.Items {
				if equal(it, args[0]) {
					c++
				}
			}
			return int64(c)
		}
	case "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse":
		return func(r *renderer, _ []Value, _ *Dict) Value {
			r.fail(n, "access to attribute '%s' of '%s' object is unsafe: templates cannot modify lists", name, typeName(l))
			return nil
		}
	}
	return nil
}
