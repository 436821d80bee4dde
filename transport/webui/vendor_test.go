package webui

import (
	"path/filepath"
	"testing"

	"github.com/weftlabs/weft/internal/vendored"
)

// TestVendoredFiles checks the committed third-party files against the hashes
// vendor.json pins, without fetching anything: a file edited by hand, or a
// version bump without new hashes, fails here.
func TestVendoredFiles(t *testing.T) {
	if err := vendored.Verify("vendor.json", filepath.Join("static", "vendor")); err != nil {
		t.Fatal(err)
	}
}
