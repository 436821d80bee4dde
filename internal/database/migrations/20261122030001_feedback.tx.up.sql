CREATE TABLE IF NOT EXISTS feedback (
    project_id                 TEXT NOT NULL,
    id                         TEXT NOT NULL,
    trace_ref                  TEXT NOT NULL,
    pf_user_id                 TEXT NOT NULL,
    creator                    TEXT,
    created_at                 {{.Timestamp}} NOT NULL,
    feedback_type              TEXT NOT NULL,
    payload                    {{.JSON}} NOT NULL,
    annotation_ref             TEXT,
    runnable_ref               TEXT,
    call_ref                   TEXT,
    trigger_ref                TEXT,
    queue_id                   TEXT,
    scorer_tags                {{.JSON}} NOT NULL,
    scorer_tag_reasons         {{.JSON}} NOT NULL,
    scorer_tag_confidences     {{.JSON}} NOT NULL,
    scorer_ratings             {{.JSON}} NOT NULL,
    scorer_rating_reasons      {{.JSON}} NOT NULL,
    scorer_rating_confidences  {{.JSON}} NOT NULL,
    scorer_trace_id            TEXT,
    span_agent_name            TEXT NOT NULL,
    span_agent_version         TEXT NOT NULL,
    span_status_code           TEXT NOT NULL,
    span_conversation_id       TEXT,
    span_trace_id              TEXT,
    PRIMARY KEY (project_id, id)
);
--bun:split
CREATE INDEX IF NOT EXISTS feedback_created ON feedback (project_id, created_at, id);
--bun:split
CREATE INDEX IF NOT EXISTS feedback_trace_ref ON feedback (project_id, trace_ref);
--bun:split
CREATE INDEX IF NOT EXISTS feedback_type ON feedback (project_id, feedback_type, created_at);
--bun:split
CREATE INDEX IF NOT EXISTS feedback_queue ON feedback (project_id, queue_id) WHERE queue_id IS NOT NULL;
--bun:split
CREATE TABLE IF NOT EXISTS annotation_queues (
    project_id   TEXT NOT NULL,
    id           TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    scorer_refs  {{.JSON}} NOT NULL,
    created_at   {{.Timestamp}} NOT NULL,
    created_by   TEXT NOT NULL,
    updated_at   {{.Timestamp}} NOT NULL,
    deleted_at   {{.Timestamp}},
    PRIMARY KEY (project_id, id)
);
--bun:split
CREATE INDEX IF NOT EXISTS annotation_queues_created ON annotation_queues (project_id, created_at, id) WHERE deleted_at IS NULL;
--bun:split
CREATE TABLE IF NOT EXISTS annotation_queue_items (
    project_id       TEXT NOT NULL,
    id               TEXT NOT NULL,
    queue_id         TEXT NOT NULL,
    call_id          TEXT NOT NULL,
    call_started_at  {{.Timestamp}} NOT NULL,
    call_ended_at    {{.Timestamp}},
    call_op_name     TEXT NOT NULL,
    call_trace_id    TEXT NOT NULL,
    display_fields   {{.JSON}} NOT NULL,
    added_by         TEXT,
    created_at       {{.Timestamp}} NOT NULL,
    created_by       TEXT NOT NULL,
    updated_at       {{.Timestamp}} NOT NULL,
    deleted_at       {{.Timestamp}},
    PRIMARY KEY (project_id, id)
);
--bun:split
CREATE UNIQUE INDEX IF NOT EXISTS annotation_queue_items_call ON annotation_queue_items (project_id, queue_id, call_id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotation_queue_items_created ON annotation_queue_items (project_id, queue_id, created_at, id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotation_queue_items_updated ON annotation_queue_items (project_id, queue_id, updated_at, id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotation_queue_items_started ON annotation_queue_items (project_id, queue_id, call_started_at, id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotation_queue_items_op ON annotation_queue_items (project_id, queue_id, call_op_name, id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotation_queue_items_trace ON annotation_queue_items (project_id, queue_id, call_trace_id) WHERE deleted_at IS NULL;
--bun:split
CREATE TABLE IF NOT EXISTS annotator_queue_items_progress (
    project_id        TEXT NOT NULL,
    id                TEXT NOT NULL,
    queue_item_id     TEXT NOT NULL,
    queue_id          TEXT NOT NULL,
    annotator_id      TEXT NOT NULL,
    annotation_state  TEXT NOT NULL,
    created_at        {{.Timestamp}} NOT NULL,
    updated_at        {{.Timestamp}} NOT NULL,
    deleted_at        {{.Timestamp}},
    PRIMARY KEY (project_id, id)
);
--bun:split
CREATE UNIQUE INDEX IF NOT EXISTS annotator_progress_annotator ON annotator_queue_items_progress (project_id, queue_item_id, annotator_id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotator_progress_latest ON annotator_queue_items_progress (project_id, queue_item_id, updated_at, id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotator_progress_queue ON annotator_queue_items_progress (project_id, queue_id, annotation_state) WHERE deleted_at IS NULL;
