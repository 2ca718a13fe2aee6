-- Read model: projections/template_catalogue.py (rebuilt from the events at any time).
CREATE TABLE template_catalogue (
    template_id uuid        PRIMARY KEY,
    name        text        NOT NULL,
    scope_kind  text        NOT NULL,
    scope_id    text        NOT NULL,
    meta        jsonb       NOT NULL,   -- TemplateMeta
    body        jsonb       NOT NULL,   -- spec, assets, masterSpecSameAsWorker, master, assetVersions
    asset_ids   uuid[]      NOT NULL,   -- every asset it links or loads: the asset -> templates index
    created_at  timestamptz NOT NULL,
    created_by  text        NOT NULL,
    updated_at  timestamptz NOT NULL,
    updated_by  text        NOT NULL,
    version     integer     NOT NULL
);
CREATE INDEX template_catalogue_name_idx ON template_catalogue (name);
CREATE INDEX template_catalogue_asset_ids_idx ON template_catalogue USING gin (asset_ids);
