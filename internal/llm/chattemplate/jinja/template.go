package jinja

import (
	"fmt"
	"strings"
	"time"
)

// Limits bound what one render may do, so that a hostile or broken template
// fails with an error instead of hanging or exhausting memory. A zero field
// takes its default.
type Limits struct {
	// MaxOutputBytes bounds the rendered text and every string built on the
	// way (default 8 MiB).
	MaxOutputBytes int
	// MaxSteps bounds the statements and expressions evaluated, loop
	// iterations included (default 20,000,000).
	MaxSteps int
	// MaxCallDepth bounds nested macro calls (default 64).
	MaxCallDepth int
	// MaxItems bounds the length of any list built: range(), list
	// concatenation and repetition (default 1,000,000).
	MaxItems int
}

// setDefaults fills the zero limits with the defaults.
func (l *Limits) setDefaults() {
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = 8 << 20
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = 20_000_000
	}
	if l.MaxCallDepth <= 0 {
		l.MaxCallDepth = 64
	}
	if l.MaxItems <= 0 {
		l.MaxItems = 1_000_000
	}
}

// Template is a parsed template, safe for concurrent renders.
type Template struct {
	src  string // normalized source, for error positions
	body []node
}

// Parse parses a template with the whitespace handling Hugging Face's chat
// template environment uses (trim_blocks and lstrip_blocks). Errors are
// *SyntaxError, naming the line and column.
func Parse(src string) (t *Template, err error) {
	src = normalizeSource(src)
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failure)
			if !ok {
				panic(r)
			}
			t, err = nil, f.err
		}
	}()
	return &Template{src: src, body: parse(src)}, nil
}

// Options are the per-render settings besides the variables.
type Options struct {
	Limits Limits
	// Now is the clock strftime_now reads (default time.Now).
	Now func() time.Time
}

// Execute renders the template with the given variables. The builtins
// (range, namespace, dict, raise_exception, strftime_now, true/false/none)
// are there unless a variable of the same name replaces them. Errors are
// *RenderError, or *RaiseError when the template called raise_exception.
func (t *Template) Execute(vars map[string]Value, opts Options) (out string, err error) {
	limits := opts.Limits
	limits.setDefaults()
	r := &renderer{t: t, limits: limits, now: opts.Now}
	if r.now == nil {
		r.now = time.Now
	}
	r.globals = r.builtins()
	for k, v := range vars {
		r.globals[k] = v
	}
	defer func() {
		if rec := recover(); rec != nil {
			f, ok := rec.(failure)
			if !ok {
				panic(rec)
			}
			out, err = "", f.err
		}
	}()
	var b strings.Builder
	root := &frame{vars: map[string]Value{}}
	if ctl := r.exec(t.body, root, &b); ctl != ctlNone {
		r.fail(t.body[0], "'break' or 'continue' outside of a loop")
	}
	return b.String(), nil
}

type frame struct {
	vars   map[string]Value
	parent *frame
}

func (f *frame) child() *frame { return &frame{vars: map[string]Value{}, parent: f} }

type renderer struct {
	t       *Template
	limits  Limits
	globals map[string]Value
	now     func() time.Time
	steps   int
	depth   int
}

func (r *renderer) lookup(f *frame, name string) Value {
	for ; f != nil; f = f.parent {
		if v, ok := f.vars[name]; ok {
			return v
		}
	}
	if v, ok := r.globals[name]; ok {
		return v
	}
	return Undefined{name: "'" + name + "' is undefined"}
}

func (r *renderer) fail(n node, format string, args ...any) {
	panic(failure{&RenderError{Pos: position(r.t.src, n.offset()), Msg: fmt.Sprintf(format, args...)}})
}

func (r *renderer) failLimit(n node, what string) {
	panic(failure{&RenderError{Pos: position(r.t.src, n.offset()), Msg: what, Err: ErrLimit}})
}

func (r *renderer) step(n node) {
	r.steps++
	if r.steps > r.limits.MaxSteps {
		r.failLimit(n, fmt.Sprintf("template ran more than %d steps", r.limits.MaxSteps))
	}
}

// checkString fails when a string built by the template is over the output limit.
func (r *renderer) checkString(n node, size int) {
	if size > r.limits.MaxOutputBytes {
		r.failLimit(n, fmt.Sprintf("string of %d bytes is over the limit of %d", size, r.limits.MaxOutputBytes))
	}
}

func (r *renderer) checkItems(n node, count int) {
	if count > r.limits.MaxItems {
		r.failLimit(n, fmt.Sprintf("list of %d items is over the limit of %d", count, r.limits.MaxItems))
	}
}

func (r *renderer) write(n node, b *strings.Builder, s string) {
	r.checkString(n, b.Len()+len(s))
	b.WriteString(s)
}

// undefinedError fails on the use of an undefined value, as Jinja's
// Undefined does for anything but printing, testing and iterating.
func (r *renderer) undefinedError(n node, u Undefined) {
	msg := u.name
	if msg == "" {
		msg = "value is undefined"
	}
	r.fail(n, "%s", msg)
}
