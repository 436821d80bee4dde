-- Web UI sessions: one row per sign-in. The cookie carries a random token and
-- the row keeps only its SHA-256, so a copy of this table opens no session. A
-- session lasts until expires_at, or until revoked_at is set (sign-out), and
-- only while the API key it was opened with is live (key_id).
CREATE TABLE IF NOT EXISTS ui_sessions (
    token_hash  TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    created_at  {{.Timestamp}} NOT NULL,
    expires_at  {{.Timestamp}} NOT NULL,
    revoked_at  {{.Timestamp}}
);
--bun:split
CREATE INDEX IF NOT EXISTS ui_sessions_user ON ui_sessions (user_id, expires_at);
