package quant

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// golden is one type's file of testdata/quants, written by its generate.py
// from gguf-py's quants module.
type golden struct {
	blocks []byte    // blocks to dequantize
	values []float32 // gguf-py's dequantize of them
	inputs []float32 // values to quantize
	quants []byte    // gguf-py's quantize of them
}

func readGolden(t *testing.T, typ Type) *golden {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "quants", typ.String()+".bin.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(raw)
	var head struct {
		Magic [4]byte
		Type  uint32
		N     uint32
	}
	if err := binary.Read(r, binary.LittleEndian, &head); err != nil || string(head.Magic[:]) != "WQG1" || Type(head.Type) != typ {
		t.Fatalf("%v: bad golden header %+v (%v)", typ, head, err)
	}
	g := &golden{}
	read := func(v any) {
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
	}
	g.blocks = make([]byte, int(head.N)*typ.BlockBytes())
	g.values = make([]float32, int(head.N)*typ.BlockSize())
	read(g.blocks)
	read(g.values)
	var m uint32
	read(&m)
	g.inputs = make([]float32, int(m)*typ.BlockSize())
	g.quants = make([]byte, int(m)*typ.BlockBytes())
	read(g.inputs)
	read(g.quants)
	if r.Len() != 0 {
		t.Fatalf("%v: %d bytes left in the golden file", typ, r.Len())
	}
	return g
}

// sameFloat: equal bits (so −0 ≠ +0), or both NaN (a NaN's payload is not
// part of the contract).
func sameFloat(a, b float32) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

var goldenTypes = []Type{F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K}

// TestDequantizeMatchesReference: every golden block dequantizes to
// gguf-py's values bit for bit, signed zeros included, NaN where it is NaN.
func TestDequantizeMatchesReference(t *testing.T) {
	for _, typ := range goldenTypes {
		g := readGolden(t, typ)
		got := make([]float32, len(g.values))
		if err := Dequantize(typ, got, g.blocks); err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		bad := 0
		for i := range got {
			if !sameFloat(got[i], g.values[i]) {
				if bad < 5 {
					blk := i / typ.BlockSize()
					t.Errorf("%v block %d element %d: %v (%#08x), gguf-py %v (%#08x); block % x", typ, blk, i%typ.BlockSize(),
						got[i], math.Float32bits(got[i]), g.values[i], math.Float32bits(g.values[i]),
						g.blocks[blk*typ.BlockBytes():(blk+1)*typ.BlockBytes()])
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%v: %d of %d elements differ", typ, bad, len(got))
		}
		t.Logf("%v: %d blocks dequantized, %d values quantized", typ, len(g.blocks)/typ.BlockBytes(), len(g.inputs)/typ.BlockSize())
	}
}

// TestQuantizeMatchesReference: gguf-py's quantize gives the same bytes.
func TestQuantizeMatchesReference(t *testing.T) {
	for _, typ := range goldenTypes {
		g := readGolden(t, typ)
		if len(g.inputs) == 0 {
			continue
		}
		got := make([]byte, len(g.quants))
		if err := Quantize(typ, got, g.inputs); err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		bb, bs := typ.BlockBytes(), typ.BlockSize()
		bad := 0
		for b := 0; b < len(got)/bb; b++ {
			if !bytes.Equal(got[b*bb:(b+1)*bb], g.quants[b*bb:(b+1)*bb]) {
				if bad < 3 {
					t.Errorf("%v block %d of %v:\n got % x\nwant % x", typ, b, g.inputs[b*bs:(b+1)*bs], got[b*bb:(b+1)*bb], g.quants[b*bb:(b+1)*bb])
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%v: %d of %d blocks differ", typ, bad, len(got)/bb)
		}
	}
}
