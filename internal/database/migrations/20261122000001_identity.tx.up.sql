CREATE TABLE IF NOT EXISTS users (
    id          TEXT PRIMARY KEY,
    username    TEXT NOT NULL,
    admin       {{.Bool}} NOT NULL DEFAULT FALSE,
    created_at  {{.Timestamp}} NOT NULL
);
--bun:split
CREATE UNIQUE INDEX IF NOT EXISTS users_username ON users (username);
--bun:split
CREATE TABLE IF NOT EXISTS entities (
    name        TEXT PRIMARY KEY,
    created_at  {{.Timestamp}} NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS memberships (
    entity      TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    role        TEXT NOT NULL,
    created_at  {{.Timestamp}} NOT NULL,
    PRIMARY KEY (entity, user_id)
);
--bun:split
CREATE INDEX IF NOT EXISTS memberships_user ON memberships (user_id);
--bun:split
CREATE TABLE IF NOT EXISTS api_keys (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    created_at   {{.Timestamp}} NOT NULL,
    revoked_at   {{.Timestamp}}
);
--bun:split
CREATE INDEX IF NOT EXISTS api_keys_user ON api_keys (user_id);
--bun:split
CREATE TABLE IF NOT EXISTS projects (
    entity      TEXT NOT NULL,
    name        TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    created_at  {{.Timestamp}} NOT NULL,
    PRIMARY KEY (entity, name)
);
