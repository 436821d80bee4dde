package jinja

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// frozenNow is the instant the oracles froze their clocks at for strftime_now.
func frozenNow() time.Time { return time.Date(2024, 7, 5, 9, 3, 0, 0, time.UTC) }

type featureCase struct {
	Corpus string          `json:"corpus"`
	Index  int             `json:"index"`
	Src    string          `json:"src"`
	Vars   json.RawMessage `json:"vars"`
	Output *string         `json:"output"`
	Error  *string         `json:"error"`
}

func readFeatureGolden(t *testing.T, name string) []featureCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []featureCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 40 {
		t.Fatalf("only %d cases in %s", len(g.Cases), name)
	}
	return g.Cases
}

func renderCase(t *testing.T, c featureCase) (string, error) {
	t.Helper()
	vars := map[string]Value{}
	if len(c.Vars) > 0 {
		v, err := FromJSON(c.Vars)
		if err != nil {
			t.Fatal(err)
		}
		d := v.(*Dict)
		for _, k := range d.Keys() {
			vars[k], _ = d.Get(k)
		}
	}
	tpl, err := Parse(c.Src)
	if err != nil {
		return "", err
	}
	return tpl.Execute(vars, Options{Now: frozenNow})
}

func checkFeatureCases(t *testing.T, cases []featureCase) {
	for _, c := range cases {
		out, err := renderCase(t, c)
		switch {
		case c.Error != nil && err == nil:
			t.Errorf("%s case %d: want an error like %q, rendered %q\n%s", c.Corpus, c.Index, *c.Error, out, c.Src)
		case c.Error == nil && err != nil:
			t.Errorf("%s case %d: want %q, got error %v\n%s", c.Corpus, c.Index, *c.Output, err, c.Src)
		case c.Error == nil && out != *c.Output:
			t.Errorf("%s case %d:\n got: %q\nwant: %q\n%s", c.Corpus, c.Index, out, *c.Output, c.Src)
		}
	}
}

// TestFeaturesHuggingFaceJinja: the feature corpus as @huggingface/jinja
// renders it (gen-template-golden.mjs).
func TestFeaturesHuggingFaceJinja(t *testing.T) {
	checkFeatureCases(t, readFeatureGolden(t, "features.golden.json"))
}

// TestFeaturesPythonJinja: the same corpus plus Python-only constructs as
// Python's Jinja2 renders them in transformers' environment
// (gen-template-python-golden.py): what vLLM runs.
func TestFeaturesPythonJinja(t *testing.T) {
	checkFeatureCases(t, readFeatureGolden(t, "python-features.golden.json"))
}

// TestRandomTemplatesPythonJinja: templates drawn at random from the
// constructs chat templates use, as Python's Jinja2 renders them
// (gen-template-python-golden.py, fixed seed).
func TestRandomTemplatesPythonJinja(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "python-random.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Vars  json.RawMessage `json:"vars"`
		Cases []featureCase   `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 1000 {
		t.Fatalf("only %d cases", len(g.Cases))
	}
	for i := range g.Cases {
		g.Cases[i].Vars = g.Vars
		g.Cases[i].Corpus = "random"
	}
	checkFeatureCases(t, g.Cases)
}
