package jsontext

import (
	"bytes"
	"encoding/json"
)

// Member is one member of a JSON object: its key as written and its value as
// written, so that rebuilding an object keeps every byte of both.
type Member struct {
	Key      string
	RawKey   []byte
	RawValue []byte
}

// NewMember is a member whose key is key and whose value is the JSON value.
func NewMember(key string, value []byte) Member {
	k, _ := json.Marshal(key)
	return Member{Key: key, RawKey: k, RawValue: value}
}

// ObjectMembers splits the JSON object b into its members, in order. ok is
// false when b is not an object.
func ObjectMembers(b []byte) (members []Member, ok bool) {
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
		members = append(members, Member{Key: key, RawKey: rawKey, RawValue: value})
	}
	return members, true
}

// WriteObject writes members as a JSON object.
func WriteObject(buf *bytes.Buffer, members []Member) {
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(m.RawKey)
		buf.WriteByte(':')
		buf.Write(m.RawValue)
	}
	buf.WriteByte('}')
}

// Object is WriteObject into a new slice.
func Object(members []Member) []byte {
	var buf bytes.Buffer
	WriteObject(&buf, members)
	return buf.Bytes()
}
