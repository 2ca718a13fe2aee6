-- Names that must be unique per namespace (a scope's environments, a cluster's projects, ...).
-- Written in the same transaction as the events that give or free a name (infra/postgres/named_streams.py),
-- so a name can never be held twice; it is write-side state that the events alone could rebuild.
CREATE TABLE stream_names (
    namespace text NOT NULL,
    name      text NOT NULL,
    stream_id uuid NOT NULL,
    PRIMARY KEY (namespace, name)
);
CREATE INDEX stream_names_stream_idx ON stream_names (stream_id);

-- Run:ai numbers departments and projects; gaps are harmless.
CREATE SEQUENCE org_unit_ids;

-- Read model: projections/org_units.py (rebuilt from the events at any time).
CREATE TABLE org_units (
    kind          text        NOT NULL,   -- cluster, department, project
    id            text        NOT NULL,
    name          text        NOT NULL,
    cluster_id    uuid        NOT NULL,
    department_id text,
    description   text        NOT NULL DEFAULT '',
    details       jsonb       NOT NULL,   -- the unit's own fields, as its last event had them
    created_at    timestamptz NOT NULL,
    created_by    text        NOT NULL,
    updated_at    timestamptz NOT NULL,
    updated_by    text        NOT NULL,
    version       integer     NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE INDEX org_units_cluster_idx ON org_units (cluster_id);
CREATE INDEX org_units_department_idx ON org_units (department_id);
