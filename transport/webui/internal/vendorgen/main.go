// Command vendorgen copies the web UI's third-party browser files into
// static/vendor/. For every entry of vendor.json it fetches the package at its
// pinned version with `npm pack` (so the npm client, not this program, talks to
// the registry), takes the named file out of the tarball, refuses it unless its
// sha256 is the one committed, and writes it. It runs from the webui package
// directory through go generate:
//
//	go generate ./transport/webui
//
// Changing a version means changing its hashes in vendor.json by hand after
// reading the new files: the tool never records a hash it was not given.
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// manifest is vendor.json.
type manifest struct {
	Files []vendoredFile `json:"files"`
}

// vendoredFile is one file taken from one npm package.
type vendoredFile struct {
	Package string `json:"package"`
	Version string `json:"version"`
	// File is the path inside the package (without npm's "package/" prefix).
	File string `json:"file"`
	// Dest is the file name under Dir.
	Dest   string `json:"dest"`
	SHA256 string `json:"sha256"`
	// Dir is where Dest goes, relative to the webui package; static/vendor
	// (embedded and served) when empty. Files only the tests load go
	// elsewhere, so that the binary neither carries nor serves them.
	Dir string `json:"dir,omitempty"`
}

func main() {
	if err := run("vendor.json", filepath.Join("static", "vendor")); err != nil {
		fmt.Fprintln(os.Stderr, "vendorgen:", err)
		os.Exit(1)
	}
}

func run(manifestPath, destDir string) error {
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		return err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%s: %w", manifestPath, err)
	}
	work, err := os.MkdirTemp("", "vendorgen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tarballs := map[string]string{} // "package@version" → tarball path
	for _, f := range m.Files {
		if f.Dest != path.Base(f.Dest) || f.Dest == "" {
			return fmt.Errorf("%s: dest %q must be a plain file name", f.Package, f.Dest)
		}
		spec := f.Package + "@" + f.Version
		tarball, ok := tarballs[spec]
		if !ok {
			if tarball, err = pack(spec, work); err != nil {
				return err
			}
			tarballs[spec] = tarball
		}
		content, err := extract(tarball, "package/"+f.File)
		if err != nil {
			return fmt.Errorf("%s: %w", spec, err)
		}
		sum := sha256.Sum256(content)
		if got := hex.EncodeToString(sum[:]); got != f.SHA256 {
			return fmt.Errorf("%s %s: sha256 is %s, vendor.json says %s", spec, f.File, got, f.SHA256)
		}
		dir := destDir
		if f.Dir != "" {
			if !filepath.IsLocal(f.Dir) {
				return fmt.Errorf("%s: dir %q must be a relative path inside the package", f.Package, f.Dir)
			}
			dir = filepath.FromSlash(f.Dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f.Dest), content, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s %s -> %s\n", spec, f.File, filepath.Join(dir, f.Dest))
	}
	return nil
}

// pack downloads the package tarball of spec into dir and returns its path.
func pack(spec, dir string) (string, error) {
	cmd := exec.Command("npm", "pack", spec, "--json", "--pack-destination", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack %s: %w", spec, err)
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 {
		return "", fmt.Errorf("npm pack %s: unexpected output %q", spec, strings.TrimSpace(string(out)))
	}
	return filepath.Join(dir, packed[0].Filename), nil
}

// extract returns the content of the entry named name in a .tgz.
func extract(tarball, name string) ([]byte, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("no %s in the package", name)
		}
		if err != nil {
			return nil, err
		}
		if h.Name == name && h.Typeflag == tar.TypeReg {
			return io.ReadAll(io.LimitReader(tr, 16<<20))
		}
	}
}
