package weft

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// PrincipalOfKey returns the current principal of the API key with id keyID
// (the hex part after "wf_"), for callers that authenticated the key earlier
// and kept only its id, such as a web session: memberships are read afresh,
// and a revoked or unknown key is ErrBadCredentials, so revoking a key ends
// what was opened with it.
func (id *Identity) PrincipalOfKey(ctx context.Context, keyID string) (Principal, error) {
	row, err := id.keyRow(ctx, keyID)
	if err != nil {
		return Principal{}, err
	}
	if row.RevokedAt != nil {
		return Principal{}, ErrBadCredentials
	}
	return id.principalOf(ctx, row)
}

// PrincipalOfUser returns the current principal of the user with id userID
// (no key: KeyID is ""), for work done later on a user's behalf, such as a
// monitor's judge running with the authority of the user who published it:
// memberships are read afresh. An unknown user is ErrBadCredentials.
func (id *Identity) PrincipalOfUser(ctx context.Context, userID string) (Principal, error) {
	return id.principalOf(ctx, apiKeyRow{UserID: userID})
}

// Project is a project recorded under an entity (on its first write).
type Project struct {
	Entity    string
	Name      string
	CreatedAt time.Time
}

// ID is the project id "<entity>/<project>".
func (p Project) ID() string { return p.Entity + "/" + p.Name }

// Projects lists the projects p may read: those of the entities p belongs to,
// or every project for an admin; ordered by entity, then name.
func (id *Identity) Projects(ctx context.Context, p Principal) ([]Project, error) {
	var rows []projectRow
	q := id.db.NewSelect().Model(&rows).OrderExpr("entity ASC, name ASC")
	if !p.Admin {
		if len(p.Entities) == 0 {
			return nil, nil
		}
		q = q.Where("entity IN (?)", bun.In(p.Entities))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, err
	}
	out := make([]Project, len(rows))
	for i, r := range rows {
		out[i] = Project{Entity: r.Entity, Name: r.Name, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// Usernames maps the given user ids to user names; unknown ids are left out.
func (id *Identity) Usernames(ctx context.Context, userIDs []string) (map[string]string, error) {
	names := map[string]string{}
	if len(userIDs) == 0 {
		return names, nil
	}
	var users []User
	if err := id.db.NewSelect().Model(&users).Column("id", "username").Where("id IN (?)", bun.In(userIDs)).Scan(ctx); err != nil {
		return nil, err
	}
	for _, u := range users {
		names[u.ID] = u.Username
	}
	return names, nil
}

// UserIDs maps the given user names to user ids; unknown names are left out.
func (id *Identity) UserIDs(ctx context.Context, usernames []string) (map[string]string, error) {
	ids := map[string]string{}
	if len(usernames) == 0 {
		return ids, nil
	}
	var users []User
	if err := id.db.NewSelect().Model(&users).Column("id", "username").Where("username IN (?)", bun.In(usernames)).Scan(ctx); err != nil {
		return nil, err
	}
	for _, u := range users {
		ids[u.Username] = u.ID
	}
	return ids, nil
}

// APIKey is a stored API key as its owner sees it: never its secret.
type APIKey struct {
	// ID is the hex part after "wf_"; "wf_"+ID is how the key is named.
	ID        string
	Name      string
	CreatedAt time.Time
	RevokedAt *time.Time
	// LastUsedAt is when the key last signed a request or a browser's
	// sign-in, to within KeyUseInterval; nil when never used.
	LastUsedAt *time.Time
}

// APIKeys lists the keys of the user with id userID, newest first, revoked
// ones included.
func (id *Identity) APIKeys(ctx context.Context, userID string) ([]APIKey, error) {
	var rows []apiKeyRow
	if err := id.db.NewSelect().Model(&rows).Column("id", "name", "created_at", "revoked_at", "last_used_at").Where("user_id = ?", userID).
		OrderExpr("created_at DESC, id ASC").Scan(ctx); err != nil {
		return nil, err
	}
	keys := make([]APIKey, len(rows))
	for i, r := range rows {
		keys[i] = APIKey{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.UTC(), RevokedAt: r.RevokedAt, LastUsedAt: r.LastUsedAt}
		if r.LastUsedAt != nil {
			at := r.LastUsedAt.UTC()
			keys[i].LastUsedAt = &at
		}
	}
	return keys, nil
}

// Member is a user's membership of an entity.
type Member struct {
	Username string
	Role     string // "owner" or "member"
	Since    time.Time
}

// Members lists the members of entity by user name.
func (id *Identity) Members(ctx context.Context, entity string) ([]Member, error) {
	var rows []struct {
		Username  string    `bun:"username"`
		Role      string    `bun:"role"`
		CreatedAt time.Time `bun:"created_at"`
	}
	err := id.db.NewSelect().TableExpr("memberships AS m").Join("JOIN users AS u ON u.id = m.user_id").
		ColumnExpr("u.username, m.role, m.created_at").Where("m.entity = ?", entity).OrderExpr("u.username ASC").Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	members := make([]Member, len(rows))
	for i, r := range rows {
		members[i] = Member{Username: r.Username, Role: r.Role, Since: r.CreatedAt.UTC()}
	}
	return members, nil
}
