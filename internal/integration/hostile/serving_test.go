package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/modelserver"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// The serving routes beyond chat with models behind them: an embedding
// model run in-process, a remote embedding model, a remote generation
// model and one run in-process. Every hostile body gets a clear 4xx with a
// JSON body, never a 5xx: bad shapes, out-of-range numbers, token ids
// outside the vocabulary, more inputs and tokens than the -embeddings-max-…
// and -completions-max-… limits, unknown previous responses, and each model through an API it
// does not serve.
func TestHostileServingBodies(t *testing.T) {
	t.Parallel()
	upstream := modelserver.New(t)
	embedDir, _ := filepath.Abs("../../llm/testdata/torch/qwen3-embed")
	routing := filepath.Join(t.TempDir(), "routing.yaml")
	if err := os.WriteFile(routing, []byte(fmt.Sprintf(`models:
  - name: remote
    max_model_len: 4096
    vocab_size: 32000
    upstreams: [{url: %[1]s/v1}]
  - name: embedder
    endpoints: [embeddings]
    upstreams: [{url: %[1]s/v1}]
`, upstream.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t), Args: []string{
		"-chat-config", routing, "-model", e2e.TinyModel(t), "-embedding-model", embedDir,
		"-embeddings-max-inputs", "64", "-embeddings-max-input-tokens", "256",
		"-completions-max-prompts", "8", "-completions-max-tokens", "1024", "-log-level", "error",
	}})
	client := e2e.Client{URL: srv.URL, Auth: e2e.Bearer(srv.Key)}
	local := e2e.TinyModelName

	many := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	bodies := map[string][]string{
		"/v1/embeddings": {
			`{}`, `[]`, `"x"`, `null`, `{"model":"qwen3-embed"}`, `{"model":123,"input":[1]}`,
			`{"model":"qwen3-embed","input":[]}`, `{"model":"qwen3-embed","input":[[]]}`, `{"model":"qwen3-embed","input":[-1]}`,
			`{"model":"qwen3-embed","input":[2147483648]}`, `{"model":"qwen3-embed","input":[99999]}`, `{"model":"qwen3-embed","input":[1.5]}`,
			`{"model":"qwen3-embed","input":{"a":1}}`, `{"model":"qwen3-embed","input":5}`, `{"model":"qwen3-embed","input":[""]}`,
			`{"model":"qwen3-embed","input":"text without a tokenizer"}`,
			`{"model":"qwen3-embed","input":[1],"encoding_format":"bogus"}`, `{"model":"qwen3-embed","input":[1],"dimensions":0}`,
			`{"model":"qwen3-embed","input":[1],"dimensions":-1}`, `{"model":"qwen3-embed","input":[1],"dimensions":1000000000}`,
			`{"model":"qwen3-embed","input":[1],"dimensions":"8"}`, `{"model":"qwen3-embed","input":[1],"dimensions":1e99}`,
			`{"model":"qwen3-embed","input":[1],"truncate_prompt_tokens":-5}`, `{"model":"qwen3-embed","input":[1],"truncate_prompt_tokens":1000000000000}`,
			`{"model":"qwen3-embed","input":` + many(65, "[1]") + `}`, `{"model":"qwen3-embed","input":[` + many(257, "1")[1:] + `}`,
			`{"model":"embedder","input":` + many(65, `"a"`) + `}`, `{"model":"embedder","input":[` + many(257, "1")[1:] + `}`,
			`{"model":"embedder","input":"x","dimensions":0}`, `{"model":"remote","input":"x"}`, `{"model":"` + local + `","input":"x"}`,
			`{"model":"` + strings.Repeat("m", 100000) + `","input":"x"}`, `{"model":"qwen3-embed","input":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
		},
		"/v1/completions": {
			`{}`, `[]`, `null`, `{"model":"remote"}`, `{"model":"remote","prompt":[]}`, `{"model":"remote","prompt":[[]]}`,
			`{"model":"remote","prompt":[1.5]}`, `{"model":"remote","prompt":{"a":1}}`, `{"model":"remote","prompt":5}`,
			`{"model":"remote","prompt":"x","suffix":"y"}`, `{"model":"remote","prompt":"x","logprobs":1000}`, `{"model":"remote","prompt":"x","logprobs":-1}`,
			`{"model":"remote","prompt":"x","logprobs":true}`, `{"model":"remote","prompt":"x","n":0}`, `{"model":"remote","prompt":"x","n":1e9}`,
			`{"model":"remote","prompt":"x","best_of":0}`, `{"model":"remote","prompt":"x","n":2,"best_of":1}`, `{"model":"remote","prompt":"x","max_tokens":-1}`,
			`{"model":"remote","prompt":"x","max_tokens":1e30}`, `{"model":"remote","prompt":"x","temperature":"hot"}`, `{"model":"remote","prompt":"x","stop":5}`,
			`{"model":"remote","prompt":"x","stream":"yes"}`, `{"model":"remote","prompt":"x","stream_options":{"include_usage":true}}`,
			`{"model":"remote","prompt":"x","logit_bias":{"40000":1}}`, `{"model":"remote","prompt":"x","logit_bias":{"a":1}}`, `{"model":"remote","prompt":"x","echo":"yes"}`,
			`{"model":"remote","prompt":"x","structured_outputs":{"regex":"a","choice":["b"]}}`, `{"model":"remote","prompt":"x","seed":1e40}`,
			`{"model":"remote","prompt":` + many(9, `"x"`) + `}`, `{"model":"remote","prompt":` + many(9, "[1]") + `}`,
			`{"model":"remote","prompt":` + many(8, `"x"`) + `,"max_tokens":129}`, `{"model":"remote","prompt":"x","n":2,"best_of":65}`,
			`{"model":"remote","prompt":"x","n":16,"max_tokens":65}`, `{"model":"remote","prompt":` + many(8, `"x"`) + `,"n":9}`,
			`{"model":"embedder","prompt":"x"}`, `{"model":"qwen3-embed","prompt":"x"}`, `{"model":"nope","prompt":"x"}`,
			`{"model":"` + local + `","prompt":[151936]}`, `{"model":"` + local + `","prompt":[[1],[-1]]}`, `{"model":"` + local + `","prompt":[9e99]}`,
			`{"model":"` + local + `","prompt":"x","suffix":"y","echo":true}`, `{"model":"` + local + `","prompt":"x","suffix":5}`,
			`{"model":"` + local + `","prompt":"x","best_of":2,"temperature":0}`, `{"model":"` + local + `","prompt":"x","best_of":2,"stream":true}`,
			`{"model":"` + local + `","prompt":"x","max_tokens":0}`, `{"model":"` + local + `","prompt":"x","max_tokens":100000}`,
			`{"model":"` + local + `","prompt":"` + strings.Repeat("word ", 2000) + `"}`, `{"model":"` + local + `","prompt":` + many(9, `"x"`) + `}`,
			`{"model":"` + local + `","prompt":"x","logprobs":21}`, `{"model":"` + local + `","prompt":"x","prompt_logprobs":1,"stream":true}`,
			`{"model":"` + local + `","prompt":"x","truncation_side":"middle"}`, `{"model":"` + local + `","prompt":"x","truncate_prompt_tokens":100000}`,
			`{"model":"` + local + `","prompt":"x","structured_outputs":{"regex":"("}}`, `{"model":"` + local + `","prompt":"x","response_format":{"type":"json_schema"}}`,
			`{"model":"` + local + `","prompt":"x","use_beam_search":true}`, `{"model":"` + local + `","prompt":"x","add_special_tokens":"no"}`,
		},
		"/v1/responses": {
			`{}`, `[]`, `null`, `{"model":"remote"}`, `{"model":"remote","input":5}`, `{"model":"remote","input":[{"type":"bogus"}]}`,
			`{"model":"remote","input":[{"role":"wizard","content":"x"}]}`, `{"model":"remote","input":"x","previous_response_id":"resp_nope"}`,
			`{"model":"remote","input":"x","previous_response_id":5}`, `{"model":"remote","input":"x","max_output_tokens":-1}`,
			`{"model":"remote","input":"x","text":{"format":{"type":"bogus"}}}`, `{"model":"remote","input":"x","tools":[{"type":"web_search"}]}`,
			`{"model":"remote","input":"x","tools":[{"type":"function"}]}`, `{"model":"remote","input":"x","temperature":9}`,
			`{"model":"` + local + `","input":"x","max_output_tokens":1000000000}`, `{"model":"` + local + `","input":"x","top_p":-1}`,
			`{"model":"embedder","input":"x"}`, `{"model":"qwen3-embed","input":"x"}`, `{"model":"nope","input":"x"}`,
			`{"model":"remote","input":` + many(5000, `{"role":"user","content":"x"}`) + `}`,
		},
	}
	var found failures
	for path, list := range bodies {
		for _, body := range list {
			found.expect(path+" "+truncate([]byte(body)), do(client, "POST", path, "application/json", []byte(body), nil), clientError)
		}
	}
	found.report(t)
}
