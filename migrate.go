package weft

import (
	"context"

	"github.com/weftlabs/weft/internal/database"
)

// Migrate brings db's schema up to date: weft's own history, then each of after
// (libraries with their own migration history, run under the same lock). It is
// idempotent and safe when several servers start at once against one PostgreSQL.
// On a database with the citus extension it then runs [Distribute], so that a
// table a release adds is distributed like the others.
func Migrate(ctx context.Context, db *DB, after ...func(context.Context) error) error {
	return database.Migrate(ctx, db.DB, after...)
}

// ErrNotDistributed is returned by [Distribute] on a database without the
// citus extension.
var ErrNotDistributed = database.ErrNotDistributed

// Distribute lays a migrated schema out over a Citus cluster (distributed
// PostgreSQL): the identity tables (users, entities, memberships, api_keys,
// projects) become reference tables, copied to every node; every table with a
// project_id column is hash-distributed on project_id, colocated with calls, so
// that all of one project's rows share a shard; training_ids, which maps the
// ids training routes name to their projects, is distributed on id; migration
// bookkeeping and the job queue stay on the coordinator.
//
// It is idempotent (tables already laid out are left alone) and [Migrate] runs
// it by itself whenever the extension is present; call it directly, or run
// `weft distribute`, after creating the extension on a database weft already
// uses. Existing rows move to the workers.
func Distribute(ctx context.Context, db *DB) error {
	return database.Distribute(ctx, db.DB)
}
