-- A root's status column reads as the trace list's status filter does
-- (trace.CallsFilter.TraceStatuses): descendant_error rather than success
-- when another visible call of its trace raised, whether or not its summary
-- rolled the error up (OpenTelemetry spans and the JS SDK do not). Writes
-- keep it so (trace.Store.rollUps); the roots written before are marked
-- here, each read through the calls_trace index. On a distributed database
-- a multi-shard statement whose subquery joins on the distribution column
-- (see 20261129050001 for the setting).
{{if .Postgres}}
SET LOCAL citus.multi_task_query_log_level = 'off';
--bun:split
{{end}}
UPDATE calls SET status = 'descendant_error'
WHERE parent_id IS NULL AND deleted_at IS NULL AND status = 'success'
  AND EXISTS (SELECT 1 FROM calls AS d WHERE d.project_id = calls.project_id AND d.trace_id = calls.trace_id
      AND d.id <> calls.id AND d.started_at IS NOT NULL AND d.deleted_at IS NULL AND COALESCE(d.exception, '') <> '');
