package webui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// templates holds one file per page (defining "title" and "content", and the
// fragments htmx swaps in), the shared layout and the shared partials. The
// site-wide pages (sign-in, projects, errors) sit at the top; every other
// page sits in the folder of its family (tracelist, traceview, objects,
// evals, queue, training, playground), whose partials/ folder holds the
// templates its pages share. A page is named by its file name without
// ".html", unique across folders.
//
//go:embed templates
var templates embed.FS

// shared are the template files parsed into every page.
var shared = []string{"templates/layout.html", "templates/partials.html", "templates/*/partials/*.html"}

// pageFiles are the patterns of the page files: the site-wide pages and
// those of each family.
var pageFiles = []string{"templates/*.html", "templates/*/*.html"}

// pages holds each page's template set, by page name (its file name without
// ".html").
type pages struct {
	byName map[string]*template.Template
}

// page is what the layout renders: the page's own data is Body.
type page struct {
	Title  string
	Viewer *viewer
	// Project is the project the page belongs to ("" outside one), for the
	// navigation.
	Project string
	Body    any
}

func loadPages(a *assets) (*pages, error) {
	funcs := template.FuncMap{
		"asset":       a.url,
		"projectPath": projectPath,
		"seg":         pathSegment,
		"count":       formatCount,
		"tokens":      formatTokens,
		"perMillion":  perMillion,
		"latency":     formatLatency,
		"when":        formatTime,
		"isoTime":     func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
		"add":         func(a, b int) int { return a + b },
		"statusLabel": statusLabel,
		"dict":        dict,
		"percent":     func(rate float64) float64 { return rate * 100 },
		"cost":        func(c float64) string { return strconv.FormatFloat(c, 'f', 6, 64) },
		"verdictOps":  func() map[string]string { return verdictOpLabels },
	}
	for name, f := range traceViewFuncs(newMarkdownRenderer()) {
		funcs[name] = f
	}
	for name, f := range trainingFuncs() {
		funcs[name] = f
	}
	funcs["roles"] = func() []string { return roles }
	var files []string
	for _, pattern := range pageFiles {
		matched, err := fs.Glob(templates, pattern)
		if err != nil {
			return nil, err
		}
		files = append(files, matched...)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, file := range files {
		if isShared(file) {
			continue
		}
		name := strings.TrimSuffix(path.Base(file), ".html")
		if _, dup := p.byName[name]; dup {
			return nil, fmt.Errorf("webui: two page templates are named %s", name)
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(templates, append(shared, file)...)
		if err != nil {
			return nil, fmt.Errorf("webui: template %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

func isShared(file string) bool {
	for _, s := range shared {
		if ok, _ := path.Match(s, file); ok {
			return true
		}
	}
	return false
}

// render writes the page name inside the layout with status.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	h.execute(w, r, status, name, "layout", p)
}

// renderFragment writes one named template of page name alone, for htmx swaps.
func (h *Handler) renderFragment(w http.ResponseWriter, r *http.Request, name, fragment string, data any) {
	h.execute(w, r, http.StatusOK, name, fragment, data)
}

// execute renders into a buffer first, so a template error becomes a clean
// 500 page instead of half a page.
func (h *Handler) execute(w http.ResponseWriter, r *http.Request, status int, name, tmpl string, data any) {
	t, ok := h.pages.byName[name]
	if !ok {
		h.internalError(w, r, fmt.Errorf("webui: no page %q", name))
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, tmpl, data); err != nil {
		if name == "error" { // do not loop
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		h.internalError(w, r, fmt.Errorf("webui: render %s/%s: %w", name, tmpl, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// errorPage is the data of the error page.
type errorPage struct {
	Status  int
	Heading string
	Message string
}

// renderError answers status with the error page (or, for an htmx request,
// the error fragment alone).
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	data := errorPage{Status: status, Heading: http.StatusText(status), Message: msg}
	v, _ := h.viewerOf(r)
	if r.Header.Get("HX-Request") == "true" {
		h.execute(w, r, status, "error", "error_box", data)
		return
	}
	h.render(w, r, status, "error", page{Title: data.Heading, Viewer: v, Body: data})
}

// projectPath is the path of a page of project ("<entity>/<project>"), with
// each name escaped as one path segment: rest is appended as given.
func projectPath(projectID string, rest ...string) string {
	entity, project, _ := strings.Cut(projectID, "/")
	return Prefix + "p/" + url.PathEscape(entity) + "/" + url.PathEscape(project) + "/" + strings.Join(rest, "")
}

// dict builds a map from key, value pairs, to pass several values to a
// template.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict: odd number of arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		key, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
		}
		m[key] = kv[i+1]
	}
	return m, nil
}

// pathSegment escapes one path segment (a call or trace id).
func pathSegment(s string) string { return url.PathEscape(s) }

// countCap is where counts stop: "10,000+".
const countCap = 10_000

// formatCount writes n with thousands separators, capped at countCap.
func formatCount(n int64) string {
	if n > countCap {
		return groupThousands(countCap) + "+"
	}
	return groupThousands(n)
}

func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatTokens is a token count, "–" when unknown.
func formatTokens(n int64) string {
	if n <= 0 {
		return "–"
	}
	return groupThousands(n)
}

// formatLatency is a duration in milliseconds, "–" while a call runs.
func formatLatency(ms *int64) string {
	switch {
	case ms == nil:
		return "–"
	case *ms < 1000:
		return strconv.FormatInt(*ms, 10) + " ms"
	case *ms < 60_000:
		return strconv.FormatFloat(float64(*ms)/1000, 'f', 2, 64) + " s"
	default:
		return (time.Duration(*ms) * time.Millisecond).Round(time.Second).String()
	}
}

// formatTime is a UTC timestamp people read; app.js turns it into local time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}
