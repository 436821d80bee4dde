package hostile

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestHostileModelNames: against `weft serve -model DIR` on SQLite and on
// PostgreSQL (the lookup reads one project's rows, alike on Citus), bob
// names alice's trained model, in every spelling a client may use, on every
// route and page that takes a model name, and each answers him as it
// answers a name that exists nowhere (same status, same body but for the
// name), while alice is served; his model list shows nothing of hers.
func TestHostileModelNames(t *testing.T) {
	t.Parallel()
	for _, b := range testdb.Backends[:2] {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			probeModelNames(t, b.URL(t))
		})
	}
}

func probeModelNames(t *testing.T, dbURL string) {
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: []string{"-model", e2e.TinyModel(t), "-log-level", "error"}})
	admin(t, dbURL, "user", "create", "alice")
	admin(t, dbURL, "user", "create", "bob")
	aliceKey, bobKey := admin(t, dbURL, "key", "create", "alice"), admin(t, dbURL, "key", "create", "bob")
	alice := e2e.Client{URL: srv.URL, Auth: e2e.Bearer(aliceKey)}
	bob := e2e.Client{URL: srv.URL, Auth: e2e.Bearer(bobKey)}
	var model struct{ ID string }
	alice.Call(t, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "agent", "base_model": e2e.TinyModelName}, &model)
	if status, body := bob.Send(t, http.MethodGet, "/v1/preview/models/"+model.ID, "", nil); status != http.StatusForbidden {
		t.Fatalf("bob reads alice's model: %d %s", status, body)
	}
	playground := bobPlayground(t, srv.URL, bobKey)

	messages := []map[string]string{{"role": "user", "content": "What is the secret?"}}
	type probe struct {
		name   string
		send   func(c e2e.Client, model string) response
		asBob  bool // alice's probe goes through bob's client too (the playground is bob's)
		status int  // what alice gets
	}
	post := func(path string, body func(model string) any) func(c e2e.Client, model string) response {
		return func(c e2e.Client, model string) response {
			b, _ := json.Marshal(body(model))
			return do(c, http.MethodPost, path, "application/json", b, nil)
		}
	}
	probes := []probe{
		{name: "completion", status: 200, send: post("/v1/chat/completions", func(m string) any {
			return map[string]any{"model": m, "messages": messages, "max_tokens": 2}
		})},
		{name: "streamed completion", status: 200, send: post("/v1/chat/completions", func(m string) any {
			return map[string]any{"model": m, "messages": messages, "max_tokens": 2, "stream": true}
		})},
		{name: "text completion", status: 200, send: post("/v1/completions", func(m string) any {
			return map[string]any{"model": m, "prompt": "The secret is", "max_tokens": 2, "logprobs": 1}
		})},
		{name: "streamed text completion", status: 200, send: post("/v1/completions", func(m string) any {
			return map[string]any{"model": m, "prompt": []int{1, 2, 3}, "max_tokens": 2, "stream": true}
		})},
		{name: "response", status: 200, send: post("/v1/responses", func(m string) any {
			return map[string]any{"model": m, "input": "What is the secret?", "max_output_tokens": 2, "store": false}
		})},
		{name: "streamed response", status: 200, send: post("/v1/responses", func(m string) any {
			return map[string]any{"model": m, "input": "What is the secret?", "max_output_tokens": 2, "store": false, "stream": true}
		})},
		{name: "embeddings", status: 400, send: post("/v1/embeddings", func(m string) any { return map[string]any{"model": m, "input": "x"} })},
		{name: "tokenize", status: 200, send: post("/tokenize", func(m string) any { return map[string]any{"model": m, "prompt": "x"} })},
		{name: "detokenize", status: 200, send: post("/detokenize", func(m string) any { return map[string]any{"model": m, "tokens": []int{1}} })},
		// Her trained model is served in-process, which makes no images: a
		// 400 saying so, to her; bob gets what a model that does not exist gets.
		{name: "image/create", status: 400, send: func(c e2e.Client, m string) response {
			project := "bob/p"
			if c.Auth == alice.Auth {
				project = "alice/p"
			}
			b, _ := json.Marshal(map[string]any{"project_id": project, "inputs": map[string]any{"model": m, "prompt": "a cat"}})
			res := do(c, http.MethodPost, "/image/create", "application/json", b, nil)
			res.body = traceCallID.ReplaceAll(res.body, []byte(`"trace_call_id":"…"`)) // a fresh id per call
			return res
		}},
		{name: "playground run", asBob: true, send: func(_ e2e.Client, m string) response {
			return playground(map[string]any{"model": m, "messages": messages, "max_tokens": 2})
		}},
	}
	names := []string{
		"alice/p/agent", "alice/p/agent:step0", "alice/p/agent:latest",
		"wandb-artifact:///alice/p/agent:step0", "wandb-artifact:///alice/p/agent", "wandb-artifact://alice/p/agent:latest",
	}
	var found failures
	for _, p := range probes {
		for _, name := range names {
			if !p.asBob {
				found.expect(p.name+" of "+name+" by alice", p.send(alice, name), is(p.status))
			}
			ghost := strings.Replace(name, "agent", "ghost", 1)
			unknown, got := p.send(bob, ghost), p.send(bob, name)
			found.expect(p.name+" of "+name+" by bob", got, nil)
			if want := strings.ReplaceAll(string(unknown.body), ghost, name); got.status != unknown.status || string(got.body) != want {
				found.add("%s of %s by bob: %d %s; a model that does not exist: %d %s", p.name, name, got.status, truncate(got.body), unknown.status, truncate(unknown.body))
			}
			if p.name != "image/create" && got.status != http.StatusNotFound {
				found.add("%s of %s by bob: %d, want 404", p.name, name, got.status)
			}
		}
	}
	// Hostile spellings of her model's name and ref, by bob: a 4xx, never a
	// 5xx, and never her model's answer (/image/create answers 200 with the
	// error in its response, as Weave's does).
	hostile := []string{
		"wandb-artifact:///bob/p/agent:step0/../../../alice/p/agent", "../alice/p/agent", "bob/p/../../alice/p/agent",
		"alice%2Fp%2Fagent", "ALICE/P/AGENT", " alice/p/agent", "alice/p/agent ", "alice/p/agent\u0000", "alice//p/agent",
		"wandb-artifact:///alice/p/agent:step-1", "wandb-artifact:///alice/p/agent:step99999999999999999999999",
		"wandb-artifact:///alice/p/agent:", "wandb-artifact:////alice/p/agent", "wandb-artifact:///alice/p/agent:step0?x=1#y",
		"weave:///alice/p/object/agent:latest", "weave:///alice/p/agent", "wandb-artifact:///alice/p", "wandb-artifact:///",
		strings.Repeat("alice/p/agent:", 5000),
	}
	clientError := func(status int) bool { return status >= 400 && status < 500 }
	for _, p := range probes {
		for _, name := range hostile {
			got, what := p.send(bob, name), p.name+" of "+truncate([]byte(name))+" by bob"
			if p.name == "image/create" {
				found.expect(what, got, nil)
				if !strings.Contains(string(got.body), `{"response":{"error":"The model `) {
					found.add("%s: %d %s", what, got.status, truncate(got.body))
				}
				continue
			}
			found.expect(what, got, clientError)
		}
	}
	// Nor does any answer tell an entity that exists from one that does
	// not: a model of an entity nobody has is answered as alice's ghost.
	for _, p := range probes {
		for _, name := range []string{"nobody/p/agent", " alice/p/agent", "ALICE/P/AGENT"} {
			ghost := "alice/p/ghost"
			unknown, got := p.send(bob, ghost), p.send(bob, name)
			if want := strings.ReplaceAll(string(unknown.body), ghost, name); got.status != unknown.status || string(got.body) != want {
				found.add("%s of %q by bob: %d %s; %s: %d %s", p.name, name, got.status, truncate(got.body), ghost, unknown.status, truncate(unknown.body))
			}
		}
	}
	if res := do(bob, http.MethodGet, "/v1/models", "", nil, nil); res.status != 200 || strings.Contains(string(res.body), "alice") {
		found.add("bob's model list: %d %s", res.status, truncate(res.body))
	}
	found.report(t)
}

