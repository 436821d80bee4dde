package blob_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlabs/weft/training/blob"
)

// TestDirPutSyncs: Put syncs the file's content before it renames it into
// place, then the directory that gained it, and each directory it created,
// so the file is durable when Put returns.
func TestDirPutSyncs(t *testing.T) {
	root := t.TempDir()
	var synced []string
	putting := "models/m/a.bin"
	d := &blob.Dir{Root: root, Sync: func(f *os.File) error {
		info, err := f.Stat()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, f.Name())
		if info.IsDir() {
			synced = append(synced, "dir "+filepath.ToSlash(rel))
			return f.Sync()
		}
		// A file is synced before it has its name, with all its content.
		if !strings.HasPrefix(filepath.Base(rel), ".put-") || info.Size() != int64(len("weights")) {
			t.Errorf("synced %s of %d bytes, want the temporary file with the whole content", rel, info.Size())
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(putting))); err == nil {
			t.Error("the file had its final name before its content was synced")
		}
		synced = append(synced, "file")
		return f.Sync()
	}}
	if err := d.Put(context.Background(), putting, strings.NewReader("weights")); err != nil {
		t.Fatal(err)
	}
	want := []string{"dir .", "dir models", "file", "dir models/m"}
	if strings.Join(synced, ", ") != strings.Join(want, ", ") {
		t.Fatalf("syncs = %q, want %q", synced, want)
	}
	// A second file in the same directory creates no directory.
	synced, putting = nil, "models/m/b.bin"
	if err := d.Put(context.Background(), putting, strings.NewReader("weights")); err != nil {
		t.Fatal(err)
	}
	if want := "file, dir models/m"; strings.Join(synced, ", ") != want {
		t.Fatalf("syncs = %q, want %q", synced, want)
	}
}
