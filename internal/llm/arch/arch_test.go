package arch_test

import (
	"slices"
	"testing"

	"github.com/weftlabs/weft/internal/llm/arch"
)

// A GGUF file's "llama" reads as Llama, not Mistral (llama.cpp's converter
// writes both so), and each name of the list is found by its own names.
func TestLookupByEachName(t *testing.T) {
	if a, ok := arch.FromGGUF("llama"); !ok || a.Name != arch.Llama {
		t.Errorf(`FromGGUF("llama") = %v, %v`, a, ok)
	}
	for _, a := range arch.All() {
		if got, ok := arch.Lookup(a.Name); !ok || got != a {
			t.Errorf("Lookup(%s) = %v, %v", a.Name, got, ok)
		}
		if got, ok := arch.FromGGUF(a.GGUF); !ok || got.GGUF != a.GGUF {
			t.Errorf("FromGGUF(%s) = %v, %v", a.GGUF, got, ok)
		}
	}
	if _, ok := arch.FromGGUF("phi3"); ok {
		t.Error("phi3 is not run")
	}
	if got := arch.GGUFNames(); !slices.Equal(got, []string{"llama", "qwen2", "qwen3", "gemma3"}) {
		t.Errorf("GGUFNames() = %v", got)
	}
}