var traceCallID = regexp.MustCompile(`"trace_call_id":"[^"]*"`)

var csrfValue = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// bobPlayground signs bob in to the web UI and returns a function that runs
// a request in his playground (project bob/p) as the page's script does.
func bobPlayground(t *testing.T, base, key string) func(body any) response {
	t.Helper()
	ui := e2e.Client{URL: base, Header: map[string]string{"Sec-Fetch-Site": "same-origin"}}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, base+"/ui/signin", strings.NewReader(url.Values{"key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var cookie string
	for _, c := range res.Cookies() {
		cookie = c.Name + "=" + c.Value
	}
	if res.StatusCode != http.StatusSeeOther || cookie == "" {
		t.Fatalf("sign-in: %d %v", res.StatusCode, res.Header)
	}
	ui.Header["Cookie"] = cookie
	home := do(ui, http.MethodGet, "/", "", nil, nil)
	m := csrfValue.FindSubmatch(home.body)
	if m == nil {
		t.Fatalf("no CSRF token on the home page: %d %s", home.status, truncate(home.body))
	}
	ui.Header["X-CSRF-Token"] = string(m[1])
	return func(body any) response {
		b, _ := json.Marshal(body)
		return do(ui, http.MethodPost, "/ui/p/bob/p/playground/run", "application/json", b, nil)
	}
}
