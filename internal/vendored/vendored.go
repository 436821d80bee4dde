// Package vendored keeps third-party browser files in the repository pinned:
// a manifest (vendor.json) names, for each file, its npm package, exact
// version, path in the package and sha256. Fetch copies the files out of the
// packages (internal/cmd/vendorgen, through go generate); Verify checks the
// committed files against the manifest without fetching (the packages'
// tests call it), so that a file edited by hand, or a version bump without
// new hashes, fails.
package vendored

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
	"slices"
	"strings"
)

// Manifest is a vendor.json.
type Manifest struct {
	Files []File `json:"files"`
}

// File is one file taken from one npm package.
type File struct {
	Package string `json:"package"`
	Version string `json:"version"`
	// Path is the file's path inside the package (without npm's
	// "package/" prefix).
	Path string `json:"file"`
	// Dest is the file name in Dir.
	Dest   string `json:"dest"`
	SHA256 string `json:"sha256"`
	// Dir is where Dest goes, relative to the manifest's package; the
	// default directory (embedded and served) when empty. Files only tests
	// load go elsewhere, so that the binary neither carries nor serves
	// them.
	Dir string `json:"dir,omitempty"`
}

// Read reads a manifest.
func Read(manifestPath string) (Manifest, error) {
	var m Manifest
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%s: %w", manifestPath, err)
	}
	if len(m.Files) == 0 {
		return m, fmt.Errorf("%s lists no file", manifestPath)
	}
	for _, f := range m.Files {
		switch {
		case f.Package == "" || f.Version == "" || f.Path == "" || len(f.SHA256) != 64:
			return m, fmt.Errorf("%s: %+v: package, exact version, file and sha256 are required", manifestPath, f)
		case f.Dest == "" || f.Dest != path.Base(f.Dest):
			return m, fmt.Errorf("%s: %s: dest %q must be a plain file name", manifestPath, f.Package, f.Dest)
		case f.Dir != "" && !filepath.IsLocal(f.Dir):
			return m, fmt.Errorf("%s: %s: dir %q must be a relative path inside the package", manifestPath, f.Package, f.Dir)
		}
	}
	return m, nil
}

// dir is where f goes when defaultDir is the manifest's default.
func (f File) dir(defaultDir string) string {
	if f.Dir != "" {
		return filepath.FromSlash(f.Dir)
	}
	return defaultDir
}

// Verify checks the files of the manifest at manifestPath, in defaultDir
// unless a file names its own, against their pinned hashes, and that
// defaultDir holds no file the manifest does not list.
func Verify(manifestPath, defaultDir string) error {
	m, err := Read(manifestPath)
	if err != nil {
		return err
	}
	var errs []error
	var listed []string
	for _, f := range m.Files {
		file := filepath.Join(f.dir(defaultDir), f.Dest)
		content, err := os.ReadFile(file)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s@%s %s: %w (run go generate)", f.Package, f.Version, f.Path, err))
			continue
		}
		sum := sha256.Sum256(content)
		if got := hex.EncodeToString(sum[:]); got != f.SHA256 {
			errs = append(errs, fmt.Errorf("%s: sha256 %s, %s pins %s", file, got, manifestPath, f.SHA256))
		}
		if f.Dir == "" {
			listed = append(listed, f.Dest)
		}
	}
	entries, err := os.ReadDir(defaultDir)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, e := range entries {
		if !slices.Contains(listed, e.Name()) {
			errs = append(errs, fmt.Errorf("%s is not in %s", filepath.Join(defaultDir, e.Name()), manifestPath))
		}
	}
	return errors.Join(errs...)
}

// Fetch copies every file of the manifest at manifestPath out of its
// package: each package at its pinned version through `npm pack` (so that
// the npm client, not this program, talks to the registry), refusing a file
// whose sha256 is not the pinned one. It never records a hash it was not
// given: changing a version means changing its hashes by hand after reading
// the new files. It reports each file written to log.
func Fetch(manifestPath, defaultDir string, log io.Writer) error {
	m, err := Read(manifestPath)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "vendorgen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tarballs := map[string]string{} // "package@version" → tarball path
	for _, f := range m.Files {
		spec := f.Package + "@" + f.Version
		tarball, ok := tarballs[spec]
		if !ok {
			if tarball, err = pack(spec, work); err != nil {
				return err
			}
			tarballs[spec] = tarball
		}
		content, err := extract(tarball, "package/"+f.Path)
		if err != nil {
			return fmt.Errorf("%s: %w", spec, err)
		}
		sum := sha256.Sum256(content)
		if got := hex.EncodeToString(sum[:]); got != f.SHA256 {
			return fmt.Errorf("%s %s: sha256 is %s, %s says %s", spec, f.Path, got, manifestPath, f.SHA256)
		}
		dir := f.dir(defaultDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f.Dest), content, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(log, "%s %s -> %s\n", spec, f.Path, filepath.Join(dir, f.Dest))
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
