package callquery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of one query, which bound the SQL it becomes.
const (
	// MaxNodes bounds the operations and operands of a query.
	MaxNodes = 10000
	// MaxDepth bounds how deeply operations nest.
	MaxDepth = 64
)

// Query is a parsed calls query.
type Query struct {
	// Expr is the condition calls must meet.
	Expr Expr
}

// An Expr is an operation or an operand: *And, *Or, *Not, *Compare, *In,
// *Contains, *Literal, *FieldRef or *Convert.
type Expr interface{ expr() }

// And holds when every term does.
type And struct{ Terms []Expr }

// Or holds when any term does.
type Or struct{ Terms []Expr }

// Not negates its term (null stays null).
type Not struct{ Term Expr }

// Op is a comparison operator.
type Op string

// Comparison operators.
const (
	Eq  Op = "$eq"
	Gt  Op = "$gt"
	Gte Op = "$gte"
	Lt  Op = "$lt"
	Lte Op = "$lte"
)

// Compare compares two operands.
type Compare struct {
	Op          Op
	Left, Right Expr
}

// In holds when Left equals an element of List.
type In struct {
	Left Expr
	List []Expr
}

// Contains holds when Substr occurs in Input.
type Contains struct {
	Input, Substr   Expr
	CaseInsensitive bool
}

// Literal is a constant: nil, bool, int64, float64 or string.
type Literal struct{ Value any }

// FieldRef reads a field of the call.
type FieldRef struct{ Field Field }

// Convert converts its input; To is one of the Cast values.
type Convert struct {
	Input Expr
	To    Cast
}

// Cast is a $convert target.
type Cast string

// Conversions.
const (
	ToInt    Cast = "int"
	ToDouble Cast = "double"
	ToBool   Cast = "bool"
	ToString Cast = "string"
	ToExists Cast = "exists"
)

func (*And) expr()      {}
func (*Or) expr()       {}
func (*Not) expr()      {}
func (*Compare) expr()  {}
func (*In) expr()       {}
func (*Contains) expr() {}
func (*Literal) expr()  {}
func (*FieldRef) expr() {}
func (*Convert) expr()  {}

// Error is a query that cannot be read, saying why.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Parse reads a query, {"$expr": operation}. Empty input, null and {} are no
// query (nil, nil). Errors are *Error.
func Parse(raw json.RawMessage) (*Query, error) {
	return ParseWith(raw, ParseField)
}

// ParseWith reads a query over other fields than a call's: fields resolves
// each $getField name, and an error it returns is the query's. The filters of
// eval_results/query read the fields of a dataset row's trials so.
func ParseWith(raw json.RawMessage, fields func(name string) (Field, error)) (*Query, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, errorf("query must be an object {\"$expr\": …}")
	}
	if len(top) == 0 {
		return nil, nil
	}
	for key := range top {
		if key != "$expr" {
			return nil, errorf("query: unknown member %q; a query is {\"$expr\": …}", clip(key))
		}
	}
	p := parser{field: fields}
	e, err := p.operation(top["$expr"], 0)
	if err != nil {
		return nil, err
	}
	return &Query{Expr: e}, nil
}

type parser struct {
	nodes int
	field func(name string) (Field, error)
}

// single reads an object of exactly one member.
func single(raw json.RawMessage) (string, json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return "", nil, errorf("an operation or operand is an object of one member, such as {\"$eq\": […]}; got %s", clip(string(raw)))
	}
	for k, v := range m {
		return k, v, nil
	}
	panic("unreachable")
}

var operators = "$and, $or, $not, $eq, $gt, $gte, $lt, $lte, $in, $contains"

// operation reads an operation (an operand that is a condition).
func (p *parser) operation(raw json.RawMessage, depth int) (Expr, error) {
	e, err := p.operand(raw, depth)
	if err != nil {
		return nil, err
	}
	switch e.(type) {
	case *Literal, *FieldRef, *Convert:
		return nil, errorf("$expr must be an operation (%s)", operators)
	}
	return e, nil
}

