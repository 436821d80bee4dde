// Package gobuild builds the module's own programs for tests that run them as
// processes (the server, the test trainer): each once per test binary, into a
// temporary directory.
package gobuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

type build struct {
	once sync.Once
	path string
	err  error
}

// builds caches one build per package for the life of the test binary.
var builds sync.Map // package path → *build

// Binary returns the path of the program built from pkg, a package path
// relative to the module root such as "./examples/server".
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	entry, _ := builds.LoadOrStore(pkg, &build{})
	b := entry.(*build)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "weft-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, filepath.Base(pkg))
		_, file, _, _ := runtime.Caller(0)
		// -buildvcs=auto overrides a GOFLAGS that turns stamping off, so the
		// binaries carry the build information a checkout gives (the
		// server's version command prints it).
		cmd := exec.Command("go", "build", "-buildvcs=auto", "-o", b.path, pkg)
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("build %s: %v: %s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}
