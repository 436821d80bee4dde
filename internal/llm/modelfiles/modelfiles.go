// Package modelfiles reads the files a served model is described by,
// whatever its format: a Hugging Face directory's own files, or for a GGUF
// model (a .gguf file, a directory holding one, an Ollama model; see
// gguf.Locate) the equivalent files made from its metadata, so that the
// code reading tokenizer_config.json and generation_config.json serves
// both. The weights, configuration and tokenizer of either format load
// through model.Load, model.ReadConfig and tokenizer.Load.
package modelfiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/weftlabs/weft/internal/llm/gguf"
	"github.com/weftlabs/weft/internal/llm/tokenizer"
)

// The files of a Hugging Face directory a GGUF model has equivalents of.
const (
	TokenizerConfig  = "tokenizer_config.json"
	GenerationConfig = "generation_config.json"
)

// Name is the name a model path is served under by default: a
// directory's name, a GGUF file's name without .gguf, Ollama's model:tag.
func Name(path string) (string, error) {
	if loc, ok, err := gguf.Locate(path); err != nil {
		return "", err
	} else if ok {
		return loc.Name, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.Base(abs), nil
}

// ReadFile returns the model's file of that name: a Hugging Face
// directory's own, or for a GGUF model tokenizer_config.json
// (tokenizer.GGUFConfig) and generation_config.json (the ids llama.cpp ends
// generation at, tokenizer.EndOfGeneration, and an Ollama model's
// parameters as sampling defaults). A file the model does not have is an
// error wrapping fs.ErrNotExist.
func ReadFile(path, name string) ([]byte, error) {
	loc, ok, err := gguf.Locate(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return os.ReadFile(filepath.Join(path, name))
	}
	if name != TokenizerConfig && name != GenerationConfig {
		return nil, fmt.Errorf("%s: %w (a GGUF model)", name, fs.ErrNotExist)
	}
	f, err := gguf.Open(loc.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if name == TokenizerConfig {
		return tokenizer.GGUFConfig(f)
	}
	return generationConfig(f, loc)
}

// generationConfig makes generation_config.json for a GGUF model.
func generationConfig(f *gguf.File, loc gguf.Location) ([]byte, error) {
	eog, err := tokenizer.EndOfGeneration(f)
	if err != nil {
		return nil, err
	}
	g := map[string]any{"eos_token_id": eog}
	if loc.Params != "" {
		raw, err := os.ReadFile(loc.Params)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		var p map[string]json.RawMessage
		if err == nil {
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fmt.Errorf("%w: %s: the parameters blob %s: %v", gguf.ErrInvalid, loc.Manifest, loc.Params, err)
			}
		}
		// Ollama's names of the sampling defaults generation_config.json
		// holds.
		for ollama, hf := range map[string]string{"temperature": "temperature", "top_p": "top_p", "top_k": "top_k",
			"min_p": "min_p", "repeat_penalty": "repetition_penalty", "num_predict": "max_new_tokens"} {
			if v, ok := p[ollama]; ok {
				g[hf] = v
			}
		}
		if n, ok := g["max_new_tokens"].(json.RawMessage); ok && string(n) == "-1" {
			delete(g, "max_new_tokens") // Ollama's "no limit"
		}
	}
	return json.Marshal(g)
}
