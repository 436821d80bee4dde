-- A call's status (summary.weave.status: error, running, descendant_error or
-- success) kept as a column written with the call, so that the dashboard's
-- traces by status (trace.Store.CallsOverTime) read it from the
-- calls_roots_dashboard index instead of parsing every root's summary. It is
-- what trace.callStatus derives from the call's exception, its end and its
-- summary's status_counts.error (a number above zero: the roll-up of its
-- descendants' errors). NULL only for a row that is a rename alone.
{{if .Postgres}}
ALTER TABLE calls ADD COLUMN IF NOT EXISTS status TEXT;
--bun:split
-- Rows written before: derived once here (see 20261129050001 for why the
-- setting). jsonb cannot hold a \u0000 escape: such escapes read as U+FFFD,
-- as database.Dialect.JSONDoc reads them.
SET LOCAL citus.multi_task_query_log_level = 'off';
--bun:split
UPDATE calls SET status = CASE
    WHEN exception IS NOT NULL AND exception <> '' THEN 'error'
    WHEN ended_at IS NULL THEN 'running'
    WHEN (SELECT CASE WHEN jsonb_typeof(d #> '{status_counts,error}') = 'number' THEN (d #>> '{status_counts,error}')::double precision END
          FROM (SELECT (CASE WHEN strpos(summary, '\u0000') = 0 THEN summary
                ELSE replace(replace(replace(summary, '\\', chr(1)), '\u0000', '\ufffd'), chr(1), '\\') END)::jsonb AS d) AS s) > 0 THEN 'descendant_error'
    ELSE 'success' END
WHERE status IS NULL AND (started_at IS NOT NULL OR ended_at IS NOT NULL);
--bun:split
DROP INDEX IF EXISTS calls_roots_dashboard;
--bun:split
CREATE INDEX calls_roots_dashboard ON calls (project_id, started_at)
    INCLUDE (op_name, pf_user_id, status, latency_ms, usage_model, prompt_tokens, completion_tokens, total_tokens, cache_read_tokens, cache_creation_tokens)
    WHERE parent_id IS NULL AND deleted_at IS NULL;
{{end}}
{{if .SQLite}}
ALTER TABLE calls ADD COLUMN status TEXT;
--bun:split
UPDATE calls SET status = CASE
    WHEN exception IS NOT NULL AND exception <> '' THEN 'error'
    WHEN ended_at IS NULL THEN 'running'
    WHEN json_valid(summary) AND json_type(summary, '$.status_counts.error') IN ('integer', 'real')
        AND json_extract(summary, '$.status_counts.error') > 0 THEN 'descendant_error'
    ELSE 'success' END
WHERE status IS NULL AND (started_at IS NOT NULL OR ended_at IS NOT NULL);
--bun:split
DROP INDEX IF EXISTS calls_roots_dashboard;
--bun:split
CREATE INDEX calls_roots_dashboard ON calls (project_id, started_at,
    op_name, pf_user_id, status, latency_ms, usage_model, prompt_tokens, completion_tokens, total_tokens, cache_read_tokens, cache_creation_tokens)
    WHERE parent_id IS NULL AND deleted_at IS NULL;
{{end}}
