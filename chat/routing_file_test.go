package chat

import (
	"os"
	"testing"
)

// The example routing file shipped with the server parses.
func TestExampleRoutingFile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../examples/server/chat-routing.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRouting(data, func(name string) (string, bool) { return "key-of-" + name, true })
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Models) != 3 || r.LoRA == nil || r.Models[0].Upstreams[1].apiKey != "key-of-VLLM_B_API_KEY" || r.Models[0].MaxModelLen != 8192 {
		t.Fatalf("%+v", r)
	}
}
