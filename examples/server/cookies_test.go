package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestServeCookieFlags: -trusted-proxies makes a sign-in a trusted proxy
// says came over HTTPS get a Secure __Host- cookie, and leaves other sign-ins
// plain; -secure-cookies makes every sign-in's cookie Secure; a value that is
// no address is a mistake in the command line (exit 2).
func TestServeCookieFlags(t *testing.T) {
	t.Parallel()
	signIn := func(base, key, proto string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/ui/signin", strings.NewReader(url.Values{"key": {key}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if proto != "" {
			req.Header.Set("X-Forwarded-Proto", proto)
		}
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.Header.Get("Set-Cookie")
	}
	secure := func(cookie string) bool {
		return strings.HasPrefix(cookie, "__Host-weft_session=") && strings.Contains(cookie, "; Secure")
	}

	base, key := startServer(t, "-trusted-proxies", "10.0.0.0/8, 127.0.0.1,::1")
	if c := signIn(base, key, "https"); !secure(c) {
		t.Errorf("-trusted-proxies, X-Forwarded-Proto https: %q", c)
	}
	if c := signIn(base, key, ""); !strings.HasPrefix(c, "weft_session=") || strings.Contains(c, "Secure") {
		t.Errorf("-trusted-proxies, plain HTTP: %q", c)
	}
	base, key = startServer(t, "-secure-cookies")
	if c := signIn(base, key, ""); !secure(c) {
		t.Errorf("-secure-cookies: %q", c)
	}
	if got := run(t, "serve", "-trusted-proxies", "proxy.example"); got.status != 2 || !strings.Contains(got.stderr, "proxy.example") {
		t.Errorf("-trusted-proxies proxy.example: status %d, stderr %q", got.status, got.stderr)
	}
}
