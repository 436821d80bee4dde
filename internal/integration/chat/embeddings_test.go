package chat_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// The tiny Qwen3-Embedding of the model package's goldens: generate_embed.py
// wrote PyTorch's pooled, normalised vectors of its token sequences.
var embedDir, _ = filepath.Abs("../../llm/testdata/torch/qwen3-embed")

func cosine(a []float64, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * float64(b[i])
		aa += a[i] * a[i]
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// openai-go and the openai npm client (which asks for base64 and decodes
// it) get /v1/embeddings from the real binary serving an embedding model
// in-process: PyTorch's vectors (cosine ≥ 0.9999), whole and truncated to
// a Matryoshka size, and 4xx for what the model cannot do.
func TestEmbeddingsWithOpenAIClients(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(embedDir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Inputs  [][]int64              `json:"inputs"`
		Vectors map[string][][]float32 `json:"vectors"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t), Args: []string{"-embedding-model", embedDir}})
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(srv.Key), option.WithMaxRetries(0))
	ctx := context.Background()
	for _, size := range []string{"0", "8"} {
		params := openai.EmbeddingNewParams{Model: "qwen3-embed", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: golden.Inputs}}
		if size == "8" {
			params.Dimensions = openai.Int(8)
		}
		res, err := client.Embeddings.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Data) != len(golden.Inputs) || res.Usage.PromptTokens == 0 {
			t.Fatalf("size %s: %s", size, res.RawJSON())
		}
		for i, e := range res.Data {
			if want := golden.Vectors[size][i]; len(e.Embedding) != len(want) || cosine(e.Embedding, want) < 0.9999 {
				t.Errorf("size %s input %d: %d elements, cosine %f", size, i, len(e.Embedding), cosine(e.Embedding, want))
			}
		}
	}
	for _, bad := range []openai.EmbeddingNewParams{
		{Model: "nope", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: []int64{1}}},
		{Model: "qwen3-embed", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: []int64{1}}, Dimensions: openai.Int(12)},
		{Model: "qwen3-embed", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("no tokenizer")}},
	} {
		if _, err := client.Embeddings.New(ctx, bad); statusOf(err)/100 != 4 {
			t.Errorf("%+v: %v, want a 4xx", bad, err)
		}
	}

	inputs, _ := json.Marshal(golden.Inputs)
	want, _ := json.Marshal(golden.Vectors["0"])
	e2e.NodeModule(t, `import OpenAI from "openai";
const client = new OpenAI({ baseURL: process.env.WEFT_URL + "/v1", apiKey: process.env.WEFT_KEY, maxRetries: 0 });
const want = `+string(want)+`;
const res = await client.embeddings.create({ model: "qwen3-embed", input: `+string(inputs)+` });
const cos = (a, b) => { let ab = 0, aa = 0, bb = 0; a.forEach((x, i) => { ab += x * b[i]; aa += x * x; bb += b[i] * b[i]; }); return ab / Math.sqrt(aa * bb); };
if (res.data.length !== want.length || !res.data.every((d, i) => cos(d.embedding, want[i]) >= 0.9999)) { console.error(JSON.stringify(res)); process.exit(1); }
console.log(JSON.stringify({ ok: true }));
`, "WEFT_URL="+srv.URL, "WEFT_KEY="+srv.Key)
}
