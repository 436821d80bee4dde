package jinja

import (
	"strconv"
	"strings"
)

// attributePath resolves Jinja's "a.b.0" attribute arguments.
func (r *renderer) attributePath(n node, v, attr Value) Value {
	if i, ok := attr.(int64); ok {
		return r.getitem(n, v, i)
	}
	for _, part := range strings.Split(r.stringArg(n, attr, "attribute"), ".") {
		if k, err := strconv.ParseInt(part, 10, 64); err == nil {
			v = r.getitem(n, v, k)
		} else {
			v = r.getitem(n, v, part)
		}
	}
	return v
}

// sortKey is what sort, unique, min and max compare: the attribute, lower
// cased unless case_sensitive.
func (r *renderer) sortKey(n node, caseSensitive bool, attr Value) func(Value) Value {
	return func(v Value) Value {
		if attr != nil {
			v = r.attributePath(n, v, attr)
		}
		if s, ok := v.(string); ok && !caseSensitive {
			return pyLower(s)
		}
		return v
	}
}

func (r *renderer) dictsort(n node, v Value, caseSensitive bool, by Value, reverse bool) Value {
	d, ok := v.(*Dict)
	if !ok {
		r.fail(n, "dictsort filter only works on mappings")
	}
	pos := 0
	switch by {
	case "key":
	case "value":
		pos = 1
	default:
		r.fail(n, "You can only sort by either \"key\" or \"value\"")
	}
	items := dictMethod(n, d, "items")(r, nil, nil).(*List).Items
	lower := r.sortKey(n, caseSensitive, nil)
	key := func(it Value) Value { return lower(it.(*List).Items[pos]) }
	if err := sortValues(items, key, reverse); err != nil {
		r.fail(n, "%s", err.Error())
	}
	return &List{Items: items}
}

func (r *renderer) mapFilter(n node, v Value, args []Value, kw *Dict) Value {
	if !truthy(v) {
		// Jinja's map starts with "if value:": nothing to map, nothing checked.
		return generator("sync_do_map", func() []Value { return nil })
	}
	if attr, ok := kwGet(kw, "attribute"); ok && len(args) == 0 {
		def, hasDef := kwGet(kw, "default")
		return generator("sync_do_map", func() []Value {
			items := r.iterate(n, v)
			out := make([]Value, len(items))
			for i, it := range items {
				x := r.attributePath(n, it, attr)
				if _, undefined := x.(Undefined); undefined && hasDef {
					x = def
				}
				out[i] = x
			}
			return out
		})
	}
	if len(args) == 0 {
		r.fail(n, "map requires a filter name or attribute")
	}
	name := r.stringArg(n, args[0], "filter name")
	return generator("sync_do_map", func() []Value {
		items := r.iterate(n, v)
		out := make([]Value, len(items))
		for i, it := range items {
			r.step(n)
			out[i] = r.filter(n, name, it, args[1:], kw)
		}
		return out
	})
}

func kwGet(kw *Dict, k string) (Value, bool) {
	if kw == nil {
		return nil, false
	}
	return kw.Get(k)
}

func (r *renderer) selectFilter(n node, v Value, args []Value, keep, byAttr bool) Value {
	if !truthy(v) {
		// Jinja's select_or_reject starts with "if value:".
		return generator("select_or_reject", func() []Value { return nil })
	}
	var attr Value
	if byAttr {
		if len(args) == 0 {
			r.fail(n, "missing attribute for selectattr/rejectattr")
		}
		attr, args = args[0], args[1:]
	}
	return generator("select_or_reject", func() []Value {
		var out []Value
		for _, it := range r.iterate(n, v) {
			r.step(n)
			x := it
			if byAttr {
				x = r.attributePath(n, it, attr)
			}
			var ok bool
			if len(args) == 0 {
				ok = truthy(x)
			} else {
				ok = r.test(n, r.stringArg(n, args[0], "test name"), x, args[1:])
			}
			if ok == keep {
				out = append(out, it)
			}
		}
		return out
	})
}
