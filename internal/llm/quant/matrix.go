package quant

import "fmt"

// Matrix is a Rows×Cols matrix of Type stored row after row as GGUF stores
// it (a row is Cols/BlockSize blocks): a linear layer's weight [out, in],
// its bytes used where they lie (a mapped file's, or a quantisation's).
type Matrix struct {
	Type       Type
	Rows, Cols int
	Data       []byte
}

// NewMatrix wraps data as a rows×cols matrix of t: ErrType for a type the
// package does not read, ErrSize when cols is not a whole number of blocks
// or data is not exactly the matrix's size.
func NewMatrix(t Type, rows, cols int, data []byte) (*Matrix, error) {
	rowBytes, err := t.Bytes(cols)
	if err != nil {
		return nil, err
	}
	if rows < 0 || len(data) != rows*rowBytes {
		return nil, fmt.Errorf("%w: %d bytes for %d×%d of %v, want %d", ErrSize, len(data), rows, cols, t, rows*rowBytes)
	}
	return &Matrix{Type: t, Rows: rows, Cols: cols, Data: data}, nil
}

// QuantizeMatrix quantises the rows×cols matrix w (row-major) to t (see
// Quantize).
func QuantizeMatrix(t Type, w []float32, rows, cols int) (*Matrix, error) {
	rowBytes, err := t.Bytes(cols)
	if err != nil {
		return nil, err
	}
	if len(w) != rows*cols {
		return nil, fmt.Errorf("%w: %d elements for %d×%d", ErrSize, len(w), rows, cols)
	}
	m := &Matrix{Type: t, Rows: rows, Cols: cols, Data: make([]byte, rows*rowBytes)}
	if err := Quantize(t, m.Data, w); err != nil {
		return nil, err
	}
	return m, nil
}

// RowBytes is the size of one row.
func (m *Matrix) RowBytes() int { return len(m.Data) / max(m.Rows, 1) }

// Row returns the bytes of row j.
func (m *Matrix) Row(j int) []byte {
	n := m.RowBytes()
	return m.Data[j*n : (j+1)*n : (j+1)*n]
}

// DequantizeRow sets dst (Cols elements) to row j's values: an embedding
// lookup in a quantised table.
func (m *Matrix) DequantizeRow(dst []float32, j int) {
	if err := Dequantize(m.Type, dst[:m.Cols], m.Row(j)); err != nil {
		panic(fmt.Sprintf("quant: %v", err)) // a Matrix is whole blocks by construction
	}
}

// Dequantize returns the float32 matrix m stands for.
func (m *Matrix) Dequantize() []float32 {
	out := make([]float32, m.Rows*m.Cols)
	if err := Dequantize(m.Type, out, m.Data); err != nil {
		panic(fmt.Sprintf("quant: %v", err))
	}
	return out
}
