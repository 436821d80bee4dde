-- calls_roots_dashboard holds each root's id too, so that the dashboard's
-- traces by a feedback field (trace.Store.CallsOverTime, GroupFeedback),
-- which joins the roots with the newest feedback of each call by its id,
-- still reads the roots from the index alone.
DROP INDEX IF EXISTS calls_roots_dashboard;
--bun:split
{{if .Postgres}}
CREATE INDEX calls_roots_dashboard ON calls (project_id, started_at)
    INCLUDE (id, op_name, pf_user_id, status, latency_ms, usage_model, prompt_tokens, completion_tokens, total_tokens, cache_read_tokens, cache_creation_tokens)
    WHERE parent_id IS NULL AND deleted_at IS NULL;
{{end}}
{{if .SQLite}}
CREATE INDEX calls_roots_dashboard ON calls (project_id, started_at,
    op_name, pf_user_id, status, latency_ms, usage_model, prompt_tokens, completion_tokens, total_tokens, cache_read_tokens, cache_creation_tokens, id)
    WHERE parent_id IS NULL AND deleted_at IS NULL;
{{end}}
