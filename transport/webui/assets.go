package webui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// static holds the UI's own stylesheet and scripts and the vendored
// third-party files (static/vendor, written by go generate from vendor.json).
//
//go:embed static
var static embed.FS

// assets serves the embedded static files under content-hashed names
// ("app.3f2a91c0d4e5.css"): a name changes whenever its content does, so
// browsers may keep every file forever and still never run a stale one.
type assets struct {
	byName   map[string]string // "app.css" → "app.3f2a91c0d4e5.css"
	byHashed map[string]asset  // the other way, with the content
}

type asset struct {
	content     []byte
	contentType string
	etag        string
}

// hashLength is how many hex digits of the SHA-256 a served name carries.
const hashLength = 12

func loadAssets() (*assets, error) {
	a := &assets{byName: map[string]string{}, byHashed: map[string]asset{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		sum := sha256.Sum256(content)
		digest := hex.EncodeToString(sum[:])[:hashLength]
		ext := path.Ext(name)
		hashed := strings.TrimSuffix(name, ext) + "." + digest + ext
		contentType := mime.TypeByExtension(ext)
		if contentType == "" {
			contentType = "application/octet-stream"
		}
		a.byName[name] = hashed
		a.byHashed[hashed] = asset{content: content, contentType: contentType, etag: strconv.Quote(digest)}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webui: assets: %w", err)
	}
	return a, nil
}

// url returns the path a page links to for the static file name (relative
// to static/). An unknown name is a programming error caught when templates
// are rendered in the tests.
func (a *assets) url(name string) (string, error) {
	hashed, ok := a.byName[name]
	if !ok {
		return "", fmt.Errorf("webui: no static file %q", name)
	}
	return Prefix + "static/" + hashed, nil
}

// serve answers GET /ui/static/{name...}. Only hashed names are served, with
// a year-long immutable cache lifetime.
func (a *assets) serve(w http.ResponseWriter, r *http.Request) {
	file, ok := a.byHashed[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", file.contentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", file.etag)
	if r.Header.Get("If-None-Match") == file.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(file.content)))
	_, _ = w.Write(file.content)
}
