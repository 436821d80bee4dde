package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/internal/vendored"
	"github.com/weftlabs/weft/trace"
)

// TestDocsVendoredFiles checks the reference's third-party files against
// the hashes docs/vendor.json pins, without fetching anything.
func TestDocsVendoredFiles(t *testing.T) {
	if err := vendored.Verify("docs/vendor.json", "docs/vendor"); err != nil {
		t.Fatal(err)
	}
}

// TestDocsFromTheBinary: /docs is a page of the server's own files, which it
// serves (each address it names answers), under a policy that lets it load
// nothing from another host.
func TestDocsFromTheBinary(t *testing.T) {
	f := newFixture(t, testdb.SQLite(t), 0)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := http.Get(f.server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, page := get("/docs")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self';") {
		t.Fatalf("/docs policy: %q", csp)
	}
	if strings.Contains(page, "//") {
		t.Fatalf("/docs names another host:\n%s", page)
	}
	var files []string
	for _, ref := range regexp.MustCompile(`(?:href|src)="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(ref[1], "data:") { // the empty icon
			files = append(files, ref[1])
		}
	}
	if len(files) != 3 {
		t.Fatalf("/docs loads %d files, want the stylesheet and two scripts:\n%s", len(files), page)
	}
	for _, file := range files {
		res, body := get("/" + file)
		if res.StatusCode != http.StatusOK || len(body) == 0 || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %d, %d bytes, %q", file, res.StatusCode, len(body), res.Header.Get("Cache-Control"))
		}
	}
	if res, _ := get("/docs/nothing.js"); res.StatusCode != http.StatusNotFound {
		t.Errorf("/docs/nothing.js: %d", res.StatusCode)
	}
}

// TestOpenAPIDocumentsOTLP: /openapi.json lists the OTLP route, served
// outside huma, with both of its encodings and its key header.
func TestOpenAPIDocumentsOTLP(t *testing.T) {
	db := testdb.SQLite(t)
	calls, err := trace.New(trace.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, db, 0, func(c *Config) { c.Trace = calls })
	res, err := http.Get(f.server.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			RequestBody struct {
				Content map[string]any `json:"content"`
			} `json:"requestBody"`
			Security  []map[string][]string `json:"security"`
			Responses map[string]any        `json:"responses"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	op, ok := doc.Paths["/otel/v1/traces"]["post"]
	if !ok {
		t.Fatalf("no POST /otel/v1/traces in the document's %d paths", len(doc.Paths))
	}
	if op.RequestBody.Content["application/x-protobuf"] == nil || op.RequestBody.Content["application/json"] == nil ||
		len(op.Security) != 3 || op.Responses["200"] == nil || op.Responses["415"] == nil {
		t.Fatalf("POST /otel/v1/traces: %+v", op)
	}
}
