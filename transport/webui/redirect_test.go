package webui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/testdb"
)

// hostileNext are sign-in "next" values that try to send the browser to
// another site: after the path is cleaned, through a backslash (browsers read
// it as a slash), through tabs and newlines (browsers drop them, joining two
// slashes), through encodings and through schemes.
var hostileNext = []string{
	`/./\evil.example/phish`,
	`/.\evil.example`,
	`/../\evil.example`,
	`/x/..\/\evil.example`,
	`/x/../..//evil.example`,
	`/\evil.example`,
	`\\evil.example`,
	`\/evil.example`,
	`/\/evil.example`,
	`//evil.example`,
	`///evil.example`,
	`/./evil.example/../\evil.example`,
	"/\t/evil.example",
	"/\n/evil.example",
	"/\r/evil.example",
	"/\x00/evil.example",
	"/\x0b/evil.example",
	"/\x7f/evil.example",
	"/ /evil.example",
	"\t//evil.example",
	" //evil.example",
	"/%2F/evil.example",
	"/%2f%2fevil.example",
	"/%5Cevil.example",
	"/%5c%5cevil.example",
	"/./%5Cevil.example",
	"/%09/evil.example",
	"/%0a/evil.example",
	"https://evil.example/",
	"http:evil.example",
	"javascript:alert(1)",
	"evil.example",
	"",
}

// TestSignInRedirectsHome: whatever next says, sign-in sends the browser to a
// page of this server, and an ordinary path with its query survives.
func TestSignInRedirectsHome(t *testing.T) {
	t.Parallel()
	s := newServer(t, testdb.SQLite(t))
	b := s.browser(t)
	for _, next := range hostileNext {
		p := b.post("/ui/signin", url.Values{"key": {s.aliceKey}, "next": {next}})
		if loc := p.header.Get("Location"); p.status != http.StatusSeeOther || !sameSite(loc) {
			t.Errorf("next=%q: %d Location %q", next, p.status, loc)
		}
		// Signed in, the sign-in page redirects at once, through the same check.
		p = b.get("/ui/signin?next=" + url.QueryEscape(next))
		if loc := p.header.Get("Location"); p.status != http.StatusSeeOther || !sameSite(loc) {
			t.Errorf("signed in, next=%q: %d Location %q", next, p.status, loc)
		}
	}
	for next, want := range map[string]string{
		"/ui/p/alice/p/?status=error&sort=cost": "/ui/p/alice/p/?status=error&sort=cost",
		"/ui/p/alice/p/traces/x":                "/ui/p/alice/p/traces/x",
		"/ui/p/alice/./p/../p/":                 "/ui/p/alice/p/",
		"/ui/p/alice/p/?q=%2F%2Fevil":           "/ui/p/alice/p/?q=%2F%2Fevil",
	} {
		p := b.post("/ui/signin", url.Values{"key": {s.aliceKey}, "next": {next}})
		if loc := p.header.Get("Location"); loc != want {
			t.Errorf("next=%q: Location %q, want %q", next, loc, want)
		}
	}
}

// sameSite reports whether a browser resolves loc, relative to this server,
// to a page of this server: a path that starts with exactly one slash, holds
// no backslash, control character or space (which browsers drop or read as
// slashes), and whose path decodes to no such thing either.
func sameSite(loc string) bool {
	if loc == "/" {
		return true
	}
	if len(loc) < 2 || loc[0] != '/' || loc[1] == '/' || strings.ContainsAny(loc, "\\") ||
		strings.ContainsFunc(loc, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return false
	}
	path, _, _ := strings.Cut(loc, "?")
	decoded, err := url.PathUnescape(path)
	return err == nil && !strings.HasPrefix(decoded, "//") && !strings.ContainsAny(decoded, "\\") &&
		!strings.ContainsFunc(decoded, func(r rune) bool { return r < ' ' || r == 0x7f })
}
