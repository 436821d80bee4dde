package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

func (r *renderer) builtins() map[string]Value {
	return map[string]Value{
		"range":           &Func{name: "range", fn: rangeFunc},
		"namespace":       &Func{name: "namespace", fn: namespaceFunc},
		"dict":            &Func{name: "dict", fn: dictFunc},
		"raise_exception": &Func{name: "raise_exception", fn: raiseException},
		"strftime_now":    &Func{name: "strftime_now", fn: strftimeNow},
	}
}

func rangeFunc(r *renderer, callNode node, args []Value, _ *Dict) Value {
	ints := make([]int64, len(args))
	for i, a := range args {
		ints[i] = r.intArg(callNode, a, "range() argument")
	}
	var start, stop, step int64 = 0, 0, 1
	switch len(ints) {
	case 1:
		stop = ints[0]
	case 2:
		start, stop = ints[0], ints[1]
	case 3:
		start, stop, step = ints[0], ints[1], ints[2]
	default:
		r.fail(callNode, "range expected 1 to 3 arguments, got %d", len(ints))
	}
	if step == 0 {
		r.fail(callNode, "range() arg 3 must not be zero")
	}
	var count int64
	if step > 0 && stop > start {
		count = (stop - start + step - 1) / step
	} else if step < 0 && start > stop {
		count = (start - stop - step - 1) / -step
	}
	if count > int64(r.limits.MaxItems) || count < 0 {
		r.checkItems(callNode, r.limits.MaxItems+1)
	}
	items := make([]Value, count)
	for i := range items {
		items[i] = start + int64(i)*step
	}
	view := fmt.Sprintf("range(%d, %d)", start, stop)
	if step != 1 {
		view = fmt.Sprintf("range(%d, %d, %d)", start, stop, step)
	}
	return &List{Items: items, view: view}
}

// namespaceFunc is namespace(mapping_or_pairs?, **attrs).
func namespaceFunc(r *renderer, callNode node, args []Value, kw *Dict) Value {
	d := dictFunc(r, callNode, args, kw).(*Dict)
	return &Namespace{attrs: d}
}

func dictFunc(r *renderer, callNode node, args []Value, kw *Dict) Value {
	d := NewDict()
	if len(args) > 1 {
		r.fail(callNode, "expected at most 1 positional argument, got %d", len(args))
	}
	if len(args) == 1 {
		switch src := args[0].(type) {
		case *Dict:
			for _, k := range src.keys {
				d.Set(k, src.m[k])
			}
		case *List:
			for _, p := range src.Items {
				pair, ok := p.(*List)
				if !ok || len(pair.Items) != 2 {
					r.fail(callNode, "dictionary update sequence element has wrong length; 2 is required")
				}
				k, ok := pair.Items[0].(string)
				if !ok {
					r.fail(callNode, "dict keys must be strings here")
				}
				d.Set(k, pair.Items[1])
			}
		default:
			r.fail(callNode, "'%s' object is not iterable", typeName(src))
		}
	}
	if kw != nil {
		for _, k := range kw.keys {
			d.Set(k, kw.m[k])
		}
	}
	return d
}

func raiseException(_ *renderer, _ node, args []Value, _ *Dict) Value {
	msg := ""
	if len(args) > 0 {
		msg = str(args[0])
	}
	panic(failure{&RaiseError{Message: msg}})
}

func strftimeNow(r *renderer, callNode node, args []Value, _ *Dict) Value {
	if len(args) != 1 {
		r.fail(callNode, "strftime_now takes exactly one argument")
	}
	return strftime(r.now(), r.stringArg(callNode, args[0], "format"))
}

// strftime formats t as Python's datetime.strftime does on glibc, including
// the "%-d" no-padding forms chat templates use.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		noPad := false
		if format[i] == '-' && i+1 < len(format) {
			noPad = true
			i++
		}
		num := func(v, width int) {
			if noPad {
				b.WriteString(strconv.Itoa(v))
				return
			}
			fmt.Fprintf(&b, "%0*d", width, v)
		}
		switch format[i] {
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'y':
			num(t.Year()%100, 2)
		case 'm':
			num(int(t.Month()), 2)
		case 'd':
			num(t.Day(), 2)
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'j':
			num(t.YearDay(), 3)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			if noPad {
				b.WriteByte('-')
			}
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
