package llmtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
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
	dirs := []string{filepath.Join(root, "..", "shared", "llamacpp"), "/work/shared/llamacpp"}
	if dir := os.Getenv("LLAMACPP"); dir != "" {
		// Another build of the same tools (one for this CPU, say).
		dirs = []string{dir}
	}
	for _, dir := range dirs {
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
	out, illegal := l.Try(tb, tool, args...)
	if illegal {
		tb.Fatalf("%s %s: killed by SIGILL: this build of llama.cpp uses instructions this CPU lacks", tool, strings.Join(args, " "))
	}
	return out
}

// Try is Run, but where the tool dies of SIGILL it returns illegal instead
// of failing: the build was made for CPUs with instructions this one lacks
// (AVX-VNNI, say), which its quantised products use and its float32 ones
// do not, so a test can fall back to what the tool answered where it runs.
func (l *LlamaCpp) Try(tb testing.TB, tool string, args ...string) (out []byte, illegal bool) {
	tb.Helper()
	cmd := exec.Command(filepath.Join(l.Dir, "bin", tool), args...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+l.libs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.Signaled() && status.Signal() == syscall.SIGILL {
			return nil, true
		}
	}
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, false
}
