package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// KV is one metadata entry.
type KV struct {
	Key   string
	Value Value
}

// Value is a metadata value: a number, a bool, a string or an array of
// values of one type (arrays may nest). The accessors convert between the
// integer types when the value fits and report false otherwise.
type Value struct {
	Type ValueType
	bits uint64 // integers (signed ones sign-extended), float bits, bool
	str  string
	// Arrays: the element type and either the fixed-size elements as
	// little-endian bytes, the strings, or the nested arrays.
	elem  ValueType
	raw   []byte
	strs  []string
	items []Value
}

// Constructors of values, for writing files.

// Uint8 is a uint8 value.
func Uint8(v uint8) Value { return Value{Type: TypeUint8, bits: uint64(v)} }

// Int8 is an int8 value.
func Int8(v int8) Value { return Value{Type: TypeInt8, bits: uint64(int64(v))} }

// Uint16 is a uint16 value.
func Uint16(v uint16) Value { return Value{Type: TypeUint16, bits: uint64(v)} }

// Int16 is an int16 value.
func Int16(v int16) Value { return Value{Type: TypeInt16, bits: uint64(int64(v))} }

// Uint32 is a uint32 value.
func Uint32(v uint32) Value { return Value{Type: TypeUint32, bits: uint64(v)} }

// Int32 is an int32 value.
func Int32(v int32) Value { return Value{Type: TypeInt32, bits: uint64(int64(v))} }

// Uint64 is a uint64 value.
func Uint64(v uint64) Value { return Value{Type: TypeUint64, bits: v} }

// Int64 is an int64 value.
func Int64(v int64) Value { return Value{Type: TypeInt64, bits: uint64(v)} }

// Float32 is a float32 value.
func Float32(v float32) Value { return Value{Type: TypeFloat32, bits: uint64(math.Float32bits(v))} }

// Float64 is a float64 value.
func Float64(v float64) Value { return Value{Type: TypeFloat64, bits: math.Float64bits(v)} }

// Bool is a bool value.
func Bool(v bool) Value {
	if v {
		return Value{Type: TypeBool, bits: 1}
	}
	return Value{Type: TypeBool}
}

// String is a string value.
func String(s string) Value { return Value{Type: TypeString, str: s} }

// Strings is an array of strings.
func Strings(s []string) Value {
	return Value{Type: TypeArray, elem: TypeString, strs: s}
}

// Int32s is an array of int32.
func Int32s(v []int32) Value {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(x))
	}
	return Value{Type: TypeArray, elem: TypeInt32, raw: raw}
}

// Float32s is an array of float32.
func Float32s(v []float32) Value {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return Value{Type: TypeArray, elem: TypeFloat32, raw: raw}
}

// Arrays is an array of arrays, all of elem's type.
func Arrays(items []Value) Value {
	return Value{Type: TypeArray, elem: TypeArray, items: items}
}

// ElemType is an array's element type.
func (v Value) ElemType() ValueType { return v.elem }

// Len is an array's number of elements (0 for other values).
func (v Value) Len() int {
	switch {
	case v.Type != TypeArray:
		return 0
	case v.elem == TypeString:
		return len(v.strs)
	case v.elem == TypeArray:
		return len(v.items)
	}
	return len(v.raw) / v.elem.size()
}

// signed reports whether t is a signed integer type.
func signed(t ValueType) bool {
	return t == TypeInt8 || t == TypeInt16 || t == TypeInt32 || t == TypeInt64
}

func unsigned(t ValueType) bool {
	return t == TypeUint8 || t == TypeUint16 || t == TypeUint32 || t == TypeUint64
}

// Uint returns an integer value that is not negative.
func (v Value) Uint() (uint64, bool) {
	switch {
	case unsigned(v.Type):
		return v.bits, true
	case signed(v.Type) && int64(v.bits) >= 0:
		return v.bits, true
	}
	return 0, false
}

// Int returns an integer value that fits in an int64.
func (v Value) Int() (int64, bool) {
	switch {
	case signed(v.Type):
		return int64(v.bits), true
	case unsigned(v.Type) && v.bits <= math.MaxInt64:
		return int64(v.bits), true
	}
	return 0, false
}

