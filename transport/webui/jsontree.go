package webui

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// jsonNode is one value of a JSON document as the detail pane draws it: an
// object or array is a collapsible list of its members, a scalar is its text.
// Values are kept as text and escaped by html/template like every other
// value, so markup or a "javascript:" URL in stored data shows as text.
type jsonNode struct {
	Key      string // member name, or the index of an array element
	Kind     string // "object", "array", "string", "number", "bool", "null", "more"
	Text     string // scalar value (strings unquoted), or what "more" left out
	Omitted  int    // characters of a long string not shown
	Children []*jsonNode
	// Open marks containers drawn expanded: the first levels.
	Open bool

	// Set by decorate for the detail pane (value.go): the member's JSON
	// pointer, the page a ref links to, a picture to draw, and the URL that
	// loads what was cut ("show all").
	Path    string
	Href    string
	Image   *imageSource
	ShowAll string
	// From is, for a "more" node, the index of the first member left out.
	From int
}

// Limits of one drawn document, so that a huge input cannot make a huge page.
const (
	maxJSONNodes   = 2000
	maxStringChars = 4000
	maxJSONDepth   = 64
	openDepth      = 2
)

// jsonTree parses raw into a tree, keeping member order and number text.
// Past maxJSONNodes values the rest of each container is summarised by a
// "more" node. Text that is not JSON becomes one string node.
func jsonTree(raw []byte) *jsonNode {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	b := treeBuilder{dec: dec}
	root, err := b.value("", 0)
	if err != nil {
		return scalarNode("", "string", string(raw))
	}
	return root
}

type treeBuilder struct {
	dec   *json.Decoder
	nodes int
}

func (b *treeBuilder) value(key string, depth int) (*jsonNode, error) {
	tok, err := b.dec.Token()
	if err != nil {
		return nil, err
	}
	b.nodes++
	switch t := tok.(type) {
	case json.Delim:
		kind := "object"
		if t == '[' {
			kind = "array"
		}
		if depth >= maxJSONDepth {
			return nil, errors.New("too deep")
		}
		n := &jsonNode{Key: key, Kind: kind, Open: depth < openDepth}
		skipped := 0
		for i := 0; b.dec.More(); i++ {
			childKey := strconv.Itoa(i)
			if kind == "object" {
				k, err := b.dec.Token()
				if err != nil {
					return nil, err
				}
				childKey, _ = k.(string)
			}
			if b.nodes >= maxJSONNodes {
				var skip json.RawMessage
				if err := b.dec.Decode(&skip); err != nil {
					return nil, err
				}
				skipped++
				continue
			}
			child, err := b.value(childKey, depth+1)
			if err != nil {
				return nil, err
			}
			n.Children = append(n.Children, child)
		}
		if _, err := b.dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		if skipped > 0 {
			n.Children = append(n.Children, &jsonNode{Kind: "more", Text: strconv.Itoa(skipped) + " more not shown", From: len(n.Children)})
		}
		return n, nil
	case string:
		return scalarNode(key, "string", t), nil
	case json.Number:
		return scalarNode(key, "number", t.String()), nil
	case bool:
		return scalarNode(key, "bool", strconv.FormatBool(t)), nil
	case nil:
		return scalarNode(key, "null", "null"), nil
	}
	return nil, io.ErrUnexpectedEOF
}

// scalarNode cuts long strings at maxStringChars characters.
func scalarNode(key, kind, text string) *jsonNode {
	n := &jsonNode{Key: key, Kind: kind, Text: text}
	if utf8.RuneCountInString(text) > maxStringChars {
		cut := 0
		for i := range text {
			if cut == maxStringChars {
				n.Text, n.Omitted = text[:i], utf8.RuneCountInString(text[i:])
				break
			}
			cut++
		}
	}
	return n
}

// Len is the number of members shown of a container.
func (n *jsonNode) Len() int { return len(n.Children) }
