package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/weftlabs/weft/objects/ref"
)

// member is one member of a JSON object: its key as written and its value as
// written, so that rebuilding an object keeps every byte of both.
type member struct {
	key      string
	rawKey   []byte
	rawValue []byte
}

// objectMembers splits the JSON object b into its members, in order. ok is
// false when b is not an object.
func objectMembers(b []byte) (members []member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, isKey := tok.(string)
		end := dec.InputOffset()
		var value json.RawMessage
		if !isKey || dec.Decode(&value) != nil {
			return nil, false
		}
		rawKey := bytes.TrimLeft(b[start:end], " \t\r\n,")
		members = append(members, member{key: key, rawKey: rawKey, rawValue: value})
	}
	return members, true
}

// writeObject writes members as a JSON object.
func writeObject(buf *bytes.Buffer, members []member) {
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(m.rawKey)
		buf.WriteByte(':')
		buf.Write(m.rawValue)
	}
	buf.WriteByte('}')
}

func newMember(key string, value []byte) member {
	k, _ := json.Marshal(key)
	return member{key: key, rawKey: k, rawValue: value}
}

// derivedWeaveKeys are the members of summary.weave the server owns: whatever
// a client stored under them is replaced on every read.
var derivedWeaveKeys = map[string]bool{"status": true, "trace_name": true, "latency_ms": true, "display_name": true, "costs": true}

// Status values of summary.weave.status.
const (
	StatusRunning         = "running"
	StatusSuccess         = "success"
	StatusError           = "error"
	StatusDescendantError = "descendant_error"
)

// rebuildSummary returns the summary of c as reads show it: the stored text
// with its "weave" member rebuilt from the call (status, latency_ms,
// display_name or trace_name, and costs when given). Other members keep their
// exact text.
func rebuildSummary(stored []byte, c *Call, costs []byte) []byte {
	members, ok := objectMembers(stored)
	if !ok {
		members = nil
	}
	weaveAt := -1
	var errorCount float64
	for i, m := range members {
		switch m.key {
		case "weave":
			weaveAt = i
		case "status_counts":
			var counts struct {
				Error float64 `json:"error"`
			}
			_ = json.Unmarshal(m.rawValue, &counts)
			errorCount = counts.Error
		}
	}
	var weave []member
	if weaveAt >= 0 {
		old, _ := objectMembers(members[weaveAt].rawValue)
		for _, m := range old {
			if !derivedWeaveKeys[m.key] {
				weave = append(weave, m)
			}
		}
	}
	status := StatusSuccess
	switch {
	case c.Exception != nil && *c.Exception != "":
		status = StatusError
	case c.EndedAt == nil:
		status = StatusRunning
	case errorCount > 0:
		status = StatusDescendantError
	}
	weave = append(weave, newMember("status", quote(status)))
	if c.DisplayName != nil {
		weave = append(weave, newMember("display_name", quote(*c.DisplayName)))
	} else {
		weave = append(weave, newMember("trace_name", quote(opDisplayName(c.OpName))))
	}
	if c.EndedAt != nil {
		weave = append(weave, newMember("latency_ms", strconv.AppendInt(nil, latencyMS(c.StartedAt, *c.EndedAt), 10)))
	}
	if costs != nil {
		weave = append(weave, newMember("costs", costs))
	}
	var wb bytes.Buffer
	writeObject(&wb, weave)
	if weaveAt >= 0 {
		members[weaveAt].rawValue = wb.Bytes()
	} else {
		members = append(members, newMember("weave", wb.Bytes()))
	}
	var out bytes.Buffer
	writeObject(&out, members)
	return out.Bytes()
}

// latencyMS is Weave's latency: whole milliseconds, truncated.
func latencyMS(start, end time.Time) int64 {
	return end.Sub(start).Microseconds() / 1000
}

// opDisplayName is the op's name inside an op ref of either scheme
// ("trace:///entity/project/op/name:digest" → "name"), or opName itself.
func opDisplayName(opName string) string {
	if r, isRef, err := parseOpRef(opName); isRef && err == nil {
		return r.Name
	}
	return opName
}

// parseOpRef parses an op_name that looks like a ref (either scheme); isRef
// is false for a plain name. A ref that is not an op ref is an error.
func parseOpRef(opName string) (r ref.Ref, isRef bool, err error) {
	if !ref.IsRef(opName) {
		return ref.Ref{}, false, nil
	}
	r, err = ref.Parse(opName)
	if err == nil && r.Kind != ref.KindOp {
		err = fmt.Errorf("%w: kind %q is not op", ref.ErrInvalid, r.Kind)
	}
	return r, true, err
}

func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// selectColumns keeps only the requested top-level members of the encoded call
// (plus the ones every call carries).
func selectColumns(encoded []byte, columns map[string]bool) []byte {
	members, ok := objectMembers(encoded)
	if !ok {
		return encoded
	}
	kept := members[:0]
	for _, m := range members {
		if columns[m.key] || alwaysReturned[m.key] {
			kept = append(kept, m)
		}
	}
	var out bytes.Buffer
	writeObject(&out, kept)
	return out.Bytes()
}

// alwaysReturned are the fields a query returns whatever its columns say.
var alwaysReturned = map[string]bool{"id": true, "project_id": true, "trace_id": true, "op_name": true, "started_at": true}