// Float returns a float32 or float64 value.
func (v Value) Float() (float64, bool) {
	switch v.Type {
	case TypeFloat32:
		return float64(math.Float32frombits(uint32(v.bits))), true
	case TypeFloat64:
		return math.Float64frombits(v.bits), true
	}
	return 0, false
}

// Bool returns a bool value.
func (v Value) Bool() (bool, bool) { return v.bits != 0, v.Type == TypeBool }

// Text returns a string value.
func (v Value) Text() (string, bool) { return v.str, v.Type == TypeString }

// Strings returns an array of strings.
func (v Value) Strings() ([]string, bool) {
	return v.strs, v.Type == TypeArray && v.elem == TypeString
}

// Floats returns an array of float32 or float64 as float32.
func (v Value) Floats() ([]float32, bool) {
	if v.Type != TypeArray || (v.elem != TypeFloat32 && v.elem != TypeFloat64) {
		return nil, false
	}
	out := make([]float32, v.Len())
	for i := range out {
		out[i] = float32(v.index(i).mustFloat())
	}
	return out, true
}

// Ints returns an array of integers, every one of which fits in an int64.
func (v Value) Ints() ([]int64, bool) {
	if v.Type != TypeArray || (!signed(v.elem) && !unsigned(v.elem)) {
		return nil, false
	}
	out := make([]int64, v.Len())
	for i := range out {
		x, ok := v.index(i).Int()
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

// Items returns an array's elements as values.
func (v Value) Items() []Value {
	if v.Type != TypeArray {
		return nil
	}
	out := make([]Value, v.Len())
	for i := range out {
		out[i] = v.index(i)
	}
	return out
}

// index is element i of an array.
func (v Value) index(i int) Value {
	switch v.elem {
	case TypeString:
		return String(v.strs[i])
	case TypeArray:
		return v.items[i]
	}
	n := v.elem.size()
	return scalar(v.elem, v.raw[i*n:(i+1)*n])
}

func (v Value) mustFloat() float64 { f, _ := v.Float(); return f }

// scalar decodes a fixed-size value of type t from its little-endian bytes.
func scalar(t ValueType, b []byte) Value {
	v := Value{Type: t}
	switch t {
	case TypeUint8, TypeBool:
		v.bits = uint64(b[0])
	case TypeInt8:
		v.bits = uint64(int64(int8(b[0])))
	case TypeUint16:
		v.bits = uint64(binary.LittleEndian.Uint16(b))
	case TypeInt16:
		v.bits = uint64(int64(int16(binary.LittleEndian.Uint16(b))))
	case TypeUint32, TypeFloat32:
		v.bits = uint64(binary.LittleEndian.Uint32(b))
	case TypeInt32:
		v.bits = uint64(int64(int32(binary.LittleEndian.Uint32(b))))
	case TypeUint64, TypeInt64, TypeFloat64:
		v.bits = binary.LittleEndian.Uint64(b)
	}
	return v
}

// String formats the value for messages and dumps; long arrays are cut.
func (v Value) String() string {
	switch {
	case v.Type == TypeString:
		return fmt.Sprintf("%q", v.str)
	case v.Type == TypeBool:
		b, _ := v.Bool()
		return fmt.Sprint(b)
	case v.Type == TypeFloat32 || v.Type == TypeFloat64:
		return fmt.Sprint(v.mustFloat())
	case signed(v.Type):
		return fmt.Sprint(int64(v.bits))
	case unsigned(v.Type):
		return fmt.Sprint(v.bits)
	case v.Type != TypeArray:
		return v.Type.String()
	}
	const show = 8
	var b strings.Builder
	fmt.Fprintf(&b, "[%d × %s:", v.Len(), v.elem)
	for i := range min(v.Len(), show) {
		b.WriteString(" ")
		b.WriteString(v.index(i).String())
	}
	if v.Len() > show {
		b.WriteString(" …")
	}
	b.WriteString("]")
	return b.String()
}
