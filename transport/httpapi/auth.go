package httpapi

import (
	"encoding/base64"
	"math"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weftlabs/weft"
)

// authenticate is the huma middleware that turns the Authorization header into a
// weft.Principal in the request context. It accepts Basic (api:<key> or
// <username>:<key>, as the Weave SDKs send) and Bearer <key> (as the OpenAI and
// ART clients send) on every route.
func (h *Handler) authenticate(ctx huma.Context, next func(huma.Context)) {
	if op := ctx.Operation(); op != nil && len(op.Security) == 0 {
		next(ctx)
		return
	}
	username, key, ok := credentials(ctx.Header("Authorization"))
	var p weft.Principal
	var err error = weft.ErrBadCredentials
	if ok {
		p, err = h.cfg.Authenticator.Authenticate(ctx.Context(), username, key)
	}
	if err != nil {
		ctx.SetHeader("WWW-Authenticate", `Basic realm="weft", Bearer`)
		_ = huma.WriteErr(h.api, ctx, http.StatusUnauthorized, "Not authenticated", err)
		return
	}
	if err := h.takeToken(limitKey(p, key)); err != nil {
		_ = huma.WriteErr(h.api, ctx, http.StatusTooManyRequests, "rate limited", err)
		return
	}
	next(huma.WithContext(ctx, weft.WithPrincipal(ctx.Context(), p)))
}

// TakeToken takes one request of the rate limit (Config.RateLimit) of p's
// API key, for requests that reach the server other than through the API:
// the web UI's, signed in with the key, share the key's budget with its API
// calls. Over it, the error (class weft.ErrRateLimited, 429) says when to
// retry in its retry_after field (whole seconds). Without a rate limit it
// is always nil.
func (h *Handler) TakeToken(p weft.Principal) error { return h.takeToken(limitKey(p, "")) }

// takeToken takes one request of a key's rate limit (named by limitKey);
// over it, the error says when to retry (retry_after, whole seconds).
func (h *Handler) takeToken(key string) error {
	if h.limiter == nil {
		return nil
	}
	if ok, wait := h.limiter.allow(key); !ok {
		seconds := max(1, int(math.Ceil(wait.Seconds())))
		return weft.WithFields(errRateLimited, map[string]any{"retry_after": seconds}, "rate limit exceeded: retry in %d s", seconds)
	}
	return nil
}

var errRateLimited = weft.DefineError(weft.ErrRateLimited, "RateLimitError", "rate limit exceeded")

// credentials parses an Authorization header.
func credentials(header string) (username, key string, ok bool) {
	scheme, value, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found {
		return "", "", false
	}
	value = strings.TrimSpace(value)
	switch strings.ToLower(scheme) {
	case "bearer":
		return "", value, value != ""
	case "basic":
		decoded, err := base64.StdEncoding.DecodeString(value)
		if err != nil {
			return "", "", false
		}
		username, key, found = strings.Cut(string(decoded), ":")
		if !found || key == "" {
			return "", "", false
		}
		return username, key, true
	}
	return "", "", false
}
