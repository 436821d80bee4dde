package gguf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Ext is the extension of GGUF files.
const Ext = ".gguf"

// The media types of an Ollama manifest's layers this package reads.
const (
	OllamaModelLayer    = "application/vnd.ollama.image.model"
	OllamaParamsLayer   = "application/vnd.ollama.image.params"
	OllamaTemplateLayer = "application/vnd.ollama.image.template"
)

// Location is where a model path's GGUF file is: the file, and for an
// Ollama model the manifest and the blobs of its other layers.
type Location struct {
	// File is the GGUF file.
	File string
	// Name is the name the model goes by: the file's name without .gguf,
	// the name of the directory holding it, or Ollama's model:tag.
	Name string
	// Manifest is the Ollama manifest the file was found through ("" when
	// the path named the file or its directory).
	Manifest string
	// Params is the Ollama model's parameters blob (JSON: temperature,
	// top_p, stop, ...), "" when it has none.
	Params string
	// Template is the Ollama model's prompt template blob (Go text/template
	// syntax, not a chat template), "" when it has none.
	Template string
}

// Locate finds the GGUF model a path names: a .gguf file; a directory
// holding exactly one .gguf file and no config.json (a Hugging Face
// directory is not a GGUF model even with a .gguf beside it); or an Ollama
// model — a manifest file under models/manifests/<registry>/<namespace>/
// <model>/<tag>, or a model's directory there holding one tag — whose
// model layer names the blob under models/blobs. It returns ok false for a
// path that is none of these (a Hugging Face directory), and an error for a
// path that is one of them but broken.
func Locate(path string) (loc Location, ok bool, err error) {
	info, err := os.Stat(path)
	if err != nil {
		return Location{}, false, err
	}
	if !info.IsDir() {
		if strings.EqualFold(filepath.Ext(path), Ext) {
			return Location{File: path, Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))}, true, nil
		}
		if m, isManifest := ollamaManifestDir(path); isManifest {
			loc, err := readOllamaManifest(path, m)
			return loc, err == nil, err
		}
		return Location{}, false, nil
	}
	if _, err := os.Stat(filepath.Join(path, "config.json")); err == nil {
		return Location{}, false, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return Location{}, false, err
	}
	var ggufs, files []string
	for _, e := range entries {
		if e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0 {
			files = append(files, e.Name())
			if strings.EqualFold(filepath.Ext(e.Name()), Ext) {
				ggufs = append(ggufs, e.Name())
			}
		}
	}
	switch {
	case len(ggufs) == 1:
		return Location{File: filepath.Join(path, ggufs[0]), Name: filepath.Base(absOr(path))}, true, nil
	case len(ggufs) > 1:
		return Location{}, true, fmt.Errorf("%w: %s holds %d GGUF files (%s); name one", ErrInvalid, path, len(ggufs), strings.Join(ggufs, ", "))
	}
	if _, isManifest := ollamaManifestDir(path); isManifest && len(files) == 1 {
		return Locate(filepath.Join(path, files[0]))
	}
	return Location{}, false, nil
}

func absOr(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// ollamaManifestDir returns the models directory (the parent of manifests)
// of a path inside an Ollama store, and whether the path is in one.
func ollamaManifestDir(path string) (string, bool) {
	dir := filepath.Dir(absOr(path))
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Base(d) == "manifests" {
			return filepath.Dir(d), true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// readOllamaManifest reads an Ollama manifest and places its layers'
// blobs under models/blobs/sha256-<hex>.
func readOllamaManifest(path, models string) (Location, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Location{}, err
	}
	var m struct {
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Location{}, fmt.Errorf("%w: %s: not an Ollama manifest: %v", ErrInvalid, path, err)
	}
	abs := absOr(path)
	tag := filepath.Base(abs)
	name := filepath.Base(filepath.Dir(abs))
	loc := Location{Manifest: path, Name: name + ":" + tag}
	for i, l := range m.Layers {
		var dst *string
		switch l.MediaType {
		case OllamaModelLayer:
			dst = &loc.File
		case OllamaParamsLayer:
			dst = &loc.Params
		case OllamaTemplateLayer:
			dst = &loc.Template
		default:
			continue
		}
		hexDigest, ok := strings.CutPrefix(l.Digest, "sha256:")
		if !ok || len(hexDigest) != 64 || strings.Trim(hexDigest, "0123456789abcdef") != "" {
			return Location{}, fmt.Errorf("%w: %s: layers[%d].digest %q is not sha256:<64 hex digits>", ErrInvalid, path, i, l.Digest)
		}
		*dst = filepath.Join(models, "blobs", "sha256-"+hexDigest)
	}
	if loc.File == "" {
		return Location{}, fmt.Errorf("%w: %s: no layer of media type %s", ErrInvalid, path, OllamaModelLayer)
	}
	if _, err := os.Stat(loc.File); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Location{}, fmt.Errorf("%w: %s: the model blob %s is missing", ErrInvalid, path, loc.File)
		}
		return Location{}, err
	}
	return loc, nil
}
