package weft

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// ErrUnknownSession: no session has the token hash asked for.
var ErrUnknownSession = DefineError(ErrUnauthenticated, "AuthenticationError", "no such session")

// Session is a sign-in of a browser with an API key (the web UI's): the
// token the browser holds is stored only as its hash. The caller decides
// what counts as live (ExpiresAt, RevokedAt) by its own clock.
type Session struct {
	UserID    string
	KeyID     string
	CreatedAt time.Time
	ExpiresAt time.Time
	// RevokedAt is when the session was ended (signed out), or nil.
	RevokedAt *time.Time
}

// sessionRow is a row of ui_sessions.
type sessionRow struct {
	bun.BaseModel `bun:"table:ui_sessions"`

	TokenHash string     `bun:"token_hash,pk"`
	UserID    string     `bun:"user_id"`
	KeyID     string     `bun:"key_id"`
	CreatedAt time.Time  `bun:"created_at"`
	ExpiresAt time.Time  `bun:"expires_at"`
	RevokedAt *time.Time `bun:"revoked_at"`
}

// CreateSession stores s under tokenHash. The user's sessions that expired
// before s.CreatedAt are removed in the same transaction, which keeps the
// table as small as the number of live sign-ins.
func (id *Identity) CreateSession(ctx context.Context, tokenHash string, s Session) error {
	row := sessionRow{TokenHash: tokenHash, UserID: s.UserID, KeyID: s.KeyID,
		CreatedAt: s.CreatedAt.UTC(), ExpiresAt: s.ExpiresAt.UTC()}
	return id.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().Model((*sessionRow)(nil)).Where("user_id = ?", s.UserID).
			Where("expires_at < ?", row.CreatedAt).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(&row).Exec(ctx)
		return err
	})
}

// SessionOf returns the session stored under tokenHash, live or not; an
// unknown hash is ErrUnknownSession.
func (id *Identity) SessionOf(ctx context.Context, tokenHash string) (Session, error) {
	var row sessionRow
	err := id.db.NewSelect().Model(&row).Where("token_hash = ?", tokenHash).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrUnknownSession
	}
	if err != nil {
		return Session{}, err
	}
	if row.RevokedAt == nil && id.now().Before(row.ExpiresAt) {
		id.noteKeyUse(ctx, row.KeyID) // a browser signed in with the key uses it
	}
	return Session{UserID: row.UserID, KeyID: row.KeyID, CreatedAt: row.CreatedAt,
		ExpiresAt: row.ExpiresAt, RevokedAt: row.RevokedAt}, nil
}

// RevokeSession ends the session stored under tokenHash at at, unless it
// was ended before; an unknown hash is not an error.
func (id *Identity) RevokeSession(ctx context.Context, tokenHash string, at time.Time) error {
	_, err := id.db.NewUpdate().Model((*sessionRow)(nil)).Set("revoked_at = ?", at.UTC()).
		Where("token_hash = ?", tokenHash).Where("revoked_at IS NULL").Exec(ctx)
	return err
}
