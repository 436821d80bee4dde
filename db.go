package weft

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/sqliteshim"
	"github.com/uptrace/bun/extra/bundebug"
	"github.com/weftlabs/weft/internal/database"
)

// DB is a bun database opened by [Open], on PostgreSQL or SQLite.
type DB struct {
	*bun.DB
	pool *pgxpool.Pool
}

// Postgres reports whether db is a PostgreSQL database, reached through pgx
// (see Pool). weft's own stores ask internal/database's Dialect for the
// capability they need instead.
func (db *DB) Postgres() bool { return database.DialectOf(db).Has(database.Pgx) }

// Pool returns the pgx pool under a PostgreSQL database (for libraries such as
// River that speak pgx directly), or nil on SQLite.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close closes the database and its pool.
func (db *DB) Close() error {
	err := db.DB.Close()
	if db.pool != nil {
		db.pool.Close()
	}
	return err
}

// memoryDatabases numbers in-memory SQLite databases so that two Opens of
// "sqlite::memory:" in one process never share data.
var memoryDatabases atomic.Int64

// Open opens the database named by url and checks that it answers. It does not
// migrate; call [Migrate] once after opening.
//
// Accepted forms:
//
//	postgres://user:pass@host:5432/db?sslmode=disable   (also postgresql://)
//	sqlite:///absolute/path/weft.db
//	sqlite:relative/path/weft.db
//	sqlite::memory:                                        (one connection; data lives as long as the DB)
//
// PostgreSQL is reached through pgx; SQLite through a pure-Go driver, in WAL mode
// with synchronous=FULL so that a committed write survives a crash.
// Setting the environment variable BUNDEBUG=1 logs failed queries, =2 all queries.
func Open(ctx context.Context, url string) (*DB, error) {
	var db *DB
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		cfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			return nil, fmt.Errorf("weft: parse database url: %w", err)
		}
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("weft: open postgres: %w", err)
		}
		db = &DB{DB: bun.NewDB(stdlib.OpenDBFromPool(pool), pgdialect.New()), pool: pool}
	case strings.HasPrefix(url, "sqlite:"):
		sqldb, err := openSQLite(strings.TrimPrefix(url, "sqlite:"))
		if err != nil {
			return nil, err
		}
		db = &DB{DB: bun.NewDB(sqldb, sqlitedialect.New())}
	default:
		return nil, fmt.Errorf("weft: database url must start with postgres://, postgresql:// or sqlite: (got %q)", truncate(url, 40))
	}
	if os.Getenv("BUNDEBUG") != "" {
		db.AddQueryHook(bundebug.NewQueryHook(bundebug.FromEnv("BUNDEBUG")))
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("weft: database does not answer: %w", err)
	}
	return db, nil
}

func openSQLite(path string) (*sql.DB, error) {
	const pragmas = "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate"
	if path == ":memory:" {
		// A shared cache keeps the data alive across the pool; one connection
		// avoids the shared cache's table locks.
		dsn := fmt.Sprintf("file:weftmem%d?mode=memory&cache=shared&%s", memoryDatabases.Add(1), pragmas)
		sqldb, err := sql.Open(sqliteshim.ShimName, dsn)
		if err != nil {
			return nil, fmt.Errorf("weft: open sqlite: %w", err)
		}
		sqldb.SetMaxOpenConns(1)
		return sqldb, nil
	}
	// sqlite:///abs/path keeps its leading slash after "sqlite:" is cut as "//abs/path".
	if strings.HasPrefix(path, "//") {
		path = path[2:]
	}
	if path == "" {
		return nil, fmt.Errorf("weft: sqlite url names no file")
	}
	dsn := "file:" + path + "?" + pragmas + "&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	sqldb, err := sql.Open(sqliteshim.ShimName, dsn)
	if err != nil {
		return nil, fmt.Errorf("weft: open sqlite: %w", err)
	}
	// WAL lets readers run beside the one writer; writers queue on busy_timeout.
	sqldb.SetMaxOpenConns(8)
	return sqldb, nil
}
