package webui

import (
	"bytes"
	"html/template"
	"net/url"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxMarkdownBytes bounds the text rendered as Markdown; a longer text is
// shown as plain text (the parser's work grows with it, the reader's benefit
// does not).
const maxMarkdownBytes = 64 << 10

// markdownRenderer turns message text into HTML for people. Raw HTML in the
// text is shown as text (htmlAsText), and safeLinks rewrites every link and
// image so that nothing rendered can run code or fetch from another site.
type markdownRenderer struct {
	md goldmark.Markdown
}

func newMarkdownRenderer() *markdownRenderer {
	return &markdownRenderer{md: goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify, extension.TaskList),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 0))),
		// Before the HTML renderer (1000): a lower value takes precedence.
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(htmlAsText{}, 100))),
	)}
}

// render returns src as HTML, or ok=false when it could not be rendered (too
// long, or a parser error): the caller then shows the text as it is.
func (m *markdownRenderer) render(src string) (html template.HTML, ok bool) {
	if len(src) > maxMarkdownBytes {
		return "", false
	}
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		return "", false
	}
	// The output is goldmark's, from an AST whose raw HTML is omitted and
	// whose links safeLinks has vetted: it is safe to insert as markup.
	return template.HTML(buf.String()), true //nolint:gosec // see above
}

// html is the template function "markdown": src rendered, or shown as
// preformatted text when it cannot be.
func (m *markdownRenderer) html(src string) template.HTML {
	if src == "" {
		return ""
	}
	if out, ok := m.render(src); ok {
		return out
	}
	return template.HTML(`<pre class="message-text">` + template.HTMLEscapeString(src) + `</pre>`) //nolint:gosec // escaped
}

// safeLinks vets every link target of a Markdown document: a link survives
// only with an http, https or mailto target (so "javascript:" and its
// disguises never become a link), an image only as an inline raster data
// URL. Any other image becomes a link to it, so the page never fetches from
// elsewhere; a rejected target leaves its text behind.
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	var rewrite []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.Link, *ast.AutoLink, *ast.Image:
			rewrite = append(rewrite, n)
		}
		return ast.WalkContinue, nil
	})
	for _, n := range rewrite {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		switch node := n.(type) {
		case *ast.Link:
			if !linkAllowed(string(node.Destination)) {
				unwrap(parent, node)
				continue
			}
			node.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
		case *ast.AutoLink:
			target := string(node.URL(source))
			if node.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(target), "mailto:") {
				target = "mailto:" + target
			}
			label := ast.NewString(node.Label(source))
			if !linkAllowed(target) {
				parent.ReplaceChild(parent, node, label)
				continue
			}
			link := ast.NewLink()
			link.Destination = []byte(target)
			link.AppendChild(link, label)
			link.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
			parent.ReplaceChild(parent, node, link)
		case *ast.Image:
			if inlineImage(string(node.Destination)) {
				continue
			}
			if !linkAllowed(string(node.Destination)) {
				unwrap(parent, node)
				continue
			}
			link := ast.NewLink()
			link.Destination = node.Destination
			link.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
			for c := node.FirstChild(); c != nil; {
				next := c.NextSibling()
				link.AppendChild(link, c)
				c = next
			}
			if !link.HasChildren() {
				link.AppendChild(link, ast.NewString(node.Destination))
			}
			parent.ReplaceChild(parent, node, link)
		}
	}
}

// htmlAsText renders the raw HTML in a text as text: a message that
// contains markup shows it, where the default renderer would drop it, and
// none of it becomes markup of the page.
type htmlAsText struct{}

func (htmlAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segments := n.(*ast.RawHTML).Segments
			for i := range segments.Len() {
				seg := segments.At(i)
				_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		block := n.(*ast.HTMLBlock)
		if entering {
			_, _ = w.WriteString(`<pre class="raw-html">`)
			lines := block.Lines()
			for i := range lines.Len() {
				line := lines.At(i)
				_, _ = w.Write(util.EscapeHTML(line.Value(source)))
			}
			return ast.WalkContinue, nil
		}
		if block.HasClosure() {
			_, _ = w.Write(util.EscapeHTML(block.ClosureLine.Value(source)))
		}
		_, _ = w.WriteString("</pre>\n")
		return ast.WalkContinue, nil
	})
}

// unwrap replaces n by its children.
func unwrap(parent, n ast.Node) {
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}

// linkAllowed reports whether target may be the href of a link: an absolute
// http, https or mailto URL. Browsers ignore tabs, newlines and leading
// controls in a scheme, so a target is judged by what url.Parse makes of it
// and refused when it carries any control character at all.
func linkAllowed(target string) bool {
	for _, r := range target {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return true
	}
	return false
}

// inlineDataImage matches the data URLs a page may show as an image: base64
// raster images (never SVG, which is a document).
var inlineDataImage = regexp.MustCompile(`^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+$`)

// inlineImage reports whether src is a data URL of a raster image.
func inlineImage(src string) bool { return inlineDataImage.MatchString(src) }
