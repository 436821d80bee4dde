package webui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/transport/httpapi"
)

// viewer is the signed-in user of a request, as pages see it.
type viewer struct {
	session   session
	principal weft.Principal
}

// Username is shown in the header.
func (v *viewer) Username() string { return v.principal.Username }

// CSRF is the token every form of the session carries.
func (v *viewer) CSRF() string { return v.session.csrf }

// HXHeaders is the hx-headers value that makes every htmx request of a page
// carry the CSRF token.
func (v *viewer) HXHeaders() string {
	b, _ := json.Marshal(map[string]string{csrfHeader: v.session.csrf})
	return string(b)
}

const (
	// csrfHeader carries the CSRF token of htmx requests.
	csrfHeader = "X-CSRF-Token"
	// csrfField carries it in forms.
	csrfField = "csrf"
)

// signedIn wraps a page that needs a signed-in user. Without a live session a
// page load is sent to the sign-in page (and back afterwards), an htmx request
// gets 401 with HX-Redirect. A request that changes state must also carry the
// session's CSRF token.
func (h *Handler) signedIn(page func(http.ResponseWriter, *http.Request, *viewer)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := h.viewerOf(r)
		if errors.Is(err, errNoSession) {
			h.clearSessionCookie(w, r)
			h.toSignIn(w, r)
			return
		}
		if err != nil {
			h.internalError(w, r, err)
			return
		}
		if h.cfg.RateLimiter != nil {
			if err := h.cfg.RateLimiter.TakeToken(v.principal); err != nil {
				h.rateLimited(w, r, err)
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			submitted := r.Header.Get(csrfHeader)
			if submitted == "" {
				submitted = r.PostFormValue(csrfField)
			}
			if !v.session.validCSRF(submitted) {
				h.renderError(w, r, http.StatusForbidden, "This form has expired or did not come from this site. Reload the page and try again.")
				return
			}
		}
		r = r.WithContext(weft.WithPrincipal(r.Context(), v.principal))
		page(w, r, v)
	})
}

// inProject wraps a page of one project ("/ui/p/{entity}/{project}/…"): the
// caller must be signed in and the API's authorizer must let it read the
// project; otherwise the page is the refusal (403 for another entity's
// project, 400 for a malformed name).
func (h *Handler) inProject(page projectPage) http.Handler {
	return h.signedIn(func(w http.ResponseWriter, r *http.Request, v *viewer) {
		if err := readRequestText(r); err != nil {
			h.refuse(w, r, err)
			return
		}
		projectID := r.PathValue("entity") + "/" + r.PathValue("project")
		if err := h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, false); err != nil {
			h.refuse(w, r, err)
			return
		}
		page(w, r, v, projectID)
	})
}

// rateLimited answers a request over its key's rate limit: 429 with
// Retry-After, and a page that says when to try again — or, to the
// playground's JSON requests, the JSON error its module shows.
func (h *Handler) rateLimited(w http.ResponseWriter, r *http.Request, err error) {
	if httpapi.StatusOf(err) != http.StatusTooManyRequests {
		h.internalError(w, r, err)
		return
	}
	retry := fmt.Sprint(weft.ErrorFields(err)["retry_after"])
	w.Header().Set("Retry-After", retry)
	if mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mediaType == "application/json" {
		playgroundError(w, err)
		return
	}
	h.renderError(w, r, http.StatusTooManyRequests, "Too many requests with this API key. Try again in "+retry+" s.")
}

// refuse answers a domain error with its status from the API's table.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if status := httpapi.StatusOf(err); status < 500 {
		msg := err.Error()
		if status == http.StatusForbidden {
			msg = "You may not see this project: " + msg + "."
		}
		h.renderError(w, r, status, msg)
		return
	}
	h.internalError(w, r, err)
}

