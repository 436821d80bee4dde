package toolcall

import "strings"

// The parsers of outputs whose shape a constraint forced: tool_choice
// naming a function (the output is that function's arguments) and
// tool_choice "required" (the output is a JSON array of {"name",
// "parameters"} objects).

// Named reads an output that is the arguments of one named function: the
// first delta carries the call's id and name (and no arguments), every
// later piece of text is a fragment of the arguments.
type Named struct {
	name  string
	newID func() string
	begun bool
}

// NewNamed returns a parser for calls of the function name, with ids made
// by newID (NewCallID when nil).
func NewNamed(name string, newID func() string) *Named {
	if newID == nil {
		newID = NewCallID
	}
	return &Named{name: name, newID: newID}
}

// Feed takes the next piece of the model's text. The call opens with its
// first text (a thinking model's reasoning comes first, and may never
// end).
func (n *Named) Feed(text string) Delta {
	var d Delta
	if text == "" {
		return d
	}
	if !n.begun {
		n.begun = true
		d.ToolCalls = append(d.ToolCalls, CallDelta{Index: 0, ID: n.newID(), Name: n.name})
	}
	d.ToolCalls = append(d.ToolCalls, CallDelta{Index: 0, Arguments: text})
	return d
}

// Finish sends nothing more: no text is held back.
func (n *Named) Finish() Delta { return Delta{} }

// ParseNamed is the non-streaming answer for a named function's output:
// one call whose arguments are the whole output (none for no output).
func ParseNamed(name, text string, newID func() string) Result {
	calls, _ := collect(NewNamed(name, newID), text)
	return Result{ToolCalls: calls}
}

// Required reads the output tool_choice "required" constrains: a JSON
// array of {"name": ..., "parameters": {...}} objects, each one call.
type Required struct {
	newID func() string
	text  strings.Builder
	calls []callState
}

// NewRequired returns a parser making ids with newID (NewCallID when nil).
func NewRequired(newID func() string) *Required {
	if newID == nil {
		newID = NewCallID
	}
	return &Required{newID: newID}
}

// Feed takes the next piece of the model's text. A call is sent once its
// name is written and its parameters have begun (or its object closed),
// as the reference server streams them: a call cut off before then is
// never sent, one cut off in its parameters is sent as far as written.
func (r *Required) Feed(text string) Delta {
	r.text.WriteString(text)
	var d Delta
	for i, obj := range arrayObjects(r.text.String()) {
		if i >= len(r.calls) {
			r.calls = append(r.calls, callState{})
		}
		if !r.calls[i].nameSent && !parametersBegun(obj) {
			break
		}
		if !streamCall(i, obj, &r.calls[i], []string{"parameters"}, r.newID, &d.ToolCalls) {
			break
		}
	}
	return d
}

// parametersBegun reports whether a call object's parameters value has
// begun, or the object is closed.
func parametersBegun(obj string) bool {
	members, end, _ := scanObject(obj)
	for _, m := range members {
		if m.key == "parameters" {
			return true
		}
	}
	return end >= 0
}

// Finish sends nothing more: the array's text holds no held-back content.
func (r *Required) Finish() Delta { return Delta{} }

// arrayObjects splits the text of a JSON array of objects into the text
// of each object, the last possibly unfinished.
func arrayObjects(s string) []string {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return nil
	}
	s = s[i+1:]
	var out []string
	for {
		i := skipSpace(s, 0)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
		}
		if i >= len(s) || s[i] != '{' {
			return out
		}
		_, end, ok := scanObject(s[i:])
		if !ok {
			return out
		}
		if end < 0 {
			return append(out, s[i:])
		}
		out = append(out, s[i:i+end])
		s = s[i+end:]
	}
}

// ParseRequired is the non-streaming answer for a "required" output: the
// calls a stream of the same text sends, so that an output cut short
// (finish_reason length) reads alike whole and streamed — a call whose
// parameters were cut off keeps them as far as written, as the reference
// server streams it.
func ParseRequired(text string, newID func() string) Result {
	calls, _ := collect(NewRequired(newID), text)
	return Result{ToolCalls: calls}
}
