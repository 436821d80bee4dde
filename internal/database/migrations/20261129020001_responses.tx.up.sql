-- Responses of the Responses API, kept for GET and DELETE
-- /v1/responses/{id}, their input items, and previous_response_id chains.
-- response is the Response as answered, input_items the request's input
-- items (ids assigned) as a JSON list; call_id and trace_id name the call
-- that traced it, which the next response of the chain links to.
CREATE TABLE IF NOT EXISTS stored_responses (
    project_id   TEXT NOT NULL,
    id           TEXT NOT NULL,
    previous_id  TEXT,
    response     {{.JSON}} NOT NULL,
    input_items  {{.JSON}} NOT NULL,
    call_id      TEXT,
    trace_id     TEXT,
    created_by   TEXT,
    created_at   {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, id)
);
