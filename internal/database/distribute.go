package database

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"
)

// ErrNotDistributed is returned by [Distribute] on a database without the citus
// extension.
var ErrNotDistributed = errors.New("the database has no citus extension")

// The layout of weft's schema on a distributed (Citus) database.
//
//   - Identity tables are reference tables: small, read on every request, and
//     joined with everything, so each node keeps a whole copy. The web UI's
//     sessions are one of them: a session row is read on every page and written
//     only at sign-in and sign-out, it belongs to a user rather than a project,
//     and its lookups and revocations (by token, by user) must each stay one
//     statement on one placement whichever coordinator serves the page.
//   - Every table with a project_id column is hash-distributed on project_id,
//     colocated with calls, so that one project's rows of every table live on the
//     same shard and a statement that filters project_id by equality runs there.
//   - A few id directories, which answer "which project owns this id" for routes
//     that name a resource by id alone, are distributed on that id instead.
//   - Migration bookkeeping and the job queue stay on the coordinator.
//
// A table that fits none of these is an error, so that a migration adding one
// cannot silently leave it on the coordinator.
var (
	referenceTables = []string{"users", "entities", "memberships", "api_keys", "projects", "ui_sessions"}
	idDirectories   = map[string]string{"training_ids": "id"}
	localPrefixes   = []string{"weft_migration", "river_"}
)

// colocationAnchor is the per-project table every other one is colocated with.
const colocationAnchor = "calls"

// Distributed reports whether db is a PostgreSQL database with the citus
// extension created.
func Distributed(ctx context.Context, db *bun.DB) (bool, error) {
	if !DialectOf(db).postgres {
		return false, nil
	}
	var ok bool
	err := db.NewRaw("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')").Scan(ctx, &ok)
	return ok, err
}

// TableLayout is where one table of the current schema lives on a distributed
// database.
type TableLayout struct {
	Table string
	// Kind is "reference", "distributed" or "local".
	Kind string
	// Column is the distribution column of a distributed table.
	Column string
}

// Layout classifies every table of the current schema (see the rules above).
func Layout(ctx context.Context, db *bun.DB) ([]TableLayout, error) {
	var tables []struct {
		Name       string `bun:"name"`
		HasProject bool   `bun:"has_project"`
	}
	err := db.NewRaw(`SELECT c.relname AS name,
	       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'project_id' AND NOT a.attisdropped) AS has_project
	  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	 WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
	 ORDER BY c.relname`).Scan(ctx, &tables)
	if err != nil {
		return nil, fmt.Errorf("distribute: list tables: %w", err)
	}
	var out []TableLayout
	for _, t := range tables {
		l := TableLayout{Table: t.Name}
		switch column, byID := idDirectories[t.Name]; {
		case slices.Contains(referenceTables, t.Name):
			l.Kind = "reference"
		case byID:
			l.Kind, l.Column = "distributed", column
		case hasAnyPrefix(t.Name, localPrefixes):
			l.Kind = "local"
		case t.HasProject:
			l.Kind, l.Column = "distributed", "project_id"
		default:
			return nil, fmt.Errorf("distribute: table %s has no project_id column and is not an identity table: say in internal/database/distribute.go how it is laid out", t.Name)
		}
		out = append(out, l)
	}
	// The colocation anchor goes first among the tables distributed on project_id.
	for i, l := range out {
		if l.Table == colocationAnchor {
			out = append(append([]TableLayout{l}, out[:i]...), out[i+1:]...)
			break
		}
	}
	return out, nil
}

// Distribute lays the current schema out over a Citus cluster as [Layout]
// says: identity tables become reference tables and per-project tables are
// distributed on project_id, colocated with calls. It is idempotent: tables
// already laid out are left alone, so it runs after every migration and
// distributes what a new release adds. Existing rows move to the workers.
func Distribute(ctx context.Context, db *bun.DB) error {
	ok, err := Distributed(ctx, db)
	if err != nil {
		return fmt.Errorf("distribute: %w", err)
	}
	if !ok {
		return ErrNotDistributed
	}
	layout, err := Layout(ctx, db)
	if err != nil {
		return err
	}
	for _, l := range layout {
		if l.Kind == "local" {
			continue
		}
		var current string
		err := db.NewRaw(`SELECT COALESCE((SELECT CASE WHEN partmethod = 'h' THEN 'distributed' WHEN repmodel = 't' THEN 'reference' ELSE 'local' END
		  FROM pg_dist_partition WHERE logicalrelid = to_regclass(?)), '')`, l.Table).Scan(ctx, &current)
		if err != nil {
			return fmt.Errorf("distribute: %s: %w", l.Table, err)
		}
		switch {
		case current == l.Kind:
			continue
		case current != "":
			return fmt.Errorf("distribute: table %s is a %s table; weft expects a %s table", l.Table, current, l.Kind)
		case l.Kind == "reference":
			_, err = db.ExecContext(ctx, "SELECT create_reference_table(?)", l.Table)
		case l.Column == "project_id" && l.Table != colocationAnchor:
			_, err = db.ExecContext(ctx, "SELECT create_distributed_table(?, 'project_id', colocate_with => ?)", l.Table, colocationAnchor)
		default:
			_, err = db.ExecContext(ctx, "SELECT create_distributed_table(?, ?)", l.Table, l.Column)
		}
		if err != nil {
			return fmt.Errorf("distribute: %s: %w", l.Table, err)
		}
	}
	return nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
