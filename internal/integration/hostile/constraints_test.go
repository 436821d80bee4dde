package hostile

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// letterPatterns is a 1.1 KB JSON Schema of 16 string properties, each
// "^\p{L}{1000}$": built whole, some 30 million automaton states.
func letterPatterns() string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 16 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string","pattern":"^\\p{L}{1000}$"}`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// hostileConstraintBodies are chat requests whose output constraint is too
// large to build, from every field that carries one.
func hostileConstraintBodies() map[string]string {
	schemas := map[string]string{
		"16 letter patterns":        letterPatterns(),
		"a chain of letter classes": `{"type":"string","pattern":"^` + strings.Repeat(`\\p{L}`, 400) + `$"}`,
		"items of bounded strings":  `{"type":"array","items":{"type":"string","pattern":"^[\\p{L}\\p{N}]{900,1000}$"},"minItems":1000}`,
		"a length-bounded pattern":  `{"type":"string","pattern":"^\\p{L}{1,1000}$","minLength":3,"maxLength":1000}`,
	}
	request := func(extra string) string {
		return `{"model":"` + e2e.TinyModelName + `","messages":[{"role":"user","content":"hi"}],"max_tokens":4,` + extra + `}`
	}
	bodies := map[string]string{
		"structured_outputs.regex": request(`"structured_outputs":{"regex":"((\\p{L}\\p{N}){30}){30}"}`),
		"structured_outputs.grammar": request(`"structured_outputs":{"grammar":` +
			quote(`root ::= [\p{L}]{1000} [\p{L}]{1000}`) + `}`),
	}
	for name, schema := range schemas {
		bodies["response_format: "+name] = request(`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + schema + `}}`)
	}
	// The schema of the report from every other field that takes one.
	schema := schemas["16 letter patterns"]
	tools := `"tools":[{"type":"function","function":{"name":"f","parameters":` + schema + `}}]`
	bodies["structured_outputs.json"] = request(`"structured_outputs":{"json":` + schema + `}`)
	bodies["guided_json"] = request(`"guided_json":` + schema)
	bodies["tool_choice required"] = request(tools + `,"tool_choice":"required"`)
	bodies["tool_choice named"] = request(tools + `,"tool_choice":{"type":"function","function":{"name":"f"}}`)
	return bodies
}

// TestHostileConstraints sends the real server, serving a tiny local model,
// output constraints too large to build, two at once: each is the 400
// that names the state budget, and the server's peak memory stays within a
// few compiles' budget of where it was (each such request took gigabytes
// when the budget was checked only once the automaton was built).
func TestHostileConstraints(t *testing.T) {
	t.Parallel()
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: testdb.SQLiteURL(t), Args: []string{"-model", e2e.TinyModel(t)}})
	client := e2e.Client{URL: srv.URL, Auth: e2e.Bearer(srv.Key)}
	// The engine and its vocabulary index are built by the first request.
	if res := do(client, "POST", "/v1/chat/completions", "application/json",
		[]byte(`{"model":"`+e2e.TinyModelName+`","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"structured_outputs":{"regex":"a+"}}`), nil); res.status != 200 {
		t.Fatalf("a plain constraint: %d %s %v", res.status, res.body, res.err)
	}
	before, err := srv.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	// As many at once as compile at once (constrain.DefaultMaxCompiles):
	// more would wait for a turn, and on a busy machine some could be
	// answered 503 to retry.
	bodies := make(chan [2]string)
	var wg sync.WaitGroup
	var found failures
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range bodies {
				name, body := b[0], b[1]
				res := do(client, "POST", "/v1/chat/completions", "application/json", []byte(body), nil)
				found.expect(name, res, is(400))
				if res.status == 400 && !strings.Contains(string(res.body), "too complex") {
					found.add("%s: %s, want the budget's message", name, truncate(res.body))
				}
			}
		}()
	}
	for name, body := range hostileConstraintBodies() {
		bodies <- [2]string{name, body}
	}
	close(bodies)
	wg.Wait()
	found.report(t)
	after, err := srv.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	// Two compiles run at once, each within ~100 MiB at the default
	// budget.
	if grown := after - before; grown > 400<<20 {
		t.Errorf("peak memory grew by %d MiB (from %d MiB), want at most 400 MiB", grown>>20, before>>20)
	}
	t.Logf("peak memory %d MiB before, %d MiB after", before>>20, after>>20)
}
