package jinja

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// filterArgs evaluates a filter's arguments.
func (r *renderer) filterArgs(e *filterExpr, f *frame) ([]Value, *Dict) {
	args := make([]Value, len(e.args))
	for i, a := range e.args {
		args[i] = r.eval(a, f)
	}
	var kw *Dict
	if len(e.kwargs) > 0 {
		kw = NewDict()
		for _, k := range e.kwargs {
			kw.Set(k.name, r.eval(k.value, f))
		}
	}
	return args, kw
}

// applyFilter applies the builtin filter e names to v.
func (r *renderer) applyFilter(e *filterExpr, v Value, f *frame) Value {
	r.step(e)
	args, kw := r.filterArgs(e, f)
	return r.filter(e, e.name, v, args, kw)
}

func (r *renderer) filter(n node, name string, v Value, args []Value, kw *Dict) Value {
	arg := func(i int, key string, def Value) Value { return argument(args, kw, i, key, def) }
	switch name {
	case "safe", "string":
		// safe makes Markup, a string, of whatever it gets.
		return str(v)
	case "tojson":
		return r.tojsonFilter(n, v, args, kw)
	case "length", "count":
		switch x := v.(type) {
		case *lazySeq:
			r.fail(n, "object of type '%s' has no len()", x.kind)
		case string:
			return int64(runeLen(x))
		case *List:
			return int64(len(x.Items))
		case *Dict:
			return int64(x.Len())
		case Undefined:
			return int64(0)
		}
		r.fail(n, "object of type '%s' has no len()", typeName(v))
	case "default", "d":
		def := arg(0, "default_value", "")
		if _, undefined := v.(Undefined); undefined || (truthy(arg(1, "boolean", false)) && !truthy(v)) {
			return def
		}
		return v
	case "trim":
		return r.stripChars(n, r.textArg(n, v), arg(0, "chars", nil), true, true)
	case "upper":
		return pyUpper(r.textArg(n, v))
	case "lower":
		return pyLower(r.textArg(n, v))
	case "capitalize":
		return pyCapitalize(r.textArg(n, v))
	case "title":
		return jinjaTitle(r.textArg(n, v))
	case "replace":
		s := r.textArg(n, v)
		old := r.stringArg(n, arg(0, "old", nil), "replace old")
		new := r.stringArg(n, arg(1, "new", nil), "replace new")
		count := arg(2, "count", nil)
		c := int64(-1)
		if count != nil {
			c = r.intArg(n, count, "count")
		}
		return r.replace(n, s, old, new, c)
	case "indent":
		return r.indent(n, r.stringArg(n, v, "indent's value"), arg(0, "width", int64(4)), truthy(arg(1, "first", false)), truthy(arg(2, "blank", false)))
	case "center":
		width := int(r.intArg(n, arg(0, "width", int64(80)), "width"))
		r.checkString(n, width)
		return pad(r.textArg(n, v), width, " ", "center")
	case "truncate":
		if _, isString := v.(string); !isString {
			// Python checks the length first: a short list comes back as is.
			size := r.filter(n, "length", v, nil, nil).(int64)
			length := r.intArg(n, arg(0, "length", int64(255)), "length")
			leeway := r.intArg(n, arg(3, "leeway", int64(5)), "leeway")
			if size <= length+leeway {
				return v
			}
		}
		return r.truncate(n, r.stringArg(n, v, "truncate's value"), args, kw)
	case "wordcount":
		return int64(len(strings.FieldsFunc(r.textArg(n, v), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '_' })))
	case "escape", "e", "forceescape":
		return htmlEscape(str(v))
	case "format":
		s := r.textArg(n, v)
		if kw != nil && kw.Len() > 0 {
			return r.percentFormat(n, s, kw)
		}
		return r.percentFormat(n, s, &List{Items: args, Tuple: true})
	case "first":
		if g, ok := v.(*lazySeq); ok {
			if it, ok := g.next(); ok {
				return it
			}
			return Undefined{name: "No first item, sequence was empty."}
		}
		items := r.iterate(n, v)
		if len(items) == 0 {
			return Undefined{name: "No first item, sequence was empty."}
		}
		return items[0]
	case "last":
		if g, ok := v.(*lazySeq); ok {
			r.fail(n, "'%s' object is not reversible", g.kind)
		}
		items := r.iterate(n, v)
		if len(items) == 0 {
			return Undefined{name: "No last item, sequence was empty."}
		}
		return items[len(items)-1]
	case "list":
		return &List{Items: append([]Value{}, r.iterate(n, v)...)}
	case "reverse":
		if s, ok := v.(string); ok {
			rs := []rune(s)
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			return string(rs)
		}
		reversed := func() []Value {
			items := r.iterate(n, v)
			out := make([]Value, len(items))
			for i, it := range items {
				out[len(items)-1-i] = it
			}
			return out
		}
		switch v.(type) {
		case *List, *Dict, Undefined:
			// Python's reversed(): an iterator, true even when empty.
			if _, isList := v.(*List); isList {
				return &lazySeq{kind: "list_reverseiterator", produce: reversed}
			}
			return &lazySeq{kind: "reversed", produce: reversed}
		}
		return &List{Items: reversed()}
	case "join":
		return r.join(n, v, arg(0, "d", ""), arg(1, "attribute", nil))
	case "items":
		return generator("do_items", func() []Value {
			switch d := v.(type) {
			case *Dict:
				return dictMethod(n, d, "items")(r, nil, nil).(*List).Items
			case Undefined:
				return nil
			}
			r.fail(n, "can only get item pairs from a mapping")
			return nil
		})
	case "dictsort":
		return r.dictsort(n, v, truthy(arg(0, "case_sensitive", false)), arg(1, "by", "key"), truthy(arg(2, "reverse", false)))
	case "sort":
		items := append([]Value{}, r.iterate(n, v)...)
		key := r.sortKey(n, truthy(arg(1, "case_sensitive", false)), arg(2, "attribute", nil))
		if err := sortValues(items, key, truthy(arg(0, "reverse", false))); err != nil {
			r.fail(n, "%s", err.Error())
		}
		return &List{Items: items}
	case "unique":
		key := r.sortKey(n, truthy(arg(0, "case_sensitive", false)), arg(1, "attribute", nil))
		return generator("do_unique", func() []Value {
			seen := map[string]bool{}
			var out []Value
			for _, it := range r.iterate(n, v) {
				h, ok := hashKey(key(it))
				if !ok {
					r.fail(n, "unhashable type: '%s'", typeName(key(it)))
				}
				if !seen[h] {
					seen[h] = true
					out = append(out, it)
				}
			}
			return out
		})
	case "min", "max":
		items := r.iterate(n, v)
		if len(items) == 0 {
			return Undefined{name: "No aggregated item, sequence was empty."}
		}
		key := r.sortKey(n, truthy(arg(0, "case_sensitive", false)), arg(1, "attribute", nil))
		best := items[0]
		for _, it := range items[1:] {
			c, ok := compare(key(it), key(best))
			if !ok {
				r.fail(n, "'<' not supported between instances of '%s' and '%s'", typeName(key(it)), typeName(key(best)))
			}
			if (name == "min" && c < 0) || (name == "max" && c > 0) {
				best = it
			}
		}
		return best
	case "sum":
		attr := arg(0, "attribute", nil)
		var total Value = arg(1, "start", int64(0))
		plus := &binaryExpr{at: at{n.offset()}, op: "+"}
		for _, it := range r.iterate(n, v) {
			if attr != nil {
				it = r.attributePath(n, it, attr)
			}
			total = r.binary(plus, total, it)
		}
		return total
	case "map":
		return r.mapFilter(n, v, args, kw)
	case "select", "reject":
		return r.selectFilter(n, v, args, name == "select", false)
	case "selectattr", "rejectattr":
		return r.selectFilter(n, v, args, name == "selectattr", true)
	case "batch":
		size := int(r.intArg(n, arg(0, "linecount", nil), "linecount"))
		if size <= 0 {
			r.fail(n, "batch size must be positive")
		}
		fill := arg(1, "fill_with", nil)
		return generator("do_batch", func() []Value {
			items := r.iterate(n, v)
			var out []Value
			for i := 0; i < len(items); i += size {
				end := min(i+size, len(items))
				row := append([]Value{}, items[i:end]...)
				for fill != nil && len(row) < size {
					row = append(row, fill)
				}
				out = append(out, &List{Items: row})
			}
			return out
		})
	case "attr":
		return r.getattr(n, v, r.stringArg(n, arg(0, "name", nil), "attribute name"))
	case "abs":
		r.operandError(n, v)
		i, fl, isFloat, ok := number(v)
		if !ok {
			r.fail(n, "bad operand type for abs(): '%s'", typeName(v))
		}
		if isFloat {
			return math.Abs(fl)
		}
		return absInt(i)
	case "int":
		r.operandError(n, v)
		return r.toInt(n, v, arg(0, "default", int64(0)), arg(1, "base", int64(10)))
	case "float":
		r.operandError(n, v)
		return toFloat(v, arg(0, "default", 0.0))
	case "round":
		r.operandError(n, v)
		return r.round(n, v, arg(0, "precision", int64(0)), arg(1, "method", "common"))
	case "bool":
		return truthy(v)
	}
	r.fail(n, "no filter named '%s'", name)
	return nil
}

