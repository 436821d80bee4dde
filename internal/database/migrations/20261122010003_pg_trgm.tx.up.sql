-- pg_trgm, for the trigram indexes of call search (the next migration). It
-- has a transaction of its own: on Citus an extension command cannot follow a
-- command on a distributed table in one transaction. On Citus it is created on
-- the coordinator, which propagates it to the workers. The extension is
-- database-wide and goes to schema public, where the indexes of every schema
-- name its operator class.
{{if .Postgres}}CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;{{end}}
{{if .SQLite}}SELECT 1;{{end}}
