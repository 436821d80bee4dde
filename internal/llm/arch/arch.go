// Package arch names the decoder architectures the engine runs, once: the
// model package reads checkpoints by these names and llmtest writes its test
// checkpoints by them, so that adding an architecture is one entry here.
package arch

import "slices"

// Name is an architecture as a Hugging Face config.json's "architectures"
// names it.
type Name string

// The architectures the engine runs.
const (
	Llama Name = "LlamaForCausalLM"
	Qwen2 Name = "Qwen2ForCausalLM"
	Qwen3 Name = "Qwen3ForCausalLM"
	// Mistral is Llama's decoder with sliding window attention.
	Mistral Name = "MistralForCausalLM"
	// Gemma3 is Gemma 3's text decoder (Gemma3ForCausalLM; the language
	// model of a Gemma3ForConditionalGeneration directory loads as it).
	Gemma3 Name = "Gemma3ForCausalLM"
)

// Architecture is what the files of one architecture call it.
type Architecture struct {
	Name Name
	// ModelType is config.json's model_type.
	ModelType string
	// GGUF is general.architecture in a GGUF file, as llama.cpp's converter
	// writes it: Mistral's files say "llama" (without the window).
	GGUF string
}

// All lists the architectures, Llama before Mistral: a GGUF file saying
// "llama" reads as Llama.
func All() []Architecture {
	return []Architecture{
		{Llama, "llama", "llama"},
		{Qwen2, "qwen2", "qwen2"},
		{Qwen3, "qwen3", "qwen3"},
		{Mistral, "mistral", "llama"},
		{Gemma3, "gemma3_text", "gemma3"},
	}
}

// Lookup returns the architecture named n.
func Lookup(n Name) (Architecture, bool) {
	for _, a := range All() {
		if a.Name == n {
			return a, true
		}
	}
	return Architecture{}, false
}

// FromGGUF returns the architecture a GGUF file's general.architecture
// names (the first of All with that name).
func FromGGUF(name string) (Architecture, bool) {
	for _, a := range All() {
		if a.GGUF == name {
			return a, true
		}
	}
	return Architecture{}, false
}

// Names are the config.json names of All, in its order.
func Names() []string {
	var out []string
	for _, a := range All() {
		out = append(out, string(a.Name))
	}
	return out
}

// GGUFNames are the distinct general.architecture names of All, in its
// order.
func GGUFNames() []string {
	var out []string
	for _, a := range All() {
		if !slices.Contains(out, a.GGUF) {
			out = append(out, a.GGUF)
		}
	}
	return out
}
