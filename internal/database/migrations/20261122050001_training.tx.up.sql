CREATE TABLE IF NOT EXISTS training_models (
    project_id  TEXT NOT NULL,
    id          TEXT NOT NULL,
    entity      TEXT NOT NULL,
    project     TEXT NOT NULL,
    name        TEXT NOT NULL,
    base_model  TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    created_at  {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, id)
);
--bun:split
CREATE UNIQUE INDEX IF NOT EXISTS training_models_name ON training_models (project_id, name);
--bun:split
CREATE TABLE IF NOT EXISTS training_checkpoints (
    project_id  TEXT NOT NULL,
    model_id    TEXT NOT NULL,
    step        BIGINT NOT NULL,
    id          TEXT NOT NULL,
    metrics     {{.JSON}} NOT NULL,
    blob_prefix TEXT NOT NULL,
    job_id      TEXT NOT NULL,
    created_at  {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, model_id, step)
);
--bun:split
CREATE TABLE IF NOT EXISTS training_jobs (
    project_id          TEXT NOT NULL,
    id                  TEXT NOT NULL,
    model_id            TEXT NOT NULL,
    kind                TEXT NOT NULL,
    status              TEXT NOT NULL,
    input               {{.JSON}} NOT NULL,
    experimental_config {{.JSON}} NOT NULL,
    river_job_id        BIGINT,
    last_seq            BIGINT NOT NULL DEFAULT 0,
    error_message       TEXT,
    created_by          TEXT NOT NULL,
    created_at          {{.Timestamp}} NOT NULL,
    started_at          {{.Timestamp}},
    ended_at            {{.Timestamp}},
    PRIMARY KEY (project_id, id)
);
--bun:split
CREATE INDEX IF NOT EXISTS training_jobs_model ON training_jobs (model_id, created_at);
--bun:split
CREATE INDEX IF NOT EXISTS training_jobs_status ON training_jobs (status, created_at);
--bun:split
CREATE TABLE IF NOT EXISTS training_events (
    project_id  TEXT NOT NULL,
    job_id      TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    id          TEXT NOT NULL,
    type        TEXT NOT NULL,
    data        {{.JSON}} NOT NULL,
    created_at  {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, job_id, seq)
);
--bun:split
CREATE TABLE IF NOT EXISTS training_logs (
    project_id        TEXT NOT NULL,
    model_id          TEXT NOT NULL,
    id                TEXT NOT NULL,
    split             TEXT NOT NULL,
    step              BIGINT NOT NULL,
    trajectory_groups {{.JSON}} NOT NULL,
    metrics           {{.JSON}} NOT NULL,
    created_by        TEXT NOT NULL,
    created_at        {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, model_id, id)
);
--bun:split
CREATE INDEX IF NOT EXISTS training_logs_step ON training_logs (project_id, model_id, split, step);
