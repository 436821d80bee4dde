package database_test

import (
	"context"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/database"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestUniqueKeysIncludeDistributionColumn reads the catalog of a migrated plain
// PostgreSQL schema: every table is laid out by a rule, and every primary key
// and unique index of a distributed table includes its distribution column —
// what Citus requires, checked where no Citus runs.
func TestUniqueKeysIncludeDistributionColumn(t *testing.T) {
	ctx := context.Background()
	db := testdb.Postgres(t)
	layout, err := database.Layout(ctx, db.DB)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range layout {
		seen[l.Table] = true
		if l.Kind != "distributed" {
			continue
		}
		var indexes []struct {
			Name    string `bun:"name"`
			HasDist bool   `bun:"has_dist"`
		}
		err := db.NewRaw(`SELECT i.relname AS name,
		       EXISTS (SELECT 1 FROM unnest(x.indkey) AS k(attnum) JOIN pg_attribute a
		                 ON a.attrelid = x.indrelid AND a.attnum = k.attnum WHERE a.attname = ?) AS has_dist
		  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		 WHERE x.indrelid = to_regclass(?) AND x.indisunique`, l.Column, l.Table).Scan(ctx, &indexes)
		if err != nil {
			t.Fatal(err)
		}
		if len(indexes) == 0 {
			t.Errorf("%s has no primary key", l.Table)
		}
		for _, ix := range indexes {
			if !ix.HasDist {
				t.Errorf("unique index %s of %s does not include %s", ix.Name, l.Table, l.Column)
			}
		}
	}
	for _, table := range []string{"calls", "feedback", "obj_versions", "training_jobs", "training_ids", "users", "weft_migrations"} {
		if !seen[table] {
			t.Errorf("layout misses %s", table)
		}
	}
}

// TestDistribute: on Citus, migrating lays every table out (identity tables as
// reference tables, per-project tables on project_id colocated with calls);
// Distribute and the whole migration history run again cleanly on the
// distributed schema.
func TestDistribute(t *testing.T) {
	ctx := context.Background()
	db := testdb.Citus(t)
	type placement struct {
		Table      string `bun:"table_name"`
		Method     string `bun:"partmethod"`
		Column     string `bun:"column_name"`
		Colocation int64  `bun:"colocationid"`
	}
	read := func() map[string]placement {
		var rows []placement
		err := db.NewRaw(`SELECT c.relname AS table_name, p.partmethod, COALESCE(column_to_column_name(p.logicalrelid, p.partkey), '') AS column_name, p.colocationid
		  FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
		 WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`).Scan(ctx, &rows)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]placement{}
		for _, r := range rows {
			out[r.Table] = r
		}
		return out
	}
	got := read()
	layout, err := database.Layout(ctx, db.DB)
	if err != nil {
		t.Fatal(err)
	}
	calls := got["calls"]
	for _, l := range layout {
		p, ok := got[l.Table]
		switch l.Kind {
		case "local":
			if ok {
				t.Errorf("%s should stay on the coordinator, is in pg_dist_partition (%+v)", l.Table, p)
			}
		case "reference":
			if !ok || p.Method != "n" {
				t.Errorf("%s should be a reference table: %+v", l.Table, p)
			}
		case "distributed":
			if !ok || p.Method != "h" || p.Column != l.Column {
				t.Errorf("%s should be hash-distributed on %s: %+v", l.Table, l.Column, p)
			}
			if l.Column == "project_id" && p.Colocation != calls.Colocation {
				t.Errorf("%s is not colocated with calls: %d vs %d", l.Table, p.Colocation, calls.Colocation)
			}
		}
	}
	if err := weft.Distribute(ctx, db); err != nil {
		t.Fatalf("distribute again: %v", err)
	}
	// The whole history again, as on a database whose bookkeeping was lost.
	if _, err := db.ExecContext(ctx, "DELETE FROM weft_migrations"); err != nil {
		t.Fatal(err)
	}
	if err := weft.Migrate(ctx, db); err != nil {
		t.Fatalf("migrate again on a distributed schema: %v", err)
	}
	if again := read(); len(again) != len(got) {
		t.Fatalf("tables laid out: %d, then %d", len(got), len(again))
	}
}

// TestDistributeRefusesPlainPostgreSQL: the step says why it cannot run.
func TestDistributeRefusesPlainPostgreSQL(t *testing.T) {
	db := testdb.Postgres(t)
	if err := weft.Distribute(context.Background(), db); err != weft.ErrNotDistributed {
		t.Fatalf("Distribute on plain PostgreSQL = %v, want ErrNotDistributed", err)
	}
}

// TestMigrateRunsAgainOnPostgreSQL: every migration can run again on a schema
// that already has it, as on a database whose bookkeeping was lost — checked
// on plain PostgreSQL, so a migration that is not idempotent fails here and
// not only where Citus runs.
func TestMigrateRunsAgainOnPostgreSQL(t *testing.T) {
	ctx := context.Background()
	db := testdb.Postgres(t)
	if _, err := db.ExecContext(ctx, "DELETE FROM weft_migrations"); err != nil {
		t.Fatal(err)
	}
	if err := weft.Migrate(ctx, db); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
}
