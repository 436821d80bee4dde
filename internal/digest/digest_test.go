package digest_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/digest"
)

// golden is testdata/golden.json, written by testdata/generate_golden.py with
// Python's json.dumps(sort_keys=True) and hashlib.
type golden struct {
	Objects []struct {
		Input     string `json:"input"`
		Canonical string `json:"canonical"`
		Digest    string `json:"digest"`
	} `json:"objects"`
	Tables []struct {
		Rows       []string `json:"rows"`
		RowDigests []string `json:"row_digests"`
		Digest     string   `json:"digest"`
	} `json:"tables"`
	Files []struct {
		Hex    string `json:"hex"`
		Digest string `json:"digest"`
	} `json:"files"`
}

func loadGolden(t testing.TB) golden {
	t.Helper()
	data, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Objects) == 0 || len(g.Tables) == 0 || len(g.Files) == 0 {
		t.Fatal("golden file has empty sections")
	}
	return g
}

func TestGoldenObjects(t *testing.T) {
	t.Parallel()
	for _, want := range loadGolden(t).Objects {
		v, err := digest.Parse([]byte(want.Input))
		if err != nil {
			t.Errorf("Parse(%s): %v", want.Input, err)
			continue
		}
		if got := string(v.Canonical()); got != want.Canonical {
			t.Errorf("Canonical(%s)\n got %s\nwant %s", want.Input, got, want.Canonical)
		}
		got, err := digest.JSON([]byte(want.Input))
		if err != nil || got != want.Digest {
			t.Errorf("JSON(%s) = %s, %v; want %s", want.Input, got, err, want.Digest)
		}
		if len(got) != digest.Length || !digest.IsContentHash(got) {
			t.Errorf("digest %q is not a 43-character content hash", got)
		}
	}
}

func TestGoldenTables(t *testing.T) {
	t.Parallel()
	for _, want := range loadGolden(t).Tables {
		var rowDigests []string
		for _, row := range want.Rows {
			d, err := digest.JSON([]byte(row))
			if err != nil {
				t.Fatal(err)
			}
			rowDigests = append(rowDigests, d)
		}
		if len(want.Rows) > 0 && !reflect.DeepEqual(rowDigests, want.RowDigests) {
			t.Errorf("row digests of %v = %v; want %v", want.Rows, rowDigests, want.RowDigests)
		}
		if got := digest.Table(rowDigests); got != want.Digest || !digest.IsContentHash(got) {
			t.Errorf("Table(%v) = %s; want %s", want.RowDigests, got, want.Digest)
		}
	}
}

func TestGoldenFiles(t *testing.T) {
	t.Parallel()
	for _, want := range loadGolden(t).Files {
		b, err := hex.DecodeString(want.Hex)
		if err != nil {
			t.Fatal(err)
		}
		if got := digest.Bytes(b); got != want.Digest {
			t.Errorf("Bytes(%x) = %s; want %s", b, got, want.Digest)
		}
	}
}

func TestParseRejectsInvalidJSON(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		``, `{`, `[1,]`, `{"a"}`, `{"a":1,}`, `01`, `1.`, `.5`, `1e`, `-`, `"\x"`, `"\u12"`,
		"\"tab\there\"", `NaN`, `Infinity`, `[1] 2`, `{1:2}`, `tru`, strings.Repeat("[", 2000) + strings.Repeat("]", 2000),
	} {
		if _, err := digest.Parse([]byte(text)); !errors.Is(err, digest.ErrSyntax) {
			t.Errorf("Parse(%q) error = %v; want ErrSyntax", text, err)
		}
	}
}

func TestValueKeepsNumberIdentityAndOrder(t *testing.T) {
	t.Parallel()
	v, err := digest.Parse([]byte(`{"b": 1.50, "a": 1, "b": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(v.Compact()); got != `{"b":1.50,"a":1,"b":2}` {
		t.Errorf("Compact = %s", got)
	}
	if b, _ := v.Get("b"); b.Text != "2" || b.IsFloat() {
		t.Errorf("Get(b) = %+v; want the last duplicate, an integer", b)
	}
	if got := string(v.Canonical()); got != `{"a": 1, "b": 2}` {
		t.Errorf("Canonical = %s", got)
	}
}

func TestIsContentHash(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		digest.Bytes(nil):             true,
		digest.Table(nil):             true,
		"latest":                      false,
		"v0":                          false,
		strings.Repeat("A", 42) + "-": false,
		strings.Repeat("F", 64):       false,
	} {
		if got := digest.IsContentHash(s); got != want {
			t.Errorf("IsContentHash(%q) = %v", s, got)
		}
	}
}

// FuzzCanonical checks that any input is either rejected as invalid JSON or
// encoded without panicking into valid JSON that means the same and is a
// fixed point (encoding the encoding changes nothing). The seeds are the golden
// inputs and testdata/fuzz/FuzzCanonical; plain `go test` runs only them.
func FuzzCanonical(f *testing.F) {
	for _, o := range loadGolden(f).Objects {
		f.Add([]byte(o.Input))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := digest.Parse(data)
		if err != nil {
			if !errors.Is(err, digest.ErrSyntax) {
				t.Fatalf("Parse error %v does not wrap ErrSyntax", err)
			}
			return
		}
		canonical := v.Canonical()
		if !json.Valid(canonical) && !strings.Contains(string(canonical), "Infinity") {
			t.Fatalf("canonical form of %q is not JSON: %s", data, canonical)
		}
		again, err := digest.Parse(canonical)
		if err != nil {
			if strings.Contains(string(canonical), "Infinity") {
				return // Python writes overflowing floats as Infinity, which JSON lacks
			}
			t.Fatalf("canonical form %s does not parse: %v", canonical, err)
		}
		if got := again.Canonical(); string(got) != string(canonical) {
			t.Fatalf("not a fixed point:\n%s\n%s", canonical, got)
		}
		compact, err := digest.Parse(v.Compact())
		if err != nil || string(compact.Canonical()) != string(canonical) {
			t.Fatalf("compact form changes the value: %s (%v)", v.Compact(), err)
		}
		var want, got any
		if json.Unmarshal(data, &want) == nil && json.Unmarshal(canonical, &got) == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("meaning changed:\n%s\n%s", data, canonical)
		}
	})
}
