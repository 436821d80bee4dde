package llmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// LlamaCpp is llama.cpp's build beside the repository (../shared/llamacpp:
// its tools, gguf-py and ggml-vocab-llama-spm.gguf), an outside oracle.
type LlamaCpp struct {
	// Dir is the build's directory.
	Dir  string
	libs string // a directory of links to the tools' shared libraries
}

// RequireLlamaCpp finds llama.cpp's build, failing the test under CI and
// skipping it elsewhere when there is none.
func RequireLlamaCpp(tb testing.TB) *LlamaCpp {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	for _, dir := range []string{filepath.Join(root, "..", "shared", "llamacpp"), "/work/shared/llamacpp"} {
		if _, err := os.Stat(filepath.Join(dir, "bin", "llama-completion")); err == nil {
			return &LlamaCpp{Dir: dir, libs: libraryLinks(tb, filepath.Join(dir, "bin"))}
		}
	}
	msg := "llama.cpp's tools not found beside the repository (../shared/llamacpp)"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return nil
}

// libraryLinks makes the links the tools find their shared libraries by:
// copies of the build keep each link as a small file naming its target.
func libraryLinks(tb testing.TB, bin string) string {
	tb.Helper()
	libs := tb.TempDir()
	entries, err := os.ReadDir(bin)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if !strings.Contains(e.Name(), ".so") {
			continue
		}
		path := filepath.Join(bin, e.Name())
		target := path
		if info, err := os.Stat(path); err == nil && info.Size() < 256 {
			raw, err := os.ReadFile(path)
			if err != nil {
				tb.Fatal(err)
			}
			target = filepath.Join(bin, strings.TrimSpace(string(raw)))
		}
		if err := os.Symlink(target, filepath.Join(libs, e.Name())); err != nil {
			tb.Fatal(err)
		}
	}
	return libs
}

// Run runs one of the build's tools and returns its standard output,
// failing the test (with the tool's messages) when it fails.
func (l *LlamaCpp) Run(tb testing.TB, tool string, args ...string) []byte {
	tb.Helper()
	cmd := exec.Command(filepath.Join(l.Dir, "bin", tool), args...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+l.libs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}
