package embeddings

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// golden is generate_embed.py's golden.json of the tiny Qwen3-Embedding:
// token sequences and PyTorch's pooled, normalised vectors by size.
type golden struct {
	Inputs  [][]int32              `json:"inputs"`
	Vectors map[string][][]float32 `json:"vectors"`
}

const modelDir = "../../internal/llm/testdata/torch/qwen3-embed"

func open(t *testing.T) (*Service, *golden) {
	t.Helper()
	m, err := Open("", modelDir, ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{MaxBatchTokens: 40}, m)
	t.Cleanup(func() { s.Close() })
	data, err := os.ReadFile(filepath.Join(modelDir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return s, &g
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func decodeBase64(t *testing.T, s string) []float32 {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v
}

// Concurrent requests, batched together up to the batch bound, each get
// PyTorch's vectors, as floats or base64, whole or truncated to a
// Matryoshka size.
func TestEmbedMatchesReference(t *testing.T) {
	s, g := open(t)
	var wg sync.WaitGroup
	for _, size := range []string{"0", "8", "16"} {
		for _, format := range []string{"float", "base64"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := map[string]any{"model": "qwen3-embed", "input": g.Inputs, "encoding_format": format}
				if size != "0" {
					body["dimensions"] = json.Number(size)
				}
				raw, _ := json.Marshal(body)
				res, err := s.Embed(context.Background(), raw)
				if err != nil {
					t.Error(err)
					return
				}
				tokens := 0
				for _, in := range g.Inputs {
					tokens += len(in)
				}
				if res.Usage.PromptTokens != tokens || len(res.Data) != len(g.Inputs) {
					t.Errorf("usage %+v, %d vectors", res.Usage, len(res.Data))
				}
				for i, e := range res.Data {
					var v []float32
					if format == "base64" {
						v = decodeBase64(t, e.Embedding.(string))
					} else {
						v = e.Embedding.([]float32)
					}
					want := g.Vectors[size][i]
					if len(v) != len(want) || cosine(v, want) < 0.9999 {
						t.Errorf("size %s %s input %d: %d elements, cosine %f", size, format, i, len(v), cosine(v, want))
					}
				}
			}()
		}
	}
	wg.Wait()
}

func TestEmbedRefuses(t *testing.T) {
	s, _ := open(t)
	for _, body := range []string{
		`{"model":"qwen3-embed"}`,
		`{"model":"qwen3-embed","input":""}`,
		`{"model":"qwen3-embed","input":[[]]}`,
		`{"model":"qwen3-embed","input":[1,2],"encoding_format":"int8"}`,
		`{"model":"qwen3-embed","input":[1,2],"dimensions":12}`,
		`{"model":"qwen3-embed","input":[1,96]}`,
		`{"model":"qwen3-embed","input":"text, and no tokenizer"}`,
		`{"model":"qwen3-embed","input":[1,2],"truncate_prompt_tokens":100}`,
		`{"model":"qwen3-embed","input":[` + manyTokens(65) + `]}`,
		`{"model":"qwen3-embed","input":{"a":1}}`,
	} {
		if _, err := s.Embed(context.Background(), []byte(body)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", body, err)
		}
	}
	if _, err := s.Embed(context.Background(), []byte(`{"model":"nope","input":[1]}`)); !errors.Is(err, ErrModelNotFound) {
		t.Errorf("unknown model: %v", err)
	}
	// truncate_prompt_tokens keeps the last tokens.
	long, _ := s.Embed(context.Background(), []byte(`{"model":"qwen3-embed","input":[`+manyTokens(65)+`],"truncate_prompt_tokens":3}`))
	short, _ := s.Embed(context.Background(), []byte(`{"model":"qwen3-embed","input":[2,3,4]}`))
	if long == nil || short == nil || cosine(long.Data[0].Embedding.([]float32), short.Data[0].Embedding.([]float32)) < 0.999999 {
		t.Errorf("truncated input differs from its last tokens")
	}
}

// manyTokens is n token ids ending in 2, 3, 4.
func manyTokens(n int) string {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = 5 + i%50
	}
	copy(ids[n-3:], []int{2, 3, 4})
	out, _ := json.Marshal(ids)
	return string(out[1 : len(out)-1])
}
