-- Read model: projections/asset_catalogue.py (rebuilt from the events at any time).
CREATE TABLE asset_catalogue (
    asset_id   uuid        PRIMARY KEY,
    kind       text        NOT NULL,
    name       text        NOT NULL,
    meta       jsonb       NOT NULL,   -- AssetMeta as the last event left it
    spec       jsonb       NOT NULL,
    created_at timestamptz NOT NULL,
    created_by text        NOT NULL,
    updated_at timestamptz NOT NULL,
    updated_by text        NOT NULL,
    version    integer     NOT NULL
);
CREATE INDEX asset_catalogue_kind_name_idx ON asset_catalogue (kind, name);
