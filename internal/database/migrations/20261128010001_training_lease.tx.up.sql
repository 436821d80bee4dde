-- A running attempt holds its job by a lease it renews: attempt is the queue's
-- attempt number that runs the job, heartbeat_at when it last renewed. A job
-- whose lease has expired lost its worker (killed, or cut off from the
-- database) and is queued again at once, instead of after the job timeout.
ALTER TABLE training_jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE training_jobs ADD COLUMN heartbeat_at {{.Timestamp}};
