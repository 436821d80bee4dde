package gguf

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ollamaStore lays out an Ollama models directory holding one model,
// library/tiny:1b, whose layers are the given blobs by media type, and
// returns the models directory and the manifest's path.
func ollamaStore(t *testing.T, layers map[string][]byte) (models, manifest string) {
	t.Helper()
	models = filepath.Join(t.TempDir(), "models")
	var entries []string
	for mediaType, blob := range layers {
		sum := sha256.Sum256(blob)
		digest := hex.EncodeToString(sum[:])
		if err := os.MkdirAll(filepath.Join(models, "blobs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(models, "blobs", "sha256-"+digest), blob, 0o644); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, fmt.Sprintf(`{"mediaType":%q,"digest":"sha256:%s","size":%d}`, mediaType, digest, len(blob)))
	}
	dir := filepath.Join(models, "manifests", "registry.ollama.ai", "library", "tiny")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest = filepath.Join(dir, "1b")
	body := `{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","layers":[` + strings.Join(entries, ",") + `]}`
	if err := os.WriteFile(manifest, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return models, manifest
}

func TestLocate(t *testing.T) {
	kvs, tensors := sample()
	dir := t.TempDir()
	file := filepath.Join(dir, "Tiny-Q8.gguf")
	if err := WriteFile(file, kvs, tensors); err != nil {
		t.Fatal(err)
	}
	hf := t.TempDir()
	for _, name := range []string{"config.json", "extra.gguf"} {
		if err := os.WriteFile(filepath.Join(hf, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	models, manifest := ollamaStore(t, map[string][]byte{
		OllamaModelLayer: []byte("GGUF"), OllamaParamsLayer: []byte(`{"temperature":0.6}`),
		OllamaTemplateLayer: []byte("{{ .Prompt }}"), "application/vnd.ollama.image.license": []byte("MIT"),
	})
	for _, c := range []struct {
		path     string
		ok       bool
		file     string
		name     string
		params   bool
		template bool
	}{
		{file, true, file, "Tiny-Q8", false, false},
		{dir, true, file, filepath.Base(dir), false, false},
		{hf, false, "", "", false, false},
		{manifest, true, "", "tiny:1b", true, true},
		{filepath.Dir(manifest), true, "", "tiny:1b", true, true},
	} {
		loc, ok, err := Locate(c.path)
		if err != nil || ok != c.ok {
			t.Errorf("%s: ok %v, %v", c.path, ok, err)
			continue
		}
		if !ok {
			continue
		}
		if c.file != "" && loc.File != c.file {
			t.Errorf("%s: file %s, want %s", c.path, loc.File, c.file)
		}
		if !strings.HasPrefix(loc.File, c.file) || loc.Name != c.name || (loc.Params != "") != c.params || (loc.Template != "") != c.template {
			t.Errorf("%s: %+v", c.path, loc)
		}
		if c.file == "" && !strings.HasPrefix(loc.File, filepath.Join(models, "blobs", "sha256-")) {
			t.Errorf("%s: the model blob is %s, not under %s/blobs", c.path, loc.File, models)
		}
	}
}

func TestLocateErrors(t *testing.T) {
	two := t.TempDir()
	for _, name := range []string{"a.gguf", "b.gguf"} {
		if err := os.WriteFile(filepath.Join(two, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := Locate(two); !ok || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "2 GGUF files") {
		t.Errorf("two GGUF files: %v, %v", ok, err)
	}
	_, noModel := ollamaStore(t, map[string][]byte{OllamaParamsLayer: []byte("{}")})
	if _, _, err := Locate(noModel); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), OllamaModelLayer) {
		t.Errorf("a manifest without a model layer: %v", err)
	}
	models, missing := ollamaStore(t, map[string][]byte{OllamaModelLayer: []byte("GGUF")})
	if err := os.RemoveAll(filepath.Join(models, "blobs")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Locate(missing); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing blob: %v", err)
	}
	_, bad := ollamaStore(t, nil)
	if err := os.WriteFile(bad, []byte(`{"layers":[{"mediaType":"`+OllamaModelLayer+`","digest":"sha256:../../etc"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Locate(bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "digest") {
		t.Errorf("a digest that is not hex: %v", err)
	}
	if _, _, err := Locate(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("an absent path located")
	}
}
