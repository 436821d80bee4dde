-- Indexes of the trace list sorted by latency (trace.SortLatency), longest or
-- shortest first: the first page and every page by cursor read them in order
-- instead of computing and sorting every root's latency. The expression is
-- the one the sort orders by (database.Dialect.Elapsed); running calls, with
-- none, come last either way. Partial on live roots, like calls_roots.
{{if .Postgres}}
CREATE INDEX IF NOT EXISTS calls_roots_latency_desc ON calls (project_id, (EXTRACT(EPOCH FROM (ended_at - started_at))) DESC NULLS LAST, id)
    WHERE parent_id IS NULL AND deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS calls_roots_latency_asc ON calls (project_id, (EXTRACT(EPOCH FROM (ended_at - started_at))) ASC NULLS LAST, id)
    WHERE parent_id IS NULL AND deleted_at IS NULL;
{{end}}
{{if .SQLite}}
CREATE INDEX IF NOT EXISTS calls_roots_latency ON calls (project_id, (round((julianday(ended_at) - julianday(started_at)) * 86400000)), id)
    WHERE parent_id IS NULL AND deleted_at IS NULL;
{{end}}
