package webui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestVendoredFiles checks the committed third-party files against the hashes
// vendor.json pins, without fetching anything: a file edited by hand, or a
// version bump without new hashes, fails here.
func TestVendoredFiles(t *testing.T) {
	raw, err := os.ReadFile("vendor.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Files []struct {
			Package, Version, File, Dest, SHA256, Dir string
		} `json:"files"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Files) == 0 {
		t.Fatal("vendor.json lists no file")
	}
	var listed []string
	for _, f := range m.Files {
		if f.Version == "" || f.Package == "" || len(f.SHA256) != 64 {
			t.Errorf("%+v: package, exact version and sha256 are required", f)
		}
		dir := filepath.Join("static", "vendor")
		if f.Dir != "" {
			dir = filepath.FromSlash(f.Dir)
		}
		content, err := os.ReadFile(filepath.Join(dir, f.Dest))
		if err != nil {
			t.Errorf("%s@%s %s: %v (run go generate ./transport/webui)", f.Package, f.Version, f.File, err)
			continue
		}
		sum := sha256.Sum256(content)
		if got := hex.EncodeToString(sum[:]); got != f.SHA256 {
			t.Errorf("%s: sha256 %s, vendor.json pins %s", filepath.Join(dir, f.Dest), got, f.SHA256)
		}
		if f.Dir == "" {
			listed = append(listed, f.Dest)
		}
	}
	entries, err := os.ReadDir(filepath.Join("static", "vendor"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains(listed, e.Name()) {
			t.Errorf("static/vendor/%s is not in vendor.json", e.Name())
		}
	}
}
