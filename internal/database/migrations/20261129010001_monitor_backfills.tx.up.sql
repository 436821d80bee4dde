-- Backfills: a monitor run over the calls that started in a time range,
-- whenever they ended. The planner job walks the range by a cursor kept here,
-- so a planner that dies resumes where it stopped.
CREATE TABLE IF NOT EXISTS monitor_backfills (
    project_id         TEXT NOT NULL,
    id                 TEXT NOT NULL,
    monitor_id         TEXT NOT NULL,
    started_from       {{.Timestamp}},
    started_before     {{.Timestamp}} NOT NULL,
    -- running, done, cancelled or failed.
    state              TEXT NOT NULL,
    error              TEXT,
    -- Calls matched in the range so far, and those the monitor samples.
    calls_matched      BIGINT NOT NULL DEFAULT 0,
    calls_sampled      BIGINT NOT NULL DEFAULT 0,
    chunks             INTEGER NOT NULL DEFAULT 0,
    -- Where the planner stopped: the last call it read, in started_at order.
    cursor_started_at  {{.Timestamp}},
    cursor_id          TEXT,
    planned            {{.Bool}} NOT NULL DEFAULT FALSE,
    created_by         TEXT NOT NULL,
    created_at         {{.Timestamp}} NOT NULL,
    finished_at        {{.Timestamp}},
    PRIMARY KEY (project_id, id)
);
--bun:split
CREATE INDEX IF NOT EXISTS monitor_backfills_monitor ON monitor_backfills (project_id, monitor_id, created_at);
--bun:split
-- One row per dispatch job of a backfill, written in the transaction that
-- queues the job: what progress counts and what a cancel stops.
CREATE TABLE IF NOT EXISTS monitor_backfill_chunks (
    project_id   TEXT NOT NULL,
    backfill_id  TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    job_id       BIGINT NOT NULL,
    calls        INTEGER NOT NULL,
    done         {{.Bool}} NOT NULL DEFAULT FALSE,
    PRIMARY KEY (project_id, backfill_id, seq)
);
