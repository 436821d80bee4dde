package weft

import (
	"context"
	"slices"
	"strings"
)

// Principal is the authenticated caller of a request: the user, the entities
// (teams) it belongs to, and the key it used. Services take the acting user from
// the context (see [WithPrincipal]); a user id sent in a request body is ignored.
type Principal struct {
	UserID   string
	Username string
	// Entities lists the entities the user is a member of.
	Entities []string
	// DefaultEntity is where the user's writes go when a request names no entity
	// (model registration, chat traces without an OpenAI-Project header).
	DefaultEntity string
	// Admin users may touch every project.
	Admin bool
	// KeyID identifies the API key the request used ("" for embedders' principals).
	KeyID string
}

// MemberOf reports whether p may touch projects of entity.
func (p Principal) MemberOf(entity string) bool {
	return p.Admin || slices.Contains(p.Entities, entity)
}

type principalKey struct{}

// WithPrincipal returns a context that carries p as the acting caller. Embedders
// that call services directly use it to say who is acting.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the caller carried by ctx.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// UserID returns the acting user's id, or "" when ctx carries no principal. It is
// the value services store as pf_user_id.
func UserID(ctx context.Context) string {
	p, _ := PrincipalFrom(ctx)
	return p.UserID
}

// ErrBadProjectID is returned for a project id that is not "<entity>/<project>".
var ErrBadProjectID = DefineError(ErrInvalid, "InvalidRequest", "project_id must have the form <entity>/<project>")

// maxNameLength bounds entity and project names.
const maxNameLength = 128

// ParseProjectID splits "<entity>/<project>" and checks both parts: non-empty, at
// most 128 characters, no slash, no control characters.
func ParseProjectID(projectID string) (entity, project string, err error) {
	entity, project, ok := strings.Cut(projectID, "/")
	if !ok || !validName(entity) || !validName(project) {
		return "", "", Errorf(ErrBadProjectID, "project_id %q must have the form <entity>/<project>", truncate(projectID, 200))
	}
	return entity, project, nil
}

// validName accepts entity, project and user names: 1..128 characters, none of
// them a slash, a colon or a control character.
func validName(s string) bool {
	if s == "" || len(s) > maxNameLength {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '/' || r == ':' || r == '\ufffd' {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
