package jinja

import (
	"fmt"
	"strings"
)

type control uint8

const (
	ctlNone control = iota
	ctlBreak
	ctlContinue
)

// exec renders statements into b. Frames follow Python Jinja's scoping: a
// for-loop iteration, a macro call and a with block get a frame of their
// own, so "set" inside them is gone after; "if" shares its enclosing frame.
func (r *renderer) exec(body []node, f *frame, b *strings.Builder) control {
	for _, n := range body {
		r.step(n)
		switch n := n.(type) {
		case *dataNode:
			r.write(n, b, n.text)
		case *printNode:
			r.write(n, b, str(r.eval(n.x, f)))
		case *ifNode:
			branch := n.else_
			if truthy(r.eval(n.cond, f)) {
				branch = n.body
			}
			if ctl := r.exec(branch, f, b); ctl != ctlNone {
				return ctl
			}
		case *forNode:
			r.execFor(n, f, b)
		case *setNode:
			r.execSet(n, f)
		case *macroNode:
			f.vars[n.name] = r.macro(n, n.name, n.params, n.body, f)
		case *callBlockNode:
			r.execCallBlock(n, f, b)
		case *filterBlockNode:
			var inner strings.Builder
			if ctl := r.exec(n.body, f, &inner); ctl != ctlNone {
				return ctl
			}
			var v Value = inner.String()
			for _, flt := range n.filters {
				v = r.applyFilter(flt, v, f)
			}
			r.write(n, b, str(v))
		case *withNode:
			inner := f.child()
			for i, name := range n.names {
				inner.vars[name] = r.eval(n.values[i], f)
			}
			if ctl := r.exec(n.body, inner, b); ctl != ctlNone {
				return ctl
			}
		case *breakNode:
			return ctlBreak
		case *continueNode:
			return ctlContinue
		default:
			r.fail(n, "unexpected statement")
		}
	}
	return ctlNone
}

// iterate lists what a for loop (or a filter) walks over: list items, dict
// keys, string characters; an undefined value walks over nothing.
func (r *renderer) iterate(n node, v Value) []Value {
	switch v := v.(type) {
	case *List:
		return v.Items
	case *Dict:
		items := make([]Value, len(v.keys))
		for i, k := range v.keys {
			items[i] = k
		}
		return items
	case string:
		items := make([]Value, 0, len(v))
		for _, c := range v {
			items = append(items, string(c))
		}
		return items
	case *lazySeq:
		return v.rest()
	case Undefined:
		return nil
	}
	r.fail(n, "'%s' object is not iterable", typeName(v))
	return nil
}

func (r *renderer) bindTargets(n node, f *frame, names []string, tuple bool, v Value) {
	if !tuple {
		f.vars[names[0]] = v
		return
	}
	items := r.iterate(n, v)
	if len(items) != len(names) {
		if len(items) < len(names) {
			r.fail(n, "not enough values to unpack (expected %d, got %d)", len(names), len(items))
		}
		r.fail(n, "too many values to unpack (expected %d)", len(names))
	}
	for i, name := range names {
		f.vars[name] = items[i]
	}
}

