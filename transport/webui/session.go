package webui

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/weftlabs/weft"
)

// sessionCookie names the cookie that carries the session token over plain
// HTTP; secureSessionCookie over HTTPS. The "__Host-" prefix makes browsers
// take the cookie only when it is Secure, for this host alone (no Domain)
// and the whole site (Path=/): a page of a sibling subdomain, or one served
// over plain HTTP, cannot plant a session cookie of its own choosing.
const (
	sessionCookie       = "weft_session"
	secureSessionCookie = "__Host-weft_session"
)

// session is a live session as a request sees it.
type session struct {
	token  string // the cookie value
	userID string
	keyID  string
	// csrf is the token forms and htmx requests of this session must echo.
	csrf string
}

// sessionStore keeps sessions in the identity store (weft.Identity's
// sessions), by the hash of their token: the token itself is never stored.
type sessionStore struct {
	identity *weft.Identity
	now      func() time.Time
	ttl      time.Duration
}

// errNoSession: the request carries no cookie, or one of no live session.
var errNoSession = errors.New("no live session")

// create opens a session for the user's key and returns it with its expiry.
func (s *sessionStore) create(ctx context.Context, userID, keyID string) (session, time.Time, error) {
	token := randomToken()
	now := s.now().UTC()
	row := weft.Session{UserID: userID, KeyID: keyID, CreatedAt: now, ExpiresAt: now.Add(s.ttl)}
	if err := s.identity.CreateSession(ctx, hashToken(token), row); err != nil {
		return session{}, time.Time{}, err
	}
	return newSession(token, row), row.ExpiresAt, nil
}

// lookup returns the live session of a cookie token.
func (s *sessionStore) lookup(ctx context.Context, token string) (session, error) {
	if token == "" || len(token) > 100 {
		return session{}, errNoSession
	}
	row, err := s.identity.SessionOf(ctx, hashToken(token))
	if errors.Is(err, weft.ErrUnknownSession) {
		return session{}, errNoSession
	}
	if err != nil {
		return session{}, err
	}
	if row.RevokedAt != nil || !s.now().Before(row.ExpiresAt) {
		return session{}, errNoSession
	}
	return newSession(token, row), nil
}

// revoke ends a session at once; later lookups of its token fail.
func (s *sessionStore) revoke(ctx context.Context, token string) error {
	return s.identity.RevokeSession(ctx, hashToken(token), s.now())
}

func newSession(token string, row weft.Session) session {
	return session{token: token, userID: row.UserID, keyID: row.KeyID, csrf: csrfToken(token)}
}

// csrfToken derives the session's CSRF token from its secret cookie value: a
// page of this origin gets it in the HTML, a page of another origin can
// neither read the cookie nor the HTML, so it cannot forge the token.
func csrfToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("weft-csrf\x00" + sessionToken))
	return hex.EncodeToString(sum[:])
}

// validCSRF compares a submitted CSRF token in constant time.
func (s session) validCSRF(submitted string) bool {
	return subtle.ConstantTimeCompare([]byte(submitted), []byte(s.csrf)) == 1
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// setSessionCookie sends the session cookie: HttpOnly (no script reads it),
// SameSite=Strict (no other site's page makes the browser send it), Secure
// and "__Host-" when the browser reached the server over HTTPS (secure),
// and expiring with the session.
func (h *Handler) setSessionCookie(w http.ResponseWriter, r *http.Request, token string, expires time.Time) {
	name, secure := h.sessionCookieOf(r)
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: token, Path: "/",
		Expires: expires, MaxAge: int(expires.Sub(h.cfg.Now()).Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure,
	})
}

// clearSessionCookie tells the browser to drop the session cookie.
func (h *Handler) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	name, secure := h.sessionCookieOf(r)
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure,
	})
}

// sessionCookieOf names the session cookie of a request and says whether
// it is Secure: it is when the browser reached the server over HTTPS — the
// request came over TLS, the operator says every request does
// (SecureCookies), or a trusted proxy says this one did.
func (h *Handler) sessionCookieOf(r *http.Request) (name string, secure bool) {
	if r.TLS != nil || h.cfg.SecureCookies || h.forwardedHTTPS(r) {
		return secureSessionCookie, true
	}
	return sessionCookie, false
}

// forwardedHTTPS reports whether a trusted proxy (Config.TrustedProxies)
// sent r and says, in X-Forwarded-Proto, that the browser used HTTPS. The
// header's last value is the one the nearest proxy (the trusted one) set.
func (h *Handler) forwardedHTTPS(r *http.Request) bool {
	if len(h.cfg.TrustedProxies) == 0 {
		return false
	}
	values := r.Header.Values("X-Forwarded-Proto")
	if len(values) == 0 {
		return false
	}
	protos := strings.Split(values[len(values)-1], ",")
	if !strings.EqualFold(strings.TrimSpace(protos[len(protos)-1]), "https") {
		return false
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	addr := peer.Addr().Unmap()
	for _, p := range h.cfg.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
