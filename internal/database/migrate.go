// Package database holds weft's one migration history and applies it on
// PostgreSQL and SQLite alike.
//
// Migrations are SQL files in migrations/, named <id>_<name>.tx.up.sql, each run
// in its own transaction. They are Go templates rendered with [TemplateData], so one
// file serves both databases: write {{.Timestamp}}, {{.JSON}}, {{.Bytes}} for
// the column types that differ, and {{if .Postgres}}…{{end}} for statements
// only one database has (GIN indexes, for example). Every statement uses IF NOT
// EXISTS so that a half-applied history can always be re-run.
//
// Id ranges per domain keep parallel work from colliding: 2026112200xxxx
// identity, …01xxxx trace, …02xxxx objects, …03xxxx feedback, …04xxxx chat,
// …05xxxx training, …06xxxx web UI.
package database

import (
	"context"
	"embed"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// TemplateData is the data the migration templates are rendered with.
type TemplateData struct {
	Postgres bool
	SQLite   bool
	// Timestamp is a UTC instant: TIMESTAMPTZ / TIMESTAMP (text on SQLite).
	Timestamp string
	// JSON keeps client JSON exactly as sent (key order, numbers, duplicates): TEXT.
	JSON string
	// JSONB is an indexed, queryable JSON copy: JSONB / TEXT.
	JSONB string
	// Bytes is binary content: BYTEA / BLOB.
	Bytes string
	// Bool is a boolean: BOOLEAN on both.
	Bool string
}

// TemplateDataOf returns the template data for db.
func TemplateDataOf(db *bun.DB) TemplateData {
	if DialectOf(db).postgres {
		return TemplateData{Postgres: true, Timestamp: "TIMESTAMPTZ", JSON: "TEXT", JSONB: "JSONB", Bytes: "BYTEA", Bool: "BOOLEAN"}
	}
	return TemplateData{SQLite: true, Timestamp: "TIMESTAMP", JSON: "TEXT", JSONB: "TEXT", Bytes: "BLOB", Bool: "BOOLEAN"}
}

// migrationLockKey is the PostgreSQL advisory lock that serialises servers
// migrating one database at the same moment ("weft" in ASCII).
const migrationLockKey = 0x77656674

// Migrate applies every migration not yet applied, then runs each of after
// (migrations of libraries with their own history, such as River's) while still
// holding the migration lock, and, on a database with the citus extension,
// [Distribute]. It is idempotent, and safe when several processes
// call it at once against one PostgreSQL: they queue on an advisory lock.
func Migrate(ctx context.Context, db *bun.DB, after ...func(context.Context) error) error {
	if DialectOf(db).Has(AdvisoryLocks) {
		conn, err := db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrationLockKey); err != nil {
			return fmt.Errorf("migrate: take lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", migrationLockKey) //nolint:errcheck // closing the session releases it too
	}
	migrations := migrate.NewMigrations()
	if err := migrations.Discover(migrationFiles); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	migrator := migrate.NewMigrator(db, migrations,
		migrate.WithTableName("weft_migrations"),
		migrate.WithLocksTableName("weft_migration_locks"),
		migrate.WithMarkAppliedOnSuccess(true),
		migrate.WithTemplateData(TemplateDataOf(db)),
	)
	if err := migrator.Init(ctx); err != nil {
		return fmt.Errorf("migrate: init: %w", err)
	}
	if _, err := migrator.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, step := range after {
		if err := step(ctx); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	// On a distributed database, tables this run added are laid out too.
	distributed, err := Distributed(ctx, db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if distributed {
		return Distribute(ctx, db)
	}
	return nil
}
