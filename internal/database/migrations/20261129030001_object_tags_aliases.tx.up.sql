-- Tags and aliases of object versions (Weave's /objs/{id}/versions/{digest}/tags
-- and /objs/{id}/aliases). A tag marks one version; an alias names one
-- version of an object and moves when set on another. "latest" is never
-- stored: it is the newest live version, computed from obj_versions.
CREATE TABLE IF NOT EXISTS obj_tags (
    project_id TEXT NOT NULL,
    object_id  TEXT NOT NULL,
    digest     TEXT NOT NULL,
    tag        TEXT NOT NULL,
    created_by TEXT,
    created_at {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, object_id, digest, tag)
);

CREATE TABLE IF NOT EXISTS obj_aliases (
    project_id TEXT NOT NULL,
    object_id  TEXT NOT NULL,
    alias      TEXT NOT NULL,
    digest     TEXT NOT NULL,
    created_by TEXT,
    created_at {{.Timestamp}} NOT NULL,
    PRIMARY KEY (project_id, object_id, alias)
);
