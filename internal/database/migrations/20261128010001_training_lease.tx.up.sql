-- A running attempt holds its job by a lease it renews: attempt is the queue's
-- attempt number that runs the job, heartbeat_at when it last renewed. A job
-- whose lease has expired lost its worker (killed, or cut off from the
-- database) and is queued again at once, instead of after the job timeout.
-- PostgreSQL runs the history again on a schema that has the columns (a
-- database whose bookkeeping was lost), so it adds them only when missing.
{{if .Postgres}}ALTER TABLE training_jobs ADD COLUMN IF NOT EXISTS attempt INTEGER NOT NULL DEFAULT 0;{{end}}
{{if .SQLite}}ALTER TABLE training_jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;{{end}}
--bun:split
{{if .Postgres}}ALTER TABLE training_jobs ADD COLUMN IF NOT EXISTS heartbeat_at {{.Timestamp}};{{end}}
{{if .SQLite}}ALTER TABLE training_jobs ADD COLUMN heartbeat_at {{.Timestamp}};{{end}}
