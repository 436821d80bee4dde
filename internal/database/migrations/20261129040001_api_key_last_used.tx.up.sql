-- When each API key was last used, to the minute: Identity writes it at most
-- once a minute per key and process (not on every request), so that people
-- can tell a key in use from a forgotten one before revoking it.
{{if .Postgres}}ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS last_used_at {{.Timestamp}};{{end}}
{{if .SQLite}}ALTER TABLE api_keys ADD COLUMN last_used_at {{.Timestamp}};{{end}}