// viewerOf resolves the request's session cookie to its user, reading the
// user's memberships afresh so that a change of membership or a revoked key
// applies to the next page.
func (h *Handler) viewerOf(r *http.Request) (*viewer, error) {
	name, _ := h.sessionCookieOf(r)
	cookie, err := r.Cookie(name)
	if err != nil {
		return nil, errNoSession
	}
	s, err := h.sessions.lookup(r.Context(), cookie.Value)
	if err != nil {
		return nil, err
	}
	p, err := h.cfg.Identity.PrincipalOfKey(r.Context(), s.keyID)
	if errors.Is(err, weft.ErrUnauthenticated) || (err == nil && p.UserID != s.userID) {
		return nil, errNoSession
	}
	if err != nil {
		return nil, err
	}
	return &viewer{session: s, principal: p}, nil
}

// toSignIn sends a caller without a session to the sign-in page.
func (h *Handler) toSignIn(w http.ResponseWriter, r *http.Request) {
	target := Prefix + "signin"
	if r.Method == http.MethodGet && r.URL.RequestURI() != "/" {
		target += "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", target)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodGet {
		http.Redirect(w, r, target, http.StatusSeeOther)
		return
	}
	h.renderError(w, r, http.StatusUnauthorized, "You are signed out. Sign in again.")
}

// signInForm is the data of the sign-in page.
type signInForm struct {
	User  string
	Next  string
	Error string
}

func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	if v, err := h.viewerOf(r); err == nil && v != nil {
		http.Redirect(w, r, localPath(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	h.render(w, r, http.StatusOK, "signin", page{Title: "Sign in", Body: signInForm{Next: localPath(r.URL.Query().Get("next"))}})
}

// signIn checks the API key (and user name, when given) with the API's
// authenticator and opens a session. A wrong key answers 401 with the form
// again and no hint of which part was wrong.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		h.refuse(w, r, httpapi.BodyError(err))
		return
	}
	form := signInForm{User: strings.TrimSpace(r.PostFormValue("user")), Next: localPath(r.PostFormValue("next"))}
	key := strings.TrimSpace(r.PostFormValue("key"))
	if key == "" {
		form.Error = "Enter an API key."
		h.render(w, r, http.StatusBadRequest, "signin", page{Title: "Sign in", Body: form})
		return
	}
	p, err := h.cfg.Identity.Authenticate(r.Context(), form.User, key)
	if errors.Is(err, weft.ErrUnauthenticated) {
		form.Error = "That user name and API key do not match a live key."
		h.render(w, r, http.StatusUnauthorized, "signin", page{Title: "Sign in", Body: form})
		return
	}
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	s, expires, err := h.sessions.create(r.Context(), p.UserID, p.KeyID)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	h.setSessionCookie(w, r, s.token, expires)
	http.Redirect(w, r, form.Next, http.StatusSeeOther)
}

// signOut revokes the session on the server, so the cookie stops working even
// where a copy of it survives, and drops the cookie.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := h.sessions.revoke(context.WithoutCancel(r.Context()), v.session.token); err != nil {
		h.internalError(w, r, err)
		return
	}
	h.clearSessionCookie(w, r)
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}

// localPath returns next when a browser would take it to a page of this
// server, cleaned the way http.Redirect cleans it, else "/": the sign-in page
// never redirects to another site. Browsers read a backslash as a slash and
// drop tabs and newlines, so /\evil, /<tab>/evil and the cleaned form of
// /./\evil all mean //evil, another host; so next must be a path (no
// scheme or host) without a backslash, control character or space, also once
// its escapes are decoded, and its cleaned path must start with exactly one
// slash.
func localPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || !strings.HasPrefix(next, "/") || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		strings.ContainsFunc(next, unsafeInPath) || strings.ContainsFunc(u.Path, unsafeInPath) {
		return "/"
	}
	cleaned := path.Clean(u.Path)
	if strings.HasSuffix(u.Path, "/") && cleaned != "/" {
		cleaned += "/"
	}
	if strings.HasPrefix(cleaned, "//") || !strings.HasPrefix(cleaned, "/") {
		return "/"
	}
	return (&url.URL{Path: cleaned, RawQuery: u.RawQuery}).RequestURI()
}

// unsafeInPath reports characters browsers do not keep as they are in a
// redirect's path: backslashes, controls and spaces.
func unsafeInPath(r rune) bool {
	return r == '\\' || r <= ' ' || r == 0x7f || unicode.IsControl(r)
}
