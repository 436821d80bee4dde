package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"
)

// referenceGolden is written by gen-tokenizer-reference-golden.mjs from the
// Rust tokenizers library itself: the authority where ports disagree.
type referenceGolden struct {
	Splits map[string]struct {
		Regex string `json:"regex"`
		Cases []struct {
			Text    string   `json:"text"`
			Offsets [][2]int `json:"offsets"` // piece bounds in characters
		} `json:"cases"`
	} `json:"splits"`
	Real       map[string][]referenceCase `json:"real"`
	RealDecode map[string][]struct {
		IDs                []int  `json:"ids"`
		Decoded            string `json:"decoded"`
		DecodedSkipSpecial string `json:"decoded_skip_special"`
	} `json:"real_decode"`
	Synthetic map[string]struct {
		Tokenizer json.RawMessage `json:"tokenizer"`
		Cases     []referenceCase `json:"cases"`
	} `json:"synthetic"`
}

type referenceCase struct {
	Text               string `json:"text"`
	IDs                []int  `json:"ids"`
	IDsWithSpecial     []int  `json:"ids_with_special"`
	Decoded            string `json:"decoded"`
	DecodedSkipSpecial string `json:"decoded_skip_special"`
}

func readReference(t *testing.T) referenceGolden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g referenceGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestReferenceSplits: the hand-written scanners cut random strings of
// awkward characters exactly where the reference regex engine does.
func TestReferenceSplits(t *testing.T) {
	g := readReference(t)
	if len(g.Splits) != 3 {
		t.Fatalf("want 3 regexes, have %d", len(g.Splits))
	}
	for name, s := range g.Splits {
		p, err := compilePattern("test", jsonPattern{Regex: &s.Regex})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.(regexPattern); ok {
			t.Fatalf("%s: the regex did not map to a scanner", name)
		}
		for _, c := range s.Cases {
			var got [][2]int
			pos := 0
			for _, pc := range splitPiece(piece{text: c.Text}, p, false, splitIsolated, nil) {
				n := utf8.RuneCountInString(pc.text)
				got = append(got, [2]int{pos, pos + n})
				pos += n
			}
			if !slices.Equal(got, c.Offsets) {
				t.Errorf("%s %q: pieces at %v, reference %v", name, c.Text, got, c.Offsets)
			}
		}
	}
}

func checkReferenceCases(t *testing.T, tok *Tokenizer, cases []referenceCase) {
	t.Helper()
	for _, c := range cases {
		if got := tok.Encode(c.Text, false); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
		if got := tok.Encode(c.Text, true); !slices.Equal(got, c.IDsWithSpecial) {
			t.Errorf("Encode(%q, special)\n got %v\nwant %v", c.Text, got, c.IDsWithSpecial)
		}
		// The library's own decode has no clean-up step (that is
		// transformers'), so compare without it.
		opts := DecodeOptions{KeepTokenizationSpaces: true}
		if got := tok.Decode(c.IDsWithSpecial, opts); got != c.Decoded {
			t.Errorf("Decode(%v) of %q\n got %q\nwant %q", c.IDsWithSpecial, c.Text, got, c.Decoded)
		}
		opts.SkipSpecialTokens = true
		if got := tok.Decode(c.IDsWithSpecial, opts); got != c.DecodedSkipSpecial {
			t.Errorf("Decode(%v, skip special) of %q\n got %q\nwant %q", c.IDsWithSpecial, c.Text, got, c.DecodedSkipSpecial)
		}
	}
}

// TestReferenceRealFiles: random text through the real files, and random
// id sequences back.
func TestReferenceRealFiles(t *testing.T) {
	g := readReference(t)
	for _, name := range fixtureNames {
		t.Run(name, func(t *testing.T) {
			if len(g.Real[name]) == 0 {
				t.Fatal("no cases")
			}
			tok := loadFixture(t, name)
			checkReferenceCases(t, tok, g.Real[name])
			if len(g.RealDecode[name]) == 0 {
				t.Fatal("no decode cases")
			}
			for _, c := range g.RealDecode[name] {
				opts := DecodeOptions{KeepTokenizationSpaces: true}
				if got := tok.Decode(c.IDs, opts); got != c.Decoded {
					t.Errorf("Decode(%v)\n got %q\nwant %q", c.IDs, got, c.Decoded)
				}
				opts.SkipSpecialTokens = true
				if got := tok.Decode(c.IDs, opts); got != c.DecodedSkipSpecial {
					t.Errorf("Decode(%v, skip special)\n got %q\nwant %q", c.IDs, got, c.DecodedSkipSpecial)
				}
			}
		})
	}
}

// TestReferenceComponents: small files exercising the options the real
// files do not (Metaspace schemes, added-token flags, split behaviors,
// normalizers, unknown tokens, templates).
func TestReferenceComponents(t *testing.T) {
	g := readReference(t)
	if len(g.Synthetic) == 0 {
		t.Fatal("no small files")
	}
	for name, s := range g.Synthetic {
		t.Run(name, func(t *testing.T) {
			tok, err := New(s.Tokenizer, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkReferenceCases(t, tok, s.Cases)
		})
	}
}
