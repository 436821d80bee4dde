-- Indexes of the trace list (trace roots newest first, by op, failed ones)
-- and of its capped counts. Partial on live roots, they answer a count of the
-- first ten thousand roots from the index alone instead of reading four times
-- as many rows of calls.
CREATE INDEX IF NOT EXISTS calls_roots ON calls (project_id, started_at, id) WHERE parent_id IS NULL AND deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS calls_roots_op ON calls (project_id, op_name, started_at, id) WHERE parent_id IS NULL AND deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS calls_failed ON calls (project_id, started_at, id) WHERE exception IS NOT NULL AND exception <> '';