// textArg is the string a string filter works on: Python's str() of the value.
func (r *renderer) textArg(n node, v Value) string {
	if s, ok := v.(string); ok {
		return s
	}
	return str(v)
}

func (r *renderer) tojsonFilter(n node, v Value, args []Value, kw *Dict) Value {
	o := jsonOptions{maxOutputSize: r.limits.MaxOutputBytes}
	arg := func(key string) Value {
		if kw == nil {
			return nil
		}
		v, _ := kw.Get(key)
		return v
	}
	ind := arg("indent")
	if len(args) > 0 {
		ind = args[0]
	}
	switch x := ind.(type) {
	case nil:
	case int64:
		o.hasIndent = true
		if x > 0 {
			r.checkString(n, int(x))
			o.indent = strings.Repeat(" ", int(x))
		}
	case string:
		o.hasIndent = true
		o.indent = x
	default:
		r.fail(n, "tojson indent must be an integer or string")
	}
	o.ensureASCII = truthy(arg("ensure_ascii"))
	o.sortKeys = truthy(arg("sort_keys"))
	if seps, ok := arg("separators").(*List); ok {
		if len(seps.Items) != 2 {
			r.fail(n, "separators must be a pair of strings")
		}
		o.itemSep = r.stringArg(n, seps.Items[0], "item separator")
		o.keySep = r.stringArg(n, seps.Items[1], "key separator")
	}
	s, err := toJSON(v, o)
	if err == errJSONTooLarge {
		r.checkString(n, r.limits.MaxOutputBytes+1)
	}
	if err != nil {
		r.fail(n, "%s", err.Error())
	}
	return s
}

