-- Versioned objects and ops: one row per (object id, digest). version_index
-- numbers digests in first-seen order and survives deletes; is_latest is
-- computed at read time (the newest live version).
CREATE TABLE IF NOT EXISTS obj_versions (
    project_id         TEXT NOT NULL,
    object_id          TEXT NOT NULL,
    digest             TEXT NOT NULL,
    version_index      INTEGER NOT NULL,
    kind               TEXT NOT NULL,
    base_object_class  TEXT,
    leaf_object_class  TEXT,
    val                {{.JSON}} NOT NULL,
    size_bytes         BIGINT NOT NULL,
    pf_user_id         TEXT,
    created_at         {{.Timestamp}} NOT NULL,
    deleted_at         {{.Timestamp}},
    PRIMARY KEY (project_id, object_id, digest)
);
--bun:split
CREATE UNIQUE INDEX IF NOT EXISTS obj_versions_index ON obj_versions (project_id, object_id, version_index);
--bun:split
CREATE INDEX IF NOT EXISTS obj_versions_created ON obj_versions (project_id, created_at);
--bun:split
CREATE INDEX IF NOT EXISTS obj_versions_base_class ON obj_versions (project_id, base_object_class);
--bun:split
CREATE INDEX IF NOT EXISTS obj_versions_kind ON obj_versions (project_id, kind, object_id);
--bun:split
-- Content-addressed files.
CREATE TABLE IF NOT EXISTS obj_files (
    project_id  TEXT NOT NULL,
    digest      TEXT NOT NULL,
    content     {{.Bytes}} NOT NULL,
    size_bytes  BIGINT NOT NULL,
    created_at  {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, digest)
);
--bun:split
-- Table rows, stored once per project and row digest.
CREATE TABLE IF NOT EXISTS obj_table_rows (
    project_id  TEXT NOT NULL,
    digest      TEXT NOT NULL,
    val         {{.JSON}} NOT NULL,
    size_bytes  BIGINT NOT NULL,
    PRIMARY KEY (project_id, digest)
);
--bun:split
-- Tables: the row count and storage size are fixed at creation (a table digest
-- names an immutable list of rows).
CREATE TABLE IF NOT EXISTS obj_tables (
    project_id          TEXT NOT NULL,
    digest              TEXT NOT NULL,
    row_count           BIGINT NOT NULL,
    storage_size_bytes  BIGINT NOT NULL,
    created_at          {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, digest)
);
--bun:split
-- The ordered row list of each table.
CREATE TABLE IF NOT EXISTS obj_table_entries (
    project_id    TEXT NOT NULL,
    table_digest  TEXT NOT NULL,
    position      INTEGER NOT NULL,
    row_digest    TEXT NOT NULL,
    PRIMARY KEY (project_id, table_digest, position)
);
--bun:split
CREATE INDEX IF NOT EXISTS obj_table_entries_row ON obj_table_entries (project_id, table_digest, row_digest);
