package toolcall

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Call is one parsed tool call.
type Call struct {
	ID        string
	Name      string
	Arguments string // JSON text
}

// CallDelta is one piece of a streamed tool call: the first for an index
// carries ID and Name (the wire's type "function" goes with them), later
// ones fragments of Arguments.
type CallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Delta is what one Feed or Finish lets through.
type Delta struct {
	Content   string
	ToolCalls []CallDelta
}

// Parser reads tool calls out of text as it arrives.
type Parser interface {
	Feed(text string) Delta
	Finish() Delta
}

// NewCallID is the reference server's tool-call id: "chatcmpl-tool-" and
// 32 random hex digits.
func NewCallID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-tool-" + hex.EncodeToString(b[:])
}

// Result is a whole output's content and tool calls. Content is nil when
// the reference server reports it as null.
type Result struct {
	Content   *string
	ToolCalls []Call
}

// collect runs p over text in one piece and gathers what it lets through,
// the non-streaming answer by construction equal to any streaming of it.
func collect(p Parser, text string) ([]Call, string) {
	var calls []Call
	var content strings.Builder
	add := func(d Delta) {
		content.WriteString(d.Content)
		for _, c := range d.ToolCalls {
			for len(calls) <= c.Index {
				calls = append(calls, Call{})
			}
			if c.Name != "" {
				calls[c.Index].ID, calls[c.Index].Name = c.ID, c.Name
			}
			calls[c.Index].Arguments += c.Arguments
		}
	}
	add(p.Feed(text))
	add(p.Finish())
	return calls, content.String()
}

// callState is what has been sent of one call.
type callState struct {
	nameSent bool
	argsSent int
}

// streamCall sends what is new of a call object whose text is obj: its
// name once complete, then its arguments value (under argsKeys) as far as
// it is written. It returns false when the name is not known yet, so later
// calls wait.
func streamCall(index int, obj string, st *callState, argsKeys []string, newID func() string, out *[]CallDelta) bool {
	members, _, _ := scanObject(obj)
	if !st.nameSent {
		name, ok := stringMember(obj, members, "name")
		if !ok {
			return false
		}
		st.nameSent = true
		*out = append(*out, CallDelta{Index: index, ID: newID(), Name: name})
	}
	for _, m := range members {
		for _, k := range argsKeys {
			if m.key != k {
				continue
			}
			args := obj[m.valueStart:m.valueEnd]
			if !m.complete && args != "" && args[0] != '{' && args[0] != '[' {
				return true // a scalar is sent only once complete
			}
			if len(args) > st.argsSent {
				*out = append(*out, CallDelta{Index: index, Arguments: args[st.argsSent:]})
				st.argsSent = len(args)
			}
			return true
		}
	}
	return true
}

func stringMember(obj string, members []member, key string) (string, bool) {
	for _, m := range members {
		if m.key == key && m.complete && obj[m.valueStart] == '"' {
			var s string
			if err := jsonUnmarshalString(obj[m.valueStart:m.valueEnd], &s); err == nil && s != "" {
				return s, true
			}
		}
	}
	return "", false
}
