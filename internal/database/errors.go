package database

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// UniqueViolation reports whether err is a duplicate key on a unique index or
// primary key, on every database weft runs on: SQLSTATE 23505 on PostgreSQL;
// on Citus also the worker's duplicate-key error that the coordinator re-raises
// from a COPY as SQLSTATE XX000; a UNIQUE or PRIMARY KEY constraint failure on
// SQLite.
func UniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505" ||
			pgErr.Code == "XX000" && strings.HasPrefix(pgErr.Message, "duplicate key value violates unique constraint")
	}
	// The pure-Go SQLite driver's errors carry the extended result code only
	// in their text: SQLITE_CONSTRAINT_UNIQUE (2067) and _PRIMARYKEY (1555).
	s := err.Error()
	return strings.Contains(s, "UNIQUE constraint failed") || strings.Contains(s, "(2067)") || strings.Contains(s, "(1555)")
}