// list reads a JSON list of operands.
func (p *parser) list(op string, raw json.RawMessage, depth int) ([]Expr, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errorf("%s takes a list", op)
	}
	out := make([]Expr, len(items))
	for i, item := range items {
		e, err := p.operand(item, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// operand reads any operand.
func (p *parser) operand(raw json.RawMessage, depth int) (Expr, error) {
	if depth > MaxDepth {
		return nil, errorf("query nests deeper than %d", MaxDepth)
	}
	if p.nodes++; p.nodes > MaxNodes {
		return nil, errorf("query has more than %d operations and operands", MaxNodes)
	}
	key, arg, err := single(raw)
	if err != nil {
		return nil, err
	}
	switch key {
	case "$and", "$or":
		terms, err := p.list(key, arg, depth)
		if err != nil {
			return nil, err
		}
		if len(terms) == 0 {
			return nil, errorf("%s of no operations is not supported", key)
		}
		if key == "$and" {
			return &And{Terms: terms}, nil
		}
		return &Or{Terms: terms}, nil
	case "$not":
		terms, err := p.list(key, arg, depth)
		if err != nil {
			return nil, err
		}
		if len(terms) != 1 {
			return nil, errorf("$not takes a list of one operand")
		}
		return &Not{Term: terms[0]}, nil
	case string(Eq), string(Gt), string(Gte), string(Lt), string(Lte):
		terms, err := p.list(key, arg, depth)
		if err != nil {
			return nil, err
		}
		if len(terms) != 2 {
			return nil, errorf("%s takes a list of two operands", key)
		}
		return &Compare{Op: Op(key), Left: terms[0], Right: terms[1]}, nil
	case "$in":
		var pair []json.RawMessage
		if err := json.Unmarshal(arg, &pair); err != nil || len(pair) != 2 {
			return nil, errorf("$in takes [operand, [operands…]]")
		}
		left, err := p.operand(pair[0], depth+1)
		if err != nil {
			return nil, err
		}
		list, err := p.list("$in's second member", pair[1], depth)
		if err != nil {
			return nil, err
		}
		return &In{Left: left, List: list}, nil
	case "$contains":
		var spec struct {
			Input           json.RawMessage `json:"input"`
			Substr          json.RawMessage `json:"substr"`
			CaseInsensitive *bool           `json:"case_insensitive"`
		}
		if err := strictUnmarshal(arg, &spec, "input", "substr", "case_insensitive"); err != nil || spec.Input == nil || spec.Substr == nil {
			return nil, errorf("$contains takes {\"input\": operand, \"substr\": operand, \"case_insensitive\": bool}")
		}
		input, err := p.operand(spec.Input, depth+1)
		if err != nil {
			return nil, err
		}
		substr, err := p.operand(spec.Substr, depth+1)
		if err != nil {
			return nil, err
		}
		return &Contains{Input: input, Substr: substr, CaseInsensitive: spec.CaseInsensitive != nil && *spec.CaseInsensitive}, nil
	case "$literal":
		v, err := literal(arg)
		if err != nil {
			return nil, err
		}
		return &Literal{Value: v}, nil
	case "$getField":
		var name string
		if err := json.Unmarshal(arg, &name); err != nil {
			return nil, errorf("$getField takes a field name")
		}
		f, err := p.field(name)
		if err != nil {
			return nil, err
		}
		return &FieldRef{Field: f}, nil
	case "$convert":
		var spec struct {
			Input json.RawMessage `json:"input"`
			To    string          `json:"to"`
		}
		if err := strictUnmarshal(arg, &spec, "input", "to"); err != nil || spec.Input == nil {
			return nil, errorf("$convert takes {\"input\": operand, \"to\": type}")
		}
		switch Cast(spec.To) {
		case ToInt, ToDouble, ToBool, ToString, ToExists:
		default:
			return nil, errorf("$convert to %q is not supported; types: int, double, bool, string, exists", clip(spec.To))
		}
		input, err := p.operand(spec.Input, depth+1)
		if err != nil {
			return nil, err
		}
		return &Convert{Input: input, To: Cast(spec.To)}, nil
	}
	return nil, errorf("%s is not supported; operations: %s; operands: $literal, $getField, $convert", clip(key), operators)
}

// strictUnmarshal decodes an object that may hold only the named members.
func strictUnmarshal(raw json.RawMessage, dst any, allowed ...string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	for k := range m {
		if !contains(allowed, k) {
			return errorf("unknown member %q", clip(k))
		}
	}
	return json.Unmarshal(raw, dst)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// literal reads the value of a $literal: null, a boolean, a number (an
// integer when written without fraction or exponent and within int64, else a
// double) or a string. Objects and lists are not supported.
func literal(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errorf("$literal takes a value")
	}
	switch v := v.(type) {
	case nil, bool:
		return v, nil
	case string:
		if strings.ContainsRune(v, 0) || !utf8.ValidString(v) {
			return nil, errorf("a $literal string holding NUL or invalid UTF-8 is not supported")
		}
		return v, nil
	case json.Number:
		text := v.String()
		if !strings.ContainsAny(text, ".eE") {
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				return nil, errorf("the $literal integer %s is outside the int64 range", clip(text))
			}
			return n, nil
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, errorf("the $literal number %s is outside the double range", clip(text))
		}
		return f, nil
	}
	return nil, errorf("a $literal object or list is not supported")
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	for i := n; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}
