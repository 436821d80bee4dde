package chat

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// A route serves the endpoints its routing file names (the generation APIs
// when it names none); a request through another is a 400 naming that API
// and the ones the route serves; bad lists are refused at load.
func TestRouteEndpoints(t *testing.T) {
	t.Parallel()
	r, err := ParseRouting([]byte(`models:
  - name: chatty
    upstreams: [{url: http://127.0.0.1:1/v1}]
  - name: embedder
    endpoints: [embeddings]
    upstreams: [{url: http://127.0.0.1:1/v1}]
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Models[0].Endpoints; !slices.Equal(got, DefaultEndpoints) {
		t.Errorf("default endpoints %v", got)
	}
	g, err := New(Config{Routing: r})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	cards := g.Models()
	if len(cards) != 2 || !slices.Equal(cards[1].Endpoints, []string{"embeddings"}) {
		t.Errorf("models %+v", cards)
	}
	ctx := context.Background()
	_, err = g.Complete(ctx, "e/p", []byte(`{"model":"embedder","messages":[{"role":"user","content":"hi"}]}`))
	if !errors.Is(err, ErrUnsupportedEndpoint) || !strings.Contains(err.Error(), "Chat Completions API (/v1/chat/completions); it serves: embeddings") {
		t.Errorf("chat to an embedding model: %v", err)
	}
	_, err = g.CompleteAs(ctx, "e/p", []byte(`{"model":"embedder","messages":[{"role":"user","content":"hi"}]}`), TraceAs{Endpoint: EndpointResponses})
	if !errors.Is(err, ErrUnsupportedEndpoint) || !strings.Contains(err.Error(), "Responses API") {
		t.Errorf("responses to an embedding model: %v", err)
	}
	_, err = g.Embed(ctx, "e/p", []byte(`{"model":"chatty","input":"hi"}`))
	if !errors.Is(err, ErrUnsupportedEndpoint) || !strings.Contains(err.Error(), "Embeddings API (/v1/embeddings); it serves: chat, completions, responses") {
		t.Errorf("embeddings to a chat model: %v", err)
	}

	for text, want := range map[string]string{
		`{name: m, endpoints: [], upstreams: [{url: "http://h/v1"}]}`:             "at least one",
		`{name: m, endpoints: [chat, speech], upstreams: [{url: "http://h/v1"}]}`: `endpoint "speech"`,
		`{name: m, endpoints: [chat, chat], upstreams: [{url: "http://h/v1"}]}`:   "listed twice",
		`{name: m, upstreams: [{kind: local, path: /m/x}]}`:                       `kind "local" must be "vllm" or "openai"`,
	} {
		if _, err := ParseRouting([]byte("models:\n  - "+text+"\n"), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", text, err, want)
		}
	}
}
