-- Figures of each call that the dashboard and /calls/stats add up over every
-- trace of a range, kept as plain columns written with the call, so that a
-- month of a large project is aggregated without parsing JSON or timestamp
-- text per row (and, being plain columns, added without rewriting the table):
--
-- latency_ms is what database.Dialect.ElapsedMillis computes from started_at
-- to ended_at, written once both are known (a start and an end may come in
-- either order). usage_model is the one model of the call's own usage (NULL
-- with none or several), and the token counters are summed over its models,
-- derived from calls.usage when the end is written. NULL counters mean not
-- derived: readers then read calls.usage.
{{if .Postgres}}
ALTER TABLE calls ADD COLUMN IF NOT EXISTS latency_ms BIGINT;
--bun:split
ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage_model TEXT;
--bun:split
ALTER TABLE calls ADD COLUMN IF NOT EXISTS prompt_tokens DOUBLE PRECISION;
--bun:split
ALTER TABLE calls ADD COLUMN IF NOT EXISTS completion_tokens DOUBLE PRECISION;
--bun:split
ALTER TABLE calls ADD COLUMN IF NOT EXISTS total_tokens DOUBLE PRECISION;
--bun:split
ALTER TABLE calls ADD COLUMN IF NOT EXISTS cache_read_tokens DOUBLE PRECISION;
--bun:split
ALTER TABLE calls ADD COLUMN IF NOT EXISTS cache_creation_tokens DOUBLE PRECISION;
--bun:split
-- Rows written before: derived once here. Only rows not yet derived are
-- touched, so that a run again changes nothing. It reads every project: on a
-- distributed database a multi-shard statement, allowed here whatever the
-- server's citus.multi_task_query_log_level (on plain PostgreSQL the setting
-- is an inert placeholder).
SET LOCAL citus.multi_task_query_log_level = 'off';
--bun:split
UPDATE calls SET
    latency_ms = trunc(EXTRACT(EPOCH FROM (ended_at - started_at)) * 1000),
    usage_model = CASE WHEN (SELECT count(*) FROM jsonb_object_keys(usage::jsonb)) = 1 THEN (SELECT k FROM jsonb_object_keys(usage::jsonb) AS u(k)) END,
    prompt_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum((u.v ->> 1)::double precision) FROM jsonb_each(usage::jsonb) AS u(k, v)), 0) END,
    completion_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum((u.v ->> 2)::double precision) FROM jsonb_each(usage::jsonb) AS u(k, v)), 0) END,
    total_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum((u.v ->> 3)::double precision) FROM jsonb_each(usage::jsonb) AS u(k, v)), 0) END,
    cache_read_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum((u.v ->> 4)::double precision) FROM jsonb_each(usage::jsonb) AS u(k, v)), 0) END,
    cache_creation_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum((u.v ->> 5)::double precision) FROM jsonb_each(usage::jsonb) AS u(k, v)), 0) END
WHERE (usage IS NOT NULL AND total_tokens IS NULL) OR (latency_ms IS NULL AND started_at IS NOT NULL AND ended_at IS NOT NULL);
{{end}}
{{if .SQLite}}
ALTER TABLE calls ADD COLUMN latency_ms BIGINT;
--bun:split
ALTER TABLE calls ADD COLUMN usage_model TEXT;
--bun:split
ALTER TABLE calls ADD COLUMN prompt_tokens DOUBLE PRECISION;
--bun:split
ALTER TABLE calls ADD COLUMN completion_tokens DOUBLE PRECISION;
--bun:split
ALTER TABLE calls ADD COLUMN total_tokens DOUBLE PRECISION;
--bun:split
ALTER TABLE calls ADD COLUMN cache_read_tokens DOUBLE PRECISION;
--bun:split
ALTER TABLE calls ADD COLUMN cache_creation_tokens DOUBLE PRECISION;
--bun:split
UPDATE calls SET
    latency_ms = (
        (unixepoch(ended_at) * 1000000 + CASE WHEN substr(ended_at, 20, 1) = '.' THEN CAST(substr(substr(substr(ended_at, 21, 6), 1, (6 - length(ltrim(substr(ended_at, 21, 6), '0123456789')))) || '000000', 1, 6) AS INTEGER) ELSE 0 END)
      - (unixepoch(started_at) * 1000000 + CASE WHEN substr(started_at, 20, 1) = '.' THEN CAST(substr(substr(substr(started_at, 21, 6), 1, (6 - length(ltrim(substr(started_at, 21, 6), '0123456789')))) || '000000', 1, 6) AS INTEGER) ELSE 0 END)
    ) / 1000,
    usage_model = CASE WHEN (SELECT count(*) FROM json_each(usage)) = 1 THEN (SELECT key FROM json_each(usage)) END,
    prompt_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum(json_extract(value, '$[1]')) FROM json_each(usage)), 0) END,
    completion_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum(json_extract(value, '$[2]')) FROM json_each(usage)), 0) END,
    total_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum(json_extract(value, '$[3]')) FROM json_each(usage)), 0) END,
    cache_read_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum(json_extract(value, '$[4]')) FROM json_each(usage)), 0) END,
    cache_creation_tokens = CASE WHEN usage IS NOT NULL THEN COALESCE((SELECT sum(json_extract(value, '$[5]')) FROM json_each(usage)), 0) END
WHERE (usage IS NOT NULL AND total_tokens IS NULL) OR (latency_ms IS NULL AND started_at IS NOT NULL AND ended_at IS NOT NULL);
{{end}}
