package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/weftlabs/weft/internal/llm/tensor"
)

// PoolingMode is how a sentence-embedding model reduces a sequence's final
// hidden states to one vector.
type PoolingMode string

// The pooling modes of sentence-transformers' Pooling module this package
// runs.
const (
	// LastToken takes the last token's state (pooling_mode_lasttoken:
	// Qwen3-Embedding, whose tokenizer appends an end-of-text token).
	LastToken PoolingMode = "lasttoken"
	// MeanTokens averages every token's state (pooling_mode_mean_tokens).
	MeanTokens PoolingMode = "mean"
	// CLSToken takes the first token's state (pooling_mode_cls_token).
	CLSToken PoolingMode = "cls"
)

// Pooling describes an embedding model: how its vectors are pooled, whether
// they are scaled to unit length, and the sizes they may be truncated to.
type Pooling struct {
	Mode PoolingMode
	// Normalize scales each vector to unit L2 length (a
	// sentence_transformers.models.Normalize module).
	Normalize bool
	// Dimensions are the Matryoshka sizes a vector may be truncated to
	// (config.json's matryoshka_dimensions); with Matryoshka set and no
	// list, any size up to the hidden size.
	Dimensions []int
	Matryoshka bool
}

// stModule is an entry of sentence-transformers' modules.json.
type stModule struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

// stPooling is sentence-transformers' 1_Pooling/config.json.
type stPooling struct {
	Dimension  int  `json:"word_embedding_dimension"`
	CLS        bool `json:"pooling_mode_cls_token"`
	Mean       bool `json:"pooling_mode_mean_tokens"`
	Max        bool `json:"pooling_mode_max_tokens"`
	MeanSqrt   bool `json:"pooling_mode_mean_sqrt_len_tokens"`
	WeightMean bool `json:"pooling_mode_weightedmean_tokens"`
	LastToken  bool `json:"pooling_mode_lasttoken"`
}

// ReadPooling reads the sentence-transformers description of the model
// directory dir (modules.json, its Pooling module's config.json, and
// config.json's matryoshka_dimensions or is_matryoshka). It returns nil
// and no error for a directory without modules.json: not an embedding
// model. A pooling mode other than last-token, mean or CLS is
// ErrUnsupported, as is a module this package does not run (a Dense
// projection).
func ReadPooling(dir string) (*Pooling, error) {
	data, err := os.ReadFile(filepath.Join(dir, "modules.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var modules []stModule
	if err := json.Unmarshal(data, &modules); err != nil {
		return nil, invalid("modules.json", "%v", err)
	}
	p := &Pooling{}
	for _, mod := range modules {
		switch mod.Type {
		case "sentence_transformers.models.Transformer":
		case "sentence_transformers.models.Normalize":
			p.Normalize = true
		case "sentence_transformers.models.Pooling":
			if p.Mode, err = readPoolingMode(filepath.Join(dir, mod.Path, "config.json")); err != nil {
				return nil, err
			}
		default:
			return nil, unsupported("modules.json", "module %q", mod.Type)
		}
	}
	if p.Mode == "" {
		return nil, invalid("modules.json", "no sentence_transformers.models.Pooling module")
	}
	var mrl struct {
		Dimensions []int `json:"matryoshka_dimensions"`
		Matryoshka bool  `json:"is_matryoshka"`
	}
	if data, err = os.ReadFile(filepath.Join(dir, "config.json")); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &mrl); err != nil {
		return nil, invalid("config.json", "%v", err)
	}
	p.Dimensions, p.Matryoshka = mrl.Dimensions, mrl.Matryoshka || len(mrl.Dimensions) > 0
	return p, nil
}

func readPoolingMode(path string) (PoolingMode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var c stPooling
	if err := json.Unmarshal(data, &c); err != nil {
		return "", invalid(path, "%v", err)
	}
	var modes []PoolingMode
	if c.LastToken {
		modes = append(modes, LastToken)
	}
	if c.Mean {
		modes = append(modes, MeanTokens)
	}
	if c.CLS {
		modes = append(modes, CLSToken)
	}
	switch {
	case c.Max || c.MeanSqrt || c.WeightMean:
		return "", unsupported(path, "pooling modes other than lasttoken, mean_tokens and cls_token")
	case len(modes) != 1:
		return "", unsupported(path, "%d pooling modes, one is supported", len(modes))
	}
	return modes[0], nil
}

// CheckDimensions reports whether vectors of the model may be truncated to
// n elements (0: the full size d).
func (p *Pooling) CheckDimensions(n, d int) error {
	switch {
	case n == 0 || n == d:
		return nil
	case !p.Matryoshka:
		return fmt.Errorf("%w: the model does not support dimensions other than %d", ErrDimensions, d)
	case n < 1 || n > d:
		return fmt.Errorf("%w: dimensions %d outside 1..%d", ErrDimensions, n, d)
	case len(p.Dimensions) > 0 && !slices.Contains(p.Dimensions, n):
		return fmt.Errorf("%w: dimensions %d is not one of the model's %v", ErrDimensions, n, p.Dimensions)
	}
	return nil
}

// Embeddings runs each sequence from position 0, all in one batched pass,
// and returns its pooled vector of the model's Pooling: the final norm's
// output at the last token, or averaged over the tokens, truncated to
// dims elements when dims is not 0 (Matryoshka) and then scaled to unit
// length when the model normalises. A sequence's vector is the same bits
// whatever else is batched with it. The model must have been loaded from
// an embedding model's directory (ErrUnsupported otherwise).
func (m *Model) Embeddings(seqs [][]int32, dims int) ([][]float32, error) {
	p := m.Pooling
	if p == nil {
		return nil, unsupported("pooling", "the model directory declares no sentence-transformers pooling (modules.json)")
	}
	d := m.Config.HiddenSize
	if err := p.CheckDimensions(dims, d); err != nil {
		return nil, err
	}
	if dims == 0 {
		dims = d
	}
	b := &Batch{Seqs: make([]Sequence, len(seqs))}
	longest := 0
	for i, s := range seqs {
		b.Seqs[i] = Sequence{ID: SeqID(i), Tokens: s}
		longest = max(longest, len(s))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	x, err := m.decoderLayers(b, NewContiguousCache(m.Config, max(longest, 1)))
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(seqs))
	row, normed := 0, make([]float32, d)
	for i, s := range seqs {
		vec := make([]float32, d)
		switch p.Mode {
		case LastToken, CLSToken:
			r := row + len(s) - 1
			if p.Mode == CLSToken {
				r = row
			}
			tensor.RMSNorm(vec, x[r*d:(r+1)*d], m.Norm, m.Config.RMSNormEps)
		case MeanTokens:
			sum := make([]float64, d)
			for r := row; r < row+len(s); r++ {
				tensor.RMSNorm(normed, x[r*d:(r+1)*d], m.Norm, m.Config.RMSNormEps)
				for j, v := range normed {
					sum[j] += float64(v)
				}
			}
			for j := range vec {
				vec[j] = float32(sum[j] / float64(len(s)))
			}
		}
		vec = vec[:dims:dims]
		if p.Normalize {
			l2Normalize(vec)
		}
		out[i] = vec
		row += len(s)
	}
	return out, nil
}

// l2Normalize scales v to unit length, as torch.nn.functional.normalize
// does (dividing by max(‖v‖, 1e-12)).
func l2Normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	n := max(math.Sqrt(ss), 1e-12)
	for i, x := range v {
		v[i] = float32(float64(x) / n)
	}
}