func (r *renderer) execFor(n *forNode, f *frame, b *strings.Builder) {
	items := r.iterate(n.iter, r.eval(n.iter, f))
	if n.cond != nil {
		var kept []Value
		for _, it := range items {
			r.step(n)
			cf := f.child()
			r.bindTargets(n, cf, n.targets, n.tuple, it)
			if truthy(r.eval(n.cond, cf)) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		r.exec(n.else_, f, b)
		return
	}
	length := int64(len(items))
	for i, it := range items {
		r.step(n)
		lf := f.child()
		r.bindTargets(n, lf, n.targets, n.tuple, it)
		loop := NewDict()
		idx := int64(i)
		loop.Set("index", idx+1)
		loop.Set("index0", idx)
		loop.Set("revindex", length-idx)
		loop.Set("revindex0", length-idx-1)
		loop.Set("first", i == 0)
		loop.Set("last", idx == length-1)
		loop.Set("length", length)
		loop.Set("depth", int64(1))
		loop.Set("depth0", int64(0))
		if i > 0 {
			loop.Set("previtem", items[i-1])
		} else {
			loop.Set("previtem", Undefined{name: "there is no previous item"})
		}
		if idx < length-1 {
			loop.Set("nextitem", items[i+1])
		} else {
			loop.Set("nextitem", Undefined{name: "there is no next item"})
		}
		loop.Set("cycle", &Func{name: "loop.cycle", fn: func(r *renderer, _ node, args []Value, _ *Dict) Value {
			if len(args) == 0 {
				r.fail(n, "no items for cycling given")
			}
			return args[i%len(args)]
		}})
		loop.display = fmt.Sprintf("<LoopContext %d/%d>", i+1, length)
		lf.vars["loop"] = loop
		if r.exec(n.body, lf, b) == ctlBreak {
			break
		}
	}
}

func (r *renderer) execSet(n *setNode, f *frame) {
	var v Value
	if n.value != nil {
		v = r.eval(n.value, f)
	} else {
		var inner strings.Builder
		if ctl := r.exec(n.body, f, &inner); ctl != ctlNone {
			r.fail(n, "'break' or 'continue' inside a set block")
		}
		v = inner.String()
		for _, flt := range n.filters {
			v = r.applyFilter(flt, v, f)
		}
	}
	if n.attr != "" {
		ns, ok := r.lookup(f, n.targets[0]).(*Namespace)
		if !ok {
			r.fail(n, "cannot assign attribute on non-namespace object")
		}
		ns.attrs.Set(n.attr, v)
		return
	}
	r.bindTargets(n, f, n.targets, n.tuple, v)
}

// macro makes the callable a macro or a call block's caller is. Arguments
// not given and without default are undefined, as in Jinja; extra ones land
// in varargs and kwargs.
func (r *renderer) macro(blame node, name string, params []param, body []node, def *frame) *Func {
	return &Func{name: name, fn: func(r *renderer, _ node, args []Value, kwargs *Dict) Value {
		if r.depth >= r.limits.MaxCallDepth {
			r.failLimit(blame, fmt.Sprintf("macro calls nested more than %d deep", r.limits.MaxCallDepth))
		}
		r.depth++
		defer func() { r.depth-- }()
		mf := def.child()
		var extraKw *Dict
		if kwargs != nil {
			extraKw = kwargs.copyDict()
		} else {
			extraKw = NewDict()
		}
		for i, p := range params {
			switch {
			case i < len(args):
				mf.vars[p.name] = args[i]
			default:
				if v, ok := extraKw.Get(p.name); ok {
					mf.vars[p.name] = v
					extraKw.delete(p.name)
				} else if p.def != nil {
					mf.vars[p.name] = r.eval(p.def, mf)
				} else {
					mf.vars[p.name] = Undefined{name: "parameter '" + p.name + "' was not provided"}
				}
			}
		}
		if c, ok := extraKw.Get("caller"); ok {
			mf.vars["caller"] = c
			extraKw.delete("caller")
		}
		var rest []Value
		if len(args) > len(params) {
			rest = args[len(params):]
		}
		mf.vars["varargs"] = &List{Items: rest, Tuple: true}
		mf.vars["kwargs"] = extraKw
		var b strings.Builder
		if ctl := r.exec(body, mf, &b); ctl != ctlNone {
			r.fail(blame, "'break' or 'continue' outside of a loop")
		}
		return b.String()
	}}
}

func (d *Dict) delete(k string) {
	if _, ok := d.m[k]; !ok {
		return
	}
	delete(d.m, k)
	for i, key := range d.keys {
		if key == k {
			d.keys = append(d.keys[:i:i], d.keys[i+1:]...)
			break
		}
	}
}

func (r *renderer) execCallBlock(n *callBlockNode, f *frame, b *strings.Builder) {
	caller := r.macro(n, "caller", n.params, n.body, f)
	fn := r.eval(n.call.fn, f)
	args, kwargs := r.callArgs(n.call, f)
	if kwargs == nil {
		kwargs = NewDict()
	}
	kwargs.Set("caller", caller)
	r.write(n, b, str(r.callValue(n.call, fn, args, kwargs)))
}
