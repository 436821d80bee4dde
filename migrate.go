package weft

import (
	"context"

	"github.com/weftlabs/weft/internal/database"
)

// Migrate brings db's schema up to date: weft's own history, then each of after
// (libraries with their own migration history, run under the same lock). It is
// idempotent and safe when several servers start at once against one PostgreSQL.
func Migrate(ctx context.Context, db *DB, after ...func(context.Context) error) error {
	return database.Migrate(ctx, db.DB, after...)
}
