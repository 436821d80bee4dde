-- The token counts of each call's own summary.usage, derived once when its end
-- is written so that usage does not re-parse every summary of a trace: a JSON
-- object {"<model>": [requests, prompt, completion, total, cache_read,
-- cache_creation]} ("{}" when the summary has none). NULL means not derived
-- yet (rows written before this column existed); usage then reads the summary.
{{if .Postgres}}ALTER TABLE calls ADD COLUMN IF NOT EXISTS usage {{.JSON}};{{end}}
{{if .SQLite}}ALTER TABLE calls ADD COLUMN usage {{.JSON}};{{end}}
