-- Read model: projections/data_volume_catalogue.py, one row per live data volume (rebuilt from
-- the events at any time). `shared_scopes` holds the scopes it is shared with, each with when
-- and by whom: [{scopeType, scopeId, createdAt, createdBy}], in the order they were shared.
CREATE TABLE data_volume_catalogue (
    datavolume_id       uuid        PRIMARY KEY,
    name                text        NOT NULL,
    description         text,
    project_id          text        NOT NULL,
    department_id       text,
    cluster_id          uuid        NOT NULL,
    origin_pvc_name     text        NOT NULL,
    use_original_volume boolean     NOT NULL,
    shared_scopes       jsonb       NOT NULL DEFAULT '[]'::jsonb,
    created_at          timestamptz NOT NULL,
    created_by          text        NOT NULL,
    updated_at          timestamptz NOT NULL,
    updated_by          text        NOT NULL,
    version             integer     NOT NULL
);
CREATE INDEX data_volume_catalogue_project_idx ON data_volume_catalogue (project_id, name);
