package webui

import "net/http"

// contentSecurityPolicy lets a page load scripts, styles, images and
// connections from this server only, and nothing inline: no <script> body, no
// style attribute, no event-handler attribute and no eval runs, so a value
// from stored data that slipped past escaping still could not execute. Pages
// submit forms only here and cannot be framed.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// setSecurityHeaders sets the headers every UI response carries.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}
