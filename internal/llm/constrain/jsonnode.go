package constrain

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"strconv"
)

// node is a JSON value that keeps the order of object members: a schema's
// properties are generated in the order they are written.
type node struct {
	kind  nodeKind
	keys  []string // object
	vals  []*node  // object values, in keys order
	items []*node  // array
	str   string
	num   json.Number
	bool  bool
}

type nodeKind uint8

const (
	nodeNull nodeKind = iota
	nodeBool
	nodeNumber
	nodeString
	nodeArray
	nodeObject
)

func (n *node) get(key string) (*node, bool) {
	if n == nil || n.kind != nodeObject {
		return nil, false
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i], true
		}
	}
	return nil, false
}

func parseNode(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return n, nil
}

func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: nodeNull}, nil
	case bool:
		return &node{kind: nodeBool, bool: t}, nil
	case json.Number:
		return &node{kind: nodeNumber, num: t}, nil
	case string:
		return &node{kind: nodeString, str: t}, nil
	case json.Delim:
		if t == '[' {
			n := &node{kind: nodeArray}
			for dec.More() {
				item, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, item)
			}
			_, err := dec.Token()
			return n, err
		}
		n := &node{kind: nodeObject}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			val, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := n.get(key); dup {
				return nil, errors.New("duplicate key " + strconv.Quote(key))
			}
			n.keys = append(n.keys, key)
			n.vals = append(n.vals, val)
		}
		_, err := dec.Token()
		return n, err
	}
	return nil, errors.New("unexpected JSON token")
}

// compact writes n as compact JSON, members in order and without the HTML
// escaping encoding/json adds, as a model would write the value.
func (n *node) compact(buf *bytes.Buffer) {
	switch n.kind {
	case nodeNull:
		buf.WriteString("null")
	case nodeBool:
		buf.WriteString(strconv.FormatBool(n.bool))
	case nodeNumber:
		buf.WriteString(n.num.String())
	case nodeString:
		writeJSONString(buf, n.str)
	case nodeArray:
		buf.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				buf.WriteByte(',')
			}
			it.compact(buf)
		}
		buf.WriteByte(']')
	case nodeObject:
		buf.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, k)
			buf.WriteByte(':')
			n.vals[i].compact(buf)
		}
		buf.WriteByte('}')
	}
}

func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// typeName is the JSON Schema type of the value; a number with no
// fractional part is an integer, as validators count it.
func (n *node) typeName() string {
	switch n.kind {
	case nodeNull:
		return "null"
	case nodeBool:
		return "boolean"
	case nodeString:
		return "string"
	case nodeArray:
		return "array"
	case nodeObject:
		return "object"
	}
	if r, ok := new(big.Rat).SetString(n.num.String()); ok && r.IsInt() {
		return "integer"
	}
	return "number"
}
