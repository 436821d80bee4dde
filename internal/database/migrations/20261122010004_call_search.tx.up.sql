-- Full-text search over calls' inputs and output (trace.CallsFilter.Search).
-- inputs_text and output_text are the searchable text the store derives from
-- the JSON when a start or end is written (string values decoded, numbers;
-- no member names; emoji and other symbols spelled as words), so a CJK or
-- emoji string sent as \u escapes is found as written. Rows written before
-- this migration have none and are not found.
{{if .Postgres}}
ALTER TABLE calls ADD COLUMN IF NOT EXISTS inputs_text TEXT;
--bun:split
ALTER TABLE calls ADD COLUMN IF NOT EXISTS output_text TEXT;
--bun:split
-- Trigram indexes (pg_trgm, created by the migration before) serve ILIKE
-- '%term%' in any script; on Citus they are created on every shard. They
-- cover trace roots, what trace lists show and search: a quarter of the rows
-- or less, and no index work for the children written in bulk.
--bun:split
CREATE INDEX IF NOT EXISTS calls_inputs_text ON calls USING gin (inputs_text public.gin_trgm_ops) WHERE parent_id IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS calls_output_text ON calls USING gin (output_text public.gin_trgm_ops) WHERE parent_id IS NULL;
{{end}}
{{if .SQLite}}
ALTER TABLE calls ADD COLUMN inputs_text TEXT;
--bun:split
ALTER TABLE calls ADD COLUMN output_text TEXT;
--bun:split
-- An external-content FTS5 index of the two columns, keyed by the calls
-- rowid and kept by the triggers below (FTS5 exists only on SQLite).
CREATE VIRTUAL TABLE IF NOT EXISTS calls_search USING fts5(
    inputs_text, output_text, content='calls', content_rowid='rowid', tokenize='trigram');
--bun:split
CREATE TRIGGER IF NOT EXISTS calls_search_insert AFTER INSERT ON calls BEGIN
    INSERT INTO calls_search (rowid, inputs_text, output_text) VALUES (new.rowid, new.inputs_text, new.output_text);
END;
--bun:split
CREATE TRIGGER IF NOT EXISTS calls_search_update AFTER UPDATE OF inputs_text, output_text ON calls BEGIN
    INSERT INTO calls_search (calls_search, rowid, inputs_text, output_text) VALUES ('delete', old.rowid, old.inputs_text, old.output_text);
    INSERT INTO calls_search (rowid, inputs_text, output_text) VALUES (new.rowid, new.inputs_text, new.output_text);
END;
--bun:split
CREATE TRIGGER IF NOT EXISTS calls_search_delete AFTER DELETE ON calls BEGIN
    INSERT INTO calls_search (calls_search, rowid, inputs_text, output_text) VALUES ('delete', old.rowid, old.inputs_text, old.output_text);
END;
{{end}}