// indent is Jinja's indent filter, line by line as it does: the text gets
// a "\n" appended, is split with str.splitlines, the lines after the first
// are indented (empty ones only with blank), and the first one with first.
func (r *renderer) indent(n node, s string, width Value, first, blank bool) string {
	var ind string
	switch w := width.(type) {
	case string:
		ind = w
	default:
		k := r.intArg(n, w, "width")
		if k > 0 {
			r.checkString(n, int(k))
			ind = strings.Repeat(" ", int(k))
		}
	}
	lines := splitLines(s+"\n", false)
	r.checkString(n, len(s)+(len(lines)+1)*len(ind))
	var b strings.Builder
	if first {
		b.WriteString(ind)
	}
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
			if blank || l != "" {
				b.WriteString(ind)
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

func (r *renderer) truncate(n node, s string, args []Value, kw *Dict) string {
	length := int(r.intArg(n, argument(args, kw, 0, "length", int64(255)), "length"))
	killwords := truthy(argument(args, kw, 1, "killwords", false))
	end := r.stringArg(n, argument(args, kw, 2, "end", "..."), "end")
	leeway := int(r.intArg(n, argument(args, kw, 3, "leeway", int64(5)), "leeway"))
	rs := []rune(s)
	if len(rs) <= length+leeway {
		return s
	}
	cut := length - runeLen(end)
	if cut < 0 {
		cut = 0
	}
	if killwords {
		return string(rs[:cut]) + end
	}
	head := string(rs[:cut])
	if i := strings.LastIndex(head, " "); i >= 0 {
		head = head[:i]
	}
	return head + end
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// jinjaTitle is the title filter: words start after "-", whitespace and
// opening brackets, unlike str.title.
func jinjaTitle(s string) string {
	var b strings.Builder
	start := true
	for _, c := range s {
		if IsSpace(c) || strings.ContainsRune("-({[<", c) {
			b.WriteRune(c)
			start = true
			continue
		}
		if start {
			b.WriteRune(unicode.ToTitle(c))
		} else {
			b.WriteRune(unicode.ToLower(c))
		}
		start = false
	}
	return b.String()
}

func (r *renderer) join(n node, v, sep, attr Value) string {
	d := r.textArg(n, sep)
	var b strings.Builder
	for i, it := range r.iterate(n, v) {
		if attr != nil {
			it = r.attributePath(n, it, attr)
		}
		if i > 0 {
			b.WriteString(d)
		}
		b.WriteString(str(it))
		r.checkString(n, b.Len())
	}
	return b.String()
}

func (r *renderer) toInt(n node, v, def, base Value) Value {
	switch x := v.(type) {
	case int64, bigInt:
		return x
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= 1<<63 {
			return def
		}
		return int64(x)
	case string:
		b := int(r.intArg(n, base, "base"))
		s := strings.ReplaceAll(strings.TrimFunc(x, IsSpace), "_", "")
		if b == 16 || b == 8 || b == 2 {
			lower := strings.ToLower(s)
			for _, p := range []string{"0x", "0o", "0b"} {
				lower = strings.TrimPrefix(lower, p)
			}
			s = lower
		}
		if i, err := strconv.ParseInt(s, b, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && math.Abs(f) < 1<<63 {
			return int64(f)
		}
	}
	return def
}

func toFloat(v, def Value) Value {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case bool:
		if x {
			return 1.0
		}
		return 0.0
	case string:
		if f, err := strconv.ParseFloat(strings.TrimFunc(x, IsSpace), 64); err == nil {
			return f
		}
	}
	return def
}

// round is Jinja's round filter: Python's round() for "common" (correctly
// rounded to the nearest decimal, ties to even; an int stays an int),
// math.ceil / math.floor of the scaled value otherwise.
func (r *renderer) round(n node, v, precision, method Value) Value {
	i, f, isFloat, ok := number(v)
	if !ok {
		r.fail(n, "round filter needs a number, not %s", typeName(v))
	}
	digits := r.intArg(n, precision, "precision")
	p := float64(digits)
	scale := math.Pow(10, p)
	switch method {
	case "common":
		if !isFloat {
			if digits >= 0 {
				return i
			}
			return int64(math.RoundToEven(float64(i)/math.Pow(10, -p)) * math.Pow(10, -p))
		}
		if digits >= 0 && digits < 300 && !math.IsInf(f, 0) && !math.IsNaN(f) {
			rounded, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', int(digits), 64), 64)
			return rounded
		}
		return math.RoundToEven(f*scale) / scale
	case "ceil":
		return math.Ceil(f*scale) / scale
	case "floor":
		return math.Floor(f*scale) / scale
	}
	r.fail(n, "method must be common, ceil or floor")
	return nil
}
