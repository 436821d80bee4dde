package webui

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/weftlabs/weft"
)

// readRequestText reads a request's form (and query) once for every page
// and form of a project. It refuses text no database column can hold:
// invalid UTF-8 or NUL (which the SQL builder would write into the
// statement instead of binding); one check here keeps every page's ids,
// filters and form fields from reaching a store with them. And it turns
// every line break into LF: a browser submits a textarea's line breaks as
// CRLF (HTML's form encoding), which would otherwise be stored in prompts,
// descriptions and specs unlike the same text sent through the API.
func readRequestText(r *http.Request) error {
	if !cleanText(r.URL.Path) {
		return weft.Errorf(errBadView, "the address holds a NUL or invalid UTF-8")
	}
	if err := r.ParseForm(); err != nil {
		return weft.Errorf(errBadView, "the form or query cannot be read: %v", err)
	}
	for name, values := range r.Form {
		if !cleanText(name) {
			return weft.Errorf(errBadView, "a field name holds a NUL or invalid UTF-8")
		}
		for _, v := range values {
			if !cleanText(v) {
				return weft.Errorf(errBadView, "%s: a NUL or invalid UTF-8", name)
			}
		}
	}
	// Form holds copies of PostForm's values: both are read by handlers.
	for _, form := range []url.Values{r.Form, r.PostForm} {
		for _, values := range form {
			for i, v := range values {
				values[i] = lineFeeds(v)
			}
		}
	}
	return nil
}

// lineFeeds is text with each CRLF and each lone CR made LF.
func lineFeeds(text string) string {
	if !strings.ContainsRune(text, '\r') {
		return text
	}
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
}

func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
