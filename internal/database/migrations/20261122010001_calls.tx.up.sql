-- Calls: one row per (project, call id), merged from independent start, end and
-- rename writes. A row with started_at NULL has no start yet and is invisible
-- to reads. Client JSON (attributes, inputs, output, summary, otel_dump) is kept
-- as the exact text sent; input_refs/output_refs are derived copies for filters.
CREATE TABLE IF NOT EXISTS calls (
    project_id      TEXT NOT NULL,
    id              TEXT NOT NULL,
    trace_id        TEXT,
    parent_id       TEXT,
    thread_id       TEXT,
    turn_id         TEXT,
    op_name         TEXT,
    display_name    TEXT,
    started_at      {{.Timestamp}},
    ended_at        {{.Timestamp}},
    attributes      {{.JSON}},
    inputs          {{.JSON}},
    otel_dump       {{.JSON}},
    input_refs      {{.JSONB}},
    output          {{.JSON}},
    output_refs     {{.JSONB}},
    summary         {{.JSON}},
    exception       TEXT,
    pf_user_id      TEXT,
    pf_run_id       TEXT,
    pf_run_step     BIGINT,
    pf_run_step_end BIGINT,
    deleted_at      {{.Timestamp}},
    PRIMARY KEY (project_id, id)
);
--bun:split
CREATE INDEX IF NOT EXISTS calls_trace ON calls (project_id, trace_id, started_at, id);
--bun:split
CREATE INDEX IF NOT EXISTS calls_started ON calls (project_id, started_at, id);
--bun:split
CREATE INDEX IF NOT EXISTS calls_parent ON calls (project_id, parent_id) WHERE parent_id IS NOT NULL;
--bun:split
CREATE INDEX IF NOT EXISTS calls_op ON calls (project_id, op_name, started_at);
--bun:split
CREATE INDEX IF NOT EXISTS calls_thread ON calls (project_id, thread_id) WHERE thread_id IS NOT NULL;
--bun:split
-- Project-level LLM prices (per token, in units), added with /cost/create.
CREATE TABLE IF NOT EXISTS llm_prices (
    project_id                        TEXT NOT NULL,
    id                                TEXT NOT NULL,
    llm_id                            TEXT NOT NULL,
    provider_id                       TEXT NOT NULL,
    effective_date                    {{.Timestamp}} NOT NULL,
    prompt_token_cost                 DOUBLE PRECISION NOT NULL,
    completion_token_cost             DOUBLE PRECISION NOT NULL,
    cache_read_input_token_cost       DOUBLE PRECISION NOT NULL DEFAULT 0,
    cache_creation_input_token_cost   DOUBLE PRECISION NOT NULL DEFAULT 0,
    prompt_token_cost_unit            TEXT NOT NULL,
    completion_token_cost_unit        TEXT NOT NULL,
    created_by                        TEXT NOT NULL,
    created_at                        {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, id)
);
--bun:split
CREATE INDEX IF NOT EXISTS llm_prices_llm ON llm_prices (project_id, llm_id, effective_date);
