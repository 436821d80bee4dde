package jobs

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
)

// Tx is a transaction on the weft database in the form its driver runs it:
// Pgx on PostgreSQL, SQL on SQLite. Exactly one is set.
type Tx struct {
	Pgx pgx.Tx
	SQL *sql.Tx
}

// QueryRow runs query, a statement with its values already in it (SQL as
// bun formats it), and scans its first row into dest; no row is
// sql.ErrNoRows.
func (tx Tx) QueryRow(ctx context.Context, query string, dest ...any) error {
	if tx.Pgx != nil {
		err := tx.Pgx.QueryRow(ctx, query).Scan(dest...)
		if err == pgx.ErrNoRows {
			return sql.ErrNoRows
		}
		return err
	}
	return tx.SQL.QueryRowContext(ctx, query).Scan(dest...)
}

// Exec runs statement, with its values already in it (SQL as bun formats
// it), and returns how many rows it changed.
func (tx Tx) Exec(ctx context.Context, statement string) (rowsAffected int64, err error) {
	if tx.Pgx != nil {
		tag, err := tx.Pgx.Exec(ctx, statement)
		return tag.RowsAffected(), err
	}
	res, err := tx.SQL.ExecContext(ctx, statement)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (tx Tx) commit(ctx context.Context) error {
	if tx.Pgx != nil {
		return tx.Pgx.Commit(ctx)
	}
	return tx.SQL.Commit()
}

func (tx Tx) rollback(ctx context.Context) error {
	if tx.Pgx != nil {
		return tx.Pgx.Rollback(ctx)
	}
	return tx.SQL.Rollback()
}
