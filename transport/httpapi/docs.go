package httpapi

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/go-chi/chi/v5"
)

//go:generate go run ../../internal/cmd/vendorgen -manifest docs/vendor.json -dest docs/vendor

// The API reference (GET /docs): Swagger UI over /openapi.json, its files
// vendored (docs/vendor.json pins them) and served from the binary, so that
// the page works with no other host in reach.
//
//go:embed docs/reference.js docs/vendor
var docsFiles embed.FS

// docsCSP lets the reference load its own files and the OpenAPI document,
// and nothing else. Swagger UI sets styles through the DOM, which a style-src
// without 'unsafe-inline' allows.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// docsPage is the reference's page; its addresses are relative to /docs, so
// that a handler mounted under a prefix serves a working page.
const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>weft API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/swagger-ui.css?v={{swagger-ui.css}}">
<script src="docs/swagger-ui-bundle.js?v={{swagger-ui-bundle.js}}" defer></script>
<script src="docs/reference.js?v={{reference.js}}" defer></script>
</head>
<body data-spec="openapi.json">
<main id="reference"></main>
</body>
</html>
`

// docs serves the reference's page and files.
type docs struct {
	files   map[string][]byte // by name: reference.js and the vendored files
	page    []byte
	version map[string]string // name → content hash, for the page's addresses
}

func newDocs() (*docs, error) {
	d := &docs{files: map[string][]byte{}, version: map[string]string{}}
	err := fs.WalkDir(docsFiles, "docs", func(name string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := docsFiles.ReadFile(name)
		if err != nil {
			return err
		}
		base := path.Base(name)
		sum := sha256.Sum256(b)
		d.files[base], d.version[base] = b, hex.EncodeToString(sum[:8])
		return nil
	})
	if err != nil {
		return nil, err
	}
	page := docsPage
	for name, v := range d.version {
		page = strings.ReplaceAll(page, "{{"+name+"}}", v)
	}
	d.page = []byte(page)
	return d, nil
}

// register adds GET /docs and GET /docs/{file} to router.
func (d *docs) register(router chi.Router) {
	router.Get("/docs", func(w http.ResponseWriter, r *http.Request) {
		d.headers(w, "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(d.page)
	})
	router.Get("/docs/{file}", func(w http.ResponseWriter, r *http.Request) {
		name := chi.URLParam(r, "file")
		b, ok := d.files[name]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
			return
		}
		d.headers(w, contentType(name))
		if r.URL.Query().Get("v") == d.version[name] {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		_, _ = w.Write(b)
	})
}

func (d *docs) headers(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}
