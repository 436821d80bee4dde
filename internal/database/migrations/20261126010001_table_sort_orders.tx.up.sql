-- The sorted orders of large tables, kept once the database has sorted them:
-- a table digest names an immutable list of rows, so an order never goes
-- stale. sort_digest names the sort (its keys and directions); each row holds
-- the table positions of ranks chunk*1024 … chunk*1024+1023 as little-endian
-- 32-bit integers. A sort's chunks are written in one transaction.
CREATE TABLE IF NOT EXISTS obj_table_sort_orders (
    project_id    TEXT NOT NULL,
    table_digest  TEXT NOT NULL,
    sort_digest   TEXT NOT NULL,
    chunk         INTEGER NOT NULL,
    positions     {{.Bytes}} NOT NULL,
    PRIMARY KEY (project_id, table_digest, sort_digest, chunk)
);
