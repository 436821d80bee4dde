package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestTrainedModelsStayWithTheirTenant: alice trains alice/mail/agent (a
// real adapter as checkpoint 1) over the local base model; bob, in an
// entity of his own, names it in every spelling on every route that takes
// a model name, and each answers him exactly as it answers a model that
// does not exist (404, same body but for the name), while alice is served.
// The model list and /metrics name no trained model and no server path.
func TestTrainedModelsStayWithTheirTenant(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	f, _, _ := newLocalCheckpoints(t, db, map[int]lora.Config{1: {}})
	bobKey := newUser(t, db, "bob")
	m := trainModel(t, f, f.aliceKey, "mail", "agent", 1)
	if status := f.call(t, bobKey, http.MethodGet, "/v1/preview/models/"+m.ID, nil, nil); status != http.StatusForbidden {
		t.Fatalf("bob reads alice's model: %d, want 403", status)
	}

	send := func(key, path string, body map[string]any) (int, string) {
		t.Helper()
		var raw []byte
		status := f.call(t, key, http.MethodPost, path, body, &raw)
		return status, string(raw)
	}
	messages := []map[string]string{{"role": "user", "content": "What is the secret?"}}
	routes := []struct {
		name, path string
		body       func(model string) map[string]any
	}{
		{"completion", "/v1/chat/completions", func(model string) map[string]any {
			return map[string]any{"model": model, "messages": messages, "max_tokens": 4}
		}},
		{"streamed completion", "/v1/chat/completions", func(model string) map[string]any {
			return map[string]any{"model": model, "messages": messages, "max_tokens": 4, "stream": true}
		}},
		{"tokenize", "/tokenize", func(model string) map[string]any { return map[string]any{"model": model, "prompt": "secret"} }},
		{"tokenize messages", "/tokenize", func(model string) map[string]any { return map[string]any{"model": model, "messages": messages} }},
		{"detokenize", "/detokenize", func(model string) map[string]any { return map[string]any{"model": model, "tokens": []int{1, 2}} }},
	}
	names := []string{
		"alice/mail/agent", "alice/mail/agent:step1", "alice/mail/agent:step0", "alice/mail/agent:latest",
		"wandb-artifact:///alice/mail/agent:step1", "wandb-artifact:///alice/mail/agent", "wandb-artifact://alice/mail/agent:latest",
	}
	for _, r := range routes {
		for _, name := range names {
			if status, raw := send(f.aliceKey, r.path, r.body(name)); status != http.StatusOK {
				t.Errorf("%s of %s by alice: %d %s", r.name, name, status, raw)
			}
			// A name of the same shape that names nothing: the answer bob
			// must get, name for name.
			ghost := strings.Replace(name, "agent", "ghost", 1)
			ghostStatus, ghostBody := send(bobKey, r.path, r.body(ghost))
			status, raw := send(bobKey, r.path, r.body(name))
			if want := strings.ReplaceAll(ghostBody, ghost, name); status != http.StatusNotFound || ghostStatus != http.StatusNotFound || raw != want {
				t.Errorf("%s of %s by bob: %d %s\nan unknown model answers %d %s", r.name, name, status, raw, ghostStatus, ghostBody)
			}
		}
	}

	// Images name models too: the answer names no checkpoint of alice's.
	image := func(model string) string {
		status, raw := send(bobKey, "/image/create", map[string]any{"project_id": "bob/p", "inputs": map[string]any{"model": model, "prompt": "a cat"}})
		return fmt.Sprintf("%d %s", status, raw)
	}
	for _, name := range names {
		ghost := strings.Replace(name, "agent", "ghost", 1)
		if got, want := image(name), strings.ReplaceAll(image(ghost), ghost, name); got != want {
			t.Errorf("image/create of %s by bob: %s, an unknown model: %s", name, got, want)
		}
	}

	// The model list shows the served names alone: no trained model, no
	// path on the server.
	var list struct{ Data []chat.ModelCard }
	if status := f.call(t, bobKey, http.MethodGet, "/v1/models", nil, &list); status != http.StatusOK {
		t.Fatalf("models: %d", status)
	}
	if len(list.Data) != 1 || list.Data[0].ID != "tiny-base" || list.Data[0].Root != "tiny-base" {
		t.Errorf("bob's model list: %+v", list.Data)
	}
	// /metrics, which anyone may read, counts alice's completions under
	// the base model that served them, not under her model's name.
	var metrics []byte
	if status := f.call(t, "", http.MethodGet, "/metrics", nil, &metrics); status != http.StatusOK ||
		!strings.Contains(string(metrics), `weft_chat_upstream_attempts_total{model="tiny-base",outcome="ok"}`) ||
		strings.Contains(string(metrics), "alice") || strings.Contains(string(metrics), "agent") {
		t.Errorf("/metrics: %d\n%s", status, metrics)
	}
}

// newUser creates a user (with the personal entity of its name) in db and
// returns an API key of it.
func newUser(t testing.TB, db *weft.DB, name string) string {
	t.Helper()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := identity.CreateUser(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	key, err := identity.CreateAPIKey(ctx, name, "test")
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestPrefixCacheKeepsTenantsApart: with prompt_tokens_details on, bob's
// correct guess of alice's prompt is served as many cached tokens as a
// wrong guess of the same length (none of hers), with or without a
// cache_salt of his (which adds to his entity's, never replaces it: the
// same salt as alice's reads nothing of hers either), while alice's own
// repeat reads her prompt from the cache.
func TestPrefixCacheKeepsTenantsApart(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	s := &localServer{fixture: newFixture(t, db, 1<<20, func(cfg *Config) { cfg.Chat = sharedGateway(t) })}
	bobKey := newUser(t, db, "bob")
	body := func(secret, salt string) string {
		b, _ := json.Marshal(map[string]any{"model": "tiny", "max_tokens": 1, "cache_salt": salt,
			"messages": []map[string]string{{"role": "user", "content": secret + strings.Repeat(" word", 40)}}})
		if salt == "" {
			b = bytes.Replace(b, []byte(`"cache_salt":"",`), nil, 1)
		}
		return string(b)
	}
	cached := func(key, body string) int {
		c, _ := s.completeAs(t, key, body)
		return c.Usage.PromptTokensDetails.CachedTokens
	}
	for _, salt := range []string{"", "shared-salt"} {
		secret, wrong := rand.Text(), rand.Text() // same length, different from the first token
		if n := cached(s.aliceKey, body(secret, salt)); n != 0 {
			t.Fatalf("salt %q: alice's first request read %d cached tokens", salt, n)
		}
		if n := cached(s.aliceKey, body(secret, salt)); n < 32 {
			t.Errorf("salt %q: alice's repeat read %d cached tokens, want her prompt's full blocks", salt, n)
		}
		miss, guess := cached(bobKey, body(wrong, salt)), cached(bobKey, body(secret, salt))
		if guess != miss {
			t.Errorf("salt %q: bob's correct guess of alice's prompt read %d cached tokens, a wrong guess %d", salt, guess, miss)
		}
	}
}

// TestLocalRequestTokenBound: a request asking a local model for more than
// max_request_tokens (n × max_tokens) is answered 400 in vLLM's shape,
// naming both fields, whole or streamed, before anything runs.
func TestLocalRequestTokenBound(t *testing.T) {
	t.Parallel()
	s := newLocalServer(t)
	for _, stream := range []string{"false", "true"} {
		status, _, raw := s.post(t, "/v1/chat/completions", `{"model":"tiny",`+hello+`,"n":400,"max_tokens":200,"stream":`+stream+`}`)
		var body struct {
			Error struct {
				Message, Type, Param string
				Code                 int
			}
		}
		_ = json.Unmarshal(raw, &body)
		if e := body.Error; status != http.StatusBadRequest || e.Type != "BadRequestError" || e.Param != "n" || e.Code != 400 ||
			!strings.Contains(e.Message, "n × max_tokens = 400 × 200 = 80000") || !strings.Contains(e.Message, "(65536)") {
			t.Errorf("stream %s: %d %s", stream, status, raw)
		}
	}
	if c, _ := s.complete(t, `{"model":"tiny",`+hello+`,"n":2,"max_tokens":3}`); len(c.Choices) != 2 {
		t.Fatalf("%d choices", len(c.Choices))
	}
}
