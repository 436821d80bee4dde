-- The training routes name models and jobs by id alone, with no project in the
-- path. training_ids maps such an id to its project, so that every statement on a
-- training table can then filter project_id by equality (on a distributed
-- database: one shard). It replaces the UNIQUE (id) indexes of the first training
-- migration, which a table distributed by project_id cannot have.
CREATE TABLE IF NOT EXISTS training_ids (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL,
    kind        TEXT NOT NULL
);
--bun:split
-- The backfill reads every project: on a distributed database a multi-shard
-- statement, allowed here whatever the server's citus.multi_task_query_log_level
-- (on plain PostgreSQL the setting is an inert placeholder).
{{if .Postgres}}SET LOCAL citus.multi_task_query_log_level = 'off';{{end}}
--bun:split
INSERT INTO training_ids (id, project_id, kind)
SELECT id, project_id, 'model' FROM training_models WHERE TRUE
ON CONFLICT (id) DO NOTHING;
--bun:split
INSERT INTO training_ids (id, project_id, kind)
SELECT id, project_id, 'job' FROM training_jobs WHERE TRUE
ON CONFLICT (id) DO NOTHING;
--bun:split
DROP INDEX IF EXISTS training_models_id;
--bun:split
DROP INDEX IF EXISTS training_checkpoints_id;
--bun:split
DROP INDEX IF EXISTS training_jobs_id;
--bun:split
DROP INDEX IF EXISTS training_events_id;
