-- Indexes of the dashboard (trace.Store.CallsOverTime). calls_roots_dashboard
-- holds, per live root in start order, every column its grouped query reads
-- (the groups op and user, latency_ms, usage_model and the token counters),
-- so that a month of a large project is aggregated from the index alone
-- rather than from every row of calls (roots are a fraction of them). The
-- exception is not among them (a traceback is too long for an index entry):
-- errors are counted from calls_roots_failed, the failed roots with their
-- groups op and user. calls_several_models holds the calls
-- whose usage names several models, the only ones whose usage is read per
-- model (trace.Store.severalModels).
{{if .Postgres}}
CREATE INDEX IF NOT EXISTS calls_roots_dashboard ON calls (project_id, started_at)
    INCLUDE (op_name, pf_user_id, latency_ms, usage_model, prompt_tokens, completion_tokens, total_tokens, cache_read_tokens, cache_creation_tokens)
    WHERE parent_id IS NULL AND deleted_at IS NULL;
{{end}}
{{if .SQLite}}
CREATE INDEX IF NOT EXISTS calls_roots_dashboard ON calls (project_id, started_at,
    op_name, pf_user_id, latency_ms, usage_model, prompt_tokens, completion_tokens, total_tokens, cache_read_tokens, cache_creation_tokens)
    WHERE parent_id IS NULL AND deleted_at IS NULL;
{{end}}
--bun:split
{{if .Postgres}}
CREATE INDEX IF NOT EXISTS calls_roots_failed ON calls (project_id, started_at) INCLUDE (op_name, pf_user_id)
    WHERE parent_id IS NULL AND deleted_at IS NULL AND exception IS NOT NULL AND exception <> '';
{{end}}
{{if .SQLite}}
CREATE INDEX IF NOT EXISTS calls_roots_failed ON calls (project_id, started_at, op_name, pf_user_id)
    WHERE parent_id IS NULL AND deleted_at IS NULL AND exception IS NOT NULL AND exception <> '';
{{end}}
--bun:split
CREATE INDEX IF NOT EXISTS calls_several_models ON calls (project_id, started_at) WHERE usage_model IS NULL AND usage <> '{}';
