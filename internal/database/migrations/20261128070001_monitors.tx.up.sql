-- Monitors that run: the newest live version of each Monitor object (kept in
-- step with obj_versions inside the publish or delete that changes it), read
-- by the ingest path to learn cheaply whether a project has one active.
CREATE TABLE IF NOT EXISTS monitors (
    project_id    TEXT NOT NULL,
    object_id     TEXT NOT NULL,
    digest        TEXT NOT NULL,
    active        {{.Bool}} NOT NULL,
    -- When the monitor last went from inactive (or absent) to active: calls
    -- that ended before it are not scored (backfills score them).
    active_since  {{.Timestamp}},
    spec          {{.JSON}} NOT NULL,
    published_by  TEXT,
    updated_at    {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, object_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS monitors_active ON monitors (project_id) WHERE active;
--bun:split
-- One row per (call, scorer version): the verdict, or the work still to do.
-- Its key is what makes scoring exactly-once; feedback_id is derived from it,
-- so the feedback row a retry writes replaces the one an earlier attempt
-- wrote.
CREATE TABLE IF NOT EXISTS monitor_verdicts (
    project_id         TEXT NOT NULL,
    call_id            TEXT NOT NULL,
    scorer_id          TEXT NOT NULL,
    scorer_digest      TEXT NOT NULL,
    monitor_id         TEXT NOT NULL,
    monitor_digest     TEXT NOT NULL,
    backfill_id        TEXT,
    -- pending, done or error.
    state              TEXT NOT NULL,
    feedback_id        TEXT NOT NULL,
    output             {{.JSON}},
    error              TEXT,
    attempts           INTEGER NOT NULL DEFAULT 0,
    judge_call_id      TEXT,
    prompt_tokens      BIGINT,
    completion_tokens  BIGINT,
    cost               DOUBLE PRECISION,
    created_at         {{.Timestamp}} NOT NULL,
    scored_at          {{.Timestamp}},
    PRIMARY KEY (project_id, call_id, scorer_id, scorer_digest)
);
--bun:split
CREATE INDEX IF NOT EXISTS monitor_verdicts_monitor ON monitor_verdicts (project_id, monitor_id, created_at);
--bun:split
CREATE INDEX IF NOT EXISTS monitor_verdicts_backfill ON monitor_verdicts (project_id, backfill_id) WHERE backfill_id IS NOT NULL;
